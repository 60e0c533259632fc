#include "apps/common/lightning_flags.h"

#include <string>
#include <vector>

#include "hearth/core/device.h"
#include "hearth/core/device_runtime.h"
#include "hearth/core/errors.h"
#include "hearth/train/device_select.h"

namespace hearth::cli {
namespace {

// Every name --accelerator takes: auto, gpu, and each registered device kind
// (cpu first), as "\"auto\", \"cpu\", ... or \"cuda\"".
std::string accelerator_choices() {
  std::vector<std::string> names{"auto"};
  for (int i = 0; i < num_device_kinds(); ++i) {
    names.push_back(device_kind_name(DeviceKind{static_cast<uint8_t>(i)}));
    if (i == 0) names.push_back("gpu");
  }
  std::string s;
  for (size_t i = 0; i < names.size(); ++i)
    s += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + ("\"" + names[i] + "\"");
  return s;
}

// Lightning's "gpu": the available accelerator device=auto would pick (the
// highest auto priority), whatever its kind.
std::string first_available_accelerator() {
  const Device best = resolve_device("auto");
  HEARTH_CHECK(!best.is_cpu(), ValueError,
               "[trainer] --accelerator gpu: no accelerator is available: ", train::no_accelerator_reason(),
               ". Use --accelerator cpu");
  return device_kind_name(best.kind);
}

}  // namespace

void LightningFlags::add_to(CLI::App& app, bool with_devices) {
  const std::string group = "Lightning's spellings";
  app.add_option("--accelerator", accelerator_,
                 "Lightning's name for --device: auto, cpu, gpu (the first available accelerator) or a device kind "
                 "(cuda, ...)")
      ->type_name("TEXT")
      ->group(group);
  if (with_devices)
    app.add_option("--devices", devices_, "Lightning's process count: 1 here; more run under hearth launch")
        ->type_name("INT")
        ->group(group);
  app.add_option("--max_epochs", max_epochs_, "Lightning's name for --num_train_epochs")
      ->type_name("FLOAT")
      ->group(group);
  app.add_option("--accumulate_grad_batches", accumulate_grad_batches_,
                 "Lightning's name for --gradient_accumulation_steps")
      ->type_name("INT")
      ->group(group);
}

void LightningFlags::apply(train::TrainingArguments& args) const {
  if (!accelerator_.empty()) {
    DeviceKind kind;
    HEARTH_CHECK(accelerator_ == "auto" || accelerator_ == "gpu" || find_device_kind(accelerator_, &kind), ValueError,
                 "[trainer] --accelerator: expected ", accelerator_choices(), ", got \"", accelerator_, "\"",
                 foreign_device_note(accelerator_));
    args.device = accelerator_ == "gpu" ? first_available_accelerator() : accelerator_;
  }
  if (!devices_.empty()) {
    HEARTH_CHECK(devices_ == "1" || devices_ == "auto", ValueError, "[trainer] --devices ", devices_,
                 ": one process trains on one device; for ", devices_,
                 " data-parallel processes run this command under `hearth launch --nproc_per_node ", devices_,
                 " <command>` (without --devices)");
  }
  if (!max_epochs_.empty()) train::set_training_argument(args, "num_train_epochs", max_epochs_, "--max_epochs");
  if (!accumulate_grad_batches_.empty())
    train::set_training_argument(args, "gradient_accumulation_steps", accumulate_grad_batches_,
                                 "--accumulate_grad_batches");
}

}  // namespace hearth::cli
