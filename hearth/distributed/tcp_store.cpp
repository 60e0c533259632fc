#include "hearth/distributed/tcp_store.h"

#include <sstream>

#include "hearth/distributed/store_protocol.h"
#include "hearth/distributed/tcp_store_server.h"

namespace hearth::dist {
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
  if (options_.rank == 0 && options_.serve) {
    server_ = std::make_unique<TcpStoreServer>(options_.port);
    port_ = server_->port();
  }
  const std::string who = "[store] rank " + std::to_string(options_.rank);
  try {
    socket_ = connect_to(options_.rank == 0 && options_.serve ? "127.0.0.1" : options_.host, port_,
                         Clock::now() + options_.timeout, who);
  } catch (const IoError& e) {
    HEARTH_THROW(StoreTimeout, e.what(), " within ", seconds_text(options_.timeout),
                 ". Rank 0 serves the store: check that it is running and that MASTER_ADDR and MASTER_PORT are "
                 "the same on every rank.");
  }
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
  Status status{};
  socket_.recv_all(&status, sizeof status, deadline, what);
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
  Status status{};
  socket_.recv_all(&status, sizeof status, deadline, what);
  uint32_t len = 0;
  socket_.recv_all(&len, sizeof len, deadline, what);
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
    Status status{};
    socket_.recv_all(&status, sizeof status, deadline, what);
    if (status == Status::timed_out) throw_timeout(key, timeout);
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

}  // namespace hearth::dist
