// The rendezvous store every rank talks to: a key-value map served by rank 0
// (hearth/distributed/tcp_store_server.h) at MASTER_ADDR:MASTER_PORT. It carries the
// little that ranks must agree on before they can talk directly (the NCCL
// unique id, Gloo's addresses) and barriers.
//
//   TcpStore store({.host = "127.0.0.1", .port = 29500, .rank = r, .world_size = n});
//   store.set("id", bytes);            // every rank sees it
//   auto v = store.get("id");          // blocks until set, or StoreTimeout
//   int64_t k = store.add("count", 1); // atomic counter
//   store.barrier("start");            // every rank arrives, then all go on
//
// Every blocking call is bounded by the timeout; running out throws
// StoreTimeout naming this rank, the key and the address.
//
// Rank 0's server listens on `host` only (127.0.0.1 stays loopback; 0.0.0.0
// listens on every interface). With a `token` (HEARTH_STORE_TOKEN), every
// connection proves it knows it before any request; the server refuses the
// others. Without one, anyone who can reach the port can use the store.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "hearth/core/errors.h"
#include "hearth/distributed/socket.h"

namespace hearth::distributed {

class TcpStoreServer;

class StoreTimeout : public IoError {
 public:
  using IoError::IoError;
};

// The server refused this rank's connection (a wrong or missing token) or a
// request (adding to a value that is not an integer); what() says why.
class StoreRefused : public IoError {
 public:
  using IoError::IoError;
};

struct TcpStoreOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 29500;
  int rank = 0;
  int world_size = 1;
  // Rank 0 serves the store unless told otherwise (a server run elsewhere).
  bool serve = true;
  std::chrono::milliseconds timeout = std::chrono::seconds(300);
  // The job's secret (HEARTH_STORE_TOKEN): rank 0's server requires it of
  // every connection, the other ranks present it. Empty: no authentication.
  std::string token;
};

// How many connections rank 0's server serves at once: each rank holds one or
// two (the trainer's and a process group's); the margin covers tools that
// look in. More are refused until one closes.
inline int store_max_connections(int world_size) { return world_size * 4 + 16; }

class TcpStore {
 public:
  explicit TcpStore(TcpStoreOptions options);
  ~TcpStore();
  TcpStore(const TcpStore&) = delete;
  TcpStore& operator=(const TcpStore&) = delete;

  void set(const std::string& key, const std::vector<char>& value);
  void set(const std::string& key, const std::string& value);
  // Waits until the key exists, then returns its value.
  std::vector<char> get(const std::string& key);
  std::vector<char> get(const std::string& key, std::chrono::milliseconds timeout);
  std::string get_string(const std::string& key) {
    auto v = get(key);
    return {v.begin(), v.end()};
  }
  // Adds `delta` to the counter at `key` (0 if absent); returns the new value.
  int64_t add(const std::string& key, int64_t delta);
  // Waits until every key exists.
  void wait(const std::vector<std::string>& keys);
  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout);
  // Returns once all world_size ranks called barrier with the same name.
  void barrier(const std::string& name);

  int rank() const { return options_.rank; }
  int world_size() const { return options_.world_size; }
  std::chrono::milliseconds timeout() const { return options_.timeout; }
  // "127.0.0.1:29500": where the store is, for messages.
  std::string address() const;
  // The port actually served (differs from options.port when it was 0).
  uint16_t port() const { return port_; }
  // Whether this process serves the store: when it exits, the store is gone.
  bool serves() const { return server_ != nullptr; }

 private:
  void send_request(uint8_t command, const std::string& key, Clock::time_point deadline);
  // The status that starts a reply; StoreRefused with the server's message
  // for a status that carries one.
  uint8_t read_status(Clock::time_point deadline, const std::string& what);
  // Connects and says hello; false when the server was busy (try again).
  bool connect_once(const std::string& host, Clock::time_point deadline);
  [[noreturn]] void throw_timeout(const std::string& key, std::chrono::milliseconds timeout) const;

  TcpStoreOptions options_;
  uint16_t port_ = 0;
  std::unique_ptr<TcpStoreServer> server_;
  std::mutex mutex_;  // one request at a time on the connection
  Socket socket_;
  uint8_t last_status_ = 0;  // of the last reply
};

}  // namespace hearth::distributed
