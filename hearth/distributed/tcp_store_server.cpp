#include "hearth/distributed/tcp_store_server.h"

#include <cstring>

#include "hearth/core/errors.h"
#include "hearth/distributed/store_protocol.h"

namespace hearth::dist {
namespace {

using namespace store_protocol;
// A connection waits indefinitely for its next request; the client's own
// timeouts bound each exchange.
constexpr auto kIdle = std::chrono::hours(24 * 365);

template <typename T>
T read_value(const Socket& s, Clock::time_point deadline) {
  T v{};
  s.recv_all(&v, sizeof v, deadline, "[store server] request");
  return v;
}

template <typename T>
void write_value(const Socket& s, const T& v) {
  s.send_all(&v, sizeof v, Clock::now() + std::chrono::seconds(60), "[store server] reply");
}

}  // namespace

TcpStoreServer::TcpStoreServer(uint16_t port) : listener_(listen_on(port)) {
  port_ = bound_port(listener_);
  acceptor_ = std::thread([this] { accept_loop(); });
}

TcpStoreServer::~TcpStoreServer() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    for (auto& c : connections_) c->shutdown();
  }
  changed_.notify_all();
  acceptor_.join();
  for (std::thread& t : threads_) t.join();
}

void TcpStoreServer::accept_loop() {
  for (;;) {
    Socket s = accept_until(listener_, Clock::now() + std::chrono::milliseconds(100));
    std::lock_guard lock(mutex_);
    if (stopping_) return;
    if (!s.valid()) continue;
    connections_.push_back(std::make_unique<Socket>(std::move(s)));
    const int index = static_cast<int>(connections_.size()) - 1;
    threads_.emplace_back([this, index] { serve(index); });
  }
}

void TcpStoreServer::serve(int connection) {
  const Socket* s = nullptr;
  {
    std::lock_guard lock(mutex_);
    s = connections_[static_cast<size_t>(connection)].get();
  }
  try {
    for (;;) {
      uint8_t command = 0;
      if (!s->recv_all_or_eof(&command, 1, Clock::now() + kIdle, "[store server] request")) return;
      auto key_len = read_value<uint32_t>(*s, Clock::now() + std::chrono::seconds(60));
      HEARTH_CHECK(key_len <= kMaxKeyBytes, IoError, "[store server] a key of ", key_len, " bytes is too long");
      std::string key(key_len, '\0');
      s->recv_all(key.data(), key_len, Clock::now() + std::chrono::seconds(60), "[store server] key");
      const auto cmd = static_cast<Command>(command);
      if (cmd == Command::set) {
        auto len = read_value<uint32_t>(*s, Clock::now() + std::chrono::seconds(60));
        HEARTH_CHECK(len <= kMaxValueBytes, IoError, "[store server] a value of ", len, " bytes is too large");
        std::vector<char> value(len);
        s->recv_all(value.data(), len, Clock::now() + std::chrono::seconds(60), "[store server] value");
        {
          std::lock_guard lock(mutex_);
          values_[key] = std::move(value);
        }
        changed_.notify_all();
        write_value(*s, Status::ok);
      } else if (cmd == Command::add) {
        auto delta = read_value<int64_t>(*s, Clock::now() + std::chrono::seconds(60));
        int64_t now = 0;
        {
          std::lock_guard lock(mutex_);
          std::vector<char>& v = values_[key];
          // Counters are stored as decimal text, readable by get().
          if (!v.empty()) now = std::stoll(std::string(v.begin(), v.end()));
          now += delta;
          std::string text = std::to_string(now);
          v.assign(text.begin(), text.end());
        }
        changed_.notify_all();
        write_value(*s, now);
      } else if (cmd == Command::get || cmd == Command::wait) {
        auto timeout_ms = read_value<int64_t>(*s, Clock::now() + std::chrono::seconds(60));
        const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
        std::unique_lock lock(mutex_);
        bool found = changed_.wait_until(lock, deadline, [&] { return stopping_ || values_.count(key) > 0; });
        if (stopping_) return;
        std::vector<char> value;
        if (found && cmd == Command::get) value = values_[key];
        lock.unlock();
        write_value(*s, found ? Status::ok : Status::timed_out);
        if (cmd == Command::get) {
          auto len = static_cast<uint32_t>(value.size());
          write_value(*s, len);
          s->send_all(value.data(), len, Clock::now() + std::chrono::seconds(60), "[store server] reply");
        }
      } else {
        return;  // not a client of this protocol: drop the connection
      }
    }
  } catch (const Error&) {
    // A client that vanished mid-request: its own side reports the failure.
  }
}

}  // namespace hearth::dist
