#include "hearth/distributed/arrival.h"

#include <algorithm>
#include <cctype>

#include "hearth/core/errors.h"
#include "hearth/distributed/tcp_store.h"

namespace hearth::distributed {
namespace {

std::string key_of(int rank) { return "hearth/collective_timed_out/" + std::to_string(rank); }
std::string done_key_of(int rank) { return key_of(rank) + "/named"; }

}  // namespace

std::optional<std::vector<int>> ranks_that_did_not_arrive(TcpStore& store, int rank, int world_size,
                                                          std::chrono::milliseconds grace) {
  using Clock = std::chrono::steady_clock;
  try {
    store.set(key_of(rank), std::string("1"));
    const auto end = Clock::now() + grace;
    std::vector<int> missing;
    for (int r = 0; r < world_size; ++r) {
      if (r == rank) continue;
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - Clock::now());
      if (left.count() < 1) left = std::chrono::milliseconds(1);  // still asks: the key may be there
      try {
        store.wait({key_of(r)}, left);
      } catch (const StoreTimeout&) {
        missing.push_back(r);
      }
    }
    try {
      store.set(done_key_of(rank), std::string("1"));
    } catch (const Error&) {
      // The rank that serves the store may exit as soon as it sees the key,
      // before the reply reaches this rank: the answer is already here.
    }
    // The rank that timed out first finishes first; if it serves the store and
    // exits, a rank that arrived later loses the store in the middle of its own
    // wait and can name no one. So it waits for those to finish too: each
    // arrived within `grace` of this rank and waits at most `grace` itself
    // (half as long again allows for a loaded machine).
    if (store.serves()) {
      const auto others_end = Clock::now() + grace + grace / 2;
      for (int r = 0; r < world_size; ++r) {
        if (r == rank || std::find(missing.begin(), missing.end(), r) != missing.end()) continue;
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(others_end - Clock::now());
        if (left.count() < 1) left = std::chrono::milliseconds(1);
        try {
          store.wait({done_key_of(r)}, left);
        } catch (const StoreTimeout&) {
          // that rank is gone or stuck: its answer no longer matters here
        }
      }
    }
    return missing;
  } catch (const Error&) {
    return std::nullopt;  // the store went away (rank 0 serves it)
  }
}

std::string missing_ranks_text(const std::vector<int>& ranks) {
  std::string s = kMissingRanksTag;
  for (size_t i = 0; i < ranks.size(); ++i) s += (i ? ", " : "") + std::to_string(ranks[i]);
  return s;
}

std::vector<int> parse_missing_ranks(const std::string& line) {
  std::vector<int> out;
  const size_t at = line.find(kMissingRanksTag);
  if (at == std::string::npos) return out;
  size_t i = at + std::string(kMissingRanksTag).size();
  while (i < line.size() && std::isdigit(static_cast<unsigned char>(line[i]))) {
    size_t j = i;
    while (j < line.size() && std::isdigit(static_cast<unsigned char>(line[j]))) ++j;
    if (j - i > 9) break;
    out.push_back(std::stoi(line.substr(i, j - i)));
    if (line.compare(j, 2, ", ") != 0) break;
    i = j + 2;
  }
  return out;
}

}  // namespace hearth::distributed
