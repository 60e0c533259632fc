#include "examples/run_clm/clm_data.h"

#include <cmath>
#include <filesystem>
#include <fstream>

#include "hearth/core/errors.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/indexing.h"

namespace run_clm {
namespace {

using hearth::data::TokenIds;

template <typename T>
std::vector<T> slice(const std::vector<T>& rows, int64_t begin, int64_t end) {
  return std::vector<T>(rows.begin() + begin, rows.begin() + end);
}

// The first n items (n < 0: all), as Dataset.select(range(n)).
template <typename T>
void keep_first(std::vector<T>& items, int64_t n) {
  if (n >= 0 && static_cast<size_t>(n) < items.size()) items.resize(static_cast<size_t>(n));
}

std::shared_ptr<const hearth::data::Dataset> packed(const std::vector<std::string>& texts,
                                                    const hearth::data::TokenizeFn& tokenize, int64_t block_size,
                                                    int64_t max_samples, const std::string& what) {
  std::vector<TokenIds> rows;
  rows.reserve(texts.size());
  for (const std::string& t : texts) rows.push_back(tokenize(t));
  std::vector<TokenIds> blocks = hearth::data::group_texts(rows, block_size);
  HEARTH_CHECK(!blocks.empty(), hearth::ValueError, "[run_clm] ", what, ": its ", texts.size(),
               " rows make no block of ", block_size,
               " tokens (group_texts drops each 1,000 rows' remainder); give more text or a smaller --block_size");
  keep_first(blocks, max_samples);
  return std::make_shared<hearth::data::PackedBlocksDataset>(std::move(blocks));
}

std::shared_ptr<const hearth::data::Dataset> completions(std::vector<hearth::data::PromptCompletion> rows,
                                                         const hearth::data::TokenizeFn& tokenize, int64_t eos_id,
                                                         int64_t block_size, int64_t max_samples,
                                                         const std::string& what, std::ostream* notices) {
  keep_first(rows, max_samples);
  auto set = std::make_shared<hearth::data::PromptCompletionDataset>(rows, tokenize, eos_id, block_size);
  if (set->dropped() > 0 && notices)
    *notices << "[run_clm] " << what << ": " << set->dropped() << " of " << rows.size()
             << " rows dropped: their prompt fills all " << block_size << " tokens, leaving no completion to learn\n";
  HEARTH_CHECK(set->size() > 0, hearth::ValueError, "[run_clm] ", what, ": no prompt/completion row is left to use");
  return set;
}

bool is_text_file(const std::string& path) {
  const std::string ext = std::filesystem::path(path).extension().string();
  return ext == ".txt" || ext == ".text" || ext == ".raw";
}

// The rows of a file as run_clm.py loads them: a text file's lines keep their
// line break with --keep_linebreaks (its default), as datasets' text loader
// reads them (every line but a last one the file does not end).
std::vector<std::string> read_rows(const std::string& path, bool keep_linebreaks) {
  std::vector<std::string> rows = hearth::data::read_lm_texts(path);
  if (!keep_linebreaks || !is_text_file(path) || rows.empty()) return rows;
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  bool ends_with_break = false;
  if (in && in.tellg() > 0) {
    in.seekg(-1, std::ios::end);
    ends_with_break = in.get() == '\n';
  }
  for (size_t i = 0; i < rows.size(); ++i)
    if (i + 1 < rows.size() || ends_with_break) rows[i] += '\n';
  return rows;
}

}  // namespace

int64_t percent_split_rows(int64_t rows, int64_t percent) {
  return static_cast<int64_t>(std::nearbyint(static_cast<double>(rows) * static_cast<double>(percent) / 100.0));
}

hearth::data::CollateFn fixed_width_collate(int64_t pad_id, int64_t width) {
  hearth::data::CollateFn inner = hearth::data::causal_lm_collate(pad_id);
  return [inner, pad_id, width](std::vector<hearth::data::Example> samples) {
    hearth::data::Batch batch = inner(std::move(samples));
    for (const auto& [name, fill] :
         std::vector<std::pair<std::string, int64_t>>{{hearth::data::field::kInputIds, pad_id},
                                                      {hearth::data::field::kAttentionMask, 0},
                                                      {hearth::data::field::kLabels, hearth::data::kIgnoreLabel}}) {
      if (!batch.contains(name)) continue;
      const hearth::Tensor t = batch.at(name);
      if (t.dim() != 2 || t.size(1) >= width) continue;
      batch[name] = hearth::cat({t, hearth::full({t.size(0), width - t.size(1)}, fill, t.dtype())}, 1);
    }
    return batch;
  };
}

ClmData load_clm_data(const ClmArguments& a, const hearth::data::TokenizeFn& tokenize, int64_t eos_id, int64_t pad_id,
                      int64_t block_size, std::ostream* notices) {
  HEARTH_CHECK(!a.do_train || !a.train_file.empty(), hearth::ValueError,
               "--do_train: expected --train_file (text, JSON lines or CSV)");
  HEARTH_CHECK(!a.do_eval || !a.validation_file.empty() || !a.train_file.empty(), hearth::ValueError,
               "--do_eval: expected --validation_file, or --train_file to hold out --validation_split_percentage of");
  ClmData out;
  const std::string& first = a.train_file.empty() ? a.validation_file : a.train_file;
  out.prompt_completion = hearth::data::is_prompt_completion_file(first);
  if (!a.train_file.empty() && !a.validation_file.empty())
    HEARTH_CHECK(hearth::data::is_prompt_completion_file(a.validation_file) == out.prompt_completion,
                 hearth::ValueError, "[run_clm] --train_file ", a.train_file, " and --validation_file ",
                 a.validation_file, ": one holds prompt/completion rows and the other texts; give both of one kind");
  // Held out of the training file: its first percent, as "train[:p%]" / "train[p%:]".
  const bool split = a.validation_file.empty();
  const std::string eval_what =
      split ? "the first " + std::to_string(a.validation_split_percentage) + "% of --train_file " + a.train_file
            : "--validation_file " + a.validation_file;
  if (out.prompt_completion) {
    std::vector<hearth::data::PromptCompletion> train_rows, eval_rows;
    if (!a.train_file.empty()) train_rows = hearth::data::read_prompt_completions(a.train_file);
    if (split) {
      const int64_t n = percent_split_rows(static_cast<int64_t>(train_rows.size()), a.validation_split_percentage);
      eval_rows = slice(train_rows, 0, n);
      train_rows = slice(train_rows, n, static_cast<int64_t>(train_rows.size()));
    } else if (a.do_eval) {
      eval_rows = hearth::data::read_prompt_completions(a.validation_file);
    }
    if (a.do_train)
      out.train = completions(train_rows, tokenize, eos_id, block_size, a.max_train_samples,
                              "--train_file " + a.train_file, notices);
    if (a.do_eval)
      out.eval = completions(eval_rows, tokenize, eos_id, block_size, a.max_eval_samples, eval_what, notices);
    // Every batch padded to block_size: the evaluation stacks the predictions of all batches.
    out.collate = fixed_width_collate(pad_id, block_size);
    return out;
  }
  std::vector<std::string> train_rows, eval_rows;
  if (!a.train_file.empty()) train_rows = read_rows(a.train_file, a.keep_linebreaks);
  if (split) {
    const int64_t n = percent_split_rows(static_cast<int64_t>(train_rows.size()), a.validation_split_percentage);
    eval_rows = slice(train_rows, 0, n);
    train_rows = slice(train_rows, n, static_cast<int64_t>(train_rows.size()));
  } else if (a.do_eval) {
    eval_rows = read_rows(a.validation_file, a.keep_linebreaks);
  }
  if (a.do_train)
    out.train = packed(train_rows, tokenize, block_size, a.max_train_samples, "--train_file " + a.train_file);
  if (a.do_eval) out.eval = packed(eval_rows, tokenize, block_size, a.max_eval_samples, eval_what);
  out.collate = hearth::data::default_collate;
  return out;
}

}  // namespace run_clm
