// The switch registry (hearth/core/switches.h): typed parsing with ranges,
// one-line refusals, read once or at each use, config values below the
// environment, and every program refusing a bad value at start.
#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "hearth/core/errors.h"
#include "hearth/core/switch_list.h"
#include "hearth/core/switches.h"
#include "tests/support/run_command.h"
#include "tests/support/scoped_env.h"

// The test switches name only the fields they set (designated initializers).
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace hearth {
namespace {

using testing::ScopedEnv;

// The message of the ValueError `f` throws, or "" when it throws none.
template <class F>
std::string refusal(F&& f) {
  try {
    f();
  } catch (const ValueError& e) {
    return e.what();
  }
  return "";
}

const Switch& declared(const char* name) {
  const Switch* s = find_switch(name);
  if (s == nullptr) throw std::runtime_error(std::string(name) + " is not declared");
  return *s;
}

TEST(Switches, AFlagTakesTheUsualWordsInAnyCaseAndRefusesOthers) {
  FlagSwitch s({.name = "HEARTH_UNIT_TEST_FLAG", .default_value = "1", .reading = SwitchReading::each_use});
  EXPECT_TRUE(s.get());  // unset: the default
  for (const char* off : {"0", "false", "FALSE", "no", "Off"}) {
    ScopedEnv e("HEARTH_UNIT_TEST_FLAG", off);
    EXPECT_FALSE(s.get()) << off;
  }
  for (const char* on : {"1", "true", "Yes", "ON"}) {
    ScopedEnv e("HEARTH_UNIT_TEST_FLAG", on);
    EXPECT_TRUE(s.get()) << on;
  }
  {
    ScopedEnv e("HEARTH_UNIT_TEST_FLAG", "");  // empty is unset
    EXPECT_TRUE(s.get());
  }
  ScopedEnv e("HEARTH_UNIT_TEST_FLAG", "garbage");
  EXPECT_EQ(refusal([&] { s.get(); }),
            "[env] HEARTH_UNIT_TEST_FLAG='garbage' is not allowed: expected 1, true, yes or on to turn it on; 0, "
            "false, no or off to turn it off");
}

TEST(Switches, AnIntegerMustBeWholeAndWithinItsRange) {
  IntegerSwitch s({.name = "HEARTH_UNIT_TEST_INT",
                   .default_value = "40",
                   .reading = SwitchReading::each_use,
                   .min = 1,
                   .max = 1000});
  EXPECT_EQ(s.get(), 40);
  {
    ScopedEnv e("HEARTH_UNIT_TEST_INT", "1000");
    EXPECT_EQ(s.get(), 1000);
  }
  for (const char* bad : {"0", "1001", "-5", "12abc", "abc", "1.5", " 7", "7 ", "99999999999999999999999"}) {
    ScopedEnv e("HEARTH_UNIT_TEST_INT", bad);
    const std::string why = refusal([&] { s.get(); });
    EXPECT_EQ(why, std::string("[env] HEARTH_UNIT_TEST_INT='") + bad +
                       "' is not allowed: expected a whole number from 1 to 1000")
        << bad;
  }
}

TEST(Switches, ANumberMustBeFiniteAndWithinItsRange) {
  NumberSwitch s({.name = "HEARTH_UNIT_TEST_NUMBER", .reading = SwitchReading::each_use, .min = 0.001, .max = 604800});
  EXPECT_FALSE(s.is_set());
  {
    ScopedEnv e("HEARTH_UNIT_TEST_NUMBER", "2.5");
    EXPECT_DOUBLE_EQ(s.get(), 2.5);
    EXPECT_TRUE(s.is_set());
  }
  for (const char* bad : {"inf", "-inf", "nan", "1e300", "0", "-1", "", "fast", "2.5s"}) {
    ScopedEnv e("HEARTH_UNIT_TEST_NUMBER", bad);
    if (*bad == '\0') {
      EXPECT_EQ(refusal([&] { s.get(); }), "");  // empty is unset
      continue;
    }
    EXPECT_NE(refusal([&] { s.get(); }).find("expected a number from 0.001 to 604800"), std::string::npos) << bad;
  }
}

TEST(Switches, ASizeTakesBinarySuffixesOnly) {
  BytesSwitch s({.name = "HEARTH_UNIT_TEST_BYTES", .reading = SwitchReading::each_use, .min = 0, .max = 1e15});
  {
    ScopedEnv e("HEARTH_UNIT_TEST_BYTES", "512MiB");
    EXPECT_EQ(s.get(), 512ull << 20);
  }
  {
    ScopedEnv e("HEARTH_UNIT_TEST_BYTES", "1.5G");
    EXPECT_EQ(s.get(), 3ull << 29);
  }
  for (const char* bad : {"2GB", "-1", "lots", "1e300", "inf", "GiB"}) {
    ScopedEnv e("HEARTH_UNIT_TEST_BYTES", bad);
    EXPECT_NE(refusal([&] { s.get(); }).find("HEARTH_UNIT_TEST_BYTES='" + std::string(bad) + "' is not allowed"),
              std::string::npos)
        << bad;
  }
}

TEST(Switches, WordsAreOneOfTheirListAndTextHasItsCheck) {
  WordsSwitch w({.name = "HEARTH_UNIT_TEST_WORDS",
                 .default_value = "auto",
                 .reading = SwitchReading::each_use,
                 .words = {"auto", "plain", "blocked"}});
  EXPECT_EQ(w.get(), "auto");
  {
    ScopedEnv e("HEARTH_UNIT_TEST_WORDS", "blocked");
    EXPECT_EQ(w.get(), "blocked");
  }
  {
    ScopedEnv e("HEARTH_UNIT_TEST_WORDS", "Blocked");
    EXPECT_EQ(refusal([&] { w.get(); }),
              "[env] HEARTH_UNIT_TEST_WORDS='Blocked' is not allowed: expected one of auto, plain or blocked");
  }
  TextSwitch t({.name = "HEARTH_UNIT_TEST_TEXT", .reading = SwitchReading::each_use, .check = [](const std::string& v) {
                  return v.size() < 4 ? std::string() : "at most 3 characters";
                }});
  ScopedEnv e("HEARTH_UNIT_TEST_TEXT", "abcd");
  EXPECT_EQ(refusal([&] { t.get(); }), "[env] HEARTH_UNIT_TEST_TEXT='abcd' is not allowed: at most 3 characters");
}

TEST(Switches, ALongValueIsCutInTheMessageAndASecretIsNeverShown) {
  IntegerSwitch s({.name = "HEARTH_UNIT_TEST_LONG", .reading = SwitchReading::each_use, .min = 0, .max = 9});
  ScopedEnv e("HEARTH_UNIT_TEST_LONG", std::string(5000, 'x'));
  const std::string why = refusal([&] { s.get(); });
  EXPECT_LT(why.size(), 300u) << why;
  EXPECT_NE(why.find("(5000 characters)"), std::string::npos) << why;

  TextSwitch secret({.name = "HEARTH_UNIT_TEST_SECRET",
                     .reading = SwitchReading::each_use,
                     .check = [](const std::string&) { return std::string("never right"); },
                     .secret = true});
  ScopedEnv s2("HEARTH_UNIT_TEST_SECRET", "hunter2-hunter2-hunter2");
  const std::string secret_why = refusal([&] { secret.get(); });
  EXPECT_EQ(secret_why.find("hunter2"), std::string::npos) << secret_why;
  EXPECT_NE(secret_why.find("<23 characters>"), std::string::npos) << secret_why;
}

TEST(Switches, OnceIsReadAtTheFirstGetAndEachUseAtEveryGet) {
  FlagSwitch once({.name = "HEARTH_UNIT_TEST_ONCE", .default_value = "0"});
  FlagSwitch each({.name = "HEARTH_UNIT_TEST_EACH", .default_value = "0", .reading = SwitchReading::each_use});
  {
    ScopedEnv a("HEARTH_UNIT_TEST_ONCE", "1");
    ScopedEnv b("HEARTH_UNIT_TEST_EACH", "1");
    EXPECT_TRUE(once.get());
    EXPECT_TRUE(each.get());
  }
  EXPECT_TRUE(once.get());   // kept for the process
  EXPECT_FALSE(each.get());  // read again
}

TEST(Switches, AConfigValueSitsBetweenTheDefaultAndTheEnvironment) {
  FlagSwitch s({.name = "HEARTH_UNIT_TEST_CONFIG", .default_value = "0", .reading = SwitchReading::each_use});
  EXPECT_EQ(s.source(), SwitchSource::default_value);
  s.set_config_value("1");
  EXPECT_TRUE(s.get());
  EXPECT_EQ(s.source(), SwitchSource::config_file);
  {
    ScopedEnv e("HEARTH_UNIT_TEST_CONFIG", "0");
    EXPECT_FALSE(s.get());
    EXPECT_EQ(s.source(), SwitchSource::environment);
  }
  EXPECT_NE(refusal([&] { s.set_config_value("maybe"); }).find("HEARTH_UNIT_TEST_CONFIG='maybe'"), std::string::npos);
  s.clear_config_value();
  EXPECT_FALSE(s.get());
}

TEST(Switches, ASwitchOfATestScopeLeavesTheRegistryWithIt) {
  {
    FlagSwitch s({.name = "HEARTH_UNIT_TEST_SCOPED"});
    EXPECT_EQ(find_switch("HEARTH_UNIT_TEST_SCOPED"), &s);
  }
  EXPECT_EQ(find_switch("HEARTH_UNIT_TEST_SCOPED"), nullptr);
}

TEST(Switches, ConcurrentFirstReadsAgree) {
  IntegerSwitch s({.name = "HEARTH_UNIT_TEST_THREADS", .default_value = "7", .min = 0, .max = 100});
  std::vector<std::thread> threads;
  std::vector<int64_t> seen(8, -1);
  for (size_t i = 0; i < seen.size(); ++i) threads.emplace_back([&, i] { seen[i] = s.get(); });
  for (std::thread& t : threads) t.join();
  for (int64_t v : seen) EXPECT_EQ(v, 7);
}

// ---- the declared switches: the cases that once went wrong ------------------------------

TEST(DeclaredSwitches, ADistTimeoutMustBeAFiniteNumberOfSeconds) {
  const Switch& s = declared("HEARTH_DIST_TIMEOUT");
  for (const char* bad : {"inf", "1e300", "nan", "0", "-3", "soon"}) EXPECT_NE(s.problem(bad), "") << bad;
  EXPECT_EQ(s.problem("1800"), "");
  ScopedEnv e("HEARTH_DIST_TIMEOUT", "inf");
  EXPECT_NE(refusal([] { switches::dist_timeout().get(); }).find("[env] HEARTH_DIST_TIMEOUT='inf' is not allowed"),
            std::string::npos);
}

TEST(DeclaredSwitches, FoldBatchNormIsAFlagSoFalseMeansFalse) {
  const Switch& s = declared("HEARTH_FOLD_BATCH_NORM");
  EXPECT_EQ(s.spec().type, SwitchType::flag);
  EXPECT_STREQ(s.spec().default_value, "1");
  bool v = true;
  ASSERT_TRUE(switch_detail::parse_flag("false", v));
  EXPECT_FALSE(v);
  EXPECT_NE(s.problem("nope"), "");
}

TEST(DeclaredSwitches, GarbageLayoutsAndRowCountsAreRefused) {
  const Switch& layout = declared("HEARTH_ONEDNN_LAYOUT");
  EXPECT_EQ(layout.problem("plain"), "");
  EXPECT_EQ(layout.problem("blocked"), "");
  EXPECT_EQ(layout.problem("auto"), "");
  EXPECT_EQ(layout.problem("nchw"), "expected one of auto, plain or blocked");
  const Switch& rows = declared("HEARTH_PROFILE_OPS_ROWS");
  EXPECT_EQ(rows.problem("200"), "");
  for (const char* bad : {"0", "-1", "many", "1e3", "10x"}) EXPECT_NE(rows.problem(bad), "") << bad;
}

TEST(DeclaredSwitches, EveryCountAndDurationHasARange) {
  for (const Switch* s : all_switches()) {
    const SwitchSpec& spec = s->spec();
    const bool ranged =
        spec.type == SwitchType::integer || spec.type == SwitchType::number || spec.type == SwitchType::bytes;
    if (!ranged) continue;
    EXPECT_LT(spec.min, spec.max) << spec.name;
    EXPECT_EQ(s->problem("inf"), std::string("expected ") + s->allowed()) << spec.name;
    EXPECT_NE(s->problem("1e300"), "") << spec.name;
    // The default itself is allowed.
    EXPECT_EQ(s->problem(spec.default_value), "") << spec.name;
  }
}

TEST(DeclaredSwitches, EachHasADescriptionAReaderAndAnAllowedDefault) {
  const std::vector<const Switch*> all = all_switches();
  EXPECT_GT(all.size(), 30u);
  for (const Switch* s : all) {
    const SwitchSpec& spec = s->spec();
    EXPECT_EQ(std::string(spec.name).rfind("HEARTH_", 0), 0u) << spec.name;
    EXPECT_GT(std::string(spec.description).size(), 10u) << spec.name;
    EXPECT_GT(std::string(spec.reader).size(), 5u) << spec.name;
    EXPECT_EQ(s->problem(spec.default_value), "") << spec.name;
  }
}

TEST(DeclaredSwitches, ABadValueIsFoundByTheStartCheck) {
  EXPECT_EQ(refusal([] { validate_switches(); }), "");
  ScopedEnv e("HEARTH_PROFILE_OPS_ROWS", "lots");
  EXPECT_EQ(refusal([] { validate_switches(); }),
            "[env] HEARTH_PROFILE_OPS_ROWS='lots' is not allowed: expected a whole number from 1 to 1000000");
}

// ---- programs refuse a bad value at start: one line, status 2 ------------------------------

TEST(SwitchesAtStart, ABadMemoryLimitIsOneLineAndStatus2NotAnAbort) {
  const testing::CommandResult r =
      testing::run_command(std::string("HEARTH_CPU_MEMORY_LIMIT=2GB ") + HEARTH_TEST_CLI + " --version");
  EXPECT_EQ(r.exit_code, kBadSwitchExitCode) << r.output;
  EXPECT_EQ(r.output,
            "hearth: error: [env] HEARTH_CPU_MEMORY_LIMIT='2GB' is not allowed: expected a size in bytes from 0 to "
            "1024TiB, optionally with a KiB, MiB, GiB or TiB suffix (\"512MiB\")\n");
}

TEST(SwitchesAtStart, EveryKindOfBadValueIsRefusedByTheCommand) {
  for (const char* assignment : {"HEARTH_DIST_TIMEOUT=inf", "HEARTH_DIST_TIMEOUT=1e300", "HEARTH_FOLD_BATCH_NORM=maybe",
                                 "HEARTH_ONEDNN_LAYOUT=garbage", "HEARTH_PROFILE_OPS_ROWS=garbage",
                                 "HEARTH_IMAGE_DECODE_LANES=65", "HEARTH_STORE_TOKEN=short"}) {
    const testing::CommandResult r = testing::run_command(std::string(assignment) + " " + HEARTH_TEST_CLI + " ops");
    EXPECT_EQ(r.exit_code, kBadSwitchExitCode) << assignment << ": " << r.output;
    const std::string name = std::string(assignment).substr(0, std::string(assignment).find('='));
    EXPECT_EQ(r.output.rfind("hearth: error: [env] " + name + "=", 0), 0u) << r.output;
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
  }
  // A secret's value is not repeated.
  const testing::CommandResult token =
      testing::run_command(std::string("HEARTH_STORE_TOKEN=short-secret ") + HEARTH_TEST_CLI + " ops");
  EXPECT_EQ(token.output.find("short-secret"), std::string::npos) << token.output;
}

TEST(SwitchesAtStart, HearthEnvListsEverySwitchWithItsSource) {
  const testing::CommandResult r = testing::run_command(
      std::string("HEARTH_PROFILE_OPS_ROWS=12 HEARTH_DIST_TIMEOUT=inf ") + HEARTH_TEST_CLI + " env");
  EXPECT_EQ(r.exit_code, 0) << r.output;  // env shows what is wrong instead of refusing
  for (const Switch* s : all_switches())
    EXPECT_NE(r.output.find(std::string("  ") + s->name() + "="), std::string::npos) << s->name();
  EXPECT_NE(r.output.find("  HEARTH_PROFILE_OPS_ROWS=12: environment\n"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("  HEARTH_FOLD_BATCH_NORM=1: default\n"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("  HEARTH_DIST_TIMEOUT=inf: environment -- not allowed: expected a number"),
            std::string::npos)
      << r.output;
}

}  // namespace
}  // namespace hearth
