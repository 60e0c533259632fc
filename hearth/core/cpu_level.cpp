#include "hearth/core/cpu_level.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#endif

#include "hearth/core/switch_list.h"

namespace hearth {
namespace {

// The levels this build compiled the hot kernels for, highest first; set by
// cmake/cpu_dispatch.cmake (baseline only where the build has no copies).
#ifndef HEARTH_CPU_LEVELS_BUILT
#define HEARTH_CPU_LEVELS_BUILT 0
#endif
constexpr CpuLevel kHighestBuilt = static_cast<CpuLevel>(HEARTH_CPU_LEVELS_BUILT);

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
// x86-64-v3's features that clang 14's __builtin_cpu_supports cannot name
// (F16C, MOVBE, LZCNT), read from CPUID: leaf 1 ECX bits 29 and 22, leaf
// 0x80000001 ECX bit 5.
bool has_v3_extras() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return false;
  const bool f16c = (c >> 29) & 1u, movbe = (c >> 22) & 1u;
  if (!__get_cpuid(0x80000001u, &a, &b, &c, &d)) return false;
  const bool lzcnt = (c >> 5) & 1u;
  return f16c && movbe && lzcnt;
}
#endif

CpuLevel detect() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  // Feature by feature rather than "x86-64-v3": clang 14 knows only some of
  // the names. __builtin_cpu_supports also checks that the OS saves the wide
  // registers (for AVX2 and AVX-512), which CPUID alone does not say.
  __builtin_cpu_init();
  const bool v3 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi") &&
                  __builtin_cpu_supports("bmi2") && has_v3_extras();
  const bool v4 = v3 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                  __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx512dq") &&
                  __builtin_cpu_supports("avx512vl");
  return v4 ? CpuLevel::avx512 : v3 ? CpuLevel::avx2 : CpuLevel::baseline;
#else
  return CpuLevel::baseline;
#endif
}

struct Choice {
  CpuLevel level;
  std::string why;
};

std::string default_reason() {
  const CpuLevel best = best_cpu_level();
  if (best == default_cpu_level()) return "the best this CPU and build support";
  return std::string("the default; this CPU also supports ") + cpu_level_name(best) +
         ", used with HEARTH_CPU_LEVEL=" + cpu_level_name(best);
}

Choice choose() {
  const CpuLevel best = best_cpu_level();
  const Switch& level_switch = switches::cpu_level();
  const std::string text = level_switch.text();
  const char* forced = text.c_str();
  if (text.empty()) return {default_cpu_level(), default_reason()};
  const std::optional<CpuLevel> asked = parse_cpu_level(text);
  if (!asked) {
    // Read while kernels register, before main: an exception here could only
    // terminate, so the mistake is said on stderr and the default stands (a
    // program's start refuses the value: validate_switches_or_exit).
    std::fprintf(stderr, "hearth: HEARTH_CPU_LEVEL=%s is not one of baseline, avx2, avx512; using %s\n",
                 text.substr(0, 100).c_str(), cpu_level_name(default_cpu_level()));
    return {default_cpu_level(), "HEARTH_CPU_LEVEL=" + text.substr(0, 100) + " is not a level; the default"};
  }
  if (*asked > best)
    return {best, std::string("HEARTH_CPU_LEVEL=") + forced + ", capped at the best this CPU and build support"};
  return {*asked, std::string("forced by HEARTH_CPU_LEVEL=") + forced};
}

const Choice& choice() {
  static const Choice c = choose();
  return c;
}

}  // namespace

const char* cpu_level_name(CpuLevel level) {
  switch (level) {
    case CpuLevel::baseline:
      return "baseline";
    case CpuLevel::avx2:
      return "avx2";
    case CpuLevel::avx512:
      return "avx512";
  }
  return "?";
}

std::optional<CpuLevel> parse_cpu_level(std::string_view name) {
  for (CpuLevel l : {CpuLevel::baseline, CpuLevel::avx2, CpuLevel::avx512})
    if (name == cpu_level_name(l)) return l;
  return std::nullopt;
}

CpuLevel best_cpu_level() {
  static const CpuLevel best = std::min(detect(), kHighestBuilt);
  return best;
}

CpuLevel default_cpu_level() { return std::min(best_cpu_level(), CpuLevel::avx2); }

CpuLevel cpu_level() { return choice().level; }

std::string cpu_level_description() { return std::string(cpu_level_name(cpu_level())) + " (" + choice().why + ")"; }

}  // namespace hearth
