// GLUE tasks, the readers of their files and label encoding.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "hearth/core/errors.h"
#include "hearth/data/csv_reader.h"
#include "hearth/data/glue.h"
#include "tests/support/temp_dir.h"

namespace hearth::data {
namespace {

namespace fs = std::filesystem;

class GlueFiles : public ::testing::Test {
 protected:
  // A directory of its own: ctest runs the tests of this fixture in parallel processes.
  void SetUp() override { dir_ = tmp_.path(); }
  std::string write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name, std::ios::binary) << text;
    return (dir_ / name).string();
  }
  // The message of the ValueError `fn` throws.
  template <typename Fn>
  static std::string error_of(Fn fn) {
    try {
      fn();
    } catch (const Error& e) {
      return e.what();
    }
    return "(no error)";
  }
  testing::TempDir tmp_;
  fs::path dir_;
};

TEST(Glue, TheNineTasksAsRunGlueNamesThem) {
  EXPECT_EQ(glue_tasks().size(), 9u);
  EXPECT_EQ(glue_task("mnli").sentence1_key, "premise");
  EXPECT_EQ(*glue_task("mnli").sentence2_key, "hypothesis");
  EXPECT_EQ(glue_task("mnli").num_labels(), 3);
  EXPECT_EQ(glue_task("qnli").sentence1_key, "question");
  EXPECT_FALSE(glue_task("sst2").sentence2_key.has_value());
  EXPECT_TRUE(glue_task("stsb").is_regression());
  EXPECT_EQ(glue_task("stsb").num_labels(), 1);
  EXPECT_EQ(glue_task("wnli").label_names, (std::vector<std::string>{"not_entailment", "entailment"}));
  EXPECT_EQ(find_glue_task("squad"), nullptr);
  try {
    glue_task("squad");
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown task 'squad': expected one of 'cola'"), std::string::npos);
  }
}

TEST_F(GlueFiles, OriginalMrpcTsvWithQuotesAndAByteOrderMark) {
  const std::string path = write("train.tsv",
                                 "\xEF\xBB\xBFQuality\t#1 ID\t#2 ID\t#1 String\t#2 String\n"
                                 "1\t1\t2\tHe said \"yes.\tHe agreed.\n"
                                 "0\t3\t4\tA cat.\tA dog.\r\n");
  LabeledTexts t = read_glue_tsv(glue_task("mrpc"), path);
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(t.rows[0].text_a, "He said \"yes.");
  EXPECT_EQ(*t.rows[0].text_b, "He agreed.");
  EXPECT_EQ(t.rows[1].line, 3);
  EXPECT_EQ(encode_labels(t, label_space(glue_task("mrpc"))), (std::vector<double>{1, 0}));
}

TEST_F(GlueFiles, OriginalColaWithoutHeaderAndMnliWithLabelNames) {
  LabeledTexts cola = read_glue_tsv(
      glue_task("cola"), write("cola.tsv", "gj04\t1\t\tThe sailors rode the breeze.\ngj04\t0\t*\tThe more.\n"));
  ASSERT_EQ(cola.rows.size(), 2u);
  EXPECT_EQ(cola.rows[0].text_a, "The sailors rode the breeze.");
  EXPECT_FALSE(cola.rows[0].text_b.has_value());
  EXPECT_EQ(encode_labels(cola, label_space(glue_task("cola"))), (std::vector<double>{1, 0}));

  LabeledTexts mnli = read_glue_tsv(glue_task("mnli"), write("dev_matched.tsv",
                                                             "index\tsentence1\tsentence2\tlabel1\tgold_label\n"
                                                             "0\tA man.\tA person.\tentailment\tentailment\n"
                                                             "1\tA man.\tA woman.\tcontradiction\tcontradiction\n"
                                                             "2\tA man.\tA tall man.\tneutral\tneutral\n"));
  EXPECT_EQ(encode_labels(mnli, label_space(glue_task("mnli"))), (std::vector<double>{0, 2, 1}));
}

TEST_F(GlueFiles, BadLabelsNameFileLineAndColumn) {
  const std::string path = write("dev.tsv",
                                 "index\tsentence1\tsentence2\tlabel\n"
                                 "0\ta\tb\tentailment\n"
                                 "1\ta\tb\tmaybe\n");
  LabeledTexts rte = read_glue_tsv(glue_task("rte"), path);
  EXPECT_NE(error_of([&] { encode_labels(rte, label_space(glue_task("rte"))); })
                .find(path + ":3: column 'label': expected one of 'entailment', 'not_entailment' or a class id "
                             "from 0 to 1, got 'maybe'"),
            std::string::npos);
  const std::string stsb_path = write("sts.tsv", "index\tsentence1\tsentence2\tscore\n0\ta\tb\t3.8\n1\ta\tb\thigh\n");
  LabeledTexts stsb = read_glue_tsv(glue_task("stsb"), stsb_path);
  EXPECT_NE(error_of([&] {
              encode_labels(stsb, label_space(glue_task("stsb")));
            }).find(stsb_path + ":3: column 'score': expected a number, got 'high'"),
            std::string::npos);
  // A missing column names the file and the columns there are.
  EXPECT_NE(error_of([&] { read_glue_tsv(glue_task("qqp"), path); }).find("no column named 'question1'"),
            std::string::npos);
}

TEST_F(GlueFiles, CsvColumnsByNameLikeRunGlue) {
  const std::string path = write("train.csv",
                                 "idx,sentence2,label,sentence1\n"
                                 "0,\"second, with a comma\",pos,first\n"
                                 "1,b,neg,a\n"
                                 "2,d,pos,c\n");
  LabeledTexts t = read_text_file(path);
  EXPECT_EQ(t.text_a_column, "sentence1");
  EXPECT_EQ(*t.text_b_column, "sentence2");
  EXPECT_EQ(*t.rows[0].text_b, "second, with a comma");
  LabelSpace space = infer_label_space(t);
  EXPECT_FALSE(space.is_regression);
  EXPECT_EQ(space.label_list, (std::vector<std::string>{"neg", "pos"}));
  EXPECT_EQ(encode_labels(t, space), (std::vector<double>{1, 0, 1}));

  // Without sentence1/sentence2: the first two columns that are not the label.
  LabeledTexts other = read_text_file(write("other.csv", "label,text,extra\n2,x,y\n10,z,w\n"));
  EXPECT_EQ(other.text_a_column, "text");
  EXPECT_EQ(*other.text_b_column, "extra");
  // Integer labels sort as numbers.
  EXPECT_EQ(infer_label_space(other).label_list, (std::vector<std::string>{"2", "10"}));
  LabeledTexts single = read_text_file(write("single.csv", "text,label\nx,0.5\ny,2\n"));
  EXPECT_FALSE(single.text_b_column.has_value());
  EXPECT_TRUE(infer_label_space(single).is_regression);
  EXPECT_EQ(encode_labels(single, infer_label_space(single)), (std::vector<double>{0.5, 2}));
}

TEST_F(GlueFiles, TsvTrainFilesReadQuotesAsTextAndKeepEveryLine) {
  // GLUE sentences start with quotes and hold unbalanced ones: Hugging Face reads TSV with quoting off.
  std::string tsv = "sentence\tlabel\n\" the movie \" is fine .\t1\n";
  for (int i = 0; i < 30; ++i) tsv += "row " + std::to_string(i) + (i == 3 ? " \" unbalanced" : "") + "\t0\n";
  tsv += "\"last\t1\n";
  LabeledTexts t = read_text_file(write("train.tsv", tsv));
  ASSERT_EQ(t.rows.size(), 32u);
  EXPECT_EQ(t.rows[0].text_a, "\" the movie \" is fine .");
  EXPECT_EQ(t.rows[4].text_a, "row 3 \" unbalanced");
  EXPECT_EQ(t.rows[31].text_a, "\"last");
  EXPECT_EQ(t.rows[31].line, 33);
  // A CSV keeps quoting, but a quote that would merge rows is an error naming its line.
  EXPECT_NE(error_of([&] {
              read_text_file(write("merge.csv", "text,label\na,0\n\"b,1\nc\",0\nd,1\n"));
            }).find("merge.csv:3: a quoted field opened on this line runs past its end"),
            std::string::npos);
}

TEST_F(GlueFiles, JsonLinesAndArrays) {
  const std::string path = write("train.jsonl",
                                 "{\"sentence\": \"good film\", \"label\": 1, \"idx\": 0}\n"
                                 "\n"
                                 "{\"sentence\": \"bad film\", \"label\": 0, \"idx\": 1}\n");
  LabeledTexts t = read_text_file(path, &glue_task("sst2"));
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(t.rows[1].line, 3);
  EXPECT_EQ(encode_labels(t, label_space(glue_task("sst2"))), (std::vector<double>{1, 0}));
  // A float label makes a regression even when its value is whole.
  LabeledTexts scores = read_text_file(write("scores.json", R"([{"a": "x", "label": 1.0}, {"a": "y", "label": 3}])"));
  EXPECT_TRUE(infer_label_space(scores).is_regression);
  EXPECT_NE(error_of([&] {
              read_text_file(write("bad.jsonl", "{\"sentence\": 3, \"label\": 1}\n"), &glue_task("sst2"));
            }).find("bad.jsonl:1: column 'sentence': expected a string, got 3"),
            std::string::npos);
  EXPECT_NE(error_of([&] { read_text_file(write("x.parquet", "")); }).find("expected a .csv, .tsv, .json or .jsonl"),
            std::string::npos);
}

// A label of 1e30 turned a classification file into a regression one, and
// [1, 2] became a class: both are refused, naming the line.
TEST_F(GlueFiles, JsonLabelsAreClassesOrScoresNothingElse) {
  const std::string huge = error_of([&] {
    read_text_file(
        write("huge.jsonl", "{\"sentence\": \"a\", \"label\": 1}\n{\"sentence\": \"b\", \"label\": 1e30}\n"));
  });
  EXPECT_NE(huge.find("huge.jsonl:2: column 'label': expected a score of at most 1e+15 in magnitude, got 1e+30"),
            std::string::npos)
      << huge;
  for (const char* bad : {"[1,2]", "{\"a\":1}", "true", "null"}) {
    const std::string e = error_of(
        [&] { read_text_file(write("list.jsonl", std::string("{\"sentence\": \"a\", \"label\": ") + bad + "}\n")); });
    EXPECT_NE(e.find("list.jsonl:1: column 'label': expected a class name, a class id or a score, got "),
              std::string::npos)
        << bad << ": " << e;
  }
}

TEST_F(GlueFiles, UnlabelledTestFiles) {
  LabeledTexts cola = read_glue_test_tsv(glue_task("cola"), write("test.tsv", "index\tsentence\n0\tBill left.\n"));
  ASSERT_EQ(cola.rows.size(), 1u);
  EXPECT_EQ(cola.rows[0].text_a, "Bill left.");
  EXPECT_TRUE(cola.label_column.empty());
  EXPECT_NE(error_of([&] { encode_labels(cola, label_space(glue_task("cola"))); }).find("expected a 'label' column"),
            std::string::npos);
  LabeledTexts csv = read_text_file(write("test.csv", "sentence1,sentence2\na,b\n"), nullptr, false);
  EXPECT_EQ(*csv.rows[0].text_b, "b");
  EXPECT_TRUE(csv.rows[0].label.empty());
  // Labels are required unless told otherwise.
  EXPECT_NE(
      error_of([&] { read_text_file(write("t2.csv", "sentence1,sentence2\na,b\n")); }).find("no column named 'label'"),
      std::string::npos);
}

TEST_F(GlueFiles, KeepFirst) {
  LabeledTexts t = read_text_file(write("t.csv", "text,label\na,0\nb,1\nc,0\n"));
  keep_first(t, 2);
  EXPECT_EQ(t.rows.size(), 2u);
  keep_first(t, -1);
  EXPECT_EQ(t.rows.size(), 2u);
}

TEST_F(GlueFiles, AHugeJsonTextIsCutLikeACsvField) {
  const std::string big(3 * kMaxFieldBytes, 'w');
  LabeledTexts t =
      read_text_file(write("big.jsonl", "{\"sentence\": \"" + big + "\", \"label\": 1}\n"), &glue_task("sst2"));
  ASSERT_EQ(t.rows.size(), 1u);
  EXPECT_EQ(t.rows[0].text_a.size(), kMaxFieldBytes);
  // A bad value is quoted in part.
  const std::string e = error_of([&] {
    read_text_file(write("bad_big.jsonl", "{\"sentence\": [\"" + big + "\"], \"label\": 1}\n"), &glue_task("sst2"));
  });
  EXPECT_NE(e.find("expected a string"), std::string::npos) << e.substr(0, 300);
  EXPECT_LT(e.size(), 1000u);
}

}  // namespace
}  // namespace hearth::data
