#include "hearth/data/causal_lm_data.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "hearth/core/errors.h"
#include "hearth/data/csv_reader.h"
#include "hearth/data/json_rows.h"
#include "hearth/io/json_limits.h"
#include "hearth/ops/factory.h"

namespace hearth::data {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

std::string extension_of(const std::string& path) {
  std::string ext = fs::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext;
}

std::string cut(std::string s) {
  truncate_utf8(s, kMaxDocumentBytes);
  return s;
}

std::string string_field(const json& o, const std::string& name, const std::string& path, int64_t line) {
  HEARTH_CHECK(o.is_object(), ValueError, "[clm] ", path, ":", line, ": expected a JSON object, got ",
               io::excerpt(o.dump()));
  auto it = o.find(name);
  HEARTH_CHECK(it != o.end(), ValueError, "[clm] ", path, ":", line, ": no field '", name, "'");
  HEARTH_CHECK(it->is_string(), ValueError, "[clm] ", path, ":", line, ": field '", name, "': expected a string, got ",
               io::excerpt(it->dump()));
  return cut(it->get<std::string>());
}

// run_clm's rule: the column named "text", else the first column.
std::string text_column(const std::vector<std::string>& columns) {
  return std::find(columns.begin(), columns.end(), "text") != columns.end() ? "text" : columns.front();
}

}  // namespace

std::vector<std::string> read_lm_texts(const std::string& path) {
  const std::string ext = extension_of(path);
  std::vector<std::string> texts;
  if (ext == ".txt" || ext == ".text" || ext == ".raw") {
    // datasets' "text" loader: every line is a row, an empty one too, without
    // its line ending ("\n", "\r\n").
    std::ifstream in = open_data_file(path, "[clm]");
    for (std::string line; std::getline(in, line);) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      texts.push_back(cut(std::move(line)));
    }
  } else if (ext == ".json" || ext == ".jsonl") {
    std::string column;
    for_each_json_row(path, "[clm]", [&](const json& o, int64_t line) {
      if (column.empty()) {
        HEARTH_CHECK(o.is_object() && !o.empty(), ValueError, "[clm] ", path, ":", line,
                     ": expected a JSON object with a text field, got ", io::excerpt(o.dump()));
        std::vector<std::string> columns;
        for (const auto& [k, v] : o.items()) columns.push_back(k);
        column = text_column(columns);
      }
      texts.push_back(string_field(o, column, path, line));
    });
  } else if (ext == ".csv") {
    CsvOptions options;
    options.max_field_bytes = kMaxDocumentBytes;
    const CsvTable table = read_csv(path, options);
    HEARTH_CHECK(!table.columns.empty(), ValueError, "[clm] ", path, ": expected a header naming the columns");
    const size_t col = table.column(text_column(table.columns));
    for (const auto& row : table.rows) texts.push_back(row[col]);
  } else {
    HEARTH_THROW(ValueError, "[clm] ", path, ": expected a .txt, .json, .jsonl or .csv file, got '", ext, "'");
  }
  HEARTH_CHECK(!texts.empty(), ValueError, "[clm] ", path, ": no rows");
  return texts;
}

std::vector<PromptCompletion> read_prompt_completions(const std::string& path) {
  std::vector<PromptCompletion> rows;
  for_each_json_row(path, "[clm]", [&](const json& o, int64_t line) {
    rows.push_back({string_field(o, "prompt", path, line), string_field(o, "completion", path, line)});
  });
  HEARTH_CHECK(!rows.empty(), ValueError, "[clm] ", path, ": no rows");
  return rows;
}

bool is_prompt_completion_file(const std::string& path) {
  const std::string ext = extension_of(path);
  if (ext != ".json" && ext != ".jsonl") return false;
  bool found = false, decided = false;
  try {
    for_each_json_row(path, "[clm]", [&](const json& o, int64_t) {
      if (decided) return;
      decided = true;
      found = o.is_object() && o.contains("prompt") && o.contains("completion");
    });
  } catch (const Error&) {
    return false;  // read_lm_texts names what is wrong with the file
  }
  return found;
}

std::vector<TokenIds> group_texts(const std::vector<TokenIds>& rows, int64_t block_size, int64_t rows_per_batch) {
  HEARTH_CHECK(block_size >= 1, ValueError, "[clm] block_size: expected a positive integer, got ", block_size);
  HEARTH_CHECK(rows_per_batch >= 1, ValueError, "[clm] group_texts: rows_per_batch must be positive, got ",
               rows_per_batch);
  std::vector<TokenIds> blocks;
  const auto block = static_cast<size_t>(block_size);
  for (size_t first = 0; first < rows.size(); first += static_cast<size_t>(rows_per_batch)) {
    const size_t last = std::min(rows.size(), first + static_cast<size_t>(rows_per_batch));
    TokenIds joined;
    for (size_t r = first; r < last; ++r) joined.insert(joined.end(), rows[r].begin(), rows[r].end());
    // The batch's remainder is dropped, as group_texts drops it.
    for (size_t at = 0; at + block <= joined.size(); at += block)
      blocks.emplace_back(joined.begin() + static_cast<std::ptrdiff_t>(at),
                          joined.begin() + static_cast<std::ptrdiff_t>(at + block));
  }
  return blocks;
}

PackedBlocksDataset::PackedBlocksDataset(std::vector<TokenIds> blocks) : blocks_(std::move(blocks)) {
  for (const TokenIds& b : blocks_)
    HEARTH_CHECK(b.size() == blocks_.front().size() && !b.empty(), ValueError,
                 "[clm] packed blocks must all have the same positive length");
}

Example PackedBlocksDataset::get(int64_t index) const {
  HEARTH_CHECK(index >= 0 && index < size(), ValueError, "[clm] index ", index, " is out of range for ", size(),
               " blocks");
  const TokenIds& b = blocks_[static_cast<size_t>(index)];
  return Example{{field::kInputIds, int64_row(b)},
                 {field::kAttentionMask, int64_row(TokenIds(b.size(), 1))},
                 {field::kLabels, int64_row(b)}};
}

PromptCompletionDataset::PromptCompletionDataset(const std::vector<PromptCompletion>& rows, const TokenizeFn& tokenize,
                                                 int64_t eos_id, int64_t max_length) {
  HEARTH_CHECK(max_length >= 2, ValueError, "[clm] max_length: expected at least 2, got ", max_length);
  for (const PromptCompletion& row : rows) {
    TokenIds ids = tokenize(row.prompt);
    const size_t prompt_length = ids.size();
    const TokenIds completion = tokenize(row.completion);
    ids.insert(ids.end(), completion.begin(), completion.end());
    if (eos_id >= 0) ids.push_back(eos_id);
    if (ids.size() > static_cast<size_t>(max_length)) ids.resize(static_cast<size_t>(max_length));
    if (ids.size() <= prompt_length) {
      ++dropped_;
      continue;
    }
    TokenIds labels = ids;
    std::fill(labels.begin(), labels.begin() + static_cast<std::ptrdiff_t>(prompt_length), kIgnoreLabel);
    ids_.push_back(std::move(ids));
    labels_.push_back(std::move(labels));
  }
}

Example PromptCompletionDataset::get(int64_t index) const {
  HEARTH_CHECK(index >= 0 && index < size(), ValueError, "[clm] index ", index, " is out of range for ", size(),
               " samples");
  const TokenIds& ids = ids_[static_cast<size_t>(index)];
  return Example{{field::kInputIds, int64_row(ids)},
                 {field::kAttentionMask, int64_row(TokenIds(ids.size(), 1))},
                 {field::kLabels, int64_row(labels_[static_cast<size_t>(index)])}};
}

CollateFn causal_lm_collate(int64_t pad_token_id) {
  return [pad_token_id](std::vector<Example> samples) {
    int64_t longest = 0;
    for (const Example& s : samples) longest = std::max(longest, s.at(field::kInputIds).size(0));
    for (Example& s : samples) {
      s[field::kInputIds] = pad_int64_row(s.at(field::kInputIds), longest, pad_token_id);
      if (s.contains(field::kAttentionMask))
        s[field::kAttentionMask] = pad_int64_row(s.at(field::kAttentionMask), longest, 0);
      if (s.contains(field::kLabels)) s[field::kLabels] = pad_int64_row(s.at(field::kLabels), longest, kIgnoreLabel);
    }
    return default_collate(std::move(samples));
  };
}

}  // namespace hearth::data
