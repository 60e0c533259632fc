// Hugging Face model folders on disk, shared by the models that load them
// (BERT, GPT-2, Llama): finding the folder, reading every tensor of its
// checkpoint (model.safetensors, or the shards model.safetensors.index.json
// lists) and writing config.json + model.safetensors back.
//
// `tag` is the bracketed name every message starts with ("[gpt2]").
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hearth/nn/module.h"

namespace hearth::nn::models {

inline constexpr const char* kHfWeightsFile = "model.safetensors";
inline constexpr const char* kHfShardIndexFile = "model.safetensors.index.json";
inline constexpr const char* kHfConfigFile = "config.json";

// The folder `model_dir` names, checked to exist and to hold config.json.
// hearth never downloads: a path that does not exist (a hub name such as
// "gpt2") gets an IoError saying how to fetch the folder elsewhere.
std::filesystem::path hf_model_folder(const std::string& model_dir, const std::string& tag);

// Every tensor of a folder's checkpoint, as views of the mapped files (no copy).
struct HfCheckpoint {
  StateDict tensors;
  std::map<std::string, std::string> file_of;  // tensor name -> the file it came from
  std::string description;                     // for messages: the file, or the index
};

// model.safetensors, else the shards listed by model.safetensors.index.json
// (every shard a file inside the folder, never reached through a symlinked
// sub-folder). IoError naming the file for anything unreadable, and for a
// folder holding only pytorch_model.bin (a pickle hearth does not read).
HfCheckpoint read_hf_checkpoint(const std::filesystem::path& dir, const std::string& tag);

// Copies a checkpoint into `model`. `model_key` maps each file name to the
// model's name for it, or to nullopt for an entry to skip (a buffer older
// versions saved, a tied copy). Every entry of model.state_dict() must be
// found with its shape, and every file entry not skipped must be one of them:
// otherwise nothing is written and the error (ShapeError for shapes,
// ValueError for names) names the checkpoint, `model_name` and the keys.
// Tensors are cast to the model's dtypes.
void load_hf_checkpoint_into(Module& model, const HfCheckpoint& ckpt,
                             const std::function<std::optional<std::string>(const std::string&)>& model_key,
                             const std::string& tag, const std::string& model_name, const std::string& config_path);

// "a, b, c, ... (N in all)": names for a message, at most `limit` of them.
std::string join_names(const std::vector<std::string>& names, size_t limit = 12);

// Writes `tensors` as dir/model.safetensors (metadata format "pt", as
// transformers writes it) after creating `dir`; atomically.
void save_hf_weights(const std::string& dir, const StateDict& tensors);

}  // namespace hearth::nn::models
