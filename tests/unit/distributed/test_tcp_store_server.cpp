// The store's server against clients that do not follow its protocol: where
// it listens, what it does with garbage, with requests over the limits, with
// a flood of idle connections and with a wrong token. Every test ends by
// checking that a well-behaved client is still served.
#include <dirent.h>
#include <ifaddrs.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <mutex>
#include <thread>

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "hearth/distributed/store_protocol.h"
#include "hearth/distributed/tcp_store.h"
#include "hearth/distributed/tcp_store_server.h"

using namespace hearth;
using namespace hearth::distributed;
using namespace std::chrono_literals;
namespace proto = hearth::distributed::store_protocol;

namespace {

const std::string kToken = "0123456789abcdef0123456789abcdef";

// The lines a server logged.
class Log {
 public:
  std::function<void(const std::string&)> sink() {
    return [this](const std::string& line) {
      std::lock_guard lock(mutex_);
      lines_.push_back(line);
    };
  }
  std::string text() const {
    std::lock_guard lock(mutex_);
    std::string all;
    for (const std::string& l : lines_) all += l + "\n";
    return all;
  }
  // Waits a little for a line containing `part` (the server logs from its threads).
  bool has(const std::string& part) const {
    for (int i = 0; i < 100; ++i) {
      if (text().find(part) != std::string::npos) return true;
      std::this_thread::sleep_for(20ms);
    }
    return false;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<std::string> lines_;
};

TcpStoreServerOptions server_options(Log& log, const std::string& token = "") {
  TcpStoreServerOptions o;
  o.host = "127.0.0.1";
  o.port = 0;
  o.token = token;
  o.max_connections = 8;
  o.log = log.sink();
  return o;
}

TcpStoreOptions client_options(uint16_t port, const std::string& token = "") {
  return {.host = "127.0.0.1", .port = port, .rank = 1, .world_size = 2, .serve = true, .timeout = 3s, .token = token};
}

// Little-endian bytes of requests, written by hand.
template <typename T>
std::string bytes_of(T v) {
  return std::string(reinterpret_cast<const char*>(&v), sizeof v);
}
std::string with_length(const std::string& s) { return bytes_of(static_cast<uint32_t>(s.size())) + s; }
std::string hello(const std::string& token, uint32_t version = proto::kVersion) {
  return std::string(1, char(proto::Command::hello)) + bytes_of(version) + with_length(token);
}
std::string set_request(const std::string& key, const std::string& value) {
  return std::string(1, char(proto::Command::set)) + with_length(key) + with_length(value);
}
std::string add_request(const std::string& key, int64_t delta) {
  return std::string(1, char(proto::Command::add)) + with_length(key) + bytes_of(delta);
}
std::string get_request(const std::string& key, int64_t ms) {
  return std::string(1, char(proto::Command::get)) + with_length(key) + bytes_of(ms);
}

// A client that sends whatever it is told to.
class RawClient {
 public:
  explicit RawClient(uint16_t port, const std::string& host = "127.0.0.1")
      : s_(connect_to(host, port, Clock::now() + 3s, "raw client")) {}
  void send(const std::string& bytes) { s_.send_all(bytes.data(), bytes.size(), Clock::now() + 3s, "raw send"); }
  uint8_t status() {
    uint8_t st = 0xff;
    s_.recv_all(&st, 1, Clock::now() + 3s, "raw status");
    return st;
  }
  std::string message() {
    uint32_t len = 0;
    s_.recv_all(&len, sizeof len, Clock::now() + 3s, "raw message length");
    std::string m(len, '\0');
    s_.recv_all(m.data(), len, Clock::now() + 3s, "raw message");
    return m;
  }
  template <typename T>
  T value() {
    T v{};
    s_.recv_all(&v, sizeof v, Clock::now() + 3s, "raw value");
    return v;
  }
  // The status, and the message when one follows.
  std::pair<int, std::string> reply() {
    const uint8_t st = status();
    if (st == uint8_t(proto::Status::ok) || st == uint8_t(proto::Status::timed_out)) return {st, ""};
    return {st, message()};
  }
  // True when the server closed the connection (nothing more to read).
  bool closed_by_server() {
    char c = 0;
    try {
      return !s_.recv_all_or_eof(&c, 1, Clock::now() + 3s, "raw eof");
    } catch (const IoError&) {
      return true;  // reset by the peer: closed as well
    }
  }

 private:
  Socket s_;
};

// The server still does its job for a client that follows the protocol.
void expect_served(uint16_t port, const std::string& token = "") {
  TcpStore client(client_options(port, token));
  client.set("still/serving", std::string("yes"));
  EXPECT_EQ(client.get_string("still/serving"), "yes");
  const int64_t counted = client.add("still/count", 2);
  EXPECT_EQ(client.add("still/count", 0), counted);
}

int thread_count() {
  int n = 0;
  if (DIR* d = ::opendir("/proc/self/task")) {
    while (dirent* e = ::readdir(d))
      if (e->d_name[0] != '.') ++n;
    ::closedir(d);
  }
  return n;
}

// An IPv4 address of this machine other than loopback, or "".
std::string non_loopback_address() {
  ifaddrs* all = nullptr;
  if (::getifaddrs(&all) != 0) return "";
  std::string found;
  for (ifaddrs* a = all; a != nullptr && found.empty(); a = a->ifa_next) {
    if (a->ifa_addr == nullptr || a->ifa_addr->sa_family != AF_INET) continue;
    char text[INET_ADDRSTRLEN] = {};
    ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(a->ifa_addr)->sin_addr, text, sizeof text);
    if (std::string(text).rfind("127.", 0) != 0) found = text;
  }
  ::freeifaddrs(all);
  return found;
}

}  // namespace

// --- where it listens ---

TEST(TcpStoreServer, LoopbackStaysLoopback) {
  Log log;
  TcpStoreServer server(server_options(log));
  EXPECT_EQ(server.address(), "127.0.0.1");
  // The store of rank 0 binds the job's address too.
  TcpStore store(
      {.host = "127.0.0.1", .port = 0, .rank = 0, .world_size = 2, .serve = true, .timeout = 3s, .token = ""});
  TcpStore other(client_options(store.port()));
  other.set("k", std::string("v"));
  EXPECT_EQ(store.get_string("k"), "v");

  // Not reachable through another address of this machine.
  const std::string outside = non_loopback_address();
  if (outside.empty()) GTEST_SKIP() << "this machine has no address besides loopback";
  EXPECT_THROW(connect_to(outside, server.port(), Clock::now() + 200ms, "outside"), IoError) << outside;
}

TEST(TcpStoreServer, LocalhostIsResolvedToLoopback) {
  Log log;
  TcpStoreServerOptions o = server_options(log);
  o.host = "localhost";
  TcpStoreServer server(o);
  EXPECT_TRUE(server.address() == "127.0.0.1" || server.address() == "::1") << server.address();
}

TEST(TcpStoreServer, AllInterfacesOnlyWhenAskedFor) {
  TcpStore store({.host = "0.0.0.0", .port = 0, .rank = 0, .world_size = 2, .serve = true, .timeout = 3s, .token = ""});
  TcpStore other(client_options(store.port()));
  other.set("k", std::string("v"));
  EXPECT_EQ(store.get_string("k"), "v");
  const std::string outside = non_loopback_address();
  if (!outside.empty()) RawClient reach(store.port(), outside);  // connects
}

TEST(TcpStoreServer, AnAddressOfAnotherMachineIsRefused) {
  Log log;
  TcpStoreServerOptions o = server_options(log);
  o.host = "192.0.2.1";  // TEST-NET-1: never an address of this machine
  try {
    TcpStoreServer server(o);
    FAIL() << "listened on an address of another machine";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot listen on 192.0.2.1:"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("not an address of this machine"), std::string::npos) << e.what();
  }
}

// --- malformed requests ---

TEST(TcpStoreServer, GarbageClosesThatConnectionOnly) {
  Log log;
  TcpStoreServer server(server_options(log));
  {
    RawClient http(server.port());
    http.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    auto [st, msg] = http.reply();
    EXPECT_EQ(st, int(proto::Status::error));
    EXPECT_NE(msg.find("opened with command 0x47 instead of a hello"), std::string::npos) << msg;
    EXPECT_TRUE(http.closed_by_server());
  }
  EXPECT_TRUE(log.has("[store server] closed the connection from 127.0.0.1:")) << log.text();
  EXPECT_TRUE(log.has("instead of a hello")) << log.text();
  {
    RawClient unknown(server.port());
    unknown.send(hello("") + std::string(1, '\x7f') + "junk");
    EXPECT_EQ(unknown.status(), uint8_t(proto::Status::ok));
    auto [st, msg] = unknown.reply();
    EXPECT_EQ(st, int(proto::Status::error));
    EXPECT_NE(msg.find("unknown command 0x7f"), std::string::npos) << msg;
    EXPECT_TRUE(unknown.closed_by_server());
  }
  {
    // A request cut short: the key announces 10 bytes, 3 come, then the end.
    RawClient cut(server.port());
    cut.send(hello("") + std::string(1, char(proto::Command::set)) + bytes_of(uint32_t{10}) + "abc");
    EXPECT_EQ(cut.status(), uint8_t(proto::Status::ok));
  }
  EXPECT_TRUE(log.has("closed in the middle of a request (reading key)")) << log.text();
  {
    RawClient negative(server.port());
    negative.send(hello("") + get_request("k", -5));
    EXPECT_EQ(negative.status(), uint8_t(proto::Status::ok));
    auto [st, msg] = negative.reply();
    EXPECT_EQ(st, int(proto::Status::error));
    EXPECT_NE(msg.find("negative timeout"), std::string::npos) << msg;
  }
  {
    RawClient twice(server.port());
    twice.send(hello("") + hello(""));
    EXPECT_EQ(twice.status(), uint8_t(proto::Status::ok));
    EXPECT_EQ(twice.reply().first, int(proto::Status::error));
  }
  expect_served(server.port());
}

TEST(TcpStoreServer, AddToAValueThatIsNotAnIntegerFailsForThatClientOnly) {
  Log log;
  TcpStoreServer server(server_options(log));
  RawClient raw(server.port());
  raw.send(hello("") + set_request("k", "abc") + add_request("k", 1));
  EXPECT_EQ(raw.status(), uint8_t(proto::Status::ok));  // hello
  EXPECT_EQ(raw.status(), uint8_t(proto::Status::ok));  // set
  auto [st, msg] = raw.reply();
  EXPECT_EQ(st, int(proto::Status::error));
  EXPECT_NE(msg.find("cannot add to 'k': the value is not an integer counter"), std::string::npos) << msg;
  // The connection goes on; the value is untouched.
  raw.send(get_request("k", 0));
  EXPECT_EQ(raw.status(), uint8_t(proto::Status::ok));
  EXPECT_EQ(raw.message(), "abc");
  raw.send(set_request("big", "9223372036854775807") + add_request("big", 1));
  EXPECT_EQ(raw.status(), uint8_t(proto::Status::ok));
  auto [st2, msg2] = raw.reply();
  EXPECT_EQ(st2, int(proto::Status::error));
  EXPECT_NE(msg2.find("overflows a 64-bit counter"), std::string::npos) << msg2;

  // Through the client: StoreRefused, and the client goes on working.
  TcpStore client(client_options(server.port()));
  client.set("text", std::string("12abc"));
  try {
    client.add("text", 1);
    FAIL() << "added to '12abc'";
  } catch (const StoreRefused& e) {
    EXPECT_NE(std::string(e.what()).find("[store] rank 1 adding to 'text' at 127.0.0.1:"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("not an integer counter"), std::string::npos) << e.what();
  }
  EXPECT_EQ(client.add("n", 5), 5);
  EXPECT_EQ(client.add("n", -7), -2);
  expect_served(server.port());
}

// --- limits ---

TEST(TcpStoreServer, OversizedKeysAndValuesAreRefused) {
  Log log;
  TcpStoreServer server(server_options(log));
  {
    RawClient key(server.port());
    key.send(hello("") + std::string(1, char(proto::Command::set)) + bytes_of(uint32_t{proto::kMaxKeyBytes + 1}));
    EXPECT_EQ(key.status(), uint8_t(proto::Status::ok));
    auto [st, msg] = key.reply();
    EXPECT_EQ(st, int(proto::Status::error));
    EXPECT_NE(msg.find("a key of 4097 bytes is longer than the 4096 allowed"), std::string::npos) << msg;
    EXPECT_TRUE(key.closed_by_server());
  }
  {
    // Refused on the announced length, before a byte of the value is sent.
    RawClient value(server.port());
    value.send(hello("") + std::string(1, char(proto::Command::set)) + with_length("k") +
               bytes_of(uint32_t{0xffffffffu}));
    EXPECT_EQ(value.status(), uint8_t(proto::Status::ok));
    auto [st, msg] = value.reply();
    EXPECT_EQ(st, int(proto::Status::error));
    EXPECT_NE(msg.find("a value of 4294967295 bytes is longer than the 16777216 allowed"), std::string::npos) << msg;
  }
  {
    RawClient token(server.port());
    token.send(std::string(1, char(proto::Command::hello)) + bytes_of(proto::kVersion) + bytes_of(uint32_t{1u << 30}));
    auto [st, msg] = token.reply();
    EXPECT_EQ(st, int(proto::Status::error));
    EXPECT_NE(msg.find("a token of 1073741824 bytes"), std::string::npos) << msg;
  }
  TcpStore client(client_options(server.port()));
  EXPECT_THROW(client.set("k", std::vector<char>(proto::kMaxValueBytes + 1)), ValueError);
  EXPECT_THROW(client.set(std::string(proto::kMaxKeyBytes + 1, 'k'), std::string("v")), ValueError);
  client.set("k", std::vector<char>(proto::kMaxValueBytes));  // the largest allowed
  EXPECT_EQ(client.get("k").size(), proto::kMaxValueBytes);
  expect_served(server.port());
}

TEST(TcpStoreServer, TheMapHoldsAtMostItsLimit) {
  Log log;
  TcpStoreServerOptions o = server_options(log);
  o.max_stored_bytes = 1000;
  TcpStoreServer server(o);
  TcpStore client(client_options(server.port()));
  client.set("a", std::string(600, 'x'));  // 1 + 600 + 64 bytes
  try {
    client.set("b", std::string(600, 'y'));
    FAIL() << "stored past the limit";
  } catch (const StoreRefused& e) {
    EXPECT_NE(std::string(e.what()).find("cannot set 'b': the store would hold 1330 bytes, more than its limit of "
                                         "1000"),
              std::string::npos)
        << e.what();
  }
  client.set("a", std::string(900, 'z'));  // replacing counts the new value alone
  EXPECT_EQ(client.get_string("a").size(), 900u);
  EXPECT_THROW(client.add("counter", 1), StoreRefused);
  client.set("a", std::string(""));
  EXPECT_EQ(client.add("counter", 1), 1);
  EXPECT_THROW(client.wait({"b"}, 10ms), StoreTimeout);
}

TEST(TcpStoreServer, AFloodOfIdleConnectionsDoesNotGrowThreadsWithoutBound) {
  Log log;
  TcpStoreServerOptions o = server_options(log);
  o.max_connections = 2 * 4 + 16;  // what a TcpStore of 2 ranks allows
  TcpStoreServer server(o);
  const int before = thread_count();
  std::vector<std::unique_ptr<RawClient>> flood;
  for (int i = 0; i < 300; ++i) flood.push_back(std::make_unique<RawClient>(server.port()));
  std::this_thread::sleep_for(300ms);  // the server has accepted them all by now
  EXPECT_LE(thread_count(), before + o.max_connections) << "threads before the flood: " << before;
  EXPECT_EQ(server.connections(), o.max_connections);
  // The ones past the limit were told so and closed.
  auto [st, msg] = flood.back()->reply();
  EXPECT_EQ(st, int(proto::Status::busy));
  EXPECT_NE(msg.find("serves at most 24 connections at once"), std::string::npos) << msg;
  EXPECT_TRUE(log.has("refused the connection from 127.0.0.1:")) << log.text();
  // Logging is bounded too: 20 lines at most, the rest counted.
  const std::string logged = log.text();
  EXPECT_LE(std::count(logged.begin(), logged.end(), '\n'), 21) << logged;

  // While full, a client waits for a free connection (up to its timeout)...
  std::thread release([&] {
    std::this_thread::sleep_for(300ms);
    flood.clear();
  });
  expect_served(server.port());
  release.join();
  // ... and once the flood is gone, its threads are too.
  for (int i = 0; i < 100 && thread_count() > before + 2; ++i) std::this_thread::sleep_for(20ms);
  EXPECT_LE(thread_count(), before + 2);
}

TEST(TcpStoreServer, AConnectionThatNeverSaysHelloIsClosed) {
  Log log;
  TcpStoreServerOptions o = server_options(log);
  o.handshake_timeout = 200ms;
  TcpStoreServer server(o);
  RawClient silent(server.port());
  EXPECT_TRUE(log.has("closed the connection from 127.0.0.1:")) << log.text();
  EXPECT_TRUE(log.has("timed out")) << log.text();
  EXPECT_EQ(silent.reply().first, int(proto::Status::error));
  EXPECT_TRUE(silent.closed_by_server());
  EXPECT_EQ(server.connections(), 0);
  expect_served(server.port());
}

// --- the token ---

TEST(TcpStoreServer, OnlyTheRightTokenIsServed) {
  Log log;
  TcpStoreServer server(server_options(log, kToken));
  try {
    TcpStore wrong(client_options(server.port(), "fedcba9876543210fedcba9876543210"));
    FAIL() << "a wrong token was served";
  } catch (const StoreRefused& e) {
    EXPECT_NE(std::string(e.what()).find("[store] rank 1 saying hello to 127.0.0.1:"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("wrong token (HEARTH_STORE_TOKEN differs from rank 0's)"), std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(log.has("refused the connection from 127.0.0.1:")) << log.text();
  try {
    TcpStore none(client_options(server.port()));
    FAIL() << "no token was served";
  } catch (const StoreRefused& e) {
    EXPECT_NE(std::string(e.what()).find("presented no token"), std::string::npos) << e.what();
  }
  // A token that shares a prefix, or is longer, is just as wrong.
  auto join = [&](const std::string& token) { TcpStore s(client_options(server.port(), token)); };
  EXPECT_THROW(join(kToken.substr(0, 31)), StoreRefused);
  EXPECT_THROW(join(kToken + "0"), StoreRefused);
  {
    // No request is served before the hello.
    RawClient raw(server.port());
    raw.send(set_request("k", "v"));
    EXPECT_EQ(raw.reply().first, int(proto::Status::error));
    EXPECT_TRUE(raw.closed_by_server());
    RawClient other_version(server.port());
    other_version.send(hello(kToken, proto::kVersion + 1));
    auto [st, msg] = other_version.reply();
    EXPECT_EQ(st, int(proto::Status::refused));
    EXPECT_NE(msg.find("version 2 of the store protocol"), std::string::npos) << msg;
  }
  expect_served(server.port(), kToken);
}

TEST(TcpStoreServer, RankZeroRequiresItsTokenOfEveryRank) {
  TcpStore rank0(
      {.host = "127.0.0.1", .port = 0, .rank = 0, .world_size = 2, .serve = true, .timeout = 3s, .token = kToken});
  TcpStore rank1(client_options(rank0.port(), kToken));
  rank1.set("k", std::string("v"));
  EXPECT_EQ(rank0.get_string("k"), "v");
  EXPECT_THROW({ TcpStore s(client_options(rank0.port())); }, StoreRefused);
}

// --- the decoding alone ---

TEST(StoreProtocol, DecodesEachRequestAndRefusesBrokenOnes) {
  auto decode = [](const std::string& b, bool first = false) {
    return proto::decode_request(b.data(), b.size(), first);
  };
  auto r = decode(set_request("key", "value") + "next");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->first.command, proto::Command::set);
  EXPECT_EQ(r->first.key, "key");
  EXPECT_EQ(std::string(r->first.value.begin(), r->first.value.end()), "value");
  EXPECT_EQ(r->second, set_request("key", "value").size());
  EXPECT_EQ(decode(add_request("c", -3))->first.number, -3);
  EXPECT_EQ(decode(get_request("c", int64_t{1} << 62))->first.number, proto::kMaxWaitMs);  // capped
  EXPECT_EQ(decode(hello(kToken), true)->first.key, kToken);
  EXPECT_FALSE(decode("").has_value());
  EXPECT_THROW(decode(set_request("key", "value").substr(0, 10)), proto::ProtocolError);
  EXPECT_THROW(decode(std::string(1, '\0')), proto::ProtocolError);
  EXPECT_THROW(decode(set_request("k", "v"), true), proto::ProtocolError);
  EXPECT_THROW(decode(hello("")), proto::ProtocolError);  // not twice
}

TEST(StoreProtocol, SecretsCompareWholly) {
  EXPECT_TRUE(proto::same_secret(kToken, kToken));
  EXPECT_TRUE(proto::same_secret("", ""));
  EXPECT_FALSE(proto::same_secret(kToken, kToken.substr(0, 31)));
  EXPECT_FALSE(proto::same_secret(kToken + "x", kToken));
  EXPECT_FALSE(proto::same_secret(std::string("a\0", 2), "a"));
  std::string other = kToken;
  other[0] = 'x';
  EXPECT_FALSE(proto::same_secret(other, kToken));
}
