#include "hearth/distributed/tcp_store_server.h"

#include <cstdio>
#include <cstring>

#include "hearth/core/errors.h"
#include "hearth/distributed/store_protocol.h"

namespace hearth::distributed {
namespace {

using namespace store_protocol;
// A connection waits indefinitely for its next request; the client's own
// timeouts bound each exchange.
constexpr auto kIdle = std::chrono::hours(24 * 365);
// Once a request has begun, the rest of it must arrive within this time.
constexpr auto kRequestTime = std::chrono::seconds(60);
constexpr auto kReplyTime = std::chrono::seconds(60);
// At most this many log lines per window; the rest are counted.
constexpr int kLogLinesPerWindow = 20;
constexpr auto kLogWindow = std::chrono::seconds(10);

// The bytes of one connection, for read_request: the first byte of a request
// may come after a long pause (the idle deadline), the rest within
// kRequestTime of it; the hello, all of it before the handshake deadline.
class SocketSource : public ByteSource {
 public:
  SocketSource(const Socket& s, Clock::time_point handshake_deadline)
      : socket_(s), handshake_deadline_(handshake_deadline) {}
  void handshake_done() { handshake_ = false; }
  size_t read_some(void* data, size_t n, bool first) override {
    if (handshake_) {
      deadline_ = handshake_deadline_;
    } else if (first) {
      deadline_ = Clock::now() + kIdle;
    }
    const size_t k = socket_.recv_some(data, n, deadline_, handshake_ ? "waiting for the hello" : "reading a request");
    if (first && !handshake_) deadline_ = Clock::now() + kRequestTime;
    return k;
  }

 private:
  const Socket& socket_;
  Clock::time_point handshake_deadline_;
  Clock::time_point deadline_{};
  bool handshake_ = true;
};

template <typename T>
void write_value(const Socket& s, const T& v) {
  s.send_all(&v, sizeof v, Clock::now() + kReplyTime, "[store server] reply");
}

void write_message(const Socket& s, Status status, const std::string& message,
                   Clock::time_point deadline = Clock::now() + kReplyTime) {
  const std::string text = message.substr(0, kMaxMessageBytes);
  const auto len = static_cast<uint32_t>(text.size());
  std::string bytes(1, static_cast<char>(status));
  bytes.append(reinterpret_cast<const char*>(&len), sizeof len);
  bytes += text;
  s.send_all(bytes.data(), bytes.size(), deadline, "[store server] reply");
}

// A last word to a client being dropped; it may be gone already.
void try_write_message(const Socket& s, Status status, const std::string& message) {
  try {
    write_message(s, status, message, Clock::now() + std::chrono::milliseconds(200));
  } catch (const Error&) {
  }
}

}  // namespace

TcpStoreServer::TcpStoreServer(TcpStoreServerOptions options)
    : options_(std::move(options)), listener_(listen_on(options_.host, options_.port)) {
  HEARTH_CHECK(options_.max_connections >= 1, ValueError, "[store server] max_connections must be >= 1, got ",
               options_.max_connections);
  HEARTH_CHECK(options_.token.size() <= kMaxTokenBytes, ValueError, "[store server] the token has ",
               options_.token.size(), " bytes; at most ", kMaxTokenBytes, " are allowed");
  port_ = bound_port(listener_);
  address_ = bound_address(listener_);
  acceptor_ = std::thread([this] { accept_loop(); });
}

TcpStoreServer::~TcpStoreServer() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    for (auto& c : connections_) c->socket.shutdown();
  }
  changed_.notify_all();
  acceptor_.join();
  for (auto& c : connections_) c->thread.join();
}

int TcpStoreServer::connections() const {
  std::lock_guard lock(mutex_);
  int n = 0;
  for (const auto& c : connections_) n += c->done ? 0 : 1;
  return n;
}

void TcpStoreServer::log(const std::string& line) {
  std::lock_guard lock(log_mutex_);
  const auto now = Clock::now();
  std::string text;
  if (now - log_window_ >= kLogWindow) {
    if (log_suppressed_ > 0)
      text = "[store server] (" + std::to_string(log_suppressed_) + " more such lines were not shown)\n";
    log_window_ = now;
    log_lines_ = 0;
    log_suppressed_ = 0;
  }
  if (log_lines_ >= kLogLinesPerWindow) {
    ++log_suppressed_;
    return;
  }
  ++log_lines_;
  text += line;
  if (options_.log) {
    options_.log(text);
  } else {
    text += "\n";
    std::fwrite(text.data(), 1, text.size(), stderr);
    std::fflush(stderr);
  }
}

bool TcpStoreServer::reserve_locked(const std::string& key, size_t bytes, std::string& why) {
  constexpr size_t kEntryOverhead = 64;
  auto it = values_.find(key);
  const size_t old = it == values_.end() ? 0 : key.size() + it->second.size() + kEntryOverhead;
  const size_t total = stored_bytes_ - old + key.size() + bytes + kEntryOverhead;
  if (total > options_.max_stored_bytes) {
    why = "the store would hold " + std::to_string(total) + " bytes, more than its limit of " +
          std::to_string(options_.max_stored_bytes);
    return false;
  }
  stored_bytes_ = total;
  return true;
}

std::vector<std::thread> TcpStoreServer::take_finished_locked() {
  std::vector<std::thread> finished;
  for (auto it = connections_.begin(); it != connections_.end();) {
    if ((*it)->done) {
      finished.push_back(std::move((*it)->thread));
      it = connections_.erase(it);
    } else {
      ++it;
    }
  }
  return finished;
}

void TcpStoreServer::accept_loop() {
  for (;;) {
    Socket s = accept_until(listener_, Clock::now() + std::chrono::milliseconds(100));
    std::vector<std::thread> finished;
    bool full = false;
    {
      std::lock_guard lock(mutex_);
      if (stopping_) return;
      finished = take_finished_locked();
      if (s.valid()) {
        full = static_cast<int>(connections_.size()) >= options_.max_connections;
        if (!full) {
          auto c = std::make_unique<Connection>();
          c->socket = std::move(s);
          c->peer = peer_address(c->socket);
          Connection* raw = c.get();
          connections_.push_back(std::move(c));
          raw->thread = std::thread([this, raw] { serve(*raw); });
        }
      }
    }
    // A finished connection's thread has nothing left to do but return.
    for (std::thread& t : finished) t.join();
    if (full) {
      const std::string peer = peer_address(s);
      const std::string why = "the store serves at most " + std::to_string(options_.max_connections) +
                              " connections at once and has that many";
      try_write_message(s, Status::busy, "[store server] " + why + "; try again later");
      log("[store server] refused the connection from " + peer + ": " + why);
    }
  }
}

void TcpStoreServer::serve(Connection& c) {
  try {
    serve_requests(c);
  } catch (const std::exception& e) {
    bool stopping = false;
    {
      std::lock_guard lock(mutex_);
      stopping = stopping_;
    }
    if (!stopping) {
      // What went wrong is for this connection alone: tell the client (it may
      // be gone) and the log, then drop it.
      try_write_message(c.socket, Status::error, std::string("[store server] ") + e.what());
      log("[store server] closed the connection from " + c.peer + ": " + e.what());
    }
  }
  c.socket.shutdown();
  std::lock_guard lock(mutex_);
  c.done = true;
}

void TcpStoreServer::serve_requests(Connection& c) {
  const Socket& s = c.socket;
  SocketSource source(s, Clock::now() + options_.handshake_timeout);

  std::optional<Request> hello = read_request(source, /*expect_hello=*/true);
  if (!hello) return;
  if (hello->number != kVersion) {
    const std::string why = "it speaks version " + std::to_string(hello->number) + " of the store protocol, this " +
                            "server version " + std::to_string(kVersion) + " (mixed versions of hearth?)";
    try_write_message(s, Status::refused, "[store server] refused: " + why);
    log("[store server] refused the connection from " + c.peer + ": " + why);
    return;
  }
  if (!options_.token.empty() && !same_secret(hello->key, options_.token)) {
    const std::string why = hello->key.empty()
                                ? std::string(
                                      "it presented no token, and this store requires the job's "
                                      "HEARTH_STORE_TOKEN")
                                : std::string("it presented a wrong token (HEARTH_STORE_TOKEN differs from rank 0's)");
    try_write_message(s, Status::refused, "[store server] refused: " + why);
    log("[store server] refused the connection from " + c.peer + ": " + why);
    return;
  }
  source.handshake_done();
  write_value(s, Status::ok);

  for (;;) {
    std::optional<Request> r = read_request(source, /*expect_hello=*/false);
    if (!r) return;
    switch (r->command) {
      case Command::set: {
        std::string why;
        {
          std::lock_guard lock(mutex_);
          if (reserve_locked(r->key, r->value.size(), why)) values_[r->key] = std::move(r->value);
        }
        if (!why.empty()) {
          write_message(s, Status::error, "[store server] cannot set '" + r->key.substr(0, 200) + "': " + why);
          break;
        }
        changed_.notify_all();
        write_value(s, Status::ok);
        break;
      }
      case Command::add: {
        std::optional<int64_t> now;
        std::string why;
        {
          std::lock_guard lock(mutex_);
          auto it = values_.find(r->key);
          now = add_to_counter(it == values_.end() ? std::vector<char>{} : it->second, r->number, why);
          if (now && !reserve_locked(r->key, std::to_string(*now).size(), why)) now.reset();
          if (now) {
            // Counters are stored as decimal text, readable by get().
            const std::string text = std::to_string(*now);
            values_[r->key].assign(text.begin(), text.end());
          }
        }
        if (!now) {
          write_message(s, Status::error, "[store server] cannot add to '" + r->key.substr(0, 200) + "': " + why);
          break;
        }
        changed_.notify_all();
        write_value(s, Status::ok);
        write_value(s, *now);
        break;
      }
      case Command::get:
      case Command::wait: {
        const auto deadline = Clock::now() + std::chrono::milliseconds(r->number);
        std::unique_lock lock(mutex_);
        bool found = changed_.wait_until(lock, deadline, [&] { return stopping_ || values_.count(r->key) > 0; });
        if (stopping_) return;
        std::vector<char> value;
        if (found && r->command == Command::get) value = values_[r->key];
        lock.unlock();
        write_value(s, found ? Status::ok : Status::timed_out);
        if (r->command == Command::get) {
          const auto len = static_cast<uint32_t>(value.size());
          write_value(s, len);
          s.send_all(value.data(), len, Clock::now() + kReplyTime, "[store server] reply");
        }
        break;
      }
      case Command::hello:
        // read_request refuses a second hello.
        return;
    }
  }
}

}  // namespace hearth::distributed
