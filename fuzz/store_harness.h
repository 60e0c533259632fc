// The harness of the store_request target: the rendezvous store's server-side
// decoding of requests (hearth/distributed/store_protocol.h), the bytes any
// program that reaches MASTER_PORT may send. Kept apart from harnesses.h: it
// reads no file, so its rule differs.
//
// The rule: whatever the bytes, decoding either yields requests or throws
// store_protocol::ProtocolError with a reason; never another exception, a
// crash or a sanitizer report. Each decoded request must say how many bytes
// it took (at least one, no more than were there), and must decode again to
// the same request once written back. The counters of `add` are applied to
// the values the conversation set, as the server would.
#pragma once

#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "hearth/distributed/store_protocol.h"

namespace hearth::fuzz {

namespace store_fuzz {

namespace proto = hearth::distributed::store_protocol;

template <typename T>
void append(std::string& out, T v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}

inline void append_bytes(std::string& out, const char* data, size_t n) {
  append(out, static_cast<uint32_t>(n));
  out.append(data, n);
}

// A request as a client writes it.
inline std::string encode(const proto::Request& r) {
  std::string out(1, static_cast<char>(r.command));
  switch (r.command) {
    case proto::Command::hello:
      append(out, static_cast<uint32_t>(r.number));
      append_bytes(out, r.key.data(), r.key.size());
      break;
    case proto::Command::set:
      append_bytes(out, r.key.data(), r.key.size());
      append_bytes(out, r.value.data(), r.value.size());
      break;
    case proto::Command::add:
    case proto::Command::get:
    case proto::Command::wait:
      append_bytes(out, r.key.data(), r.key.size());
      append(out, r.number);
      break;
  }
  return out;
}

inline bool same(const proto::Request& a, const proto::Request& b) {
  return a.command == b.command && a.key == b.key && a.value == b.value && a.number == b.number;
}

}  // namespace store_fuzz

// The first byte says whether the conversation starts with its hello (bit 0
// clear) or after it; the rest is what the client sent.
inline std::string fuzz_store_request(const uint8_t* bytes, size_t size) {
  namespace proto = hearth::distributed::store_protocol;
  if (size == 0) return "";
  bool expect_hello = (bytes[0] & 1) == 0;
  const char* data = reinterpret_cast<const char*>(bytes + 1);
  size_t left = size - 1;
  std::map<std::string, std::vector<char>> values;
  try {
    while (left > 0) {
      auto decoded = proto::decode_request(data, left, expect_hello);
      if (!decoded) return "a non-empty buffer decoded as the end of the conversation";
      const auto& [request, used] = *decoded;
      if (used == 0 || used > left) return "a request took " + std::to_string(used) + " of " + std::to_string(left);
      const std::string again = store_fuzz::encode(request);
      auto redecoded = proto::decode_request(again.data(), again.size(), expect_hello);
      if (!redecoded || !store_fuzz::same(redecoded->first, request) || redecoded->second != again.size())
        return "a request written back decodes differently";
      if (request.command == proto::Command::set) values[request.key] = request.value;
      if (request.command == proto::Command::add) {
        std::string why;
        auto now = proto::add_to_counter(values[request.key], request.number, why);
        if (!now && why.empty()) return "add refused without a reason";
        if (now) {
          const std::string text = std::to_string(*now);
          values[request.key].assign(text.begin(), text.end());
        }
      }
      if (request.command == proto::Command::hello) (void)proto::same_secret(request.key, "0123456789abcdef");
      data += used;
      left -= used;
      expect_hello = false;
    }
  } catch (const proto::ProtocolError& e) {
    if (std::strlen(e.what()) == 0) return "a ProtocolError without a reason";
  } catch (const std::exception& e) {
    return std::string("bad input escaped as another exception: ") + e.what();
  }
  return "";
}

}  // namespace hearth::fuzz
