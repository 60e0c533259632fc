// The pre-tokenizer patterns through PCRE2: GPT-2's and Llama 3's splits on
// text whose pieces follow from the patterns' documented alternatives, the
// search rules for empty matches, and the five split behaviours.
#include <gtest/gtest.h>

#include "hearth/core/errors.h"
#include "hearth/data/tokenizer/pre_tokenizer.h"
#include "hearth/data/tokenizer/split_pattern.h"

namespace hearth::data {
namespace {

using Strings = std::vector<std::string>;

const char* const kLlama3Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

Strings matches(const SplitPattern& p, const std::string& text) {
  Strings out;
  for (const PatternSpan& s : p.find_matches(text)) {
    EXPECT_TRUE(s.is_match) << "a gap in '" << text << "'";
    out.push_back(text.substr(s.begin, s.end - s.begin));
  }
  return out;
}

TEST(SplitPattern, Gpt2SplitsWordsSpacesAndSymbols) {
  const SplitPattern gpt2 = SplitPattern::regex(kGpt2SplitPattern, "test");
  // The last space before a word goes with it (\s+(?!\S) leaves it), the newline stands alone.
  EXPECT_EQ(matches(gpt2, " hello  world\n"), (Strings{" hello", " ", " world", "\n"}));
  EXPECT_EQ(matches(gpt2, "I'm 42 ok!!"), (Strings{"I", "'m", " 42", " ok", "!!"}));
  // Contractions are lower-case only in GPT-2's pattern.
  EXPECT_EQ(matches(gpt2, "I'M"), (Strings{"I", "'", "M"}));
  // Unicode letters and digits: accented Latin, CJK, Arabic-Indic digits.
  EXPECT_EQ(matches(gpt2, "café 中文 ٣٤"), (Strings{"café", " 中文", " ٣٤"}));
  EXPECT_EQ(matches(gpt2, "a   "), (Strings{"a", "   "}));
  EXPECT_EQ(matches(gpt2, "\xC2\x85x"), (Strings{"\xC2\x85", "x"}));  // NEL is whitespace, as in Oniguruma
  // U+180E is no whitespace to Oniguruma (it is a format character since
  // Unicode 6.3), so it is a symbol that takes the space before it.
  EXPECT_EQ(matches(gpt2, "x \u180Ey"), (Strings{"x", " \u180E", "y"}));
}

TEST(SplitPattern, EscapesAndClassesSurviveTheWhitespaceRewrite) {
  EXPECT_EQ(matches(SplitPattern::regex(R"([]\s]+|\S+)", "test"), "]] \ta]"), (Strings{"]] \t", "a]"}));
  EXPECT_EQ(matches(SplitPattern::regex(R"(\Q\s\E|[[:alpha:]]+| )", "test"), "ab\\s c"),
            (Strings{"ab", "\\s", " ", "c"}));
}

TEST(SplitPattern, Llama3SplitsDigitsInThreesAndKeepsNewlines) {
  const SplitPattern llama3 = SplitPattern::regex(kLlama3Pattern, "test");
  EXPECT_EQ(matches(llama3, "I'M 12345 ok\n\n  x"), (Strings{"I", "'M", " ", "123", "45", " ok", "\n\n", " ", " x"}));
  // A symbol takes the newlines after it; a non-letter before letters joins them.
  EXPECT_EQ(matches(llama3, "a.\n\n\"b"), (Strings{"a", ".\n\n", "\"b"}));
}

TEST(SplitPattern, EmptyTextIsOneEmptyGap) {
  const auto spans = SplitPattern::regex("a", "test").find_matches("");
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_FALSE(spans[0].is_match);
  EXPECT_EQ(spans[0].end, 0u);
}

TEST(SplitPattern, EmptyMatchesRightAfterAMatchAreSkipped) {
  // x* on "axxb": empty at 0, "xx" at 1, then the empty match at 3 follows the
  // last match and is skipped, then empty at 4 (the end).
  const SplitPattern p = SplitPattern::regex("x*", "test");
  std::vector<std::tuple<size_t, size_t, bool>> got;
  for (const PatternSpan& s : p.find_matches("axxb")) got.emplace_back(s.begin, s.end, s.is_match);
  const std::vector<std::tuple<size_t, size_t, bool>> want = {
      {0, 0, true}, {0, 1, false}, {1, 3, true}, {3, 4, false}, {4, 4, true}};
  EXPECT_EQ(got, want);
}

TEST(SplitPattern, LiteralPatternsMatchTheirTextOnly) {
  const SplitPattern p = SplitPattern::literal("a.b", "test");
  std::vector<std::pair<size_t, size_t>> got;
  for (const PatternSpan& s : p.find_matches("axb a.b"))
    if (s.is_match) got.emplace_back(s.begin, s.end);
  EXPECT_EQ(got, (std::vector<std::pair<size_t, size_t>>{{4, 7}}));
}

TEST(SplitPattern, ABadPatternNamesWhereItCameFrom) {
  try {
    SplitPattern::regex("(unclosed", "[tokenizer] t.json: field 'pre_tokenizer.pattern.Regex'");
    FAIL() << "expected a ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("t.json: field 'pre_tokenizer.pattern.Regex'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("does not compile"), std::string::npos) << e.what();
  }
}

TEST(SplitPattern, CatastrophicBacktrackingEndsInAnErrorNotAHang) {
  // Nested quantifiers over a text that almost matches: 2^40 ways to fail
  // without PCRE2's match limit.
  const SplitPattern p = SplitPattern::regex(R"((\w+\s?)+$)", "[tokenizer] t.json: field 'x'");
  try {
    (void)p.find_matches(std::string(40, 'a') + "!");
    FAIL() << "expected a ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("t.json: field 'x'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("match limit"), std::string::npos) << e.what();
  }
}

Strings split_with(SplitBehavior b, const std::string& text) {
  std::vector<TextPiece> pieces{{text, true}};
  SplitPreTokenizer(SplitPattern::literal("-", "test"), b, false).apply(pieces);
  Strings out;
  for (const TextPiece& p : pieces) out.push_back(p.text);
  return out;
}

TEST(SplitPreTokenizer, TheFiveBehaviours) {
  const std::string text = "a-b--c-";
  EXPECT_EQ(split_with(SplitBehavior::removed, text), (Strings{"a", "b", "c"}));
  EXPECT_EQ(split_with(SplitBehavior::isolated, text), (Strings{"a", "-", "b", "-", "-", "c", "-"}));
  EXPECT_EQ(split_with(SplitBehavior::merged_with_previous, text), (Strings{"a-", "b-", "-", "c-"}));
  EXPECT_EQ(split_with(SplitBehavior::merged_with_next, text), (Strings{"a", "-b", "-", "-c", "-"}));
  EXPECT_EQ(split_with(SplitBehavior::contiguous, text), (Strings{"a", "-", "b", "--", "c", "-"}));
}

TEST(SplitPreTokenizer, InvertTreatsTheGapsAsMatches) {
  std::vector<TextPiece> pieces{{"ab12cd", true}};
  SplitPreTokenizer(SplitPattern::regex("\\p{L}+", "test"), SplitBehavior::removed, true).apply(pieces);
  ASSERT_EQ(pieces.size(), 2u);
  EXPECT_EQ(pieces[0].text, "ab");
  EXPECT_EQ(pieces[1].text, "cd");
}

TEST(MetaspacePreTokenizer, SpacesBecomeTheReplacementAndStartPieces) {
  std::vector<TextPiece> pieces{{"hi  there", true}, {"x y", false}};
  MetaspacePreTokenizer(U'\u2581', PrependScheme::first, true).apply(pieces);
  Strings got;
  for (const TextPiece& p : pieces) got.push_back(p.text);
  // "first": only the piece that starts the input gets a "▁" in front.
  EXPECT_EQ(got, (Strings{"\u2581hi", "\u2581", "\u2581there", "x", "\u2581y"}));
}

}  // namespace
}  // namespace hearth::data
