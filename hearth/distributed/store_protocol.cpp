#include "hearth/distributed/store_protocol.h"

#include <algorithm>
#include <charconv>
#include <cstring>

namespace hearth::distributed::store_protocol {
namespace {

// Values arrive in pieces of this size at most, so memory follows the bytes
// actually sent rather than the length announced.
constexpr size_t kChunkBytes = 64 * 1024;

// Fills `n` bytes, or throws naming what was being read when the stream ends.
void read_exactly(ByteSource& source, void* data, size_t n, const char* what) {
  char* p = static_cast<char*>(data);
  while (n > 0) {
    const size_t k = source.read_some(p, n, false);
    if (k == 0) HEARTH_THROW(ProtocolError, "the connection closed in the middle of a request (reading ", what, ")");
    p += k;
    n -= k;
  }
}

template <typename T>
T read_value(ByteSource& source, const char* what) {
  T v{};
  read_exactly(source, &v, sizeof v, what);
  return v;
}

uint32_t read_length(ByteSource& source, const char* what, uint32_t max) {
  const auto len = read_value<uint32_t>(source, what);
  HEARTH_CHECK(len <= max, ProtocolError, "a ", what, " of ", len, " bytes is longer than the ", max, " allowed");
  return len;
}

std::string read_string(ByteSource& source, const char* what, uint32_t max) {
  const uint32_t len = read_length(source, what, max);
  std::string s(len, '\0');
  read_exactly(source, s.data(), len, what);
  return s;
}

std::vector<char> read_bytes(ByteSource& source, const char* what, uint32_t max) {
  const uint32_t len = read_length(source, what, max);
  std::vector<char> v;
  while (v.size() < len) {
    const size_t at = v.size();
    v.resize(at + std::min<size_t>(kChunkBytes, len - at));
    read_exactly(source, v.data() + at, v.size() - at, what);
  }
  return v;
}

int64_t read_timeout(ByteSource& source) {
  const auto ms = read_value<int64_t>(source, "timeout");
  HEARTH_CHECK(ms >= 0, ProtocolError, "a negative timeout (", ms, " ms)");
  return std::min(ms, kMaxWaitMs);
}

class BufferSource : public ByteSource {
 public:
  BufferSource(const void* data, size_t size) : data_(static_cast<const char*>(data)), size_(size) {}
  size_t read_some(void* out, size_t n, bool) override {
    const size_t k = std::min(n, size_ - at_);
    std::memcpy(out, data_ + at_, k);
    at_ += k;
    return k;
  }
  size_t consumed() const { return at_; }

 private:
  const char* data_;
  size_t size_;
  size_t at_ = 0;
};

}  // namespace

std::string command_name(uint8_t command) {
  switch (static_cast<Command>(command)) {
    case Command::set:
      return "set";
    case Command::get:
      return "get";
    case Command::add:
      return "add";
    case Command::wait:
      return "wait";
    case Command::hello:
      return "hello";
  }
  static const char* const kHex = "0123456789abcdef";
  return std::string("command 0x") + kHex[command >> 4] + kHex[command & 15];
}

std::optional<Request> read_request(ByteSource& source, bool expect_hello) {
  uint8_t byte = 0;
  if (source.read_some(&byte, 1, true) == 0) return std::nullopt;
  Request r;
  r.command = static_cast<Command>(byte);
  if (expect_hello) {
    HEARTH_CHECK(r.command == Command::hello, ProtocolError, "the connection opened with ", command_name(byte),
                 " instead of a hello (not a client of this store, or one of another version of hearth)");
  }
  switch (r.command) {
    case Command::hello:
      HEARTH_CHECK(expect_hello, ProtocolError, "a second hello on the same connection");
      r.number = read_value<uint32_t>(source, "version");
      r.key = read_string(source, "token", kMaxTokenBytes);
      return r;
    case Command::set:
      r.key = read_string(source, "key", kMaxKeyBytes);
      r.value = read_bytes(source, "value", kMaxValueBytes);
      return r;
    case Command::add:
      r.key = read_string(source, "key", kMaxKeyBytes);
      r.number = read_value<int64_t>(source, "delta");
      return r;
    case Command::get:
    case Command::wait:
      r.key = read_string(source, "key", kMaxKeyBytes);
      r.number = read_timeout(source);
      return r;
  }
  HEARTH_THROW(ProtocolError, "unknown ", command_name(byte));
}

std::optional<std::pair<Request, size_t>> decode_request(const void* bytes, size_t size, bool expect_hello) {
  BufferSource source(bytes, size);
  std::optional<Request> r = read_request(source, expect_hello);
  if (!r) return std::nullopt;
  return std::make_pair(std::move(*r), source.consumed());
}

std::optional<int64_t> add_to_counter(const std::vector<char>& stored, int64_t delta, std::string& why) {
  int64_t now = 0;
  if (!stored.empty()) {
    const char* begin = stored.data();
    const char* end = begin + stored.size();
    auto [stop, ec] = std::from_chars(begin, end, now);
    if (ec != std::errc() || stop != end) {
      why = "the value is not an integer counter (" + std::to_string(stored.size()) + " bytes, set by set())";
      return std::nullopt;
    }
  }
  int64_t sum = 0;
  if (__builtin_add_overflow(now, delta, &sum)) {
    why = "adding " + std::to_string(delta) + " to " + std::to_string(now) + " overflows a 64-bit counter";
    return std::nullopt;
  }
  return sum;
}

bool same_secret(const std::string& a, const std::string& b) {
  // Every byte of the longer one is compared, whatever differs first.
  const size_t n = std::max(a.size(), b.size());
  unsigned diff = a.size() == b.size() ? 0u : 1u;
  for (size_t i = 0; i < n; ++i) {
    const auto x = static_cast<unsigned char>(i < a.size() ? a[i] : 0);
    const auto y = static_cast<unsigned char>(i < b.size() ? b[i] : 0);
    diff |= static_cast<unsigned>(x ^ y);
  }
  return diff == 0;
}

}  // namespace hearth::distributed::store_protocol
