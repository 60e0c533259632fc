// The safetensors format (Hugging Face): an 8-byte little-endian header length
// N, N bytes of JSON, then the raw little-endian tensor bytes. The JSON maps
// each tensor name to {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin,
// end]} (offsets relative to the start of the data) and may hold a
// "__metadata__" object of string to string.
//
// Reading memory-maps the file and validates the whole header before any
// tensor is touched; every problem is an IoError "[safetensors] <path>:
// <problem>", never a crash, because checkpoint files come from anywhere.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "hearth/core/tensor.h"

namespace hearth::io {

// "F32", "F64", "BF16", "F16", "I64", "I32", "U8", "BOOL".
const char* safetensors_dtype_name(DType dtype);
// The inverse; false for names hearth has no dtype for (e.g. "F8_E4M3").
bool parse_safetensors_dtype(const std::string& name, DType* out);

struct SafetensorsEntry {
  std::string name;
  DType dtype = DType::float32;
  Shape shape;
  uint64_t begin = 0;  // byte offsets into the data region
  uint64_t end = 0;
};

// An open, memory-mapped safetensors file. Tensors are read lazily: get()
// copies one out; view() returns a tensor over the mapping itself (no copy),
// whose storage keeps the mapping alive after this object is gone. The mapping
// is private, so writing through a view never changes the file.
class SafetensorsFile {
 public:
  explicit SafetensorsFile(const std::string& path);
  ~SafetensorsFile();
  SafetensorsFile(SafetensorsFile&&) noexcept;
  SafetensorsFile& operator=(SafetensorsFile&&) noexcept;

  const std::string& path() const { return path_; }
  // Tensor names, sorted.
  std::vector<std::string> names() const;
  bool contains(const std::string& name) const { return entries_.count(name) != 0; }
  const SafetensorsEntry& entry(const std::string& name) const;
  const std::map<std::string, std::string>& metadata() const { return metadata_; }

  // A fresh tensor holding a copy of the bytes, on `device`.
  Tensor get(const std::string& name, Device device = Device()) const;
  // A CPU tensor sharing the mapped bytes. Falls back to a copy when the bytes
  // are not aligned for the dtype (files from writers that do not align).
  Tensor view(const std::string& name) const;

 private:
  struct Mapping;
  std::string path_;
  std::shared_ptr<Mapping> mapping_;
  uint64_t data_start_ = 0;  // file offset of the data region
  std::map<std::string, SafetensorsEntry> entries_;
  std::map<std::string, std::string> metadata_;
};

// Every tensor of the file, copied onto `device`.
std::map<std::string, Tensor> load_safetensors(const std::string& path, Device device = Device());

// Writes `tensors` (any device, any layout: they are made contiguous on the
// CPU first) atomically: to `<path>.tmp`, fsync, then renamed to `path`.
// Tensors are laid out largest itemsize first, so every tensor's bytes are
// aligned for its dtype when the file is mapped.
void save_safetensors(const std::string& path, const std::map<std::string, Tensor>& tensors,
                      const std::map<std::string, std::string>& metadata = {});

}  // namespace hearth::io
