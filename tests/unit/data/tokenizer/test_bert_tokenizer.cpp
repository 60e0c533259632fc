// BERT's tokenizer on a small hand-made vocabulary, case by case; the
// fixture comparison with Hugging Face's is in test_tokenizer_cases.cpp.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>

#include <gtest/gtest.h>

#include "hearth/core/errors.h"
#include "hearth/data/tokenizer/bert_tokenizer.h"
#include "hearth/data/tokenizer/wordpiece.h"

namespace hearth::data {
namespace {

using Tokens = std::vector<std::string>;

Vocab small_vocab() {
  return Vocab({"[PAD]",  "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat",  "sat",   "un",
                "##want", "##ed",  "want",  ",",     ".",      "!",   "runn", "##ing", "中",
                "国",     "cafe",  "hello", "world", "a",      "##b", "##c",  "σ",     "##ασ"});
}

TEST(BertTokenizer, LowerCaseAccentsAndPunctuation) {
  BertTokenizer tok(small_vocab());
  EXPECT_EQ(tok.tokenize("The CAT sat."), (Tokens{"the", "cat", "sat", "."}));
  EXPECT_EQ(tok.tokenize("UNwanted,running!"), (Tokens{"un", "##want", "##ed", ",", "runn", "##ing", "!"}));
  EXPECT_EQ(tok.tokenize("Café"), (Tokens{"cafe"}));
  EXPECT_EQ(tok.tokenize("ΣΑΣ"), (Tokens{"σ", "##ασ"}));
}

TEST(BertTokenizer, CaseKeptWithoutLowerCasing) {
  BertTokenizerOptions o;
  o.do_lower_case = false;
  BertTokenizer tok(small_vocab(), o);
  EXPECT_EQ(tok.tokenize("The cat"), (Tokens{"[UNK]", "cat"}));
  EXPECT_EQ(tok.tokenize("café"), (Tokens{"[UNK]"}));  // accents kept, so no match
  o.strip_accents = true;
  EXPECT_EQ(BertTokenizer(small_vocab(), o).tokenize("café"), (Tokens{"cafe"}));
}

TEST(BertTokenizer, CleaningWhitespaceAndControlCharacters) {
  BertTokenizer tok(small_vocab());
  // Controls vanish (joining the word), tabs and odd spaces separate words.
  EXPECT_EQ(tok.tokenize("ca\x01t\tsat\xC2\xA0the\xEF\xBF\xBD"), (Tokens{"cat", "sat", "the"}));
  EXPECT_EQ(tok.tokenize("   \n "), Tokens{});
  EXPECT_EQ(tok.tokenize(""), Tokens{});
}

TEST(BertTokenizer, CjkCharactersAreWords) {
  BertTokenizer tok(small_vocab());
  EXPECT_EQ(tok.tokenize("hello中国world"), (Tokens{"hello", "中", "国", "world"}));
}

TEST(BertTokenizer, UnknownWordsAndTheLengthLimit) {
  BertTokenizer tok(small_vocab());
  EXPECT_EQ(tok.tokenize("abcx abc"), (Tokens{"[UNK]", "a", "##b", "##c"}));
  BertTokenizerOptions o;
  o.max_input_chars_per_word = 2;
  EXPECT_EQ(BertTokenizer(small_vocab(), o).tokenize("abc ab"), (Tokens{"[UNK]", "a", "##b"}));
}

TEST(BertTokenizer, SpecialTokensInTheTextStayWhole) {
  BertTokenizer tok(small_vocab());
  EXPECT_EQ(tok.tokenize("the[SEP]cat [MASK]."), (Tokens{"the", "[SEP]", "cat", "[MASK]", "."}));
  // Matching is case-sensitive, so a lower-case look-alike is split.
  EXPECT_EQ(tok.tokenize("[sep]"), (Tokens{"[UNK]", "[UNK]", "[UNK]"}));
}

TEST(BertTokenizer, EncodeSingleAndPairWithPadding) {
  BertTokenizer tok(small_vocab());
  Encoding e = tok.encode("the cat", std::nullopt, {.max_length = 6, .padding = Padding::max_length});
  EXPECT_EQ(e.input_ids, (std::vector<int64_t>{2, 5, 6, 3, 0, 0}));
  EXPECT_EQ(e.token_type_ids, (std::vector<int64_t>{0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(e.attention_mask, (std::vector<int64_t>{1, 1, 1, 1, 0, 0}));
  Encoding p = tok.encode("the cat", "sat");
  EXPECT_EQ(p.input_ids, (std::vector<int64_t>{2, 5, 6, 3, 7, 3}));
  EXPECT_EQ(p.token_type_ids, (std::vector<int64_t>{0, 0, 0, 0, 1, 1}));
  EXPECT_EQ(p.attention_mask, (std::vector<int64_t>(6, 1)));
}

TEST(BertTokenizer, LongestFirstTruncation) {
  BertTokenizer tok(small_vocab());
  // 5 + 2 tokens + 3 specials = 10 > 8: two come off the longer first sequence.
  Encoding e = tok.encode("the cat sat the cat", "sat sat", {.max_length = 8});
  EXPECT_EQ(e.input_ids, (std::vector<int64_t>{2, 5, 6, 7, 3, 7, 7, 3}));
  // When both must be cut, each keeps half the budget; of equal lengths the
  // second keeps the odd token: 3 + 3 + 3 specials = 9 > 6 leaves 1 + 2.
  e = tok.encode("the cat sat", "cat sat the", {.max_length = 6});
  EXPECT_EQ(e.input_ids, (std::vector<int64_t>{2, 5, 3, 6, 7, 3}));
  // Of unequal lengths, the longer keeps the odd token: 5 + 3 + 3 = 11 > 6 leaves 2 + 1.
  e = tok.encode("the cat sat the cat", "sat the cat", {.max_length = 6});
  EXPECT_EQ(e.input_ids, (std::vector<int64_t>{2, 5, 6, 3, 7, 3}));
  e = tok.encode("the cat sat", "cat sat the", {.max_length = 5});
  EXPECT_EQ(e.input_ids, (std::vector<int64_t>{2, 5, 3, 6, 3}));
  // A single sequence loses its tail.
  e = tok.encode("the cat sat the", std::nullopt, {.max_length = 4});
  EXPECT_EQ(e.input_ids, (std::vector<int64_t>{2, 5, 6, 3}));
  // Without truncation the row stays long.
  e = tok.encode("the cat sat the", std::nullopt, {.max_length = 4, .truncation = false});
  EXPECT_EQ(e.input_ids.size(), 6u);
  EXPECT_THROW(tok.encode("the", "cat", {.max_length = 2}), ValueError);
}

TEST(BertTokenizer, BatchPadsToTheLongestRow) {
  BertTokenizer tok(small_vocab());
  std::vector<Encoding> rows =
      tok.encode_batch({{"the", std::nullopt}, {"the cat", "sat"}}, {.padding = Padding::longest});
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].input_ids, (std::vector<int64_t>{2, 5, 3, 0, 0, 0}));
  EXPECT_EQ(rows[0].attention_mask, (std::vector<int64_t>{1, 1, 1, 0, 0, 0}));
  EXPECT_EQ(rows[1].input_ids.size(), 6u);
}

TEST(BertTokenizer, MissingSpecialTokenIsAnError) {
  try {
    BertTokenizer tok(Vocab({"[UNK]", "[CLS]", "[SEP]"}));
    FAIL() << "expected a ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("'[PAD]'"), std::string::npos) << e.what();
  }
}

TEST(BertTokenizer, ReadsVocabTxtAndTokenizerJson) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "hearth_test_tokenizer_files";
  fs::remove_all(dir);
  fs::create_directories(dir);
  {
    std::ofstream v(dir / "vocab.txt");
    v << "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nHello\nhello\n";
  }
  {
    std::ofstream c(dir / "tokenizer_config.json");
    c << R"({"do_lower_case": false})";
  }
  BertTokenizer cased = BertTokenizer::from_pretrained(dir.string());
  EXPECT_EQ(cased.convert_tokens_to_ids(cased.tokenize("Hello")), (std::vector<int64_t>{5}));
  EXPECT_EQ(BertTokenizer::from_pretrained(dir.string(), true).tokenize("Hello"), (Tokens{"hello"}));
  {
    std::ofstream j(dir / "tokenizer.json");
    j << R"({"normalizer": {"type": "BertNormalizer", "lowercase": true, "strip_accents": null,
             "clean_text": true, "handle_chinese_chars": true},
             "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                       "max_input_chars_per_word": 100,
                       "vocab": {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, "[MASK]": 4, "hello": 5}}})";
  }
  BertTokenizer from_json = BertTokenizer::from_pretrained(dir.string());
  EXPECT_TRUE(from_json.options().do_lower_case);
  EXPECT_EQ(from_json.convert_tokens_to_ids(from_json.tokenize("HÉLLO")), (std::vector<int64_t>{5}));
  {
    std::ofstream j(dir / "bad.json");
    j << R"({"model": {"type": "BPE", "vocab": {}}})";
  }
  try {
    BertTokenizer::from_tokenizer_json((dir / "bad.json").string());
    FAIL() << "expected a ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.json: field 'model': expected a WordPiece model"), std::string::npos)
        << e.what();
  }
  fs::remove_all(dir);
}

// Found by fuzzing: a vocab.txt without [SEP] was refused without naming the
// file, and fields of the wrong type in a tokenizer.json escaped as
// nlohmann's exceptions.
TEST(BertTokenizer, BadTokenizerFilesAreRefusedNamingTheFile) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "hearth_test_tokenizer_bad_files";
  fs::remove_all(dir);
  fs::create_directories(dir);
  auto expect_refused = [](const std::function<void()>& load, const std::string& expected) {
    try {
      load();
      FAIL() << "expected a ValueError saying " << expected;
    } catch (const ValueError& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
  };
  const std::string vocab = (dir / "vocab.txt").string();
  std::ofstream(vocab) << "[PAD]\n[UNK]\n[CLS]\n[MASK]\nhello\n";
  expect_refused([&] { BertTokenizer::from_vocab_txt(vocab); },
                 vocab + ": the separator token '[SEP]' is not in the vocabulary (5 tokens)");

  const std::string json = (dir / "tokenizer.json").string();
  auto write_json = [&](const std::string& text) { std::ofstream(json, std::ios::trunc) << text; };
  const std::string vocab_json = R"("vocab": {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3})";
  write_json(R"({"model": {"type": "WordPiece", "unk_token": 7, )" + vocab_json + "}}");
  expect_refused([&] { BertTokenizer::from_tokenizer_json(json); },
                 json + " model: field 'unk_token': expected a string");
  write_json(R"({"model": {"type": "WordPiece", "max_input_chars_per_word": 1e30, )" + vocab_json + "}}");
  expect_refused([&] { BertTokenizer::from_tokenizer_json(json); },
                 json + " model: field 'max_input_chars_per_word': expected a non-negative integer, got 1e+30");
  write_json(R"({"model": {"type": "WordPiece", "max_input_chars_per_word": 1000000000000000, )" + vocab_json + "}}");
  expect_refused([&] { BertTokenizer::from_tokenizer_json(json); },
                 json + ": field 'model.max_input_chars_per_word': expected at most 10000, got 1000000000000000");
  write_json(R"({"model": {"type": ["WordPiece"], )" + vocab_json + "}}");
  expect_refused([&] { BertTokenizer::from_tokenizer_json(json); }, json + " model: field 'type': expected a string");
  write_json(R"({"normalizer": "lowercase", "model": {"type": "WordPiece", )" + vocab_json + "}}");
  expect_refused([&] { BertTokenizer::from_tokenizer_json(json); }, json + ": field 'normalizer': expected an object");
  write_json(R"({"added_tokens": ["[X]"], "model": {"type": "WordPiece", )" + vocab_json + "}}");
  expect_refused([&] { BertTokenizer::from_tokenizer_json(json); }, json + ": field 'added_tokens': expected objects");
  fs::remove_all(dir);
}

// The longest-match search tries no candidate longer than the vocabulary's
// longest token: a word of 10,000 letters split into one-letter pieces takes
// milliseconds (it was cubic: 4,000 letters took 14 s).
TEST(WordPiece, ALongWordIsSplitInTimeLinearInItsLength) {
  Vocab vocab({"[UNK]", "a", "##a", "##b"});
  WordPieceOptions options;
  options.max_input_chars_per_word = kMaxInputCharsPerWord;
  const std::string word(kMaxInputCharsPerWord, 'a');
  std::vector<std::string> pieces;
  const auto t0 = std::chrono::steady_clock::now();
  wordpiece_split(word, vocab, options, pieces);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(pieces.size(), kMaxInputCharsPerWord);
  EXPECT_EQ(pieces.front(), "a");
  EXPECT_EQ(pieces.back(), "##a");
  EXPECT_LT(seconds, 1.0);
  // Beyond the cap, whatever the options say, a word is the unknown token.
  options.max_input_chars_per_word = size_t{1} << 60;
  pieces.clear();
  wordpiece_split(word + "a", vocab, options, pieces);
  EXPECT_EQ(pieces, std::vector<std::string>{"[UNK]"});
}

}  // namespace
}  // namespace hearth::data
