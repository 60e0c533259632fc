#include "hearth/data/tokenizer/split_pattern.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "hearth/core/errors.h"
#include "hearth/data/tokenizer/utf8_lossy.h"
#include "hearth/io/json_limits.h"

namespace hearth::data {
namespace {

// Bounds on one search, so that a hostile pattern (catastrophic backtracking)
// ends in an error instead of hanging: PCRE2's count of backtracking steps and
// the heap its interpreter may use for them.
constexpr uint32_t kMatchLimit = 50'000'000;
constexpr uint32_t kHeapLimitKiB = 256 * 1024;
// The JIT's stack grows up to this; a match that needs more is retried with
// the interpreter, which keeps its backtracking state on the heap.
constexpr size_t kJitStackMax = size_t{8} << 20;

// Oniguruma's \s (which Hugging Face's patterns are written for): tab to
// carriage return, NEL and the separators (Zs, Zl, Zp). PCRE2's also takes
// U+180E, so the pattern is rewritten to say Oniguruma's set outright: \s
// and \S outside a class, \s inside one. (\S inside a class is left alone:
// no pattern in use has it.)
constexpr const char* kOnigSpace = "\\t-\\r\\x{85}\\p{Z}";

std::string with_oniguruma_space(const std::string& pattern) {
  std::string out;
  out.reserve(pattern.size() + 32);
  bool in_class = false;
  for (size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\\' && i + 1 < pattern.size()) {
      const char e = pattern[i + 1];
      if (e == 'Q') {  // \Q...\E is literal text
        const size_t end = pattern.find("\\E", i + 2);
        const size_t stop = end == std::string::npos ? pattern.size() : end + 2;
        out.append(pattern, i, stop - i);
        i = stop - 1;
      } else if (e == 's' && in_class) {
        out.append(kOnigSpace);
        ++i;
      } else if ((e == 's' || e == 'S') && !in_class) {
        out.append(e == 's' ? "[" : "[^").append(kOnigSpace).append("]");
        ++i;
      } else {
        out.append(pattern, i, 2);
        ++i;
      }
      continue;
    }
    if (!in_class && c == '[') {
      in_class = true;
      out.push_back(c);
      // A ']' first in the class (after an optional '^') is a literal.
      if (i + 1 < pattern.size() && pattern[i + 1] == '^') out.push_back(pattern[++i]);
      if (i + 1 < pattern.size() && pattern[i + 1] == ']') out.push_back(pattern[++i]);
      continue;
    }
    if (in_class && c == '[' && i + 1 < pattern.size() && pattern[i + 1] == ':') {
      // A POSIX class such as [:alpha:] inside the class.
      const size_t end = pattern.find(":]", i + 2);
      if (end != std::string::npos) {
        out.append(pattern, i, end + 2 - i);
        i = end + 1;
        continue;
      }
    }
    if (in_class && c == ']') in_class = false;
    out.push_back(c);
  }
  return out;
}

std::string pcre2_message(int code) {
  PCRE2_UCHAR buffer[256];
  const int n = pcre2_get_error_message(code, buffer, sizeof buffer);
  return n < 0 ? "PCRE2 error " + std::to_string(code) : std::string(reinterpret_cast<const char*>(buffer));
}

// Each thread's JIT stack and match context, made once.
struct ThreadMatchState {
  pcre2_match_context* context = nullptr;
  pcre2_jit_stack* jit_stack = nullptr;
  ThreadMatchState() {
    context = pcre2_match_context_create(nullptr);
    pcre2_set_match_limit(context, kMatchLimit);
    pcre2_set_heap_limit(context, kHeapLimitKiB);
    jit_stack = pcre2_jit_stack_create(32 * 1024, kJitStackMax, nullptr);
    if (jit_stack != nullptr) pcre2_jit_stack_assign(context, nullptr, jit_stack);
  }
  ~ThreadMatchState() {
    pcre2_match_context_free(context);
    pcre2_jit_stack_free(jit_stack);
  }
  ThreadMatchState(const ThreadMatchState&) = delete;
  ThreadMatchState& operator=(const ThreadMatchState&) = delete;
};

ThreadMatchState& thread_match_state() {
  thread_local ThreadMatchState state;
  return state;
}

}  // namespace

struct SplitPattern::Compiled {
  pcre2_code* code = nullptr;
  bool jit = false;
  std::string source;
  std::string where;
  ~Compiled() { pcre2_code_free(code); }
};

namespace {

std::shared_ptr<SplitPattern::Compiled> compile(const std::string& pattern, uint32_t extra_options,
                                                const std::string& where) {
  HEARTH_CHECK(utf8::is_valid(pattern), ValueError, where, ": the pattern is not valid UTF-8");
  const bool literal = (extra_options & PCRE2_LITERAL) != 0;
  const std::string compiled_text = literal ? pattern : with_oniguruma_space(pattern);
  // A literal takes no Unicode-property or multi-line mode (PCRE2 refuses them with it).
  const uint32_t options = PCRE2_UTF | extra_options | (literal ? 0 : PCRE2_UCP | PCRE2_MULTILINE);
  int error = 0;
  PCRE2_SIZE error_offset = 0;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(compiled_text.data()), compiled_text.size(), options,
                                   &error, &error_offset, nullptr);
  HEARTH_CHECK(code != nullptr, ValueError, where, ": the pattern '", io::excerpt(pattern),
               "' does not compile: ", pcre2_message(error), " at offset ", error_offset);
  auto compiled = std::make_shared<SplitPattern::Compiled>();
  compiled->code = code;
  compiled->jit = pcre2_jit_compile(code, PCRE2_JIT_COMPLETE) == 0;
  compiled->source = pattern;
  compiled->where = where;
  return compiled;
}

}  // namespace

SplitPattern SplitPattern::regex(const std::string& pattern, const std::string& where) {
  return SplitPattern(compile(pattern, 0, where));
}

SplitPattern SplitPattern::literal(const std::string& text, const std::string& where) {
  return SplitPattern(compile(text, PCRE2_LITERAL, where));
}

const std::string& SplitPattern::source() const { return compiled_->source; }

std::vector<PatternSpan> SplitPattern::find_matches(std::string_view text) const {
  if (text.empty()) return {PatternSpan{0, 0, false}};
  ThreadMatchState& state = thread_match_state();
  std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> data(
      pcre2_match_data_create_from_pattern(compiled_->code, nullptr), &pcre2_match_data_free);
  HEARTH_CHECK(data != nullptr, ValueError, compiled_->where, ": out of memory matching the pattern");
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());

  // One search from `from`: the match's bounds, or false when there is none.
  auto search = [&](size_t from, size_t& begin, size_t& end) {
    int rc = PCRE2_ERROR_JIT_STACKLIMIT;
    if (compiled_->jit) rc = pcre2_jit_match(compiled_->code, subject, text.size(), from, 0, data.get(), state.context);
    if (rc == PCRE2_ERROR_JIT_STACKLIMIT)
      rc = pcre2_match(compiled_->code, subject, text.size(), from, PCRE2_NO_JIT | PCRE2_NO_UTF_CHECK, data.get(),
                       state.context);
    if (rc == PCRE2_ERROR_NOMATCH) return false;
    HEARTH_CHECK(rc >= 0, ValueError, compiled_->where, ": matching the pattern '", io::excerpt(compiled_->source),
                 "' against ", text.size(), " bytes of text failed: ", pcre2_message(rc));
    const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(data.get());
    begin = ovector[0];
    end = ovector[1];
    return true;
  };

  std::vector<PatternSpan> spans;
  size_t gap_start = 0;  // where the text not yet covered by a span begins
  size_t from = 0;       // where the next search starts
  bool matched_before = false;
  size_t last_match_end = 0;
  while (from <= text.size()) {
    size_t begin = 0, end = 0;
    if (!search(from, begin, end)) break;
    if (begin == end && matched_before && end == last_match_end) {
      // An empty match where the last one ended: step over one character.
      if (from >= text.size()) break;
      const size_t n = utf8::valid_sequence_length(text, from);
      from += n == 0 ? 1 : n;
      continue;
    }
    if (begin > gap_start) spans.push_back({gap_start, begin, false});
    spans.push_back({begin, end, true});
    gap_start = end;
    from = end;
    matched_before = true;
    last_match_end = end;
  }
  if (gap_start < text.size()) spans.push_back({gap_start, text.size(), false});
  return spans;
}

}  // namespace hearth::data
