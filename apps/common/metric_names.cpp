#include "apps/common/metric_names.h"

#include <algorithm>

#include "apps/common/closest_name.h"
#include "hearth/core/errors.h"

namespace hearth::cli {

std::vector<std::string> trainer_metric_names() {
  return {"loss", "runtime", "samples_per_second", "steps_per_second"};
}

void check_metric_for_best_model(const train::TrainingArguments& args, const std::vector<std::string>& reported) {
  if (!args.metric_for_best_model) return;
  std::string name = *args.metric_for_best_model;
  if (name.rfind("eval_", 0) == 0) name = name.substr(5);
  std::vector<std::string> known = trainer_metric_names();
  known.insert(known.begin() + 1, reported.begin(), reported.end());  // loss, then the program's
  if (std::find(known.begin(), known.end(), name) != known.end()) return;
  std::string list;
  for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
  HEARTH_THROW(ValueError, "[trainer] metric_for_best_model '", *args.metric_for_best_model,
               "': expected a metric evaluation reports (", list, ")", did_you_mean(name, known));
}

}  // namespace hearth::cli
