#include <thread>

#include <gtest/gtest.h>

#include "hearth/distributed/tcp_store.h"

using namespace hearth;
using namespace hearth::distributed;
using namespace std::chrono_literals;

namespace {

TcpStoreOptions server_options(int world = 2) {
  return {.host = "127.0.0.1", .port = 0, .rank = 0, .world_size = world, .serve = true, .timeout = 5s, .token = ""};
}

TcpStoreOptions client_options(uint16_t port, int rank, int world = 2) {
  return {.host = "127.0.0.1", .port = port, .rank = rank, .world_size = world, .serve = true, .timeout = 5s, .token = ""};
}

}  // namespace

TEST(TcpStore, SetGetAddWaitAcrossClients) {
  TcpStore server(server_options());
  ASSERT_NE(server.port(), 0);
  TcpStore client(client_options(server.port(), 1));
  std::thread late([&] {
    std::this_thread::sleep_for(50ms);
    client.set("id", std::string("abc"));
  });
  EXPECT_EQ(server.get_string("id"), "abc");  // blocks until the other rank sets it
  late.join();
  EXPECT_EQ(server.add("n", 2), 2);
  EXPECT_EQ(client.add("n", 3), 5);
  EXPECT_EQ(client.get_string("n"), "5");
  server.set("a", std::string(""));
  client.wait({"a", "id"});
}

TEST(TcpStore, BarrierReleasesOnlyWhenAllRanksArrive) {
  TcpStore server(server_options(3));
  TcpStore c1(client_options(server.port(), 1, 3)), c2(client_options(server.port(), 2, 3));
  std::atomic<int> passed{0};
  std::thread t1([&] {
    c1.barrier("b");
    ++passed;
  });
  std::thread t2([&] {
    c2.barrier("b");
    ++passed;
  });
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(passed.load(), 0);
  server.barrier("b");
  t1.join();
  t2.join();
  EXPECT_EQ(passed.load(), 2);
}

TEST(TcpStore, TimeoutNamesTheRankTheKeyAndTheAddress) {
  TcpStore server(server_options());
  TcpStore client(client_options(server.port(), 1));
  try {
    client.get("nccl/unique_id", 200ms);
    FAIL() << "get of a missing key returned";
  } catch (const StoreTimeout& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("[store] rank 1 timed out after 0.2 s waiting for key 'nccl/unique_id'"), std::string::npos)
        << msg;
    EXPECT_NE(msg.find("127.0.0.1:" + std::to_string(server.port())), std::string::npos) << msg;
  }
  EXPECT_THROW(client.wait({"never"}, 100ms), StoreTimeout);
  // The connection still works after a timeout.
  server.set("x", std::string("1"));
  EXPECT_EQ(client.get_string("x"), "1");
}

TEST(TcpStore, NoServerNamesTheRankAndTheAddress) {
  const uint16_t port = find_free_port();  // nothing listens there
  TcpStoreOptions o = client_options(port, 1);
  o.timeout = 300ms;
  try {
    TcpStore client(o);
    FAIL() << "connected to nothing";
  } catch (const StoreTimeout& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("[store] rank 1 could not connect to 127.0.0.1:" + std::to_string(port)), std::string::npos)
        << msg;
    EXPECT_NE(msg.find("MASTER_ADDR and MASTER_PORT"), std::string::npos) << msg;
  }
}
