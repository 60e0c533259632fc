// Blocking TCP sockets with deadlines, for the rendezvous store and the
// launcher's free-port lookup. Every wait is bounded: a peer that hangs turns
// into an IoError that names what was being waited for.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

namespace hearth::distributed {

using Clock = std::chrono::steady_clock;

// An owned file descriptor of a connected or listening socket.
class Socket {
 public:
  Socket() = default;
  explicit Socket(int fd) : fd_(fd) {}
  ~Socket();
  Socket(Socket&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  Socket& operator=(Socket&& o) noexcept;
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;

  int fd() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  // Wakes a thread blocked on this socket (its reads then see end of stream).
  void shutdown() const;
  void close();

  // Sends or receives exactly `n` bytes before `deadline`; IoError naming
  // `what` on timeout, error or (for reads) a peer that closed the connection.
  void send_all(const void* data, size_t n, Clock::time_point deadline, const std::string& what) const;
  void recv_all(void* data, size_t n, Clock::time_point deadline, const std::string& what) const;
  // Like recv_all, but returns false when the peer closed the connection
  // cleanly before the first byte (the end of a conversation, not an error).
  bool recv_all_or_eof(void* data, size_t n, Clock::time_point deadline, const std::string& what) const;
  // Receives what is there, up to `n` bytes, waiting until `deadline` for the
  // first; 0 when the peer closed the connection.
  size_t recv_some(void* data, size_t n, Clock::time_point deadline, const std::string& what) const;

 private:
  int fd_ = -1;
};

// A listening socket on `host`:`port` (port 0 picks a free port). `host` is
// an address or a name, which is resolved and the socket bound to its
// address: "127.0.0.1" or "localhost" listen on loopback only, reachable from
// this machine alone; "0.0.0.0" (or "::") on every interface.
Socket listen_on(const std::string& host, uint16_t port, int backlog = 128);
// The port a listening socket is bound to.
uint16_t bound_port(const Socket& s);
// The address a socket is bound to, numeric ("127.0.0.1", "::1", "0.0.0.0").
std::string bound_address(const Socket& s);
// "address:port" of the other end of a connected socket, for messages.
std::string peer_address(const Socket& s);
// An address of this machine's that reaches a socket bound to `address`:
// loopback for a wildcard ("0.0.0.0", "::"), else the address itself.
std::string address_to_reach(const std::string& address);
// Connects to host:port, retrying refused or unreachable attempts until
// `deadline` (the server may not be up yet); IoError naming `who` after that.
Socket connect_to(const std::string& host, uint16_t port, Clock::time_point deadline, const std::string& who);
// Waits for a connection until `deadline`; an invalid Socket on timeout.
Socket accept_until(const Socket& listener, Clock::time_point deadline);
// A port that was free a moment ago (bind port 0, read it, close).
uint16_t find_free_port();

}  // namespace hearth::distributed
