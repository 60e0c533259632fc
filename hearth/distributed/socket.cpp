#include "hearth/distributed/socket.h"

#include <netdb.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "hearth/core/errors.h"

namespace hearth::distributed {
namespace {

int ms_until(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  if (left <= 0) return 0;
  return left > 1000 ? 1000 : static_cast<int>(left);  // wake up at least every second to re-check
}

// Waits until the socket is readable or writable; false once the deadline passed.
bool wait_ready(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    pollfd p{fd, events, 0};
    int rc = ::poll(&p, 1, ms_until(deadline));
    if (rc > 0) return true;
    if (rc < 0 && errno != EINTR) return true;  // the following call reports the error
    if (Clock::now() >= deadline) return false;
  }
}

void set_nodelay(int fd) {
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

}  // namespace

Socket::~Socket() { close(); }

Socket& Socket::operator=(Socket&& o) noexcept {
  if (this != &o) {
    close();
    fd_ = o.fd_;
    o.fd_ = -1;
  }
  return *this;
}

void Socket::shutdown() const {
  if (fd_ >= 0) ::shutdown(fd_, SHUT_RDWR);
}

void Socket::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void Socket::send_all(const void* data, size_t n, Clock::time_point deadline, const std::string& what) const {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    if (!wait_ready(fd_, POLLOUT, deadline)) HEARTH_THROW(IoError, what, ": timed out sending");
    ssize_t k = ::send(fd_, p, n, MSG_NOSIGNAL);
    if (k < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      HEARTH_THROW(IoError, what, ": send failed: ", std::strerror(errno));
    }
    p += k;
    n -= static_cast<size_t>(k);
  }
}

bool Socket::recv_all_or_eof(void* data, size_t n, Clock::time_point deadline, const std::string& what) const {
  char* p = static_cast<char*>(data);
  const size_t total = n;
  while (n > 0) {
    if (!wait_ready(fd_, POLLIN, deadline)) HEARTH_THROW(IoError, what, ": timed out");
    ssize_t k = ::recv(fd_, p, n, 0);
    if (k < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      HEARTH_THROW(IoError, what, ": receive failed: ", std::strerror(errno));
    }
    if (k == 0) {
      if (n == total) return false;
      HEARTH_THROW(IoError, what, ": the connection closed in the middle of a message");
    }
    p += k;
    n -= static_cast<size_t>(k);
  }
  return true;
}

size_t Socket::recv_some(void* data, size_t n, Clock::time_point deadline, const std::string& what) const {
  for (;;) {
    if (!wait_ready(fd_, POLLIN, deadline)) HEARTH_THROW(IoError, what, ": timed out");
    ssize_t k = ::recv(fd_, data, n, 0);
    if (k >= 0) return static_cast<size_t>(k);
    if (errno == EINTR || errno == EAGAIN) continue;
    HEARTH_THROW(IoError, what, ": receive failed: ", std::strerror(errno));
  }
}

void Socket::recv_all(void* data, size_t n, Clock::time_point deadline, const std::string& what) const {
  if (!recv_all_or_eof(data, n, deadline, what)) HEARTH_THROW(IoError, what, ": the peer closed the connection");
}

Socket listen_on(const std::string& host, uint16_t port, int backlog) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  const int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found);
  HEARTH_CHECK(rc == 0, IoError, "[store] cannot listen on ", host, ":", port, ": cannot resolve '", host,
               "': ", ::gai_strerror(rc));
  std::string last_error = "no address";
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    Socket s(::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol));
    if (!s.valid()) {
      last_error = std::string("cannot create a socket: ") + std::strerror(errno);
      continue;
    }
    int one = 1;
    ::setsockopt(s.fd(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(s.fd(), a->ai_addr, a->ai_addrlen) != 0) {
      const int err = errno;
      last_error = std::strerror(err);
      if (err == EADDRINUSE)
        last_error += " (another program, or an earlier run, holds the port; choose another MASTER_PORT)";
      else if (err == EADDRNOTAVAIL)
        last_error +=
            " (it is not an address of this machine: MASTER_ADDR must name rank 0's machine; behind NAT, "
            "give rank 0 MASTER_ADDR=0.0.0.0 to listen on every interface)";
      continue;
    }
    HEARTH_CHECK(::listen(s.fd(), backlog) == 0, IoError, "[store] listen on ", host, ":", port,
                 " failed: ", std::strerror(errno));
    ::freeaddrinfo(found);
    return s;
  }
  ::freeaddrinfo(found);
  HEARTH_THROW(IoError, "[store] cannot listen on ", host, ":", port, ": ", last_error);
}

uint16_t bound_port(const Socket& s) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  HEARTH_CHECK(::getsockname(s.fd(), reinterpret_cast<sockaddr*>(&addr), &len) == 0, IoError,
               "[store] getsockname failed: ", std::strerror(errno));
  if (addr.ss_family == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6*>(&addr)->sin6_port);
  return ntohs(reinterpret_cast<const sockaddr_in*>(&addr)->sin_port);
}

std::string bound_address(const Socket& s) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  HEARTH_CHECK(::getsockname(s.fd(), reinterpret_cast<sockaddr*>(&addr), &len) == 0, IoError,
               "[store] getsockname failed: ", std::strerror(errno));
  char host[NI_MAXHOST] = {};
  const int rc = ::getnameinfo(reinterpret_cast<sockaddr*>(&addr), len, host, sizeof host, nullptr, 0, NI_NUMERICHOST);
  HEARTH_CHECK(rc == 0, IoError, "[store] getnameinfo failed: ", ::gai_strerror(rc));
  return host;
}

std::string peer_address(const Socket& s) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  if (::getpeername(s.fd(), reinterpret_cast<sockaddr*>(&addr), &len) != 0) return "an unknown peer";
  char host[NI_MAXHOST] = {}, port[NI_MAXSERV] = {};
  if (::getnameinfo(reinterpret_cast<sockaddr*>(&addr), len, host, sizeof host, port, sizeof port,
                    NI_NUMERICHOST | NI_NUMERICSERV) != 0)
    return "an unknown peer";
  std::string text;
  if (addr.ss_family == AF_INET6) text += '[';
  text += host;
  if (addr.ss_family == AF_INET6) text += ']';
  text += ':';
  text += port;
  return text;
}

std::string address_to_reach(const std::string& address) {
  if (address == "0.0.0.0") return "127.0.0.1";
  if (address == "::") return "::1";
  return address;
}

Socket connect_to(const std::string& host, uint16_t port, Clock::time_point deadline, const std::string& who) {
  std::string last_error = "no attempt";
  for (;;) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    const std::string service = std::to_string(port);
    int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found);
    if (rc != 0) {
      last_error = std::string("cannot resolve the host: ") + ::gai_strerror(rc);
    } else {
      for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
        Socket s(::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol));
        if (!s.valid()) continue;
        if (::connect(s.fd(), a->ai_addr, a->ai_addrlen) == 0) {
          ::freeaddrinfo(found);
          set_nodelay(s.fd());
          return s;
        }
        last_error = std::strerror(errno);
      }
      ::freeaddrinfo(found);
    }
    if (Clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  HEARTH_THROW(IoError, who, " could not connect to ", host, ":", port, " (", last_error, ")");
}

Socket accept_until(const Socket& listener, Clock::time_point deadline) {
  while (wait_ready(listener.fd(), POLLIN, deadline)) {
    int fd = ::accept4(listener.fd(), nullptr, nullptr, SOCK_CLOEXEC);
    if (fd >= 0) {
      set_nodelay(fd);
      return Socket(fd);
    }
    if (errno != EINTR && errno != EAGAIN && errno != ECONNABORTED) return Socket();
  }
  return Socket();
}

uint16_t find_free_port() {
  // Every interface: a port free there is free on each address.
  Socket s = listen_on("0.0.0.0", 0, 1);
  return bound_port(s);
}

}  // namespace hearth::distributed
