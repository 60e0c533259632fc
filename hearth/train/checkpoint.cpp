#include "hearth/train/checkpoint.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "hearth/core/errors.h"
#include "hearth/core/input_error.h"
#include "hearth/core/switch_list.h"
#include "hearth/io/atomic_file.h"
#include "hearth/io/file_checks.h"
#include "hearth/io/json_limits.h"
#include "hearth/io/safetensors.h"

namespace fs = std::filesystem;

namespace hearth::train {
namespace {

using json = nlohmann::json;

// trainer_state.json and the grad scaler's state: a log of metrics, never near this.
constexpr size_t kMaxStateJsonBytes = size_t{64} << 20;

std::string join(const std::string& dir, const std::string& file) { return (fs::path(dir) / file).string(); }

// The step of a directory named exactly "checkpoint-<digits>".
std::optional<int64_t> checkpoint_step(const std::string& name) {
  const std::string prefix = "checkpoint-";
  if (name.rfind(prefix, 0) != 0 || name.size() == prefix.size() || name.size() > prefix.size() + 18) return {};
  std::string digits = name.substr(prefix.size());
  if (digits.find_first_not_of("0123456789") != std::string::npos) return {};
  return std::stoll(digits);
}

// "checkpoint-<digits>.tmp-XXXXXX" or ".old-XXXXXX": what AtomicDirectory
// names a tree before it is renamed into place, or the tree it replaces; and
// "checkpoint-<digits>.deleting", a rotated checkpoint whose removal did not finish.
bool is_unfinished_checkpoint(const std::string& name) {
  const std::string deleting = kDeletingSuffix;
  if (name.size() > deleting.size() && name.compare(name.size() - deleting.size(), deleting.size(), deleting) == 0 &&
      checkpoint_step(name.substr(0, name.size() - deleting.size())))
    return true;
  for (const char* suffix : {".tmp-", ".old-"}) {
    size_t at = name.rfind(suffix);
    if (at == std::string::npos || name.size() != at + 5 + 6) continue;
    if (checkpoint_step(name.substr(0, at))) return true;
  }
  return false;
}

bool same_dir(const std::string& a, const std::string& b) {
  if (a.empty() || b.empty()) return false;
  std::error_code ec;
  if (fs::exists(a, ec) && fs::exists(b, ec)) return fs::equivalent(a, b, ec);
  return fs::path(a).lexically_normal() == fs::path(b).lexically_normal();
}

// HEARTH_TEST_FAIL_REMOVE=1 (test hook, read at each use): removing a rotated
// checkpoint stops with an error after its first file, the way an I/O error
// or a kill cuts a delete short.
bool injected_remove_failure() { return switches::test_fail_remove().get(); }

}  // namespace

std::string checkpoint_name(int64_t step) { return "checkpoint-" + std::to_string(step); }

void save_checkpoint(const std::string& dir, const CheckpointContents& c) {
  HEARTH_CHECK(c.model != nullptr, ValueError, "[checkpoint] ", dir, ": a checkpoint needs a model");
  fs::path parent = fs::path(dir).parent_path();
  std::error_code ec;
  if (!parent.empty()) fs::create_directories(parent, ec);
  HEARTH_CHECK(!ec, IoError, "[checkpoint] ", parent.string(), ": cannot create the output directory: ", ec.message());
  io::write_directory_atomic(dir, [&](const std::string& tmp) {
    if (c.model_files.is_set()) {
      c.model_files.save(*c.model, tmp);
    } else {
      io::save_safetensors(join(tmp, kModelFile), c.model->state_dict(), {{"format", "pt"}});
    }
    if (c.optimizer != nullptr) {
      optim::OptimizerStateDict opt = c.optimizer->state_dict();
      std::map<std::string, std::string> meta = {{"format", "pt"}, {"optimizer", opt.meta.dump()}};
      if (c.scheduler != nullptr) meta["scheduler"] = c.scheduler->state_dict().dump();
      io::save_safetensors(join(tmp, kOptimizerFile), opt.tensors, meta);
    }
    if (!c.trainer_state.is_null()) io::write_file_atomic(join(tmp, kTrainerStateFile), c.trainer_state.dump(2) + "\n");
    if (c.args != nullptr) {
      // The arguments describe the run, not how this process started it: without
      // resume_from_checkpoint, reusing the file as --config starts a run of the
      // same settings instead of silently resuming this one.
      TrainingArguments saved = *c.args;
      saved.resume_from_checkpoint.reset();
      saved.save(join(tmp, kTrainingArgsFile));
    }
    if (c.grad_scaler != nullptr)
      io::write_file_atomic(join(tmp, kGradScalerFile), c.grad_scaler->state_dict().dump(2) + "\n");
    if (c.extra_files) c.extra_files(tmp);
  });
}

namespace {

// What a checkpoint's folder says of its model: "a bert model (config.json
// model_type)", "a cv_example model (classes.json)", or "another model".
std::string saved_model_description(const std::string& dir) {
  std::ifstream in(join(dir, "config.json"));
  if (in.good()) {
    const json j = json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (j.is_object() && j.contains("model_type") && j["model_type"].is_string())
      return "a " + j["model_type"].get<std::string>() + " model (config.json model_type)";
  }
  std::error_code ec;
  if (fs::exists(join(dir, "classes.json"), ec)) return "a cv_example model (classes.json)";
  return "another model";
}

// A checkpoint of another model: most of its weights have names this model
// lacks. Says so, naming the model where the folder does, instead of listing
// every missing and unexpected key.
void check_same_model(const std::string& dir, const std::map<std::string, Tensor>& saved, const nn::Module& model) {
  const nn::StateDict mine = model.state_dict();
  size_t matching = 0;
  std::string first_foreign;
  for (const auto& [name, t] : saved) {
    if (mine.count(name) > 0) {
      ++matching;
    } else if (first_foreign.empty()) {
      first_foreign = name;
    }
  }
  if (saved.empty() || mine.empty() || 2 * matching >= std::max(saved.size(), mine.size())) return;
  HEARTH_THROW(InputError, "[checkpoint] ", dir, ": the checkpoint holds ", saved_model_description(dir), ": ",
               saved.size() - matching, " of its ", saved.size(), " weights (", first_foreign,
               ", ...) are not this model's, whose ", mine.size(), " weights begin with ", mine.begin()->first,
               ". Resume it with the model that saved it, or start a new run in another output_dir.");
}

}  // namespace

void load_model_weights(const std::string& dir, nn::Module& model) {
  std::string path = join(dir, kModelFile);
  HEARTH_CHECK(fs::exists(path), IoError, "[checkpoint] ", dir, ": no ", kModelFile, " in this directory");
  std::map<std::string, Tensor> tensors = io::load_safetensors(path);
  check_same_model(dir, tensors, model);
  try {
    model.load_state_dict(nn::StateDict(tensors.begin(), tensors.end()), /*strict=*/true);
  } catch (const IoError&) {
    throw;
  } catch (const Error& e) {
    HEARTH_THROW(InputError, "[checkpoint] ", path, ": ", e.what());
  }
}

void load_model_weights(const std::string& dir, nn::Module& model, const ModelFiles& files) {
  if (!files.is_set()) return load_model_weights(dir, model);
  const std::string path = join(dir, files.main_file);
  HEARTH_CHECK(fs::exists(path), IoError, "[checkpoint] ", dir, ": no ", files.main_file, " in this directory");
  files.load(dir, model);
}

void load_optimizer_state(const std::string& dir, optim::Optimizer& optimizer, optim::LRScheduler* scheduler) {
  std::string path = join(dir, kOptimizerFile);
  HEARTH_CHECK(fs::exists(path), IoError, "[checkpoint] ", dir, ": no ", kOptimizerFile, " in this directory");
  io::SafetensorsFile file(path);
  auto meta_json = [&](const char* key) {
    auto it = file.metadata().find(key);
    HEARTH_CHECK(it != file.metadata().end(), IoError, "[checkpoint] ", path, ": the metadata has no '", key,
                 "' entry");
    io::check_json_limits(it->second, "[checkpoint] " + path + ": the '" + key + "' metadata");
    json j = json::parse(it->second, nullptr, false);
    HEARTH_CHECK(!j.is_discarded(), IoError, "[checkpoint] ", path, ": the '", key, "' metadata is not valid JSON");
    return j;
  };
  optim::OptimizerStateDict state;
  state.meta = meta_json("optimizer");
  for (const std::string& name : file.names()) state.tensors[name] = file.get(name);
  // The loaders check what they read; their errors (and any JSON type error
  // they missed) are reported naming this file.
  try {
    optimizer.load_state_dict(state);
    if (scheduler != nullptr) scheduler->load_state_dict(meta_json("scheduler"));
  } catch (const IoError&) {
    throw;
  } catch (const Error& e) {
    HEARTH_THROW(InputError, "[checkpoint] ", path, ": ", e.what());
  } catch (const json::exception& e) {
    HEARTH_THROW(InputError, "[checkpoint] ", path,
                 ": the optimizer or scheduler metadata has a field of the wrong "
                 "type: ",
                 e.what());
  }
}

bool has_grad_scaler_state(const std::string& dir) { return fs::exists(join(dir, kGradScalerFile)); }

void load_grad_scaler_state(const std::string& dir, optim::GradScaler& scaler) {
  const std::string path = join(dir, kGradScalerFile);
  io::check_regular_file(path, "[checkpoint]");
  std::ifstream in(path);
  HEARTH_CHECK(in.good(), IoError, "[checkpoint] ", dir, ": no readable ", kGradScalerFile);
  json j = json::parse(io::read_json_text(in, "[checkpoint] " + path, kMaxStateJsonBytes), nullptr, false);
  HEARTH_CHECK(!j.is_discarded(), IoError, "[checkpoint] ", path, ": not valid JSON");
  try {
    scaler.load_state_dict(j);
  } catch (const ValueError& e) {
    HEARTH_THROW(InputError, "[checkpoint] ", path, ": ", e.what());
  } catch (const json::exception& e) {
    HEARTH_THROW(InputError, "[checkpoint] ", path, ": a field has the wrong type: ", e.what());
  }
}

json read_trainer_state(const std::string& dir) {
  std::string path = join(dir, kTrainerStateFile);
  io::check_regular_file(path, "[checkpoint]");
  std::ifstream in(path);
  HEARTH_CHECK(in.good(), IoError, "[checkpoint] ", dir, ": no readable ", kTrainerStateFile);
  json j = json::parse(io::read_json_text(in, "[checkpoint] " + path, kMaxStateJsonBytes), nullptr, false);
  HEARTH_CHECK(!j.is_discarded(), IoError, "[checkpoint] ", path, ": not valid JSON");
  return j;
}

std::vector<std::pair<int64_t, std::string>> list_checkpoints(const std::string& output_dir) {
  std::vector<std::pair<int64_t, std::string>> out;
  std::error_code ec;
  if (!fs::is_directory(output_dir, ec)) return out;
  // An entry whose type cannot be read (a symlink loop, a dangling link, a
  // name removed meanwhile) is not a checkpoint: skipped, never an error.
  for (fs::directory_iterator it(output_dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code entry_ec;
    if (!it->is_directory(entry_ec) || entry_ec) continue;
    if (auto step = checkpoint_step(it->path().filename().string())) out.emplace_back(*step, it->path().string());
  }
  HEARTH_CHECK(!ec, IoError, "[checkpoint] ", output_dir, ": cannot list the checkpoints: ", ec.message());
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> remove_unfinished_checkpoints(const std::string& output_dir) {
  std::vector<std::string> removed;
  std::error_code ec;
  if (!fs::is_directory(output_dir, ec)) return removed;
  for (const auto& e : fs::directory_iterator(output_dir, ec))
    if (is_unfinished_checkpoint(e.path().filename().string())) removed.push_back(e.path().string());
  for (const std::string& path : removed) {
    fs::remove_all(path, ec);
    HEARTH_CHECK(!ec, IoError, "[checkpoint] ", path, ": cannot remove this unfinished checkpoint: ", ec.message());
  }
  return removed;
}

std::optional<std::string> latest_checkpoint(const std::string& output_dir) {
  auto all = list_checkpoints(output_dir);
  if (all.empty()) return std::nullopt;
  return all.back().second;
}

std::string resolve_checkpoint(const std::string& spec, const std::string& output_dir, const std::string& model_file) {
  // "true": Hugging Face's resume_from_checkpoint=True, the newest checkpoint.
  if (spec == "latest" || spec == "true" || spec == "True") {
    auto latest = latest_checkpoint(output_dir);
    HEARTH_CHECK(latest.has_value(), ValueError, "[trainer] resume_from_checkpoint is \"", spec, "\", but output_dir '",
                 output_dir, "' holds no checkpoint-<step> directory");
    return *latest;
  }
  HEARTH_CHECK(fs::is_directory(spec), ValueError, "[trainer] resume_from_checkpoint: '", spec,
               "' is not a directory; expected a checkpoint-<step> directory or \"latest\"");
  for (const std::string& f : {model_file, std::string(kOptimizerFile), std::string(kTrainerStateFile)}) {
    HEARTH_CHECK(fs::exists(join(spec, f)), ValueError, "[trainer] resume_from_checkpoint: '", spec,
                 "' is not a complete checkpoint: ", f, " is missing");
  }
  return spec;
}

std::string remove_checkpoint(const std::string& dir) {
  const std::string doomed = dir + kDeletingSuffix;
  std::error_code ec;
  fs::remove_all(doomed, ec);  // a leftover of an earlier removal cut short
  if (ec) return doomed + ": cannot remove it: " + ec.message();
  fs::rename(dir, doomed, ec);
  if (ec) return dir + ": cannot rename it to " + fs::path(doomed).filename().string() + ": " + ec.message();
  if (injected_remove_failure()) {
    for (const auto& e : fs::directory_iterator(doomed, ec)) {
      fs::remove_all(e.path(), ec);
      break;
    }
    return doomed + ": cannot remove it: input/output error (injected by HEARTH_TEST_FAIL_REMOVE)";
  }
  fs::remove_all(doomed, ec);
  if (ec) return doomed + ": cannot remove it: " + ec.message();
  return "";
}

std::vector<std::string> rotate_checkpoints(const std::string& output_dir, int64_t limit, const std::string& keep) {
  return rotate_checkpoints(output_dir, limit, std::vector<std::string>{keep});
}

std::vector<std::string> rotate_checkpoints(const std::string& output_dir, int64_t limit,
                                            const std::vector<std::string>& keep, std::vector<std::string>* problems) {
  std::vector<std::string> deleted;
  if (limit <= 0) return deleted;
  auto all = list_checkpoints(output_dir);
  if (all.empty()) return deleted;
  // The newest checkpoint is what resuming continues from, so it survives too.
  auto is_kept = [&](const std::string& dir) {
    if (dir == all.back().second) return true;
    return std::any_of(keep.begin(), keep.end(), [&](const std::string& k) { return same_dir(dir, k); });
  };
  int64_t kept = 0;
  for (const auto& c : all) kept += is_kept(c.second) ? 1 : 0;
  const int64_t allowed = std::max(limit, kept);
  int64_t excess = static_cast<int64_t>(all.size()) - allowed;
  for (size_t i = 0; i < all.size() && excess > 0; ++i) {
    if (is_kept(all[i].second)) continue;
    --excess;
    // Renamed out of the way first: a failure or a kill mid-delete never
    // leaves a partial checkpoint-<step>, only a .deleting tree that the next
    // start removes. A failure is reported; the run goes on.
    std::string problem = remove_checkpoint(all[i].second);
    if (problem.empty()) {
      deleted.push_back(all[i].second);
    } else if (problems != nullptr) {
      problems->push_back(std::move(problem));
    }
  }
  return deleted;
}

std::string checkpoint_reference(const std::string& stored) {
  const fs::path p(stored);
  if (stored.empty() || p.filename() == p) return stored;
  const std::string last = p.lexically_normal().filename().string();
  if (checkpoint_step(last)) return last;
  const std::string parent_last = p.lexically_normal().parent_path().filename().string();
  if (last.empty() && checkpoint_step(parent_last)) return parent_last;  // "…/checkpoint-2/"
  return stored;
}

std::string resolve_checkpoint_reference(const std::string& output_dir, const std::string& reference) {
  if (reference.empty()) return reference;
  const std::string ref = checkpoint_reference(reference);
  if (fs::path(ref).is_absolute()) return ref;
  return (fs::path(output_dir) / ref).string();
}

}  // namespace hearth::train
