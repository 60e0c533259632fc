// Where run_glue's data come from, and their labels:
//   --task_name T --data_dir D          the original GLUE files D/train.tsv,
//                                       D/dev.tsv and D/test.tsv (mnli:
//                                       dev_matched.tsv and test_matched.tsv,
//                                       and the mismatched ones when present)
//   --task_name T --train_file/--validation_file   those files, columns named
//                                       as Hugging Face names the task's
//                                       (.tsv files in the GLUE layout)
//   --train_file/--validation_file      CSV/TSV/JSON with a "label" column;
//                                       the labels are inferred from the
//                                       training file, as run_glue.py does
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "examples/run_glue/glue_arguments.h"
#include "hearth/data/glue.h"

namespace run_glue {

struct GlueData {
  const hearth::data::GlueTask* task = nullptr;  // null for other data
  hearth::data::LabelSpace labels;
  std::optional<hearth::data::LabeledTexts> train;
  // (name, texts): "validation" and, for mnli, "validation_mismatched".
  std::vector<std::pair<std::string, hearth::data::LabeledTexts>> eval;
  // (name, texts) to predict on, named as the results file will be: the task
  // ("mrpc"; mnli also "mnli-mm"), or "" for other data.
  std::vector<std::pair<std::string, hearth::data::LabeledTexts>> predict;
};

// Reads what do_train, do_eval and do_predict need, cut to
// max_train_samples, max_eval_samples and max_predict_samples. Errors say which flag is missing or which file is bad.
GlueData load_glue_data(const GlueArguments& a);

}  // namespace run_glue
