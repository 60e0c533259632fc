// hearth's environment switches (HEARTH_*): each declared once, with its
// type, the values it allows, its default, one line saying what it does and
// who reads it.
//
// A switch is declared where it belongs: hearth/core/switch_list.cpp holds
// those of the layers above the backends, and a backend's folder declares its
// own (hearth/backends/<name>/..._switches.cpp), so a new backend stays one
// folder. Declaring one makes it known to the registry below from a static
// initialiser (HEARTH_DECLARE_SWITCH), so `hearth env` lists it and every
// program checks it at start; nothing is parsed in a static initialiser.
//
// Reading: get() returns the typed value. A switch read `once` parses the
// environment at its first get() and keeps the value for the process (for
// those read on hot paths, or whose meaning must not change mid-run); one read
// at `each_use` parses it at every get(), so a program (or a test) may change
// it while it runs. Unset or empty means the default. A value the declaration
// does not allow is a ValueError naming the variable, the value and what is
// allowed: never a silent default.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hearth {

enum class SwitchType {
  flag,     // 1/true/yes/on or 0/false/no/off (any case)
  integer,  // a whole number within [min, max]
  number,   // a finite decimal number within [min, max]
  bytes,    // a size in bytes, optionally with a KiB/MiB/GiB suffix, within [min, max]
  words,    // one of a fixed list of words
  text,     // free text, optionally checked by a function of the declaration
};

enum class SwitchReading { once, each_use };

// Where the value in effect came from.
enum class SwitchSource { default_value, config_file, environment };

struct SwitchSpec {
  const char* name = "";
  SwitchType type = SwitchType::flag;
  // The default as a user would write it; "" for a text switch that is unset by default.
  const char* default_value = "";
  const char* description = "";  // one line
  const char* reader = "";       // the file or subsystem that reads it
  SwitchReading reading = SwitchReading::once;
  double min = 0, max = 0;         // integer, number, bytes
  std::vector<std::string> words;  // words
  // text: "" when `value` is allowed, else what is allowed (for the message).
  std::string (*check)(const std::string& value) = nullptr;
  const char* allowed = "";  // text: what is allowed, in words, for `hearth env`
  bool secret = false;       // `hearth env` says whether it is set, never the value
};

class Switch {
 public:
  explicit Switch(SwitchSpec spec);  // registers it
  Switch(const Switch&) = delete;
  Switch& operator=(const Switch&) = delete;
  virtual ~Switch();  // unregisters it (a test's own switch lives in a scope)

  const SwitchSpec& spec() const { return spec_; }
  const char* name() const { return spec_.name; }
  // The text in effect now: the environment's value when set and not empty,
  // else the config file's (set_config_value), else the declared default.
  std::string text() const;
  SwitchSource source() const;
  // Whether text() is not empty: false for a switch without a default that
  // nobody set (get() then returns the type's zero; the reader decides).
  bool is_set() const { return !text().empty(); }
  // "" when `value` is allowed, else one line saying what is allowed.
  std::string problem(const std::string& value) const;
  // Checks the text in effect; throws ValueError (name, value, what is allowed) when it is not allowed.
  void validate() const;
  // What is allowed, in words ("a whole number from 1 to 1000").
  std::string allowed() const;
  // A value from the user's config file, below the environment, above the
  // default; checked here (ValueError when not allowed). Applies to a `once`
  // switch only if set before its first read. Const: the accessors hand out
  // const switches, and this is the one setting a program may change.
  void set_config_value(const std::string& value) const;
  void clear_config_value() const;

 protected:
  [[noreturn]] void refuse(const std::string& value) const;

 private:
  SwitchSpec spec_;
  mutable std::mutex mutex_;
  mutable std::optional<std::string> config_value_;
};

namespace switch_detail {
bool parse_flag(const std::string& s, bool& out);
bool parse_integer(const std::string& s, int64_t& out);
bool parse_number(const std::string& s, double& out);
bool parse_bytes(const std::string& s, double& out);
}  // namespace switch_detail

// A switch of one type: get() parses (once, or at each use) and returns the value.
template <class T, SwitchType kType>
class TypedSwitch final : public Switch {
 public:
  explicit TypedSwitch(SwitchSpec spec) : Switch(with_type(std::move(spec))) {}
  T get() const {
    if (spec().reading == SwitchReading::each_use) return parse(text());
    std::call_once(once_, [this] { value_ = parse(text()); });
    return value_;
  }

 private:
  static SwitchSpec with_type(SwitchSpec spec) {
    spec.type = kType;
    return spec;
  }
  T parse(const std::string& text) const;
  mutable std::once_flag once_;
  mutable T value_{};
};

using FlagSwitch = TypedSwitch<bool, SwitchType::flag>;
using IntegerSwitch = TypedSwitch<int64_t, SwitchType::integer>;
using NumberSwitch = TypedSwitch<double, SwitchType::number>;
using BytesSwitch = TypedSwitch<uint64_t, SwitchType::bytes>;
using WordsSwitch = TypedSwitch<std::string, SwitchType::words>;
using TextSwitch = TypedSwitch<std::string, SwitchType::text>;

// Every declared switch in this build, sorted by name.
std::vector<const Switch*> all_switches();
// The declared switch `name`, or null.
const Switch* find_switch(std::string_view name);

// Checks every declared switch's value in effect; throws ValueError for the first one not allowed.
void validate_switches();
// For a program's start: validate_switches(), and on a bad value one line on
// stderr ("<program>: error: HEARTH_X='...' ...") and exit status 2.
void validate_switches_or_exit(const char* program);

// The exit status of a program refused at start for a bad switch value.
inline constexpr int kBadSwitchExitCode = 2;

}  // namespace hearth

// Declares switch `accessor` (a function returning it) in namespace
// hearth::switches, registering it before main. The object is made at its
// first use (never too early for another static initialiser), and a static
// registrar makes that happen while the library loads, so the registry knows
// every switch a build declares. Use at namespace scope in a .cpp file; declare
// the accessor in a header as `const FlagSwitch& accessor();` inside
// `namespace hearth::switches`.
// A declaration names only the fields it sets (designated initializers); the
// rest keep SwitchSpec's defaults, which GCC's -Wmissing-field-initializers
// would otherwise report for every declaration.
// clang-format off
#define HEARTH_DECLARE_SWITCH(Type, accessor, ...)                                           \
  _Pragma("GCC diagnostic push")                                                             \
  _Pragma("GCC diagnostic ignored \"-Wmissing-field-initializers\"")                         \
  namespace hearth::switches {                                                               \
  const ::hearth::Type& accessor() {                                                         \
    static const ::hearth::Type s{::hearth::SwitchSpec __VA_ARGS__};                          \
    return s;                                                                                \
  }                                                                                          \
  namespace {                                                                                \
  [[maybe_unused]] const bool accessor##_registered = (accessor(), true);                    \
  }                                                                                          \
  }                                                                                          \
  _Pragma("GCC diagnostic pop")
// clang-format on
