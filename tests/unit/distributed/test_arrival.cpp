// Which ranks never reached a collective that timed out: the ranks that did
// record so in the store, the others are named.
#include <memory>
#include <thread>

#include <gtest/gtest.h>

#include "hearth/distributed/arrival.h"
#include "hearth/distributed/tcp_store.h"

namespace hearth::distributed {
namespace {

TEST(Arrival, TheRanksThatNeverRecordAreTheOnesThatDidNotArrive) {
  TcpStoreOptions o;
  o.port = 0;
  o.world_size = 3;
  o.timeout = std::chrono::seconds(20);
  TcpStore rank0(o);
  o.port = rank0.port();
  o.rank = 1;
  TcpStore rank1(o);
  // Rank 2 hangs: it never records anything.
  std::optional<std::vector<int>> seen_by_1;
  std::thread t([&] { seen_by_1 = ranks_that_did_not_arrive(rank1, 1, 3, std::chrono::milliseconds(500)); });
  std::optional<std::vector<int>> seen_by_0 = ranks_that_did_not_arrive(rank0, 0, 3, std::chrono::milliseconds(500));
  t.join();
  ASSERT_TRUE(seen_by_0 && seen_by_1);
  EXPECT_EQ(*seen_by_0, std::vector<int>{2});
  EXPECT_EQ(*seen_by_1, std::vector<int>{2});
}

// Rank 0 times out first and, once it has named the missing rank, exits and
// takes the store with it; rank 1, which timed out later, must still get its
// answer rather than lose the store in the middle of its wait.
TEST(Arrival, TheRankThatServesTheStoreOutwaitsARankThatArrivedLater) {
  TcpStoreOptions o;
  o.port = 0;
  o.world_size = 3;
  o.timeout = std::chrono::seconds(20);
  auto rank0 = std::make_unique<TcpStore>(o);
  o.port = rank0->port();
  o.rank = 1;
  TcpStore rank1(o);
  std::optional<std::vector<int>> seen_by_1;
  std::thread t([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    seen_by_1 = ranks_that_did_not_arrive(rank1, 1, 3, std::chrono::milliseconds(1500));
  });
  // Rank 0's grace ends 300 ms before rank 1's: without waiting for rank 1 it
  // would take the store away in the middle of rank 1's wait. The margins
  // (1.2 s for rank 1 to arrive) hold on a loaded machine.
  std::optional<std::vector<int>> seen_by_0 = ranks_that_did_not_arrive(*rank0, 0, 3, std::chrono::milliseconds(1500));
  rank0.reset();  // rank 0 exits
  t.join();
  ASSERT_TRUE(seen_by_0 && seen_by_1);
  EXPECT_EQ(*seen_by_0, std::vector<int>{2});
  EXPECT_EQ(*seen_by_1, std::vector<int>{2});
}

TEST(Arrival, TheLineNamesTheRanksAndParsesBack) {
  EXPECT_EQ(missing_ranks_text({2, 5}), "ranks that did not arrive: 2, 5");
  EXPECT_EQ(parse_missing_ranks("error: ... The ranks that did not arrive: 2, 5 (they never reached it)"),
            (std::vector<int>{2, 5}));
  EXPECT_EQ(parse_missing_ranks("ranks that did not arrive: 3."), std::vector<int>{3});
  EXPECT_TRUE(parse_missing_ranks("rank 0 exited with status 1").empty());
}

}  // namespace
}  // namespace hearth::distributed
