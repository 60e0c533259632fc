// The server half of the rendezvous store: a key-value map in rank 0's
// process, served over TCP to every rank (rank 0 included), one thread per
// connection. Blocking reads wait on the server side, with the timeout the
// client sent, so a missing key never costs a polling loop.
//
// It listens on a network port, so it trusts nothing it receives:
// - it binds the address it is given (loopback stays loopback);
// - with a token, a connection must open with a hello carrying it (compared
//   in constant time) before any request; without one, any hello will do;
// - every request is decoded and checked (store_protocol.h): a malformed one,
//   or one over the size limits, closes that connection with a logged
//   reason; a request that is well formed but cannot be done (adding to a
//   value that is not an integer) is refused to that client alone;
// - at most max_connections are served at once: one more is told so and
//   closed, and the thread of a closed connection is reclaimed; the map
//   holds at most max_stored_bytes.
// Nothing a client sends stops the server or the process that runs it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "hearth/distributed/socket.h"

namespace hearth::distributed {

struct TcpStoreServerOptions {
  // The address to listen on: an address or a host name (resolved to its
  // address). "0.0.0.0" listens on every interface.
  std::string host = "127.0.0.1";
  uint16_t port = 0;  // 0: a free port (see port())
  // The secret every connection must present (HEARTH_STORE_TOKEN); empty:
  // connections are not authenticated.
  std::string token;
  int max_connections = 64;
  // The most the stored keys and values may take together (each entry counts
  // its key, its value and 64 bytes); a set or add past it is refused to
  // that client.
  size_t max_stored_bytes = size_t{1} << 30;
  // A connection must have said hello within this time.
  std::chrono::milliseconds handshake_timeout = std::chrono::seconds(10);
  // Where the reasons for closing connections go (one line each, without a
  // newline); default: standard error. Called from the server's threads.
  std::function<void(const std::string&)> log;
};

class TcpStoreServer {
 public:
  explicit TcpStoreServer(TcpStoreServerOptions options);
  ~TcpStoreServer();
  TcpStoreServer(const TcpStoreServer&) = delete;
  TcpStoreServer& operator=(const TcpStoreServer&) = delete;

  uint16_t port() const { return port_; }
  // The address listened on, numeric ("127.0.0.1", "0.0.0.0").
  const std::string& address() const { return address_; }
  // Connections being served now (not counting refused ones).
  int connections() const;

 private:
  struct Connection {
    Socket socket;
    std::string peer;
    std::thread thread;
    bool done = false;
  };

  void accept_loop();
  void serve(Connection& c);
  void serve_requests(Connection& c);
  void log(const std::string& line);
  // Whether storing `bytes` at `key` stays within max_stored_bytes, and if
  // so, counts it; else `why` says why not. Called with mutex_ held.
  bool reserve_locked(const std::string& key, size_t bytes, std::string& why);
  // Joins the threads of finished connections; called with mutex_ held.
  std::vector<std::thread> take_finished_locked();

  TcpStoreServerOptions options_;
  Socket listener_;
  uint16_t port_ = 0;
  std::string address_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::string, std::vector<char>> values_;
  size_t stored_bytes_ = 0;
  bool stopping_ = false;
  std::list<std::unique_ptr<Connection>> connections_;
  std::thread acceptor_;

  std::mutex log_mutex_;
  Clock::time_point log_window_{};
  int log_lines_ = 0;
  int log_suppressed_ = 0;
};

}  // namespace hearth::distributed
