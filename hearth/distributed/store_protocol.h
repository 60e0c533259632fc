// The wire format shared by the store's server and client: a request is a
// command byte, a length-prefixed key and the command's arguments; every
// integer is little-endian (both ends are x86-64 or arm64 Linux).
#pragma once

#include <cstdint>

namespace hearth::dist::store_protocol {

enum class Command : uint8_t {
  set = 1,   // + u32 length, bytes          -> u8 0
  get = 2,   // + i64 timeout ms             -> u8 status, u32 length, bytes
  add = 3,   // + i64 delta                  -> i64 new value
  wait = 4,  // + i64 timeout ms             -> u8 status
};

enum class Status : uint8_t { ok = 0, timed_out = 1 };

// Larger keys or values are refused: they are names and ids, not data.
inline constexpr uint32_t kMaxKeyBytes = 4096;
inline constexpr uint32_t kMaxValueBytes = 64u << 20;

}  // namespace hearth::dist::store_protocol
