// The server half of the rendezvous store: a key-value map in rank 0's
// process, served over TCP to every rank (rank 0 included), one thread per
// connection. Blocking reads wait on the server side, with the timeout the
// client sent, so a missing key never costs a polling loop.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "hearth/distributed/socket.h"

namespace hearth::dist {

class TcpStoreServer {
 public:
  // Listens on `port` on all interfaces (0: a free port, see port()).
  explicit TcpStoreServer(uint16_t port);
  ~TcpStoreServer();
  TcpStoreServer(const TcpStoreServer&) = delete;
  TcpStoreServer& operator=(const TcpStoreServer&) = delete;

  uint16_t port() const { return port_; }

 private:
  void accept_loop();
  void serve(int connection);

  Socket listener_;
  uint16_t port_ = 0;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::string, std::vector<char>> values_;
  bool stopping_ = false;
  std::vector<std::unique_ptr<Socket>> connections_;
  std::vector<std::thread> threads_;
  std::thread acceptor_;
};

}  // namespace hearth::dist
