// Tokenised text samples and the collation that pads each batch.
#include <gtest/gtest.h>

#include "hearth/data/tokenized_text_dataset.h"

namespace hearth::data {
namespace {

BertTokenizer tiny_tokenizer() {
  return BertTokenizer(Vocab({"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "sat", "dog"}));
}

LabeledTexts pairs() {
  LabeledTexts t;
  t.source = "pairs";
  t.rows = {{"the cat", std::string("sat"), "1", 2}, {"the dog sat the cat", std::string("the"), "0", 3}};
  return t;
}

TEST(TokenizedTextDataset, SamplesHoldIdsTypesMaskAndLabel) {
  TokenizedTextDataset ds(pairs(), {1, 0}, false, tiny_tokenizer(), {});
  ASSERT_EQ(ds.size(), 2);
  Example e = ds.get(0);
  EXPECT_EQ(e.at(field::kInputIds).to_vector<int64_t>(), (std::vector<int64_t>{2, 5, 6, 3, 7, 3}));
  EXPECT_EQ(e.at(field::kTokenTypeIds).to_vector<int64_t>(), (std::vector<int64_t>{0, 0, 0, 0, 1, 1}));
  EXPECT_EQ(e.at(field::kAttentionMask).to_vector<int64_t>(), (std::vector<int64_t>(6, 1)));
  EXPECT_EQ(e.at(field::kLabels).dtype(), DType::int64);
  EXPECT_EQ(e.at(field::kLabels).item<int64_t>(), 1);

  TokenizedTextDataset regression(pairs(), {0.5, 4.25}, true, tiny_tokenizer(), {});
  EXPECT_EQ(regression.get(1).at(field::kLabels).dtype(), DType::float32);
  EXPECT_FLOAT_EQ(regression.get(1).at(field::kLabels).item<float>(), 4.25f);
}

TEST(TokenizedTextDataset, PaddingCollatePadsToTheLongestInTheBatch) {
  TokenizedTextDataset ds(pairs(), {1, 0}, false, tiny_tokenizer(), {});
  Batch b = padding_collate(/*pad_token_id=*/0)({ds.get(0), ds.get(1)});
  // Row 1 has [CLS] + 5 + [SEP] + 1 + [SEP] = 9 tokens; row 0 (6) is padded.
  ASSERT_EQ(b.at(field::kInputIds).shape(), (Shape{2, 9}));
  EXPECT_EQ(b.at(field::kInputIds).to_vector<int64_t>(),
            (std::vector<int64_t>{2, 5, 6, 3, 7, 3, 0, 0, 0, 2, 5, 8, 7, 5, 6, 3, 5, 3}));
  EXPECT_EQ(b.at(field::kAttentionMask).to_vector<int64_t>(),
            (std::vector<int64_t>{1, 1, 1, 1, 1, 1, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1}));
  EXPECT_EQ(b.at(field::kTokenTypeIds).to_vector<int64_t>(),
            (std::vector<int64_t>{0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1}));
  EXPECT_EQ(b.at(field::kLabels).to_vector<int64_t>(), (std::vector<int64_t>{1, 0}));
}

TEST(TokenizedTextDataset, MaxLengthPaddingAndTruncation) {
  TokenizedTextDataset ds(pairs(), {1, 0}, false, tiny_tokenizer(), {.max_length = 7, .padding = Padding::max_length});
  EXPECT_EQ(ds.get(0).at(field::kInputIds).size(0), 7);
  EXPECT_EQ(ds.get(1).at(field::kInputIds).size(0), 7);
  EXPECT_THROW(TokenizedTextDataset(pairs(), {1}, false, tiny_tokenizer(), {}), ValueError);
  // Data to predict on: no labels field.
  TokenizedTextDataset unlabelled(pairs(), {}, false, tiny_tokenizer(), {});
  EXPECT_FALSE(unlabelled.get(0).contains(field::kLabels));
  EXPECT_TRUE(unlabelled.get(0).contains(field::kInputIds));
}

}  // namespace
}  // namespace hearth::data
