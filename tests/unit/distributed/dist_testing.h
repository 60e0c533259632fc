// Paths of the programs the data-parallel tests start, and a skip for builds
// without Gloo.
#pragma once

#include <string>

#include <gtest/gtest.h>

#include "tests/support/run_command.h"

namespace hearth::testing {

inline const std::string kHearth = HEARTH_TEST_CLI;
inline const std::string kDistWorker = HEARTH_TEST_DIST_WORKER;

// `hearth launch` with quiet OpenMP, one thread per rank (CI has two cores).
inline std::string launch_command(int nproc, const std::string& worker_args, const std::string& env = "") {
  return "env OMP_WAIT_POLICY=passive OMP_NUM_THREADS=1 " + env + " " + kHearth + " launch --nproc_per_node " +
         std::to_string(nproc) + " --grace_period 1 " + kDistWorker + " " + worker_args;
}

}  // namespace hearth::testing

#define HEARTH_SKIP_WITHOUT_GLOO() \
  if (!HEARTH_TEST_GLOO_BUILT) GTEST_SKIP() << "this build has no Gloo (install libgloo-dev)"
