// Which ranks never reached a collective that timed out. A collective that
// times out fails on the ranks that reached it, not on the one that hung, so
// its error alone names the wrong rank. After such a failure each rank that
// reached it records so in the rendezvous store and waits a short while for
// the others to do the same: the ranks that never record are the ones that
// did not arrive (hung, stuck outside the collective, or gone). The Trainer
// adds them to its error ("ranks that did not arrive: 2"), and `hearth launch`
// reads that line to name them instead of the rank that noticed.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace hearth::distributed {

class TcpStore;

inline constexpr const char* kMissingRanksTag = "ranks that did not arrive: ";

// Records that `rank` gave up on a collective, then waits up to `grace` for
// the other ranks of `world_size` to record the same; returns those that did
// not (sorted), or nullopt when the store cannot be reached. The rank that
// serves the store also waits (up to 1.5 `grace` more) for the ranks that did
// arrive to finish asking, so its exit cannot take the store from them.
std::optional<std::vector<int>> ranks_that_did_not_arrive(TcpStore& store, int rank, int world_size,
                                                          std::chrono::milliseconds grace);

// "ranks that did not arrive: 2, 5".
std::string missing_ranks_text(const std::vector<int>& ranks);
// The ranks a line names after kMissingRanksTag; empty when it names none.
std::vector<int> parse_missing_ranks(const std::string& line);

}  // namespace hearth::distributed
