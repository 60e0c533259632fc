// The byte-level BPE tokenizer against Hugging Face's `tokenizers` itself:
// tests/fixtures/make_bpe_fixtures.py trains small tokenizers with it
// (GPT-2-style, Llama-3-style, byte fallback), saves their tokenizer.json and
// writes what `tokenizers` answers for over a thousand mixed-script lines to
// tests/fixtures/bpe/hf/<style>/cases.jsonl. Every answer must be reproduced
// exactly. Until the script has been run (it needs `tokenizers`), the
// fixtures are absent and these tests are skipped saying so.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "hearth/data/tokenizer/bpe_tokenizer.h"

namespace hearth::data {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

void check_style(const std::string& style) {
  const fs::path dir = fs::path(HEARTH_FIXTURES_DIR) / "bpe" / "hf" / style;
  if (!fs::exists(dir / "cases.jsonl"))
    GTEST_SKIP() << dir.string() << "/cases.jsonl is absent: run tests/fixtures/make_bpe_fixtures.py where "
                 << "Hugging Face's tokenizers is installed to compare with it";
  const BpeTokenizer tok = BpeTokenizer::from_tokenizer_json((dir / "tokenizer.json").string());
  std::ifstream in(dir / "cases.jsonl");
  std::string line;
  int cases = 0, failures = 0;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const json c = json::parse(line);
    const std::string text = c.at("text").get<std::string>();
    const auto ids = c.at("ids").get<std::vector<int64_t>>();
    const bool ok = tok.encode(text) == ids &&
                    tok.encode(text, false) == c.at("ids_no_special").get<std::vector<int64_t>>() &&
                    tok.decode(ids) == c.at("decoded").get<std::string>() &&
                    tok.decode(ids, true) == c.at("decoded_skip_special").get<std::string>();
    if (!ok && ++failures <= 5) {
      EXPECT_EQ(tok.encode(text), ids) << style << " line " << cases + 1 << ": " << c.at("text").dump();
      EXPECT_EQ(tok.encode(text, false), c.at("ids_no_special").get<std::vector<int64_t>>()) << c.at("text").dump();
      EXPECT_EQ(tok.decode(ids), c.at("decoded").get<std::string>()) << c.at("text").dump();
      EXPECT_EQ(tok.decode(ids, true), c.at("decoded_skip_special").get<std::string>()) << c.at("text").dump();
    }
    ++cases;
  }
  EXPECT_EQ(failures, 0) << style << ": " << failures << " of " << cases << " lines differ from Hugging Face's";
  EXPECT_GE(cases, 1000) << style;
}

TEST(BpeHuggingFaceCases, Gpt2Style) { check_style("gpt2_style"); }
TEST(BpeHuggingFaceCases, Llama3Style) { check_style("llama3_style"); }
TEST(BpeHuggingFaceCases, ByteFallback) { check_style("byte_fallback"); }

}  // namespace
}  // namespace hearth::data
