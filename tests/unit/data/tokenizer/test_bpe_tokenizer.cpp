// The byte-level BPE tokenizer on small hand-made tokenizer.json files
// (tests/fixtures/bpe/*_tiny): the expected ids follow from the merges' ranks
// and the split patterns, worked out by hand. Ids 0-255 of the GPT-2- and
// Llama-3-style files are the byte-level characters of bytes 0-255; the
// merges' results follow in rank order (gpt2_tiny: "ll" 256, "el" 257,
// "he" 258, "hell" 259, "hello" 260, "Ġhello" 261, "Ġw" 262, "or" 263,
// "Ġwor" 264, "ld" 265, "Ġworld" 266, "aa" 267, "aaaa" 268, "aaaaaaaa" 269,
// then <|endoftext|> 270). The comparison with Hugging Face's own answers on
// files it trained is test_bpe_hf_cases.cpp.
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <set>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "hearth/core/errors.h"
#include "hearth/data/tokenizer/bpe_tokenizer.h"

namespace hearth::data {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using Ids = std::vector<int64_t>;

std::string fixture_dir(const std::string& name) { return std::string(HEARTH_FIXTURES_DIR) + "/bpe/" + name; }

json fixture_json(const std::string& name) {
  std::ifstream in(fixture_dir(name) + "/tokenizer.json");
  return json::parse(in);
}

// A scratch tokenizer.json holding `j`; returns its path.
std::string write_json(const json& j, const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("hearth-bpe-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string path = (dir / name).string();
  std::ofstream(path) << j.dump(1);
  return path;
}

BpeTokenizer gpt2_tiny() { return BpeTokenizer::from_pretrained(fixture_dir("gpt2_tiny")); }

TEST(BpeTokenizer, MergesApplyLowestRankFirst) {
  const BpeTokenizer tok = gpt2_tiny();
  // "l l" (rank 0) first, then "h e" (2), "he ll" (3), "hell o" (4).
  EXPECT_EQ(tok.encode("hello"), (Ids{260}));
  EXPECT_EQ(tok.encode("hell"), (Ids{259}));
  // In "help" the 'e' goes to "e l" (rank 1) before "h e" (rank 2) is reached.
  EXPECT_EQ(tok.encode("help"), (Ids{'h', 257, 'p'}));
}

TEST(BpeTokenizer, Gpt2SplitsBeforeMerging) {
  const BpeTokenizer tok = gpt2_tiny();
  // " hello", " ", " world", "\n": the pieces never merge across each other.
  EXPECT_EQ(tok.encode(" hello  world\n"), (Ids{261, ' ', 266, '\n'}));
  EXPECT_EQ(tok.encode(""), Ids{});
  // Every byte has a token, so any text encodes: 'é' is bytes C3 A9.
  EXPECT_EQ(tok.encode("é"), (Ids{0xC3, 0xA9}));
}

TEST(BpeTokenizer, AddedTokensAreCutOutBeforePreTokenization) {
  const BpeTokenizer tok = gpt2_tiny();
  EXPECT_EQ(tok.encode("hello<|endoftext|> world"), (Ids{260, 270, 266}));
  EXPECT_EQ(tok.encode("<|endoftext|><|endoftext|>"), (Ids{270, 270}));
  EXPECT_EQ(tok.id_of("<|endoftext|>"), 270);
  EXPECT_EQ(tok.token_to_id("Ġworld"), 266);
  EXPECT_EQ(tok.id_to_token(262), "Ġw");
  EXPECT_EQ(tok.id_to_token(271), std::nullopt);
  EXPECT_EQ(tok.vocab_size(), 271);
  EXPECT_TRUE(tok.is_special(270));
  EXPECT_FALSE(tok.is_special(260));
}

TEST(BpeTokenizer, TokenizerConfigNamesTheSpecialTokens) {
  const BpeTokenizer tok = gpt2_tiny();
  EXPECT_EQ(tok.eos_token_id(), 270);
  EXPECT_EQ(tok.bos_token_id(), 270);
  EXPECT_EQ(tok.unk_token_id(), 270);
  EXPECT_EQ(tok.pad_token_id(), std::nullopt);
}

TEST(BpeTokenizer, DecodeUndoesEncodeOnAnyText) {
  const BpeTokenizer tok = gpt2_tiny();
  const std::vector<std::string> alphabet = {
      "a",    "e",  "h", "l", "o", "w", "r",    "d",        " ", "  ", "\n", "\t", "\r\n", "é",    "ß",
      "中",   "文", "ا", "ل", "ह", "ि", "🦙", "👍🏽", "0", "42", "'s", "!",  "\x01", "\x7F", "<|endoftext|>",
      "<|end"};
  std::mt19937 rng(7);
  for (int i = 0; i < 500; ++i) {
    std::string text;
    const int n = static_cast<int>(rng() % 20);
    for (int k = 0; k < n; ++k) text += alphabet[rng() % alphabet.size()];
    EXPECT_EQ(tok.decode(tok.encode(text)), text);
  }
  EXPECT_EQ(tok.decode(tok.encode("hello<|endoftext|> world"), /*skip_special_tokens=*/true), "hello world");
  // Ids that are no token are left out, as Hugging Face does.
  EXPECT_EQ(tok.decode({260, -1, 100000, 266}), "hello world");
}

TEST(BpeTokenizer, InvalidUtf8IsRepairedLikeHuggingFace) {
  const BpeTokenizer tok = gpt2_tiny();
  // Decoding bytes that are not UTF-8: each maximal bad sequence is one U+FFFD.
  EXPECT_EQ(tok.decode({0xE2, 0x82}), "\uFFFD");
  EXPECT_EQ(tok.decode({0xE2, 0x82, 'A'}), "\uFFFDA");
  EXPECT_EQ(tok.decode({0xC0, 0x80}), "\uFFFD\uFFFD");
  // A token of the middle of a character decodes alone to U+FFFD, with its neighbours to the character.
  EXPECT_EQ(tok.decode({0xC3}), "\uFFFD");
  EXPECT_EQ(tok.decode({0xC3, 0xA9}), "é");
  // Encoding text that is not UTF-8 encodes its repaired form: U+FFFD is EF BF BD.
  EXPECT_EQ(tok.encode("\xE2\x82"), (Ids{0xEF, 0xBF, 0xBD}));
}

TEST(BpeTokenizer, AMegabyteWordWithoutSpacesStaysFast) {
  const BpeTokenizer tok = gpt2_tiny();
  // 2^20 'a's: "a a" pairs first (leftmost first), then "aa aa", then
  // "aaaa aaaa": 2^17 tokens "aaaaaaaa". A quadratic merge loop would take minutes.
  const auto start = std::chrono::steady_clock::now();
  const Ids ids = tok.encode(std::string(size_t{1} << 20, 'a'));
  const Ids hellos = tok.encode([] {
    std::string s;
    for (int i = 0; i < 200000; ++i) s += "hello";
    return s;
  }());
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(ids, Ids(size_t{1} << 17, 269));
  EXPECT_EQ(hellos, Ids(200000, 260));
  // Generous for sanitizer builds on a loaded machine; it takes well under a second.
  EXPECT_LT(seconds, 30.0);
}

TEST(BpeTokenizer, Llama3StyleSplitIgnoreMergesAndTemplate) {
  const BpeTokenizer tok = BpeTokenizer::from_tokenizer_json(fixture_dir("llama3_tiny") + "/tokenizer.json");
  // <|begin_of_text|> is 262; "the" has no whole token, so merges: t + he (257);
  // "Ġcat" is in the vocabulary, so ignore_merges takes it whole (261).
  EXPECT_EQ(tok.encode("the cat"), (Ids{262, 't', 257, 261}));
  EXPECT_EQ(tok.encode("the cat", /*add_special_tokens=*/false), (Ids{'t', 257, 261}));
  EXPECT_EQ(tok.encode(" the", false), (Ids{258}));
  // Digits in threes: "123" (260), then "456" byte by byte.
  EXPECT_EQ(tok.encode("123456", false), (Ids{260, '4', '5', '6'}));
  EXPECT_EQ(tok.encode("x<|eot_id|>", false), (Ids{'x', 264}));
  EXPECT_EQ(tok.decode({262, 't', 257, 261}), "<|begin_of_text|>the cat");
  EXPECT_EQ(tok.decode({262, 't', 257, 261}, true), "the cat");

  json j = fixture_json("llama3_tiny");
  j["model"]["ignore_merges"] = false;
  const BpeTokenizer merging = BpeTokenizer::from_tokenizer_json(write_json(j, "llama3_merging.json"));
  EXPECT_EQ(merging.encode(" cat", false), (Ids{' ', 'c', 'a', 't'}));
}

TEST(BpeTokenizer, ByteFallbackWithLlama2Normalizers) {
  const BpeTokenizer tok = BpeTokenizer::from_tokenizer_json(fixture_dir("byte_fallback_tiny") + "/tokenizer.json");
  // "hi ü" -> "▁hi▁ü": "▁h" (262), "▁hi" (263), "▁" (259), 'ü' not in the
  // vocabulary: its bytes <0xC3> (198) <0xBC> (191); <s> (1) in front.
  const Ids ids = tok.encode("hi ü");
  EXPECT_EQ(ids, (Ids{1, 263, 259, 198, 191}));
  EXPECT_EQ(tok.decode(ids), "<s> hi ü");
  EXPECT_EQ(tok.decode(ids, true), "hi ü");
  // Each stretch between added tokens is normalized alone, so "ho" gets its own "▁".
  EXPECT_EQ(tok.encode("hi<s>ho"), (Ids{1, 263, 1, 262, 114}));
  // A byte run that is not UTF-8: one U+FFFD per byte token.
  EXPECT_EQ(tok.decode({198, 263}), "\uFFFD hi");

  json j = fixture_json("byte_fallback_tiny");
  j["model"]["byte_fallback"] = false;
  const BpeTokenizer unk = BpeTokenizer::from_tokenizer_json(write_json(j, "no_fallback.json"));
  // Without byte fallback unknown characters are <unk> (0), a run fused into one.
  EXPECT_EQ(unk.encode("üü"), (Ids{1, 259, 0}));
  j["model"]["fuse_unk"] = false;
  EXPECT_EQ(BpeTokenizer::from_tokenizer_json(write_json(j, "no_fuse.json")).encode("üü"), (Ids{1, 259, 0, 0}));
}

TEST(BpeTokenizer, AddedTokenStripAndSingleWord) {
  json j = fixture_json("gpt2_tiny");
  j["added_tokens"].push_back({{"id", 271},
                               {"content", "<x>"},
                               {"single_word", false},
                               {"lstrip", true},
                               {"rstrip", true},
                               {"normalized", false},
                               {"special", false}});
  j["added_tokens"].push_back({{"id", 272},
                               {"content", "ab"},
                               {"single_word", true},
                               {"lstrip", false},
                               {"rstrip", false},
                               {"normalized", true},
                               {"special", false}});
  const BpeTokenizer tok = BpeTokenizer::from_tokenizer_json(write_json(j, "flags.json"));
  EXPECT_EQ(tok.encode("a  <x>  b"), (Ids{'a', 271, 'b'}));
  EXPECT_EQ(tok.encode("ab cd"), (Ids{272, ' ', 'c', 'd'}));
  EXPECT_EQ(tok.encode("xab"), (Ids{'x', 'a', 'b'}));  // inside a word: not the token
  EXPECT_EQ(tok.vocab_size(), 273);
  // Not special: kept when special tokens are skipped.
  EXPECT_EQ(tok.decode(tok.encode("a <x> b<|endoftext|>"), true), "a<x>b");

  j["added_tokens"].erase(2);
  j["added_tokens"][1] = {{"id", 271}, {"content", "<x>"}, {"normalized", false}};
  const BpeTokenizer plain = BpeTokenizer::from_tokenizer_json(write_json(j, "plain.json"));
  // Without lstrip/rstrip the spaces stay text: "a", "  " | <x> | " ", " b".
  EXPECT_EQ(plain.encode("a  <x>  b"), (Ids{'a', ' ', ' ', 271, ' ', ' ', 'b'}));
}

TEST(BpeTokenizer, AddPrefixSpaceGivesEveryStretchItsSpace) {
  json j = fixture_json("gpt2_tiny");
  j["pre_tokenizer"]["add_prefix_space"] = true;
  const BpeTokenizer tok = BpeTokenizer::from_tokenizer_json(write_json(j, "prefix.json"));
  EXPECT_EQ(tok.encode("hello"), (Ids{261}));
  EXPECT_EQ(tok.encode("<|endoftext|>hello"), (Ids{270, 261}));
  EXPECT_EQ(tok.encode(" hello"), (Ids{261}));  // already has one
}

// Each mutation of gpt2_tiny's tokenizer.json and what the message must say.
struct BadFile {
  const char* name;
  std::function<void(json&)> mutate;
  std::vector<std::string> message;
};

TEST(BpeTokenizer, BadFilesAreRefusedNamingTheFieldAndTheFile) {
  const std::vector<BadFile> cases = {
      {"no_model", [](json& j) { j.erase("model"); }, {"field 'model' is missing", "a BPE model"}},
      {"wordpiece", [](json& j) { j["model"]["type"] = "WordPiece"; }, {"field 'model.type'", "expected a BPE model"}},
      {"no_vocab", [](json& j) { j["model"].erase("vocab"); }, {"field 'model.vocab' is missing"}},
      {"vocab_array", [](json& j) { j["model"]["vocab"] = json::array({1}); }, {"'model.vocab'", "token -> id"}},
      {"id_out_of_range", [](json& j) { j["model"]["vocab"]["he"] = 5000; }, {"model.vocab[\"he\"]", "[0, 270]"}},
      {"id_negative", [](json& j) { j["model"]["vocab"]["he"] = -1; }, {"model.vocab[\"he\"]"}},
      {"id_float", [](json& j) { j["model"]["vocab"]["he"] = 2.5; }, {"model.vocab[\"he\"]"}},
      {"id_twice", [](json& j) { j["model"]["vocab"]["he"] = 257; }, {"'model.vocab'", "two tokens"}},
      {"merge_unknown",
       [](json& j) { j["model"]["merges"][0] = "l zz"; },
       {"model.merges", "'zz' is not in the vocabulary"}},
      {"merge_result_unknown", [](json& j) { j["model"]["merges"][0] = "h l"; }, {"model.merges", "result 'hl'"}},
      {"merge_three_parts", [](json& j) { j["model"]["merges"][1] = "a b c"; }, {"model.merges[1]", "\"a b\""}},
      {"merge_number", [](json& j) { j["model"]["merges"][2] = 7; }, {"model.merges[2]"}},
      {"merges_object", [](json& j) { j["model"]["merges"] = json::object(); }, {"'model.merges'", "an array"}},
      {"dropout", [](json& j) { j["model"]["dropout"] = 0.1; }, {"model.dropout", "dropout is not supported"}},
      {"unk_missing", [](json& j) { j["model"]["unk_token"] = "<unk>"; }, {"model.unk_token", "'<unk>'"}},
      {"byte_fallback_string",
       [](json& j) { j["model"]["byte_fallback"] = "yes"; },
       {"model.byte_fallback", "true or false"}},
      {"pre_tokenizer_unknown",
       [](json& j) {
         j["pre_tokenizer"] = {{"type", "Whitespace"}};
       },
       {"field 'pre_tokenizer'", "'Whitespace' is not supported"}},
      {"normalizer_unknown",
       [](json& j) {
         j["normalizer"] = {{"type", "Lowercase"}};
       },
       {"'normalizer'", "'Lowercase'"}},
      {"decoder_unknown",
       [](json& j) {
         j["decoder"] = {{"type", "WordPiece"}};
       },
       {"'decoder'", "'WordPiece'"}},
      {"post_unknown",
       [](json& j) {
         j["post_processor"] = {{"type", "Mystery"}};
       },
       {"'post_processor'", "'Mystery'"}},
      {"no_type", [](json& j) { j["decoder"] = json::object(); }, {"field 'decoder.type' is missing"}},
      {"bad_regex",
       [](json& j) {
         j["pre_tokenizer"] = {{"type", "Split"}, {"pattern", {{"Regex", "(a"}}}, {"behavior", "Isolated"}};
       },
       {"pre_tokenizer.pattern.Regex", "does not compile"}},
      {"bad_behavior",
       [](json& j) {
         j["pre_tokenizer"] = {{"type", "Split"}, {"pattern", {{"String", "a"}}}, {"behavior", "Sideways"}};
       },
       {"pre_tokenizer.behavior", "Isolated"}},
      {"added_id_wrong", [](json& j) { j["added_tokens"][0]["id"] = 5; }, {"added_tokens[0].id", "270"}},
      {"added_twice", [](json& j) { j["added_tokens"].push_back(j["added_tokens"][0]); }, {"added_tokens[1].content"}},
      {"added_empty",
       [](json& j) {
         j["added_tokens"].push_back({{"id", 271}, {"content", ""}});
       },
       {"added_tokens[1].content", "non-empty"}},
      {"added_not_object", [](json& j) { j["added_tokens"][0] = "x"; }, {"added_tokens[0]"}},
      {"template_unknown_special",
       [](json& j) {
         j["post_processor"] = {{"type", "TemplateProcessing"},
                                {"single", json::array({{{"SpecialToken", {{"id", "<bos>"}, {"type_id", 0}}}}})},
                                {"special_tokens", json::object()}};
       },
       {"post_processor.single[0].SpecialToken.id"}},
      {"template_id_out_of_range",
       [](json& j) {
         j["post_processor"] = {
             {"type", "TemplateProcessing"},
             {"single", json::array({{{"SpecialToken", {{"id", "<bos>"}, {"type_id", 0}}}}})},
             {"special_tokens", {{"<bos>", {{"id", "<bos>"}, {"ids", json::array({271})}, {"tokens", {"<bos>"}}}}}}};
       },
       {"post_processor.special_tokens.<bos>.ids[0]", "[0, 270]"}},
      {"truncation",
       [](json& j) {
         j["truncation"] = {{"max_length", 5}};
       },
       {"'truncation'"}},
      {"version", [](json& j) { j["version"] = "2.0"; }, {"'version'", "\"1.0\""}},
      {"strip_two_chars",
       [](json& j) {
         j["decoder"] = {{"type", "Strip"}, {"content", "ab"}, {"start", 1}, {"stop", 0}};
       },
       {"decoder.content", "one character"}},
  };
  for (const BadFile& c : cases) {
    json j = fixture_json("gpt2_tiny");
    c.mutate(j);
    const std::string path = write_json(j, std::string(c.name) + ".json");
    try {
      (void)BpeTokenizer::from_tokenizer_json(path);
      ADD_FAILURE() << c.name << ": accepted";
    } catch (const Error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(path), std::string::npos) << c.name << ": " << what;
      for (const std::string& m : c.message) EXPECT_NE(what.find(m), std::string::npos) << c.name << ": " << what;
    }
  }
}

TEST(BpeTokenizer, ATokenListedTwiceInTheVocabularyIsRefused) {
  // JSON parsers keep the last of two equal keys; the reader counts them.
  std::string text = fixture_json("gpt2_tiny").dump();
  const std::string vocab = "\"vocab\":{";
  text.insert(text.find(vocab) + vocab.size(), "\"he\":258,");
  const fs::path path = fs::path(write_json(json::object(), "repeated_key.json"));
  std::ofstream(path) << text;
  try {
    (void)BpeTokenizer::from_tokenizer_json(path.string());
    ADD_FAILURE() << "accepted";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find(path.string() + ": an object lists the same key twice"), std::string::npos)
        << e.what();
  }
}

TEST(BpeTokenizer, NotJsonOrNoFile) {
  const std::string path = write_json(json::array(), "array.json");
  EXPECT_THROW((void)BpeTokenizer::from_tokenizer_json(path), IoError);
  EXPECT_THROW((void)BpeTokenizer::from_pretrained("/nonexistent/model"), IoError);
}

// The textbook BPE: while some adjacent pair has a merge, merge the leftmost
// pair of the lowest rank. Slow (quadratic), but plainly right.
std::vector<std::string> naive_bpe(const std::string& word,
                                   const std::vector<std::pair<std::string, std::string>>& merges) {
  std::vector<std::string> symbols;
  for (char c : word) symbols.emplace_back(1, c);
  while (true) {
    size_t best_rank = merges.size(), best_pos = 0;
    for (size_t i = 0; i + 1 < symbols.size(); ++i)
      for (size_t r = 0; r < best_rank; ++r)
        if (merges[r].first == symbols[i] && merges[r].second == symbols[i + 1]) {
          best_rank = r;
          best_pos = i;
          break;
        }
    if (best_rank == merges.size()) return symbols;
    symbols[best_pos] += symbols[best_pos + 1];
    symbols.erase(symbols.begin() + static_cast<std::ptrdiff_t>(best_pos) + 1);
  }
}

TEST(BpeModel, HeapMergingAgreesWithTheTextbookAlgorithm) {
  // Random merges over a three-letter alphabet, each making a new token.
  std::mt19937 rng(11);
  std::vector<std::string> vocab = {"a", "b", "c"};
  std::vector<std::pair<std::string, std::string>> merges;
  std::set<std::string> known(vocab.begin(), vocab.end());
  while (merges.size() < 60) {
    const std::string& x = vocab[rng() % vocab.size()];
    const std::string& y = vocab[rng() % vocab.size()];
    if (x.size() + y.size() > 8 || known.count(x + y)) continue;
    merges.emplace_back(x, y);
    known.insert(x + y);
    vocab.push_back(x + y);
  }
  const BpeModel model(vocab, merges, BpeOptions{}, "test");
  for (int i = 0; i < 2000; ++i) {
    std::string word;
    const size_t n = 1 + rng() % 40;
    for (size_t k = 0; k < n; ++k) word.push_back("abc"[rng() % 3]);
    Ids ids;
    model.tokenize(word, ids);
    std::vector<std::string> got;
    for (int64_t id : ids) got.push_back(model.token(id));
    ASSERT_EQ(got, naive_bpe(word, merges)) << word;
  }
}

TEST(BpeTokenizer, ThreadsEncodingAtOnceAgree) {
  const BpeTokenizer tok = BpeTokenizer::from_tokenizer_json(fixture_dir("llama3_tiny") + "/tokenizer.json");
  std::vector<std::string> texts;
  for (int i = 0; i < 200; ++i) texts.push_back("the cat " + std::to_string(i * 7919) + " I'M\n\n x<|eot_id|>");
  std::vector<Ids> expected;
  for (const std::string& t : texts) expected.push_back(tok.encode(t));
  std::vector<std::thread> threads;
  std::atomic<int> mismatches{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int round = 0; round < 20; ++round)
        for (size_t i = 0; i < texts.size(); ++i)
          if (tok.encode(texts[i]) != expected[i]) ++mismatches;
    });
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(mismatches.load(), 0);
}

TEST(BpeTokenizer, TheFuzzSeedsAreValidTokenizers) {
  // The fuzzer mutates these; a seed the reader refused would leave it nothing valid to start from.
  const fs::path dir = fs::path(HEARTH_FIXTURES_DIR) / ".." / ".." / "fuzz" / "corpus" / "bpe_tokenizer";
  int seeds = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::ifstream in(e.path(), std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), {});
    json j = json::parse(bytes.substr(1));
    const BpeTokenizer tok = BpeTokenizer::from_tokenizer_json(write_json(j, "seed.json"));
    EXPECT_FALSE(tok.encode("Hello world 12 caf\xC3\xA9 hi").empty()) << e.path();
    ++seeds;
  }
  EXPECT_GE(seeds, 4);
}

TEST(TokenDecoders, MetaspaceStripAndByteFallbackEdges) {
  std::vector<std::string> tokens = {"\u2581Hey", "\u2581friend", "!"};
  MetaspaceDecoder(U'\u2581', PrependScheme::always).decode_chain(tokens, 1 << 20);
  EXPECT_EQ(tokens, (std::vector<std::string>{"Hey", " friend", "!"}));
  tokens = {"\u2581Hey"};
  MetaspaceDecoder(U'\u2581', PrependScheme::never).decode_chain(tokens, 1 << 20);
  EXPECT_EQ(tokens, (std::vector<std::string>{" Hey"}));
  tokens = {"   ", "  x  "};
  StripDecoder(U' ', 2, 1).decode_chain(tokens, 1 << 20);
  EXPECT_EQ(tokens, (std::vector<std::string>{"", "x "}));
  // "<0x+A>" reads as byte 10, as Rust's from_str_radix reads "+A".
  tokens = {"<0x41>", "<0x+A>", "<0xZZ>"};
  ByteFallbackDecoder().decode_chain(tokens, 1 << 20);
  EXPECT_EQ(tokens, (std::vector<std::string>{"A\n", "<0xZZ>"}));
}

}  // namespace
}  // namespace hearth::data
