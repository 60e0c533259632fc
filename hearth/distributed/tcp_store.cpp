#include "hearth/distributed/tcp_store.h"

#include <sstream>
#include <thread>

#include "hearth/distributed/store_protocol.h"
#include "hearth/distributed/tcp_store_server.h"

namespace hearth::distributed {
namespace {

using namespace store_protocol;

std::string seconds_text(std::chrono::milliseconds t) {
  std::ostringstream os;
  os << static_cast<double>(t.count()) / 1000.0 << " s";
  return os.str();
}

}  // namespace

TcpStore::TcpStore(TcpStoreOptions options) : options_(std::move(options)), port_(options_.port) {
  HEARTH_CHECK(options_.world_size >= 1 && options_.rank >= 0 && options_.rank < options_.world_size, ValueError,
               "[store] rank ", options_.rank, " is outside [0, world_size ", options_.world_size, ")");
  HEARTH_CHECK(options_.token.size() <= kMaxTokenBytes, ValueError, "[store] the token has ", options_.token.size(),
               " bytes; at most ", kMaxTokenBytes, " are allowed");
  std::string host = options_.host;
  if (options_.rank == 0 && options_.serve) {
    TcpStoreServerOptions server;
    server.host = options_.host;
    server.port = options_.port;
    server.token = options_.token;
    server.max_connections = store_max_connections(options_.world_size);
    server_ = std::make_unique<TcpStoreServer>(std::move(server));
    port_ = server_->port();
    host = address_to_reach(server_->address());
  }
  const std::string who = "[store] rank " + std::to_string(options_.rank);
  const auto deadline = Clock::now() + options_.timeout;
  try {
    while (!connect_once(host, deadline)) {
      HEARTH_CHECK(Clock::now() < deadline, StoreTimeout, who, " could not join the store at ", address(), " within ",
                   seconds_text(options_.timeout),
                   ": the server stayed busy with as many connections as it serves (other programs connecting "
                   "to MASTER_PORT?)");
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  } catch (const StoreRefused&) {
    throw;
  } catch (const StoreTimeout&) {
    throw;
  } catch (const IoError& e) {
    HEARTH_THROW(StoreTimeout, e.what(), " within ", seconds_text(options_.timeout),
                 ". Rank 0 serves the store: check that it is running and that MASTER_ADDR and MASTER_PORT are "
                 "the same on every rank.");
  }
}

bool TcpStore::connect_once(const std::string& host, Clock::time_point deadline) {
  const std::string who = "[store] rank " + std::to_string(options_.rank);
  socket_ = connect_to(host, port_, deadline, who);
  const std::string what = who + " saying hello to " + address();
  std::string hello(1, static_cast<char>(Command::hello));
  const uint32_t version = kVersion;
  const auto len = static_cast<uint32_t>(options_.token.size());
  hello.append(reinterpret_cast<const char*>(&version), sizeof version);
  hello.append(reinterpret_cast<const char*>(&len), sizeof len);
  hello += options_.token;
  socket_.send_all(hello.data(), hello.size(), deadline, what);
  try {
    read_status(deadline, what);
  } catch (const StoreRefused&) {
    if (last_status_ != static_cast<uint8_t>(Status::busy)) throw;
    socket_.close();
    return false;
  }
  return true;
}

uint8_t TcpStore::read_status(Clock::time_point deadline, const std::string& what) {
  uint8_t status = 0;
  socket_.recv_all(&status, sizeof status, deadline, what);
  last_status_ = status;
  if (status == static_cast<uint8_t>(Status::ok) || status == static_cast<uint8_t>(Status::timed_out)) return status;
  uint32_t len = 0;
  socket_.recv_all(&len, sizeof len, deadline, what);
  HEARTH_CHECK(len <= kMaxMessageBytes, IoError, what, ": the server's reply is malformed (a message of ", len,
               " bytes)");
  std::string message(len, '\0');
  socket_.recv_all(message.data(), len, deadline, what);
  HEARTH_THROW(StoreRefused, what, ": ", message);
}

TcpStore::~TcpStore() {
  socket_.close();
  server_.reset();
}

std::string TcpStore::address() const { return options_.host + ":" + std::to_string(port_); }

void TcpStore::throw_timeout(const std::string& key, std::chrono::milliseconds timeout) const {
  HEARTH_THROW(StoreTimeout, "[store] rank ", options_.rank, " timed out after ", seconds_text(timeout),
               " waiting for key '", key, "' in the store at ", address(),
               ": a rank that should have set it has not (it may have failed or be stuck; see its output)");
}

void TcpStore::send_request(uint8_t command, const std::string& key, Clock::time_point deadline) {
  HEARTH_CHECK(key.size() <= kMaxKeyBytes, ValueError, "[store] key '", key.substr(0, 40), "...' is longer than ",
               kMaxKeyBytes, " bytes");
  const std::string what = "[store] rank " + std::to_string(options_.rank) + " talking to " + address();
  socket_.send_all(&command, 1, deadline, what);
  auto len = static_cast<uint32_t>(key.size());
  socket_.send_all(&len, sizeof len, deadline, what);
  socket_.send_all(key.data(), key.size(), deadline, what);
}

void TcpStore::set(const std::string& key, const std::string& value) {
  set(key, std::vector<char>(value.begin(), value.end()));
}

void TcpStore::set(const std::string& key, const std::vector<char>& value) {
  HEARTH_CHECK(value.size() <= kMaxValueBytes, ValueError, "[store] the value of key '", key, "' has ", value.size(),
               " bytes; at most ", kMaxValueBytes, " are allowed");
  std::lock_guard lock(mutex_);
  const auto deadline = Clock::now() + options_.timeout;
  const std::string what = "[store] rank " + std::to_string(options_.rank) + " setting '" + key + "' at " + address();
  send_request(static_cast<uint8_t>(Command::set), key, deadline);
  auto len = static_cast<uint32_t>(value.size());
  socket_.send_all(&len, sizeof len, deadline, what);
  socket_.send_all(value.data(), value.size(), deadline, what);
  read_status(deadline, what);
}

std::vector<char> TcpStore::get(const std::string& key) { return get(key, options_.timeout); }

std::vector<char> TcpStore::get(const std::string& key, std::chrono::milliseconds timeout) {
  std::lock_guard lock(mutex_);
  // The server answers when its wait ends; allow the reply some slack.
  const auto deadline = Clock::now() + timeout + std::chrono::seconds(10);
  const std::string what = "[store] rank " + std::to_string(options_.rank) + " getting '" + key + "' at " + address();
  send_request(static_cast<uint8_t>(Command::get), key, deadline);
  int64_t ms = timeout.count();
  socket_.send_all(&ms, sizeof ms, deadline, what);
  const auto status = static_cast<Status>(read_status(deadline, what));
  uint32_t len = 0;
  socket_.recv_all(&len, sizeof len, deadline, what);
  HEARTH_CHECK(len <= kMaxValueBytes, IoError, what, ": the server's reply is malformed (a value of ", len, " bytes)");
  std::vector<char> value(len);
  socket_.recv_all(value.data(), len, deadline, what);
  if (status == Status::timed_out) throw_timeout(key, timeout);
  return value;
}

int64_t TcpStore::add(const std::string& key, int64_t delta) {
  std::lock_guard lock(mutex_);
  const auto deadline = Clock::now() + options_.timeout;
  const std::string what = "[store] rank " + std::to_string(options_.rank) + " adding to '" + key + "' at " + address();
  send_request(static_cast<uint8_t>(Command::add), key, deadline);
  socket_.send_all(&delta, sizeof delta, deadline, what);
  read_status(deadline, what);
  int64_t value = 0;
  socket_.recv_all(&value, sizeof value, deadline, what);
  return value;
}

void TcpStore::wait(const std::vector<std::string>& keys) { wait(keys, options_.timeout); }

void TcpStore::wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  const auto end = Clock::now() + timeout;
  std::lock_guard lock(mutex_);
  for (const std::string& key : keys) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - Clock::now());
    if (left.count() < 0) left = std::chrono::milliseconds(0);
    const auto deadline = Clock::now() + left + std::chrono::seconds(10);
    const std::string what =
        "[store] rank " + std::to_string(options_.rank) + " waiting for '" + key + "' at " + address();
    send_request(static_cast<uint8_t>(Command::wait), key, deadline);
    int64_t ms = left.count();
    socket_.send_all(&ms, sizeof ms, deadline, what);
    if (static_cast<Status>(read_status(deadline, what)) == Status::timed_out) throw_timeout(key, timeout);
  }
}

void TcpStore::barrier(const std::string& name) {
  const std::string key = "barrier/" + name;
  const int64_t arrived = add(key, 1);
  HEARTH_CHECK(arrived <= options_.world_size, ValueError, "[store] barrier '", name, "' was entered ", arrived,
               " times by ", options_.world_size, " ranks: use a new name for each barrier");
  if (arrived == options_.world_size) set(key + "/done", std::string("1"));
  wait({key + "/done"});
}

}  // namespace hearth::distributed
