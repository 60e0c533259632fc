#include "apps/common/lightning_flags.h"

#include "hearth/core/device.h"
#include "hearth/core/errors.h"

namespace hearth::cli {

void LightningFlags::add_to(CLI::App& app, bool with_devices) {
  const std::string group = "Lightning's spellings";
  app.add_option("--accelerator", accelerator_, "Lightning's name for --device: auto, cpu, gpu or cuda")
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
    HEARTH_CHECK(accelerator_ == "auto" || accelerator_ == "cpu" || accelerator_ == "gpu" || accelerator_ == "cuda",
                 ValueError, "[trainer] --accelerator: expected \"auto\", \"cpu\", \"gpu\" or \"cuda\", got \"",
                 accelerator_, "\"", foreign_device_note(accelerator_));
    args.device = accelerator_ == "gpu" ? "cuda" : accelerator_;
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
