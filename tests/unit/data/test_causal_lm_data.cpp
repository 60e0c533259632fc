// Causal-LM data as run_clm prepares it: the rows of each file kind,
// group_texts' packing per map batch, completion-only labels, padding.
#include <fstream>

#include <gtest/gtest.h>

#include "hearth/core/errors.h"
#include "hearth/data/causal_lm_data.h"
#include "tests/support/temp_dir.h"

namespace hearth::data {
namespace {

using hearth::testing::TempDir;

std::string write(TempDir& dir, const std::string& name, const std::string& text) {
  const std::string path = dir.file(name);
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// A tokenizer for the tests: one id per byte.
TokenIds bytes(const std::string& s) { return TokenIds(s.begin(), s.end()); }

TEST(CausalLmData, TextFilesGiveOneRowPerLineEmptyOnesIncluded) {
  TempDir dir;
  EXPECT_EQ(read_lm_texts(write(dir, "a.txt", "first\r\n\nthird\nlast")),
            (std::vector<std::string>{"first", "", "third", "last"}));
  EXPECT_EQ(read_lm_texts(write(dir, "a.jsonl", "{\"id\": 1, \"text\": \"x\"}\n\n{\"id\": 2, \"text\": \"y\"}\n")),
            (std::vector<std::string>{"x", "y"}));
  // Without a "text" column, the first one.
  EXPECT_EQ(read_lm_texts(write(dir, "b.json", "[{\"body\": \"p\"}, {\"body\": \"q\"}]")),
            (std::vector<std::string>{"p", "q"}));
  EXPECT_EQ(read_lm_texts(write(dir, "c.csv", "title,text\nt,\"one, two\"\nu,three\n")),
            (std::vector<std::string>{"one, two", "three"}));
}

TEST(CausalLmData, BadFilesNameTheFileTheLineAndTheField) {
  TempDir dir;
  EXPECT_NE(error_of([&] {
              read_lm_texts(write(dir, "d.jsonl", "{\"text\": \"x\"}\n{\"text\": 3}\n"));
            }).find("d.jsonl:2: field 'text': expected a string, got 3"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              read_lm_texts(write(dir, "e.jsonl", "{\"text\": \"x\"}\n{oops\n"));
            }).find("e.jsonl:2: not a valid JSON line"),
            std::string::npos);
  EXPECT_NE(
      error_of([&] { read_lm_texts(write(dir, "f.parquet", "")); }).find("expected a .txt, .json, .jsonl or .csv"),
      std::string::npos);
  EXPECT_NE(error_of([&] { read_lm_texts(write(dir, "g.txt", "")); }).find("g.txt: no rows"), std::string::npos);
  EXPECT_NE(error_of([&] { read_lm_texts(dir.file("none.txt")); }).find("no such file"), std::string::npos);
  EXPECT_NE(error_of([&] {
              read_prompt_completions(write(dir, "h.jsonl", "{\"prompt\": \"a\"}\n"));
            }).find("h.jsonl:1: no field 'completion'"),
            std::string::npos);
}

TEST(CausalLmData, GroupTextsPacksEachMapBatchAndDropsItsRemainder) {
  // Batches of two rows: {1,2,3,4,5} -> [1,2] [3,4] (5 dropped); {6,7,8,9} -> [6,7] [8,9].
  const std::vector<TokenIds> rows = {{1, 2, 3}, {4, 5}, {6}, {7, 8, 9}};
  EXPECT_EQ(group_texts(rows, 2, 2), (std::vector<TokenIds>{{1, 2}, {3, 4}, {6, 7}, {8, 9}}));
  // One batch: 9 tokens, blocks of 4, one token dropped at the end only.
  EXPECT_EQ(group_texts(rows, 4), (std::vector<TokenIds>{{1, 2, 3, 4}, {5, 6, 7, 8}}));
  EXPECT_TRUE(group_texts(rows, 100).empty());
  EXPECT_NE(error_of([&] { group_texts(rows, 0); }).find("block_size: expected a positive integer"), std::string::npos);
}

TEST(CausalLmData, PackedBlocksLabelTheirOwnTokens) {
  PackedBlocksDataset d({{1, 2, 3}, {4, 5, 6}});
  const Example e = d.get(1);
  EXPECT_EQ(e.at(field::kInputIds).to_vector<int64_t>(), (TokenIds{4, 5, 6}));
  EXPECT_EQ(e.at(field::kLabels).to_vector<int64_t>(), (TokenIds{4, 5, 6}));
  EXPECT_EQ(e.at(field::kAttentionMask).to_vector<int64_t>(), (TokenIds{1, 1, 1}));
}

TEST(CausalLmData, PromptCompletionRowsLearnTheCompletionOnly) {
  TempDir dir;
  const auto rows = read_prompt_completions(
      write(dir, "pc.jsonl",
            "{\"prompt\": \"ab\", \"completion\": \"cd\"}\n{\"prompt\": \"long prompt\", \"completion\": \"x\"}\n"));
  EXPECT_TRUE(is_prompt_completion_file(dir.file("pc.jsonl")));
  EXPECT_FALSE(is_prompt_completion_file(write(dir, "t.jsonl", "{\"text\": \"x\"}\n")));
  // max_length 6: "ab"+"cd"+eos fits; "long prompt" leaves no completion and is dropped.
  PromptCompletionDataset d(rows, bytes, 0, 6);
  ASSERT_EQ(d.size(), 1);
  EXPECT_EQ(d.dropped(), 1);
  const Example e = d.get(0);
  EXPECT_EQ(e.at(field::kInputIds).to_vector<int64_t>(), (TokenIds{'a', 'b', 'c', 'd', 0}));
  EXPECT_EQ(e.at(field::kLabels).to_vector<int64_t>(), (TokenIds{-100, -100, 'c', 'd', 0}));
}

TEST(CausalLmData, CollationPadsIdsMaskAndLabelsApart) {
  PromptCompletionDataset d({{"a", "bc"}, {"a", "b"}}, bytes, -1, 16);
  const Batch b = causal_lm_collate(7)({d.get(0), d.get(1)});
  EXPECT_EQ(b.at(field::kInputIds).to_vector<int64_t>(), (TokenIds{'a', 'b', 'c', 'a', 'b', 7}));
  EXPECT_EQ(b.at(field::kAttentionMask).to_vector<int64_t>(), (TokenIds{1, 1, 1, 1, 1, 0}));
  EXPECT_EQ(b.at(field::kLabels).to_vector<int64_t>(), (TokenIds{-100, 'b', 'c', -100, 'b', -100}));
}

}  // namespace
}  // namespace hearth::data
