// run_clm: trains a causal language model (GPT-2, Llama, Mistral, Qwen2) on
// text files, with the command line of Hugging Face's run_clm.py:
//
//   run_clm --model_name_or_path models/SmolLM-135M --train_file corpus.txt
//           --do_train --do_eval --block_size 512 --per_device_train_batch_size 8
//           --num_train_epochs 1 --output_dir runs/clm
//
// The data (clm_data.h): the training file's rows tokenized and packed into
// blocks of block_size tokens, the first --validation_split_percentage of it
// held out for evaluation unless --validation_file is given; prompt/completion
// JSON lines learn the completion only. With --lora_r the base is frozen and
// a LoRA adapter trains (clm_lora.h). Writes what the Python script writes:
// the model folder (or the adapter's), train_results.json, eval_results.json
// (eval_loss, eval_accuracy, perplexity), all_results.json and
// trainer_state.json. Every TrainingArguments field is a flag.
#include <csignal>
#include <filesystem>
#include <iostream>
#include <optional>

#include <CLI/CLI.hpp>

#include "apps/common/json_config.h"
#include "apps/common/lightning_flags.h"
#include "apps/common/resolved_training_arguments.h"
#include "apps/common/run_results.h"
#include "apps/common/training_argument_flags.h"
#include "examples/run_clm/clm_arguments.h"
#include "examples/run_clm/clm_data.h"
#include "examples/run_clm/clm_lora.h"
#include "examples/run_clm/clm_metrics.h"
#include "examples/run_clm/clm_model_config.h"
#include "examples/run_clm/clm_tokenizer.h"
#include "hearth/core/errors.h"
#include "hearth/core/exception_report.h"
#include "hearth/core/generator.h"
#include "hearth/core/input_error.h"
#include "hearth/core/switches.h"
#include "hearth/dispatch/dispatch.h"
#include "hearth/distributed/rendezvous.h"
#include "hearth/nn/models/gpt2.h"
#include "hearth/nn/models/llama.h"
#include "hearth/ops/reduction.h"
#include "hearth/train/checkpoint.h"
#include "hearth/train/device_select.h"
#include "hearth/train/trainer.h"

namespace run_clm {
namespace {

namespace fs = std::filesystem;
using hearth::nn::models::CausalLM;
using hearth::train::TrainingArguments;

constexpr int kUsageExitCode = 2;

bool is_main_process() {
  const std::optional<hearth::distributed::Rendezvous> r = hearth::distributed::rendezvous_from_environment();
  return !r || r->rank == 0;
}

// A bad flag or combination: one line and exit code 2, as for parse errors.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The arguments of the flags and files (apps/common/resolved_training_arguments.h);
// anything wrong with them is a bad argument.
TrainingArguments resolve_training_arguments(const hearth::cli::TrainingArgumentFlags& flags,
                                             const hearth::cli::LightningFlags& lightning,
                                             const hearth::cli::JsonConfigFlag& config) {
  try {
    return hearth::cli::resolved_training_arguments(flags, lightning, config);
  } catch (const hearth::Error& e) {
    throw UsageError(e.what());
  }
}

// config.json of the model's architecture, as save_pretrained writes it.
void save_model_config(const CausalLM& model, const std::string& path) {
  if (const auto* gpt2 = dynamic_cast<const hearth::nn::models::GPT2LMHeadModel*>(&model))
    gpt2->config.save(path, {"GPT2LMHeadModel"});
  else if (const auto* llama = dynamic_cast<const hearth::nn::models::LlamaForCausalLM*>(&model))
    llama->config.save(path, {llama->config.architecture()});
}

std::shared_ptr<CausalLM> load_model(const ClmArguments& a) {
  if (!a.config_name.empty()) return hearth::nn::models::causal_lm_from_config(a.config_name);
  if (a.model_name_or_path.empty()) return model_of_type(a.model_type, a.config_overrides);
  if (!fs::is_directory(a.model_name_or_path))
    throw UsageError("--model_name_or_path " + a.model_name_or_path +
                     ": expected a local model folder (config.json, model.safetensors); hearth never downloads");
  return hearth::nn::models::load_causal_lm(a.model_name_or_path);
}

// block_size as run_clm.py settles it: the default min(1024, the model's
// length); a larger one given is cut to the model's length.
int64_t settle_block_size(const ClmArguments& a, const CausalLM& model, std::ostream* notices) {
  const int64_t longest = model.max_sequence_length();
  if (a.block_size < 0) return std::min<int64_t>(1024, longest);
  if (a.block_size > longest) {
    if (notices)
      *notices << "[run_clm] --block_size " << a.block_size << " is longer than the model takes (" << longest
               << " positions); using " << longest << "\n";
    return longest;
  }
  return a.block_size;
}

int run(const ClmArguments& given, const hearth::cli::TrainingArgumentFlags& flags,
        const hearth::cli::LightningFlags& lightning, const hearth::cli::JsonConfigFlag& config) {
  ClmArguments a = given;
  const bool main_process = is_main_process();
  if (!main_process) std::cout.setstate(std::ios::failbit);
  std::ostream* notices = main_process ? &std::cerr : nullptr;
  TrainingArguments args = resolve_training_arguments(flags, lightning, config);
  if (a.cpu) args.use_cpu = true;
  if (args.eval_strategy != "no") a.do_eval = true;
  if (!a.do_train && !a.do_eval) throw UsageError("nothing to do: pass --do_train, --do_eval or both");
  try {
    check_clm_arguments(a);
    if (args.resume_from_checkpoint && a.do_train)
      (void)hearth::train::resolve_checkpoint(*args.resume_from_checkpoint, args.output_dir,
                                              a.lora_r > 0 ? hearth::nn::kLoraWeightsFile : hearth::train::kModelFile);
    hearth::train::select_device(args.device, args.use_cpu);
  } catch (const hearth::Error& e) {
    throw UsageError(e.what());
  }
  if (a.model_name_or_path.empty() && a.config_name.empty() && a.model_type.empty())
    throw UsageError(
        "--model_name_or_path: expected a local model folder (or --config_name or --model_type for a new model)");
  // The tokenizer: --tokenizer_name, else the model's folder, else a folder given as --config_name.
  std::string tokenizer_dir = a.tokenizer_name.empty() ? a.model_name_or_path : a.tokenizer_name;
  if (tokenizer_dir.empty() && fs::is_directory(a.config_name)) tokenizer_dir = a.config_name;
  if (tokenizer_dir.empty())
    throw UsageError("--tokenizer_name: expected the folder of the tokenizer files (tokenizer.json) for a new model");
  const ClmTokenizer tokenizer = load_clm_tokenizer(tokenizer_dir);

  // transformers seeds before building the model: from_config draws its weights.
  hearth::manual_seed(static_cast<uint64_t>(args.seed));
  std::shared_ptr<CausalLM> model = load_model(a);
  const std::string model_source = !a.config_name.empty()          ? a.config_name
                                   : !a.model_name_or_path.empty() ? a.model_name_or_path
                                                                   : "--model_type " + a.model_type;
  HEARTH_CHECK(tokenizer.vocab_size <= model->vocab_size(), hearth::ValueError, "[run_clm] ", tokenizer_dir,
               ": the tokenizer has ", tokenizer.vocab_size, " tokens, more than the vocab_size ", model->vocab_size(),
               " of ", model_source);
  const int64_t block_size = settle_block_size(a, *model, notices);
  ClmData data = load_clm_data(a, tokenizer.encode, tokenizer.eos_id, tokenizer.pad_id, block_size, notices);

  const bool lora = a.lora_r > 0;
  hearth::nn::LoraConfig lora_config;
  if (lora) {
    lora_config = lora_config_of(a, *model);
    add_adapters(*model, a, lora_config, std::cout);
  }
  std::cout << "run_clm: " << model->model_type() << " from " << model_source << "; "
            << (data.prompt_completion ? "prompt/completion samples"
                                       : "blocks of " + std::to_string(block_size) + " tokens")
            << ": " << (data.train ? data.train->size() : 0) << " training and " << (data.eval ? data.eval->size() : 0)
            << " evaluation samples\n";

  hearth::train::TrainerOptions opts;
  opts.console = &std::cout;
  // Evaluation keeps each sample's predicted ids [S], not its [S, V] logits
  // (run_clm.py's preprocess_logits_for_metrics).
  opts.forward = [](hearth::nn::Module& m, const hearth::data::Batch& b) {
    auto& lm = static_cast<CausalLM&>(m);
    hearth::nn::models::CausalLMOutput out =
        lm.forward(b.at(hearth::data::field::kInputIds), b.at(hearth::data::field::kAttentionMask),
                   b.at(hearth::data::field::kLabels));
    // Training reads the loss alone: the argmax over the vocabulary is
    // evaluation's work only.
    if (m.is_training()) return hearth::train::ForwardOutput{out.loss, hearth::Tensor()};
    return hearth::train::ForwardOutput{out.loss, hearth::argmax(out.logits.detach(), -1)};
  };
  opts.compute_metrics = [](const hearth::Tensor& predictions, const hearth::Tensor& labels) {
    return next_token_accuracy(predictions, labels);
  };
  opts.collate = data.collate;
  // Each checkpoint holds config.json and the tokenizer beside the Trainer's
  // files, and with LoRA the adapter in PEFT's files.
  opts.checkpoint_extra_files = [model, tokenizer_dir](const std::string& dir) {
    save_model_config(*model, (fs::path(dir) / "config.json").string());
    copy_tokenizer_files(tokenizer_dir, dir);
  };
  // With LoRA a checkpoint holds the adapter alone (PEFT's files), not the
  // frozen base, as Hugging Face's Trainer saves a PEFT model; resuming and
  // loading the best model read the adapter back into the adapted model.
  if (lora) {
    opts.model_files.main_file = hearth::nn::kLoraWeightsFile;
    opts.model_files.save = [lora_config](const hearth::nn::Module& m, const std::string& dir) {
      hearth::nn::save_lora_adapter(dir, m, lora_config);
    };
    opts.model_files.load = [](const std::string& dir, hearth::nn::Module& m) {
      hearth::nn::load_lora_weights(dir, m);
    };
  }
  hearth::train::Trainer trainer(model, args, data.train, data.eval, {}, opts);

  if (a.do_train) {
    hearth::train::TrainOutput out = trainer.train();
    if (out.interrupted_by_signal != 0)
      return out.interrupted_by_signal == SIGINT ? 130 : 128 + out.interrupted_by_signal;
    hearth::cli::MetricMap metrics = out.metrics;
    metrics["train_samples"] = static_cast<double>(data.train->size());
    if (main_process) {
      fs::create_directories(args.output_dir);
      if (lora)
        hearth::nn::save_lora_adapter(args.output_dir, *model, lora_config);
      else
        model->save_pretrained(args.output_dir);
      copy_tokenizer_files(tokenizer_dir, args.output_dir);
      hearth::cli::save_metrics(args.output_dir, "train", metrics);
    }
    hearth::cli::log_metrics(std::cout, "train", metrics);
    trainer.save_state();
  }
  if (a.do_eval) {
    hearth::cli::MetricMap metrics = trainer.evaluate(data.eval, "eval_");
    metrics["eval_samples"] = static_cast<double>(data.eval->size());
    metrics["perplexity"] = perplexity(metrics.at("eval_loss"));
    if (trainer.state().global_step > 0) metrics["epoch"] = trainer.state().epoch;
    hearth::cli::log_metrics(std::cout, "eval", metrics);
    if (main_process) hearth::cli::save_metrics(args.output_dir, "eval", metrics);
  }
  // Last, once nothing trains or evaluates any more: the adapter folded into
  // the weights, written as a full model folder beside the adapter's files.
  if (lora && a.merge_adapters && main_process) {
    hearth::nn::merge_lora(*model);
    model->save_pretrained(args.output_dir);
    copy_tokenizer_files(tokenizer_dir, args.output_dir);
    std::cout << "run_clm: merged model (config.json, model.safetensors) in " << args.output_dir << "\n";
  }
  const std::string fallback = hearth::fallback_report();
  if (!fallback.empty()) std::cout << "run_clm: these ops fell back to the CPU (slower):\n" << fallback;
  return 0;
}

}  // namespace
}  // namespace run_clm

int main(int argc, char** argv) {
  hearth::validate_switches_or_exit("run_clm");
  CLI::App app{"run_clm: train a causal language model on text files (Hugging Face's run_clm.py)"};
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  run_clm::ClmArguments clm_args;
  run_clm::add_clm_flags(app, clm_args);
  hearth::cli::TrainingArgumentFlags training_flags;
  training_flags.add_to(app, /*skip=*/{"do_train", "do_eval"});  // run_clm's own
  hearth::cli::LightningFlags lightning_flags;
  lightning_flags.add_to(app);
  hearth::cli::JsonConfigFlag config;
  config.add_to(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    std::cerr << "run_clm: error: " << e.what() << " (see 'run_clm --help')\n";
    return run_clm::kUsageExitCode;
  }
  try {
    config.read(app, &training_flags);
  } catch (const hearth::Error& e) {
    std::cerr << "run_clm: error: " << e.what() << "\n";
    return run_clm::kUsageExitCode;
  }
  try {
    return run_clm::run(clm_args, training_flags, lightning_flags, config);
  } catch (const run_clm::UsageError& e) {
    std::cerr << "run_clm: error: " << e.what() << "\n";
    return run_clm::kUsageExitCode;
  } catch (const hearth::InputError& e) {
    std::cerr << "run_clm: error: " << e.what() << "\n";
    return run_clm::kUsageExitCode;
  } catch (const hearth::Error& e) {
    std::cerr << "run_clm: error: " << e.what() << "\n";
    return 1;
  } catch (...) {
    std::cerr << "run_clm: error: " << hearth::describe_current_exception() << "\n";
    return 1;
  }
}
