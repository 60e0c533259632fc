// `hearth generate --model DIR --prompt TEXT`: continues a prompt with a
// causal language model (GPT-2, Llama, Mistral, Qwen2 folders), greedily or
// by sampling (temperature, top-k, top-p), reading the prompt once and each
// new token through the key/value cache. The text goes through the folder's
// tokenizer.json; --prompt_ids gives the token ids instead (and prints the
// new ids).
#include <charconv>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

#include "apps/hearth/commands.h"
#include "hearth/core/errors.h"
#include "hearth/data/tokenizer/bpe_tokenizer.h"
#include "hearth/nn/lora.h"
#include "hearth/nn/models/causal_lm.h"
#include "hearth/nn/models/causal_lm_generate.h"
#include "hearth/train/device_select.h"

namespace hearth::cli {
namespace {

struct GenerateFlags {
  std::string model_dir, adapter_dir, tokenizer_dir;
  std::string prompt, prompt_ids;
  // Empty: generation_config.json's value, else GenerationOptions' default
  // as set in run_generate.
  std::string max_new_tokens, do_sample, temperature, top_k, top_p;
  std::string seed = "42";
  std::string device = "auto";
  bool cpu = false;
};

int64_t parse_int(const std::string& flag, const std::string& text, int64_t min, int64_t max) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < min || v > max)
    throw UsageError(flag + ": expected an integer in [" + std::to_string(min) + ", " + std::to_string(max) +
                     "], got \"" + text + "\"");
  return v;
}

double parse_number(const std::string& flag, const std::string& text) {
  try {
    size_t used = 0;
    const double v = std::stod(text, &used);
    if (used == text.size()) return v;
  } catch (const std::exception&) {
  }
  throw UsageError(flag + ": expected a number, got \"" + text + "\"");
}

bool parse_bool(const std::string& flag, const std::string& text) {
  if (text == "true" || text == "True" || text == "1") return true;
  if (text == "false" || text == "False" || text == "0") return false;
  throw UsageError(flag + ": expected true or false, got \"" + text + "\"");
}

std::vector<int64_t> parse_ids(const std::string& text) {
  std::vector<int64_t> ids;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ','))
    ids.push_back(parse_int("--prompt_ids", item, 0, std::numeric_limits<int32_t>::max()));
  if (ids.empty()) throw UsageError("--prompt_ids: expected comma-separated token ids such as 1,2,3, got nothing");
  return ids;
}

std::string join_ids(const std::vector<int64_t>& ids) {
  std::string out;
  for (int64_t id : ids) out += (out.empty() ? "" : ",") + std::to_string(id);
  return out;
}

int run_generate(const GenerateFlags& f) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(f.model_dir))
    throw UsageError("--model: expected a model folder (config.json + model.safetensors), got '" + f.model_dir + "'");
  if (f.prompt.empty() == f.prompt_ids.empty())
    throw UsageError("give the prompt as --prompt TEXT or as --prompt_ids 1,2,3 (one of them)");
  // hearth's defaults, then the folder's generation_config.json, then the flags.
  nn::models::GenerationOptions options;
  options.do_sample = true;
  nn::models::read_generation_defaults(f.model_dir, options);
  if (!f.max_new_tokens.empty()) options.max_new_tokens = parse_int("--max_new_tokens", f.max_new_tokens, 0, 1'000'000);
  if (!f.do_sample.empty()) options.do_sample = parse_bool("--do_sample", f.do_sample);
  if (!f.temperature.empty()) options.temperature = parse_number("--temperature", f.temperature);
  if (!f.top_k.empty()) options.top_k = parse_int("--top_k", f.top_k, 0, std::numeric_limits<int32_t>::max());
  if (!f.top_p.empty()) options.top_p = parse_number("--top_p", f.top_p);
  options.seed = static_cast<uint64_t>(parse_int("--seed", f.seed, 0, std::numeric_limits<int64_t>::max()));
  try {
    options.validate();
  } catch (const ValueError& e) {
    throw UsageError(e.what());
  }
  const std::vector<int64_t> prompt_ids = f.prompt_ids.empty() ? std::vector<int64_t>{} : parse_ids(f.prompt_ids);
  options.eos_token_ids = nn::models::read_eos_token_ids(f.model_dir);
  train::DeviceChoice choice;
  try {
    choice = train::select_device(f.device, f.cpu);
  } catch (const DeviceError& e) {
    throw UsageError(e.what());
  }
  // The tokenizer: needed for a text prompt, used to show the text otherwise when there is one.
  const std::string tokenizer_dir = f.tokenizer_dir.empty() ? f.model_dir : f.tokenizer_dir;
  std::optional<data::BpeTokenizer> tokenizer;
  if (fs::exists(fs::path(tokenizer_dir) / "tokenizer.json")) {
    tokenizer = data::BpeTokenizer::from_pretrained(tokenizer_dir);
  } else if (!f.prompt.empty()) {
    throw UsageError("--prompt: " + tokenizer_dir +
                     " holds no tokenizer.json to read the text with; pass --tokenizer DIR, or the prompt's token "
                     "ids with --prompt_ids");
  }
  std::shared_ptr<nn::models::CausalLM> model = nn::models::load_causal_lm(f.model_dir);
  if (!f.adapter_dir.empty()) nn::load_lora_adapter(f.adapter_dir, *model);
  model->to(choice.device);
  const std::vector<int64_t> prompt = f.prompt.empty() ? prompt_ids : tokenizer->encode(f.prompt);
  std::cerr << "hearth: generating with " << model->model_type() << " from " << f.model_dir << " on "
            << train::describe_device(choice.device) << (options.greedy() ? " (greedy)" : " (sampling)") << "\n";
  const std::vector<int64_t> ids = nn::models::generate(*model, prompt, options);
  if (!f.prompt_ids.empty()) std::cout << join_ids(ids) << "\n";
  if (tokenizer) {
    // The prompt and its continuation as one text, special tokens (eos) left out.
    std::vector<int64_t> all = prompt;
    all.insert(all.end(), ids.begin(), ids.end());
    std::cout << tokenizer->decode(all, /*skip_special_tokens=*/true) << "\n";
  }
  return 0;
}

}  // namespace

void add_generate_command(CLI::App& app) {
  auto* sub = app.add_subcommand("generate", "Continue a prompt with a causal language model (GPT-2, Llama, ...)");
  auto f = std::make_shared<GenerateFlags>();
  sub->add_option("--model", f->model_dir, "model folder: config.json and model.safetensors")->required();
  sub->add_option("--adapter", f->adapter_dir, "LoRA adapter folder (adapter_config.json, adapter_model.safetensors)");
  sub->add_option("--tokenizer", f->tokenizer_dir, "folder of tokenizer.json, if not the model's");
  sub->add_option("--prompt", f->prompt, "the prompt as text (read with the folder's tokenizer.json)");
  sub->add_option("--prompt_ids", f->prompt_ids, "the prompt as comma-separated token ids, e.g. 1,2,3");
  // The defaults below apply where the folder's generation_config.json gives none.
  sub->add_option("--max_new_tokens", f->max_new_tokens, "tokens to generate at most (default 20)");
  sub->add_option("--do_sample", f->do_sample, "true: sample; false: greedy (default true)");
  sub->add_option("--temperature", f->temperature, "divides the logits before sampling; 0: greedy (default 1.0)");
  sub->add_option("--top_k", f->top_k, "sample among the k most likely tokens; 0: all (default 50)");
  sub->add_option("--top_p", f->top_p, "sample among the most likely tokens whose probabilities reach p (default 1.0)");
  sub->footer(
      "Defaults: the model folder's generation_config.json where it sets do_sample, temperature, top_k, "
      "top_p or max_new_tokens, as transformers' generate(); the values above elsewhere.");
  sub->add_option("--seed", f->seed, "seed of the sampling (default 42)");
  sub->add_option("--device", f->device,
                  "auto, cpu or a device kind such as cuda, with :N for the N-th (default auto)");
  sub->add_flag("--cpu", f->cpu, "generate on the CPU");
  on_run(sub, [f] { return run_generate(*f); });
}

}  // namespace hearth::cli
