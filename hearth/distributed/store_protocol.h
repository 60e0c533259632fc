// The wire format shared by the store's server and client, and the server's
// decoding of one request (read_request), which trusts nothing it reads: the
// store listens on a network port, so any program that can reach it may send
// anything.
//
// A connection opens with a hello (the protocol version and the job's token);
// then each request is a command byte, a length-prefixed key and the
// command's arguments. Every reply starts with a status byte. Every integer
// is little-endian (both ends are x86-64 or arm64 Linux).
//
//   hello = 5  + u32 version, u32 length, token bytes  -> u8 status [+ message]
//   set   = 1  + key, u32 length, value bytes          -> u8 status
//   get   = 2  + key, i64 timeout ms                   -> u8 status, u32 length, value bytes
//   add   = 3  + key, i64 delta                        -> u8 status, i64 new value | message
//   wait  = 4  + key, i64 timeout ms                   -> u8 status
//
// where key is u32 length + bytes, and [+ message] (u32 length + text) follows
// every status other than ok and timed_out. A request the server cannot
// decode, or one that breaks a limit below, is answered with Status::error
// and its reason, and the connection is closed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hearth/core/errors.h"

namespace hearth::distributed::store_protocol {

enum class Command : uint8_t {
  set = 1,
  get = 2,
  add = 3,
  wait = 4,
  hello = 5,
};

enum class Status : uint8_t {
  ok = 0,
  timed_out = 1,
  // The request was refused (a counter that is not an integer, a malformed
  // request); a message follows.
  error = 2,
  // The hello was refused (wrong token, other version); a message follows
  // and the server closes the connection.
  refused = 3,
  // The server has as many connections as it serves; a message follows and
  // the server closes the connection. The client may try again later.
  busy = 4,
};

inline constexpr uint32_t kVersion = 1;

// Larger keys or values are refused: they are names and ids, not data.
inline constexpr uint32_t kMaxKeyBytes = 4096;
inline constexpr uint32_t kMaxValueBytes = 16u << 20;
// The token of a hello (HEARTH_STORE_TOKEN), and the text of a reply's message.
inline constexpr uint32_t kMaxTokenBytes = 256;
inline constexpr uint32_t kMaxMessageBytes = 4096;
// get and wait wait at most this long, whatever the client asked.
inline constexpr int64_t kMaxWaitMs = int64_t{7} * 24 * 3600 * 1000;

// A request that does not follow the protocol; what() says why.
class ProtocolError : public IoError {
 public:
  using IoError::IoError;
};

// One decoded request.
struct Request {
  Command command = Command::hello;
  std::string key;          // set, get, add, wait; for hello, the token
  std::vector<char> value;  // set
  int64_t number = 0;       // add: the delta; get, wait: the timeout in ms; hello: the version
};

// Where read_request takes its bytes from: a socket (the server) or a buffer
// (the fuzz target).
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Reads up to `n` bytes into `data` and returns how many, 0 only at the end
  // of the stream. `first` is true for the first byte of a request, which
  // may come after a long pause; an error or timeout throws.
  virtual size_t read_some(void* data, size_t n, bool first) = 0;
};

// Decodes the next request. nullopt when the stream ended cleanly before its
// first byte; ProtocolError when it ended in the middle, when the command is
// unknown or when a length, the timeout of a get or wait, or (with
// `expect_hello`) anything but a hello breaks the protocol. A value is read
// piece by piece as it arrives, so a length announced but never sent costs
// no memory.
std::optional<Request> read_request(ByteSource& source, bool expect_hello);

// Decodes a request from `bytes` (the fuzz target and the tests): the request
// and how many bytes it took, nullopt for an empty buffer, ProtocolError as
// read_request (a buffer that ends early ends in the middle of a request).
std::optional<std::pair<Request, size_t>> decode_request(const void* bytes, size_t size, bool expect_hello);

// The name of a command for messages ("set", ..., or "command 0x2a").
std::string command_name(uint8_t command);

// Parses a counter's stored text (decimal, optional minus sign, nothing else)
// and adds `delta`. nullopt with `why` set when the text is not such an
// integer or the sum does not fit in 64 bits.
std::optional<int64_t> add_to_counter(const std::vector<char>& stored, int64_t delta, std::string& why);

// Equal lengths and bytes, in a time that does not depend on where they differ.
bool same_secret(const std::string& a, const std::string& b);

}  // namespace hearth::distributed::store_protocol
