// One function per parser of outside input in the hearth library: it feeds
// the bytes to the parser the way hearth reads such a file, and returns ""
// when the parser either accepted them or refused them cleanly (see
// check_clean_failure), else the problem. The libFuzzer targets (fuzz/*.cpp)
// call them; so does the unit test that replays the seed corpus and every
// input a fuzzer ever failed on (tests/unit/io/test_fuzz_regressions.cpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "apps/common/user_config.h"
#include "fuzz/fuzz_support.h"
#include "hearth/data/csv_reader.h"
#include "hearth/data/encoded_image.h"
#include "hearth/data/glue.h"
#include "hearth/data/idx_reader.h"
#include "hearth/data/image_io.h"
#include "hearth/data/tokenizer/bert_tokenizer.h"
#include "hearth/io/safetensors.h"
#include "hearth/nn/models/bert_config.h"
#include "hearth/ops/factory.h"
#include "hearth/optim/adam.h"
#include "hearth/optim/lr_scheduler.h"
#include "hearth/train/checkpoint.h"
#include "hearth/train/trainer_state.h"
#include "hearth/train/training_arguments.h"

namespace hearth::fuzz {

// safetensors: the header length, the JSON header (dtypes, shapes, offsets,
// metadata) and the data region, through the memory-mapped reader: every
// tensor is read both ways (a view over the mapping, a copy).
inline std::string fuzz_safetensors(const uint8_t* data, size_t size) {
  std::string path = write_input("model.safetensors", data, size);
  return check_clean_failure(path, [&] {
    io::SafetensorsFile file(path);
    for (const std::string& name : file.names()) {
      (void)file.view(name).numel();
      (void)file.get(name).numel();
    }
  });
}

// optimizer.safetensors of a checkpoint: the optimizer's and the scheduler's
// JSON metadata and the state tensors, loaded into AdamW with a linear
// schedule over two parameters of shapes [3] and [2, 2], as resuming does.
inline std::string fuzz_optimizer_state(const uint8_t* data, size_t size) {
  const std::string path = write_input("optimizer.safetensors", data, size);
  const std::string dir = std::filesystem::path(path).parent_path().string();
  return check_clean_failure(path, [&] {
    std::vector<Tensor> params = {zeros({3}), zeros({2, 2})};
    for (const Tensor& p : params) p.requires_grad_(true);
    optim::AdamW optimizer(params, {.lr = 0.1});
    auto scheduler = optim::get_linear_schedule_with_warmup(optimizer, 1, 10);
    train::load_optimizer_state(dir, optimizer, scheduler.get());
  });
}

// IDX (MNIST, Fashion-MNIST): magic, type code, dimensions, values; gzipped
// or not (read_idx detects gzip by its magic bytes).
inline std::string fuzz_idx(const uint8_t* bytes, size_t size) {
  std::string path = write_input("images-idx3-ubyte", bytes, size);
  return check_clean_failure(path, [&] { (void)data::read_idx(path); });
}

// Delimited text. The first byte picks the dialect (comma or tab, quoting on
// or off, header or not), so one corpus covers the CSV and the TSV paths.
inline std::string fuzz_csv(const uint8_t* bytes, size_t size) {
  if (size == 0) return "";
  data::CsvOptions options;
  options.delimiter = (bytes[0] & 1) ? '\t' : ',';
  options.quote = (bytes[0] & 2) ? '\0' : '"';
  options.header = (bytes[0] & 4) == 0;
  std::string_view text(reinterpret_cast<const char*>(bytes + 1), size - 1);
  const std::string source = "fuzz.csv";
  return check_clean_failure(source, [&] {
    data::CsvTable table = data::parse_csv(text, options, source);
    for (size_t r = 0; r < table.num_rows() && !table.columns.empty(); ++r) (void)table.cell(r, table.columns.front());
  });
}

// A TrainingArguments JSON file (`hearth train --config`, training_args.json):
// every field's type and range, and the checks across fields.
inline std::string fuzz_training_arguments(const uint8_t* data, size_t size) {
  std::string path = write_input("training_args.json", data, size);
  return check_clean_failure(path, [&] { (void)train::TrainingArguments::load(path).to_json().dump(); });
}

// The user's config.json (`hearth config`), read by every program: each
// setting's JSON type and value, unknown keys. (Not applied: applying may set
// HEARTH_ENABLE_CPU_FALLBACK in this process, which the unit tests share.)
inline std::string fuzz_user_config(const uint8_t* data, size_t size) {
  std::string path = write_input("config.json", data, size);
  return check_clean_failure(path, [&] { (void)cli::describe_user_config(cli::load_user_config(path)); });
}

// A checkpoint's trainer_state.json, read the way resuming reads it.
inline std::string fuzz_trainer_state(const uint8_t* data, size_t size) {
  static const std::string dir = [] {
    std::string d = scratch_dir() + "/checkpoint-1";
    std::filesystem::create_directories(d);
    return d;
  }();
  std::string path = write_input(std::string("checkpoint-1/") + train::kTrainerStateFile, data, size);
  return check_clean_failure(
      path, [&] { (void)train::TrainerState::from_json(train::read_trainer_state(dir), path).to_json().dump(); });
}

// A BERT model folder's config.json (Hugging Face's fields, id2label, ...).
inline std::string fuzz_bert_config(const uint8_t* data, size_t size) {
  std::string path = write_input("config.json", data, size);
  bool too_big = false;
  std::string problem = check_clean_failure(path, [&] {
    const auto config = nn::models::BertConfig::from_json_file(path);
    (void)config.to_json_string();
    // An accepted config must describe a model whose byte count cannot wrap.
    too_big = !(config.parameter_count() * 4.0 < 9.2e18);
  });
  if (problem.empty() && too_big) problem = "an accepted config has more parameter bytes than fit in int64";
  return problem;
}

// An encoded image (JPEG or PNG through libjpeg/libpng, anything else
// refused by its magic bytes), as an image folder's files are read: decoded
// whole, then as a crop transform reads it, the size from the header and a
// region picked from the last byte, at the scale that region's output size
// allows (full size, or 1/2, 1/4, 1/8 of a JPEG, only the region's rows and
// columns).
inline std::string fuzz_image(const uint8_t* bytes, size_t size) {
  std::string path = write_input("image.bin", bytes, size);
  std::string problem = check_clean_failure(path, [&] { (void)data::read_image(path).numel(); });
  if (!problem.empty() || size == 0) return problem;
  return check_clean_failure(path, [&] {
    data::EncodedImage image(data::read_file_bytes(path), path);
    const auto [h, w] = image.size();
    const int pick = bytes[size - 1];
    const int64_t denom = int64_t{1} << (pick & 3);  // output 1/1 .. 1/8 of the region
    const int64_t top = (pick >> 2 & 1) ? h / 3 : 0, left = (pick >> 3 & 1) ? w / 4 : 0;
    data::CropBox region{top, left, h - top, w - left};
    data::DecodedRegion r = image.decode_region(
        {region, std::max<int64_t>(region.height / denom, 1), std::max<int64_t>(region.width / denom, 1)});
    (void)data::resize_bilinear(r.pixels, r.box, std::max<int64_t>(region.height / denom, 1),
                                std::max<int64_t>(region.width / denom, 1))
        .numel();
  });
}

// The tokenizer files of a BERT model folder: the first byte picks vocab.txt
// or tokenizer.json; the tokenizer built from the rest then encodes a sentence.
inline std::string fuzz_tokenizer(const uint8_t* bytes, size_t size) {
  if (size == 0) return "";
  static const std::string dir = [] {
    std::string d = scratch_dir() + "/tokenizer";
    std::filesystem::create_directories(d);
    return d;
  }();
  const bool json = (bytes[0] & 1) != 0;
  std::error_code ec;
  std::filesystem::remove(dir + (json ? "/vocab.txt" : "/tokenizer.json"), ec);
  std::string path = write_input(json ? "tokenizer/tokenizer.json" : "tokenizer/vocab.txt", bytes + 1, size - 1);
  return check_clean_failure(path, [&] {
    data::BertTokenizer tok = data::BertTokenizer::from_pretrained(dir);
    (void)tok.encode("The cat sat on the mat, didn't it?", std::string("Yes."));
  });
}

// A GLUE-style text file (run_glue's --train_file): the first byte picks
// TSV, CSV or JSON lines, which the reader tells apart by the extension.
inline std::string fuzz_glue_text(const uint8_t* bytes, size_t size) {
  if (size == 0) return "";
  static const char* const kNames[] = {"train.tsv", "train.csv", "train.jsonl"};
  std::string path = write_input(kNames[bytes[0] % 3], bytes + 1, size - 1);
  return check_clean_failure(path, [&] { (void)data::read_text_file(path, nullptr, /*labels_required=*/false); });
}

}  // namespace hearth::fuzz
