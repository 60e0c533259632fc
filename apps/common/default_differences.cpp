#include "apps/common/default_differences.h"

namespace hearth::cli {
namespace {

// Hugging Face's defaults. TrainingArguments{} holds them but for report_to:
// hearth's Trainer writes metrics.jsonl and TensorBoard events unless told
// not to, where Hugging Face's reports nowhere ("none").
train::TrainingArguments hugging_face_defaults() {
  train::TrainingArguments a;
  a.report_to = {"none"};
  return a;
}

std::string shown(const nlohmann::json& v) {
  if (v.is_null()) return "unset";
  return v.is_string() ? v.get<std::string>() : v.dump();
}

}  // namespace

std::string defaults_that_differ(const train::TrainingArguments& program_defaults,
                                 const train::TrainingArguments& args) {
  const train::TrainingArguments hugging_face = hugging_face_defaults();
  std::string out;
  for (const train::TrainingArgumentField& f : train::training_argument_fields()) {
    const nlohmann::json ours = f.get(program_defaults);
    const nlohmann::json theirs = f.get(hugging_face);
    if (ours == theirs || f.get(args) != ours) continue;
    out += (out.empty() ? "" : ", ") + f.name + " " + shown(ours) + " (Hugging Face: " + shown(theirs) + ")";
  }
  return out;
}

std::string defaults_notice(const std::string& program, const train::TrainingArguments& program_defaults,
                            const train::TrainingArguments& args) {
  const std::string list = defaults_that_differ(program_defaults, args);
  if (list.empty()) return "";
  return program + ": defaults that differ from Hugging Face's TrainingArguments (flags of the same name change "
                   "them): " +
         list + "\n";
}

}  // namespace hearth::cli
