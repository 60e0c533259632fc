#include "examples/run_glue/glue_data.h"

#include <filesystem>

#include "hearth/core/errors.h"
#include "hearth/io/file_checks.h"

namespace run_glue {
namespace {

namespace fs = std::filesystem;
using hearth::data::GlueTask;
using hearth::data::LabeledTexts;

std::string extension(const std::string& path) { return fs::path(path).extension().string(); }

// A file of the task: GLUE's own layout for .tsv, columns by name otherwise.
LabeledTexts read_task_file(const GlueTask& task, const std::string& path) {
  // A path that is there but not a regular file (a FIFO, a folder) is named
  // for what it is, not reported missing.
  HEARTH_CHECK(fs::exists(path), hearth::IoError, "[run_glue] cannot read '", path, "': no such file");
  hearth::io::check_regular_file(path, "[run_glue]");
  if (extension(path) == ".tsv") return hearth::data::read_glue_tsv(task, path);
  return hearth::data::read_text_file(path, &task);
}

std::string in_data_dir(const GlueArguments& a, const std::string& name) {
  const fs::path p = fs::path(a.data_dir) / name;
  HEARTH_CHECK(fs::exists(p), hearth::IoError, "[run_glue] --data_dir: ", p.string(),
               " is missing; expected the original GLUE files of the ", a.task_name, " task there");
  hearth::io::check_regular_file(p.string(), "[run_glue] --data_dir:");
  return p.string();
}

}  // namespace

GlueData load_glue_data(const GlueArguments& a) {
  GlueData d;
  const bool train_needed = a.do_train, eval_needed = a.do_eval;
  if (!a.task_name.empty()) {
    d.task = &hearth::data::glue_task(a.task_name);
    d.labels = hearth::data::label_space(*d.task);
    const bool files = !a.train_file.empty() || !a.validation_file.empty();
    HEARTH_CHECK(!a.data_dir.empty() || files, hearth::ValueError, "[run_glue] --task_name ", a.task_name,
                 ": hearth has no network access to fetch GLUE. Download the GLUE data on a connected machine and "
                 "pass the task's folder with --data_dir (train.tsv, dev.tsv), or pass --train_file and "
                 "--validation_file");
    if (train_needed) {
      d.train = read_task_file(*d.task, a.train_file.empty() ? in_data_dir(a, d.task->train_tsv) : a.train_file);
    }
    if (eval_needed) {
      d.eval.emplace_back(
          "validation",
          read_task_file(*d.task, a.validation_file.empty() ? in_data_dir(a, d.task->dev_tsv) : a.validation_file));
      const fs::path mismatched = fs::path(a.data_dir) / "dev_mismatched.tsv";
      if (d.task->name == "mnli" && a.validation_file.empty() && fs::is_regular_file(mismatched))
        d.eval.emplace_back("validation_mismatched", hearth::data::read_glue_tsv(*d.task, mismatched.string()));
    }
    if (a.do_predict) {
      if (!a.test_file.empty()) {
        const bool glue_layout = extension(a.test_file) == ".tsv";
        d.predict.emplace_back(d.task->name, glue_layout ? hearth::data::read_glue_test_tsv(*d.task, a.test_file)
                                                         : hearth::data::read_text_file(a.test_file, d.task, false));
      } else {
        d.predict.emplace_back(d.task->name,
                               hearth::data::read_glue_test_tsv(*d.task, in_data_dir(a, d.task->test_tsv)));
        const fs::path mismatched = fs::path(a.data_dir) / "test_mismatched.tsv";
        if (d.task->name == "mnli" && fs::is_regular_file(mismatched))
          d.predict.emplace_back("mnli-mm", hearth::data::read_glue_test_tsv(*d.task, mismatched.string()));
      }
    }
  } else {
    HEARTH_CHECK(!a.train_file.empty(), hearth::ValueError,
                 "[run_glue] expected a GLUE task (--task_name with --data_dir) or a --train_file (its labels "
                 "define the classes)");
    d.train = hearth::data::read_text_file(a.train_file);
    d.labels = hearth::data::infer_label_space(*d.train);
    if (eval_needed) {
      HEARTH_CHECK(!a.validation_file.empty(), hearth::ValueError,
                   "[run_glue] --do_eval without --task_name needs a --validation_file");
      d.eval.emplace_back("validation", hearth::data::read_text_file(a.validation_file));
    }
    if (a.do_predict) {
      HEARTH_CHECK(!a.test_file.empty(), hearth::ValueError,
                   "[run_glue] --do_predict without --task_name needs a --test_file");
      // The training file's text columns, as run_glue.py tokenises every split alike.
      GlueTask columns;
      columns.sentence1_key = d.train->text_a_column;
      columns.sentence2_key = d.train->text_b_column;
      d.predict.emplace_back("", hearth::data::read_text_file(a.test_file, &columns, /*labels_required=*/false));
    }
    if (!train_needed) d.train.reset();
  }
  if (d.train) hearth::data::keep_first(*d.train, a.max_train_samples);
  for (auto& [name, texts] : d.eval) hearth::data::keep_first(texts, a.max_eval_samples);
  for (auto& [name, texts] : d.predict) hearth::data::keep_first(texts, a.max_predict_samples);
  return d;
}

}  // namespace run_glue
