#include "hearth/data/glue.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "hearth/core/errors.h"
#include "hearth/data/csv_reader.h"
#include "hearth/data/json_rows.h"
#include "hearth/io/file_checks.h"
#include "hearth/io/json_limits.h"

namespace hearth::data {
namespace {

namespace fs = std::filesystem;
using ordered_json = nlohmann::ordered_json;

constexpr size_t kNoColumn = static_cast<size_t>(-1);

GlueTask make_task(std::string name, std::string s1, std::optional<std::string> s2, std::vector<std::string> labels,
                   std::string tsv_a, std::string tsv_b, std::string tsv_label) {
  GlueTask t;
  t.name = std::move(name);
  t.sentence1_key = std::move(s1);
  t.sentence2_key = std::move(s2);
  t.label_names = std::move(labels);
  t.tsv_text_a = std::move(tsv_a);
  t.tsv_text_b = std::move(tsv_b);
  t.tsv_label = std::move(tsv_label);
  return t;
}

std::vector<GlueTask> build_tasks() {
  std::vector<GlueTask> tasks;
  GlueTask cola = make_task("cola", "sentence", std::nullopt, {"unacceptable", "acceptable"}, "3", "", "1");
  cola.tsv_header = false;  // source, label, original mark, sentence
  cola.tsv_test_text_a = "sentence";
  tasks.push_back(cola);
  GlueTask mnli = make_task("mnli", "premise", "hypothesis", {"entailment", "neutral", "contradiction"}, "sentence1",
                            "sentence2", "gold_label");
  mnli.dev_tsv = "dev_matched.tsv";
  mnli.test_tsv = "test_matched.tsv";
  tasks.push_back(mnli);
  tasks.push_back(make_task("mrpc", "sentence1", "sentence2", {"not_equivalent", "equivalent"}, "#1 String",
                            "#2 String", "Quality"));
  tasks.push_back(
      make_task("qnli", "question", "sentence", {"entailment", "not_entailment"}, "question", "sentence", "label"));
  tasks.push_back(make_task("qqp", "question1", "question2", {"not_duplicate", "duplicate"}, "question1", "question2",
                            "is_duplicate"));
  tasks.push_back(
      make_task("rte", "sentence1", "sentence2", {"entailment", "not_entailment"}, "sentence1", "sentence2", "label"));
  tasks.push_back(make_task("sst2", "sentence", std::nullopt, {"negative", "positive"}, "sentence", "", "label"));
  tasks.push_back(make_task("stsb", "sentence1", "sentence2", {}, "sentence1", "sentence2", "score"));
  tasks.push_back(
      make_task("wnli", "sentence1", "sentence2", {"not_entailment", "entailment"}, "sentence1", "sentence2", "label"));
  return tasks;
}

std::string quoted_list(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) out += (i ? ", '" : "'") + names[i] + "'";
  return out;
}

std::string lower_extension(const std::string& path) {
  std::string ext = fs::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  return ext;
}

// run_glue's choice of text columns among `columns` (label excluded).
void choose_columns(LabeledTexts& out, const std::vector<std::string>& columns, const GlueTask* task) {
  out.label_column = "label";
  if (task != nullptr) {
    out.text_a_column = task->sentence1_key;
    out.text_b_column = task->sentence2_key;
    return;
  }
  std::vector<std::string> text_columns;
  for (const std::string& c : columns)
    if (c != "label") text_columns.push_back(c);
  HEARTH_CHECK(!text_columns.empty(), ValueError, "[glue] ", out.source,
               ": expected a text column besides 'label', found columns ", quoted_list(columns));
  const bool has_pair = std::count(text_columns.begin(), text_columns.end(), "sentence1") != 0 &&
                        std::count(text_columns.begin(), text_columns.end(), "sentence2") != 0;
  if (has_pair) {
    out.text_a_column = "sentence1";
    out.text_b_column = "sentence2";
  } else {
    out.text_a_column = text_columns[0];
    if (text_columns.size() >= 2) out.text_b_column = text_columns[1];
  }
}

bool has_column(const std::vector<std::string>& columns, const std::string& name) {
  return std::find(columns.begin(), columns.end(), name) != columns.end();
}

LabeledTexts from_table(const CsvTable& table, const GlueTask* task, bool labels_required) {
  LabeledTexts out;
  out.source = table.source;
  choose_columns(out, table.columns, task);
  if (!labels_required && !has_column(table.columns, out.label_column)) out.label_column.clear();
  // CsvTable::column names the file and the columns there are when one is missing.
  const size_t a = table.column(out.text_a_column);
  const size_t b = out.text_b_column ? table.column(*out.text_b_column) : kNoColumn;
  const size_t label = out.label_column.empty() ? kNoColumn : table.column(out.label_column);
  out.rows.reserve(table.num_rows());
  for (size_t r = 0; r < table.num_rows(); ++r) {
    const std::vector<std::string>& row = table.rows[r];
    LabeledText t{row[a], b != kNoColumn ? std::optional<std::string>(row[b]) : std::nullopt,
                  label != kNoColumn ? row[label] : std::string(), table.row_lines[r]};
    out.rows.push_back(std::move(t));
  }
  return out;
}

// The largest score a JSON label may hold: its square still fits float32.
constexpr double kMaxScore = 1e15;

std::string json_text(const ordered_json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

// Turns JSON objects into rows one at a time: the columns come from the
// first object, and each field is cut as read_csv cuts one, so that the rows
// never hold more than the tokenizer will read.
class JsonRowReader {
 public:
  JsonRowReader(const std::string& path, const GlueTask* task, bool labels_required)
      : path_(path), task_(task), labels_required_(labels_required) {
    out_.source = path;
  }

  void add(const ordered_json& o, int64_t line) {
    HEARTH_CHECK(o.is_object(), ValueError, "[glue] ", path_, ":", line, ": expected a JSON object, got ",
                 io::excerpt(o.dump()));
    if (out_.rows.empty()) choose(o);
    LabeledText t;
    t.line = line;
    t.text_a = text_field(o, line, out_.text_a_column);
    if (out_.text_b_column) t.text_b = text_field(o, line, *out_.text_b_column);
    if (!out_.label_column.empty()) {
      const ordered_json& label = field(o, line, out_.label_column);
      // A label is a class (a name or an integer) or a score; a list, an
      // object, a boolean or null is neither, and a score so large that its
      // square overflows float32 cannot be trained on (and 1e30 once made a
      // classification file a regression one).
      HEARTH_CHECK(label.is_string() || label.is_number(), ValueError, "[glue] ", path_, ":", line, ": column '",
                   out_.label_column, "': expected a class name, a class id or a score, got ",
                   io::excerpt(label.dump()));
      HEARTH_CHECK(!label.is_number_float() || std::abs(label.get<double>()) <= kMaxScore, ValueError, "[glue] ",
                   path_, ":", line, ": column '", out_.label_column, "': expected a score of at most ", kMaxScore,
                   " in magnitude, got ", label.dump());
      if (label.is_number_float()) out_.json_float_labels = true;
      t.label = json_text(label);
    }
    out_.rows.push_back(std::move(t));
  }

  LabeledTexts finish() {
    HEARTH_CHECK(!out_.rows.empty(), ValueError, "[glue] ", path_, ": no rows");
    return std::move(out_);
  }

 private:
  void choose(const ordered_json& first) {
    for (const auto& [k, v] : first.items()) columns_.push_back(k);
    choose_columns(out_, columns_, task_);
    if (!labels_required_ && !has_column(columns_, out_.label_column)) out_.label_column.clear();
  }

  const ordered_json& field(const ordered_json& o, int64_t line, const std::string& column) const {
    auto it = o.find(column);
    HEARTH_CHECK(it != o.end(), ValueError, "[glue] ", path_, ":", line, ": no column '", column,
                 "' (columns: ", quoted_list(columns_), ")");
    return *it;
  }

  std::string text_field(const ordered_json& o, int64_t line, const std::string& column) const {
    const ordered_json& v = field(o, line, column);
    HEARTH_CHECK(v.is_string(), ValueError, "[glue] ", path_, ":", line, ": column '", column,
                 "': expected a string, got ", io::excerpt(v.dump()));
    const std::string& full = v.get_ref<const std::string&>();
    std::string text = full.substr(0, std::min(full.size(), kMaxFieldBytes + 4));
    truncate_utf8(text, kMaxFieldBytes);  // as read_csv cuts a field
    return text;
  }

  std::string path_;
  const GlueTask* task_;
  bool labels_required_;
  std::vector<std::string> columns_;
  LabeledTexts out_;
};

LabeledTexts read_json_rows(const std::string& path, const GlueTask* task, bool labels_required) {
  JsonRowReader rows(path, task, labels_required);
  for_each_json_row(path, "[glue]", [&](const ordered_json& o, int64_t where) { rows.add(o, where); });
  return rows.finish();
}

std::optional<int64_t> parse_integer(const std::string& s) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<double> parse_number(const std::string& s) {
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size()) return std::nullopt;
  return v;
}

}  // namespace

const std::vector<GlueTask>& glue_tasks() {
  static const std::vector<GlueTask> tasks = build_tasks();
  return tasks;
}

const GlueTask* find_glue_task(const std::string& name) {
  for (const GlueTask& t : glue_tasks())
    if (t.name == name) return &t;
  return nullptr;
}

const GlueTask& glue_task(const std::string& name) {
  if (const GlueTask* t = find_glue_task(name)) return *t;
  std::vector<std::string> names;
  for (const GlueTask& t : glue_tasks()) names.push_back(t.name);
  HEARTH_THROW(ValueError, "[glue] unknown task '", name, "': expected one of ", quoted_list(names));
}

LabeledTexts read_glue_tsv(const GlueTask& task, const std::string& path) {
  CsvOptions o;
  o.delimiter = '\t';
  o.quote = '\0';
  o.header = task.tsv_header;
  CsvTable table = read_csv(path, o);
  LabeledTexts out;
  out.source = path;
  out.text_a_column = task.tsv_text_a;
  if (!task.tsv_text_b.empty()) out.text_b_column = task.tsv_text_b;
  out.label_column = task.tsv_label;
  auto column = [&](const std::string& c) -> size_t {
    if (task.tsv_header) return table.column(c);
    const size_t index = static_cast<size_t>(parse_integer(c).value_or(0));
    const size_t fields = table.rows.empty() ? 0 : table.rows[0].size();
    HEARTH_CHECK(index < fields, IoError, "[glue] ", path, ": expected the GLUE ", task.name, " layout with column ",
                 index, " (from 0), found ", fields, " columns");
    return index;
  };
  const size_t a = column(task.tsv_text_a);
  const size_t b = task.tsv_text_b.empty() ? kNoColumn : column(task.tsv_text_b);
  const size_t label = column(task.tsv_label);
  for (size_t r = 0; r < table.num_rows(); ++r) {
    const std::vector<std::string>& row = table.rows[r];
    out.rows.push_back(
        {row[a], b != kNoColumn ? std::optional<std::string>(row[b]) : std::nullopt, row[label], table.row_lines[r]});
  }
  return out;
}

LabeledTexts read_glue_test_tsv(const GlueTask& task, const std::string& path) {
  CsvOptions o;
  o.delimiter = '\t';
  o.quote = '\0';
  CsvTable table = read_csv(path, o);
  LabeledTexts out;
  out.source = path;
  out.text_a_column = task.tsv_test_text_a.empty() ? task.tsv_text_a : task.tsv_test_text_a;
  if (!task.tsv_text_b.empty()) out.text_b_column = task.tsv_text_b;
  const size_t a = table.column(out.text_a_column);
  const size_t b = out.text_b_column ? table.column(*out.text_b_column) : kNoColumn;
  for (size_t r = 0; r < table.num_rows(); ++r) {
    const std::vector<std::string>& row = table.rows[r];
    out.rows.push_back(
        {row[a], b != kNoColumn ? std::optional<std::string>(row[b]) : std::nullopt, "", table.row_lines[r]});
  }
  return out;
}

LabeledTexts read_text_file(const std::string& path, const GlueTask* task, bool labels_required) {
  HEARTH_CHECK(fs::is_regular_file(path), IoError, "[glue] cannot read '", path, "': no such file");
  const std::string ext = lower_extension(path);
  if (ext == ".json" || ext == ".jsonl") return read_json_rows(path, task, labels_required);
  HEARTH_CHECK(ext == ".csv" || ext == ".tsv", ValueError, "[glue] ", path,
               ": expected a .csv, .tsv, .json or .jsonl file, got '", ext, "'");
  CsvOptions o;
  o.delimiter = ext == ".tsv" ? '\t' : ',';
  // As Hugging Face reads GLUE's TSV: quotes are text (sentences hold unbalanced ones).
  if (ext == ".tsv") o.quote = '\0';
  o.multiline_fields = false;
  return from_table(read_csv(path, o), task, labels_required);
}

void keep_first(LabeledTexts& texts, int64_t n) {
  if (n >= 0 && static_cast<size_t>(n) < texts.rows.size()) texts.rows.resize(static_cast<size_t>(n));
}

LabelSpace label_space(const GlueTask& task) { return {task.is_regression(), task.label_names}; }

LabelSpace infer_label_space(const LabeledTexts& train) {
  HEARTH_CHECK(!train.rows.empty(), ValueError, "[glue] ", train.source, ": no rows to learn the labels from");
  bool all_integers = true, all_numbers = true;
  for (const LabeledText& r : train.rows) {
    all_integers = all_integers && parse_integer(r.label).has_value();
    all_numbers = all_numbers && parse_number(r.label).has_value();
  }
  LabelSpace space;
  space.is_regression = all_numbers && (!all_integers || train.json_float_labels);
  if (space.is_regression) return space;
  std::set<std::string> distinct;
  for (const LabeledText& r : train.rows) distinct.insert(r.label);
  space.label_list.assign(distinct.begin(), distinct.end());
  if (all_integers) {
    std::sort(space.label_list.begin(), space.label_list.end(),
              [](const std::string& x, const std::string& y) { return *parse_integer(x) < *parse_integer(y); });
  }
  return space;
}

std::vector<double> encode_labels(const LabeledTexts& texts, const LabelSpace& space) {
  HEARTH_CHECK(!texts.label_column.empty(), ValueError, "[glue] ", texts.source,
               ": expected a 'label' column, found none (a file to predict on has no labels)");
  std::vector<double> out;
  out.reserve(texts.rows.size());
  for (const LabeledText& r : texts.rows) {
    if (space.is_regression) {
      std::optional<double> v = parse_number(r.label);
      HEARTH_CHECK(v.has_value(), ValueError, "[glue] ", texts.source, ":", r.line, ": column '", texts.label_column,
                   "': expected a number, got '", r.label, "'");
      out.push_back(*v);
      continue;
    }
    auto it = std::find(space.label_list.begin(), space.label_list.end(), r.label);
    if (it != space.label_list.end()) {
      out.push_back(static_cast<double>(it - space.label_list.begin()));
      continue;
    }
    // A class id in place of its name (GLUE's 0/1 columns, exported datasets).
    std::optional<int64_t> id = parse_integer(r.label);
    HEARTH_CHECK(id && *id >= 0 && *id < space.num_labels(), ValueError, "[glue] ", texts.source, ":", r.line,
                 ": column '", texts.label_column, "': expected one of ", quoted_list(space.label_list),
                 " or a class id from 0 to ", space.num_labels() - 1, ", got '", r.label, "'");
    out.push_back(static_cast<double>(*id));
  }
  return out;
}

}  // namespace hearth::data
