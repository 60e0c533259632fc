// Every line of tests/fixtures/tokenizer/cases.jsonl: the word pieces and
// the encoding Hugging Face's BertTokenizer gives for a text or a pair, which
// hearth's tokenizer must reproduce exactly. A failure prints the first
// mismatches with both token lists.
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "hearth/data/tokenizer/bert_tokenizer.h"

namespace hearth::data {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

const fs::path kFixtures = fs::path(HEARTH_FIXTURES_DIR) / "tokenizer";

std::string join(const std::vector<std::string>& tokens) {
  std::ostringstream os;
  os << '[';
  for (size_t i = 0; i < tokens.size(); ++i) os << (i ? " " : "") << json(tokens[i]).dump();
  os << ']';
  return os.str();
}

template <typename T>
std::string join(const std::vector<T>& values) {
  std::ostringstream os;
  os << '[';
  for (size_t i = 0; i < values.size(); ++i) os << (i ? " " : "") << values[i];
  os << ']';
  return os.str();
}

TEST(TokenizerCases, MatchHuggingFaceBertTokenizer) {
  const fs::path cases_path = kFixtures / "cases.jsonl";
  ASSERT_TRUE(fs::exists(cases_path)) << "missing fixture " << cases_path;
  std::map<bool, std::unique_ptr<BertTokenizer>> tokenizers;
  for (bool lower : {false, true}) {
    BertTokenizerOptions o;
    o.do_lower_case = lower;
    tokenizers[lower] =
        std::make_unique<BertTokenizer>(BertTokenizer::from_vocab_txt((kFixtures / "vocab.txt").string(), o));
  }
  std::ifstream in(cases_path);
  std::string line;
  int line_no = 0, total = 0, failed = 0;
  std::ostringstream report;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty()) continue;
    ++total;
    const json c = json::parse(line);
    const BertTokenizer& tok = *tokenizers.at(c.at("do_lower_case").get<bool>());
    const std::string a = c.at("a").get<std::string>();
    std::optional<std::string> b;
    if (!c.at("b").is_null()) b = c.at("b").get<std::string>();
    const auto want_tokens = c.at("tokens_a").get<std::vector<std::string>>();
    const std::vector<std::string> got_tokens = tok.tokenize(a);
    const Encoding e =
        tok.encode(a, b, {.max_length = c.at("max_length").get<int64_t>(), .padding = Padding::max_length});
    const bool ok = got_tokens == want_tokens && e.input_ids == c.at("input_ids").get<std::vector<int64_t>>() &&
                    e.token_type_ids == c.at("token_type_ids").get<std::vector<int64_t>>() &&
                    e.attention_mask == c.at("attention_mask").get<std::vector<int64_t>>();
    if (ok) continue;
    if (++failed <= 5) {
      report << "\nline " << line_no << ": a=" << json(a).dump() << " b=" << (b ? json(*b).dump() : "null")
             << " do_lower_case=" << c.at("do_lower_case") << " max_length=" << c.at("max_length")
             << "\n  expected tokens " << join(want_tokens) << "\n  got tokens      " << join(got_tokens)
             << "\n  expected ids " << c.at("input_ids").dump() << "\n  got ids      " << join(e.input_ids)
             << "\n  expected types " << c.at("token_type_ids").dump() << "\n  got types      "
             << join(e.token_type_ids) << "\n  expected mask " << c.at("attention_mask").dump() << "\n  got mask      "
             << join(e.attention_mask);
    }
  }
  EXPECT_GE(total, 200) << "the fixture should hold at least 200 cases";
  EXPECT_EQ(failed, 0) << failed << " of " << total << " cases differ; the first:" << report.str();
}

TEST(TokenizerCases, TokenizerJsonHoldsTheSameVocabulary) {
  const fs::path json_path = kFixtures / "tokenizer.json";
  ASSERT_TRUE(fs::exists(json_path)) << "missing fixture " << json_path;
  BertTokenizer from_json = BertTokenizer::from_tokenizer_json(json_path.string());
  Vocab from_txt = Vocab::from_vocab_txt((kFixtures / "vocab.txt").string());
  ASSERT_EQ(from_json.vocab().size(), from_txt.size());
  for (int64_t i = 0; i < from_txt.size(); ++i) EXPECT_EQ(from_json.vocab().token(i), from_txt.token(i)) << "id " << i;
}

}  // namespace
}  // namespace hearth::data
