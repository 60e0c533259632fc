// The GLUE benchmark's nine tasks and the text files their data come in.
//
// A GlueTask names its text columns as Hugging Face's run_glue does
// (task_to_keys: mrpc reads "sentence1" and "sentence2"), its label names in
// the order of Hugging Face's datasets (label id i is label_names[i]; stsb is
// a regression with no names), and where the original GLUE TSV files keep
// those columns (MRPC's "#1 String", CoLA's headerless third column).
//
// Readers turn a file into LabeledTexts: per row, one or two texts and the
// label as written, with the line it came from, so that every later error
// names "<file>:<line>: column '<name>'".
//   read_glue_tsv     an original GLUE file (train.tsv, dev.tsv, dev_matched.tsv)
//   read_text_file    .csv / .tsv with a header, or JSON (.json/.jsonl: one
//                     object per line, or an array of objects); columns by
//                     name, the label in "label", as run_glue's --train_file
//
// Labels become numbers with a LabelSpace: a task's label names, or for other
// files (like run_glue) the sorted distinct labels of the training file, or a
// regression when those are fractional numbers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hearth::data {

struct GlueTask {
  std::string name;  // "mrpc"
  // Hugging Face's column names.
  std::string sentence1_key;
  std::optional<std::string> sentence2_key;
  std::vector<std::string> label_names;  // empty: a regression (stsb)

  // Where the original GLUE files keep the columns: names in a header, or,
  // for a file without one (CoLA), column numbers from 0 written as text.
  bool tsv_header = true;
  std::string tsv_text_a, tsv_text_b, tsv_label;
  std::string train_tsv = "train.tsv";
  std::string dev_tsv = "dev.tsv";
  // The unlabelled test file, always with a header; its first text column
  // when named otherwise than in the training file (CoLA's "sentence").
  std::string test_tsv = "test.tsv";
  std::string tsv_test_text_a;

  bool is_regression() const { return label_names.empty(); }
  int64_t num_labels() const { return is_regression() ? 1 : static_cast<int64_t>(label_names.size()); }
};

// cola, mnli, mrpc, qnli, qqp, rte, sst2, stsb, wnli.
const std::vector<GlueTask>& glue_tasks();
// nullptr when `name` is not a GLUE task.
const GlueTask* find_glue_task(const std::string& name);
// ValueError listing the task names when `name` is not one.
const GlueTask& glue_task(const std::string& name);

struct LabeledText {
  std::string text_a;
  std::optional<std::string> text_b;
  std::string label;  // as written ("1", "entailment", "3.8")
  int64_t line = 0;   // 1-based line of the row in its file
};

struct LabeledTexts {
  std::string source;  // the file, for messages
  std::string text_a_column;
  std::optional<std::string> text_b_column;
  std::string label_column;  // empty for a file without labels (a test file)
  std::vector<LabeledText> rows;
  // JSON only: some label was written as a fractional number.
  bool json_float_labels = false;
};

// An original GLUE TSV file of `task` (no quoting: sentences hold quotes).
LabeledTexts read_glue_tsv(const GlueTask& task, const std::string& path);
// An original GLUE test file of `task`: texts without labels.
LabeledTexts read_glue_test_tsv(const GlueTask& task, const std::string& path);
// A CSV/TSV/JSON file with columns by name. With a task, its sentence keys;
// without, run_glue's choice: "sentence1" and "sentence2" if both are there,
// else the first two columns that are not "label", else the only one. The
// "label" column must be there unless `labels_required` is false (data to
// predict), in which case a missing one leaves every row's label empty.
LabeledTexts read_text_file(const std::string& path, const GlueTask* task = nullptr, bool labels_required = true);
// The first `n` rows (all when n < 0 or n exceeds the rows).
void keep_first(LabeledTexts& texts, int64_t n);

struct LabelSpace {
  bool is_regression = false;
  std::vector<std::string> label_list;  // class i is label_list[i]
  int64_t num_labels() const { return is_regression ? 1 : static_cast<int64_t>(label_list.size()); }
};

// A GLUE task's labels.
LabelSpace label_space(const GlueTask& task);
// run_glue's rule for other files, from the training rows: a regression when
// the labels are numbers and some is fractional (or JSON wrote one as a
// float); else the distinct labels sorted, numerically when all are integers.
LabelSpace infer_label_space(const LabeledTexts& train);

// Each row's label as a number: its class id, or its value for a regression.
// A class may be written as its name or as its id. ValueError
// "[glue] <file>:<line>: column '<label>': expected ..., got '<text>'".
std::vector<double> encode_labels(const LabeledTexts& texts, const LabelSpace& space);

}  // namespace hearth::data
