#include "hearth/io/safetensors.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <limits>
#include <set>
#include <unordered_set>

#include <nlohmann/json.hpp>
#include <sys/mman.h>
#include <sys/stat.h>

#include "hearth/core/errors.h"
#include "hearth/io/atomic_file.h"
#include "hearth/io/file_checks.h"
#include "hearth/io/json_limits.h"

namespace hearth::io {

// The format is little-endian; hearth copies bytes as they are.
static_assert(std::endian::native == std::endian::little, "safetensors I/O assumes a little-endian host");

namespace {

using json = nlohmann::json;

struct DTypeName {
  DType dtype;
  const char* name;
};
constexpr DTypeName kDTypeNames[] = {
    {DType::float32, "F32"}, {DType::float64, "F64"}, {DType::bfloat16, "BF16"}, {DType::float16, "F16"},
    {DType::int64, "I64"},   {DType::int32, "I32"},   {DType::uint8, "U8"},      {DType::bool_, "BOOL"},
};

std::string supported_dtype_list() {
  std::string s;
  for (const DTypeName& d : kDTypeNames) s += (s.empty() ? "" : ", ") + std::string(d.name);
  return s;
}

constexpr size_t kLengthBytes = 8;
constexpr size_t kMaxHeaderBytes = 100'000'000;
// Tensors with no element (a shape with a 0) occupy no bytes of the data
// region, so the data's size does not bound how many there are.
constexpr uint64_t kMaxEmptyTensors = 4096;
// More dimensions than any model uses (PyTorch and NumPy stop at 64 or fewer);
// a longer shape array only costs memory to read.
constexpr uint64_t kMaxRank = 64;

}  // namespace

const char* safetensors_dtype_name(DType dtype) {
  for (const DTypeName& d : kDTypeNames)
    if (d.dtype == dtype) return d.name;
  HEARTH_THROW(TypeError, "[safetensors] dtype ", dtype_name(dtype), " has no safetensors name");
}

bool parse_safetensors_dtype(const std::string& name, DType* out) {
  for (const DTypeName& d : kDTypeNames) {
    if (name == d.name) {
      *out = d.dtype;
      return true;
    }
  }
  return false;
}

// ---- the mapping ------------------------------------------------------------

struct SafetensorsFile::Mapping {
  const char* base = nullptr;
  size_t size = 0;
  ~Mapping() {
    if (base) ::munmap(const_cast<char*>(base), size);
  }
};

namespace {

// Everything learned from a file's header, validated.
struct Header {
  std::map<std::string, SafetensorsEntry> entries;
  std::map<std::string, std::string> metadata;
};

class HeaderParser {
 public:
  HeaderParser(const std::string& path, const char* header, size_t header_len, uint64_t data_len)
      : path_(path), header_(header), header_len_(header_len), data_len_(data_len) {}

  Header parse() {
    json root = parse_json();
    if (!root.is_object()) fail("header is not a JSON object (found ", root.type_name(), ")");
    Header h;
    for (auto it = root.begin(); it != root.end(); ++it) {
      if (it.key() == "__metadata__") {
        h.metadata = parse_metadata(it.value());
      } else {
        h.entries.emplace(it.key(), parse_entry(it.key(), it.value()));
      }
    }
    check_ranges(h.entries);
    return h;
  }

 private:
  template <typename... Args>
  [[noreturn]] void fail(const Args&... args) const {
    HEARTH_THROW(IoError, "[safetensors] ", path_, ": ", args...);
  }

  json parse_json() {
    // The format caps headers at 100 MB; nesting bounds what parsing can cost.
    const std::string too_much = json_limits_problem(std::string_view(header_, header_len_), kMaxHeaderBytes);
    if (!too_much.empty()) fail("header: ", too_much);
    // A first pass without building anything: names given twice (the default
    // json object would keep the last silently), more entries than the data
    // can hold, more dimensions than a tensor may have. In linear time, so a
    // header of a million entries is refused or read in seconds.
    HeaderScan scan(max_entries());
    json::sax_parse(header_, header_ + header_len_, &scan, json::input_format_t::json, /*strict=*/true);
    if (!scan.problem.empty()) fail(scan.problem);
    json root;
    try {
      root = json::parse(header_, header_ + header_len_);
    } catch (const json::exception& e) {
      fail("header is not valid JSON: ", e.what());
    }
    return root;
  }

  // Each tensor with data holds at least one byte of the data region; tensors
  // with no element hold none, and a file may have a few of those.
  uint64_t max_entries() const { return data_len_ + kMaxEmptyTensors; }

  // The first pass over the header, as SAX events: it only counts and
  // compares, and stops at the first problem.
  struct HeaderScan {
    explicit HeaderScan(uint64_t max_entries) : max_entries(max_entries) {}
    uint64_t max_entries;
    std::string problem;
    int depth = 0;
    uint64_t entries = 0;
    std::unordered_set<std::string> names;
    std::vector<uint64_t> array_sizes;  // one per open array

    bool stop(std::string why) {
      problem = std::move(why);
      return false;
    }
    bool value() {
      if (array_sizes.empty()) return true;
      if (++array_sizes.back() > kMaxRank)
        return stop(detail::concat("an array of more than ", kMaxRank, " numbers (a shape has at most ", kMaxRank,
                                   " dimensions, data_offsets two)"));
      return true;
    }
    bool null() { return value(); }
    bool boolean(bool) { return value(); }
    bool number_integer(json::number_integer_t) { return value(); }
    bool number_unsigned(json::number_unsigned_t) { return value(); }
    bool number_float(json::number_float_t, const json::string_t&) { return value(); }
    bool string(json::string_t&) { return value(); }
    bool binary(json::binary_t&) { return value(); }
    bool start_object(std::size_t) {
      ++depth;
      return value();
    }
    bool end_object() {
      --depth;
      return true;
    }
    bool start_array(std::size_t) {
      if (!value()) return false;
      ++depth;
      array_sizes.push_back(0);
      return true;
    }
    bool end_array() {
      --depth;
      array_sizes.pop_back();
      return true;
    }
    bool key(json::string_t& name) {
      if (depth != 1) return true;
      if (!names.insert(name).second) return stop("duplicate tensor name '" + excerpt(name) + "' in the header");
      if (name != "__metadata__" && ++entries > max_entries)
        return stop(detail::concat("more than ", max_entries,
                                   " tensors, more than the data region can hold (each tensor with data takes at "
                                   "least one byte of it; at most ",
                                   kMaxEmptyTensors, " may be empty)"));
      return true;
    }
    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) {
      return stop(std::string("header is not valid JSON: ") + e.what());
    }
  };

  std::map<std::string, std::string> parse_metadata(const json& value) const {
    if (!value.is_object()) fail("__metadata__ must be an object of strings (found ", value.type_name(), ")");
    std::map<std::string, std::string> out;
    for (auto it = value.begin(); it != value.end(); ++it) {
      if (!it.value().is_string())
        fail("__metadata__ value for '", excerpt(it.key()), "' must be a string (found ", it.value().type_name(), ")");
      out[it.key()] = it.value().get<std::string>();
    }
    return out;
  }

  uint64_t unsigned_field(const std::string& name, const char* field, const json& v) const {
    if (!v.is_number_unsigned())
      fail("tensor '", excerpt(name), "': ", field, " must hold non-negative integers (found ", excerpt(v.dump()), ")");
    return v.get<uint64_t>();
  }

  SafetensorsEntry parse_entry(const std::string& name, const json& value) const {
    if (!value.is_object())
      fail("tensor '", excerpt(name), "' must be described by an object (found ", value.type_name(), ")");
    for (const char* field : {"dtype", "shape", "data_offsets"})
      if (!value.contains(field)) fail("tensor '", excerpt(name), "' has no \"", field, "\" field");
    SafetensorsEntry e;
    e.name = name;

    const json& dtype = value["dtype"];
    if (!dtype.is_string())
      fail("tensor '", excerpt(name), "': dtype must be a string (found ", excerpt(dtype.dump()), ")");
    if (!parse_safetensors_dtype(dtype.get<std::string>(), &e.dtype))
      fail("tensor '", excerpt(name), "' has unknown dtype '", excerpt(dtype.get<std::string>()),
           "' (supported: ", supported_dtype_list(), ")");

    const json& shape = value["shape"];
    if (!shape.is_array())
      fail("tensor '", excerpt(name), "': shape must be an array (found ", excerpt(shape.dump()), ")");
    uint64_t numel = 1;
    // The product with zeros counted as ones: strides and element counts are
    // int64 even for a tensor with no element.
    uint64_t extent = 1;
    bool overflow = false;
    for (const json& d : shape) {
      uint64_t size = unsigned_field(name, "shape", d);
      if (size > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) overflow = true;
      overflow |= __builtin_mul_overflow(numel, size, &numel);
      overflow |= __builtin_mul_overflow(extent, std::max<uint64_t>(size, 1), &extent);
      if (extent > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) overflow = true;
      e.shape.push_back(static_cast<int64_t>(size));
    }
    uint64_t nbytes = 0;
    overflow |= __builtin_mul_overflow(numel, static_cast<uint64_t>(itemsize(e.dtype)), &nbytes);
    if (overflow) fail("tensor '", excerpt(name), "': shape ", excerpt(shape.dump()), " is too large");

    const json& offsets = value["data_offsets"];
    if (!offsets.is_array() || offsets.size() != 2)
      fail("tensor '", excerpt(name), "': data_offsets must be [begin, end] (found ", excerpt(offsets.dump()), ")");
    e.begin = unsigned_field(name, "data_offsets", offsets[0]);
    e.end = unsigned_field(name, "data_offsets", offsets[1]);
    if (e.begin > e.end)
      fail("tensor '", excerpt(name), "': data_offsets [", e.begin, ", ", e.end, "] end before they begin");
    if (e.end - e.begin != nbytes)
      fail("tensor '", excerpt(name), "': data_offsets [", e.begin, ", ", e.end, "] span ", e.end - e.begin,
           " bytes but shape ", shape_str(e.shape), " of ", dtype.get<std::string>(), " needs ", nbytes);
    if (e.end > data_len_)
      fail("tensor '", excerpt(name), "': data_offsets [", e.begin, ", ", e.end, "] reach outside the data region of ",
           data_len_, " bytes");
    return e;
  }

  void check_ranges(const std::map<std::string, SafetensorsEntry>& entries) const {
    std::vector<const SafetensorsEntry*> by_offset;
    for (const auto& [name, e] : entries)
      if (e.end > e.begin) by_offset.push_back(&e);  // empty tensors occupy no bytes
    std::sort(by_offset.begin(), by_offset.end(),
              [](const SafetensorsEntry* a, const SafetensorsEntry* b) { return a->begin < b->begin; });
    for (size_t i = 1; i < by_offset.size(); ++i) {
      const SafetensorsEntry& prev = *by_offset[i - 1];
      const SafetensorsEntry& cur = *by_offset[i];
      if (cur.begin < prev.end)
        fail("tensors '", excerpt(prev.name), "' [", prev.begin, ", ", prev.end, ") and '", excerpt(cur.name), "' [",
             cur.begin, ", ", cur.end, ") overlap");
    }
    // Bytes after the last tensor belong to nothing: a corrupt or appended-to file.
    uint64_t last_end = 0;
    for (const auto& [name, e] : entries) last_end = std::max<uint64_t>(last_end, e.end);
    if (last_end < data_len_)
      fail(data_len_ - last_end, " trailing bytes after the last tensor's data (which ends at ", last_end,
           " of the data region's ", data_len_, " bytes)");
  }

  const std::string& path_;
  const char* header_;
  size_t header_len_;
  uint64_t data_len_;
};

}  // namespace

// ---- reading --------------------------------------------------------------------

SafetensorsFile::SafetensorsFile(const std::string& path) : path_(path), mapping_(std::make_shared<Mapping>()) {
  check_regular_file(path, "[safetensors]");
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) HEARTH_THROW(IoError, "[safetensors] ", path, ": cannot open: ", std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    HEARTH_THROW(IoError, "[safetensors] ", path, ": not a regular file");
  }
  size_t size = static_cast<size_t>(st.st_size);
  if (size < kLengthBytes) {
    ::close(fd);
    HEARTH_THROW(IoError, "[safetensors] ", path, ": file is ", size, " bytes, too short for the ", kLengthBytes,
                 "-byte header length");
  }
  // Private and writable: writes through a view() touch private copies of the
  // pages, never the file, and do not fault.
  void* addr = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  int err = errno;
  ::close(fd);
  if (addr == MAP_FAILED) HEARTH_THROW(IoError, "[safetensors] ", path, ": cannot map the file: ", std::strerror(err));
  mapping_->base = static_cast<const char*>(addr);
  mapping_->size = size;

  uint64_t header_len = 0;
  std::memcpy(&header_len, mapping_->base, kLengthBytes);
  if (header_len > size - kLengthBytes)
    HEARTH_THROW(IoError, "[safetensors] ", path, ": header length ", header_len, " reaches past the end of the file (",
                 size, " bytes)");
  data_start_ = kLengthBytes + header_len;
  uint64_t data_len = size - data_start_;
  Header h = HeaderParser(path, mapping_->base + kLengthBytes, header_len, data_len).parse();
  entries_ = std::move(h.entries);
  metadata_ = std::move(h.metadata);
}

SafetensorsFile::~SafetensorsFile() = default;
SafetensorsFile::SafetensorsFile(SafetensorsFile&&) noexcept = default;
SafetensorsFile& SafetensorsFile::operator=(SafetensorsFile&&) noexcept = default;

std::vector<std::string> SafetensorsFile::names() const {
  std::vector<std::string> out;
  out.reserve(entries_.size());
  for (const auto& [name, e] : entries_) out.push_back(name);
  return out;
}

const SafetensorsEntry& SafetensorsFile::entry(const std::string& name) const {
  auto it = entries_.find(name);
  if (it == entries_.end()) {
    std::string known;
    for (const auto& [n, e] : entries_) {
      if (known.size() > 200) {
        known += ", ...";
        break;
      }
      known += (known.empty() ? "" : ", ") + excerpt(n);
    }
    HEARTH_THROW(ValueError, "[safetensors] ", path_, ": no tensor named '", excerpt(name), "' (the file has ",
                 entries_.size(), ": ", known, ")");
  }
  return it->second;
}

Tensor SafetensorsFile::get(const std::string& name, Device device) const {
  const SafetensorsEntry& e = entry(name);
  const char* data = mapping_->base + data_start_ + e.begin;
  Tensor out = Tensor::empty(e.shape, e.dtype);
  size_t n = static_cast<size_t>(e.end - e.begin);
  if (e.dtype == DType::bool_) {
    // Any nonzero byte is true; a bool holding another bit pattern is undefined.
    uint8_t* dst = static_cast<uint8_t*>(out.data_ptr());
    for (size_t i = 0; i < n; ++i) dst[i] = data[i] != 0;
  } else if (n > 0) {
    std::memcpy(out.data_ptr(), data, n);
  }
  return device.is_cpu() ? out : out.to(device);
}

Tensor SafetensorsFile::view(const std::string& name) const {
  const SafetensorsEntry& e = entry(name);
  const char* data = mapping_->base + data_start_ + e.begin;
  size_t n = static_cast<size_t>(e.end - e.begin);
  bool aligned = reinterpret_cast<uintptr_t>(data) % itemsize(e.dtype) == 0;
  bool valid = true;
  if (e.dtype == DType::bool_)
    for (size_t i = 0; i < n && valid; ++i) valid = static_cast<uint8_t>(data[i]) <= 1;
  if (!aligned || !valid) return get(name);
  auto storage = std::make_shared<Storage>(const_cast<char*>(data), n, Device(),
                                           [keep = mapping_](void*) { /* the mapping dies with its last view */ });
  return Tensor::from_storage(std::move(storage), e.dtype, e.shape, contiguous_strides(e.shape), 0);
}

std::map<std::string, Tensor> load_safetensors(const std::string& path, Device device) {
  SafetensorsFile file(path);
  std::map<std::string, Tensor> out;
  for (const std::string& name : file.names()) out.emplace(name, file.get(name, device));
  return out;
}

// ---- writing ------------------------------------------------------------------------

void save_safetensors(const std::string& path, const std::map<std::string, Tensor>& tensors,
                      const std::map<std::string, std::string>& metadata) {
  struct Item {
    std::string name;
    Tensor tensor;
    uint64_t begin = 0;
    uint64_t end = 0;
  };
  std::vector<Item> items;
  items.reserve(tensors.size());
  for (const auto& [name, t] : tensors) {
    HEARTH_CHECK(name != "__metadata__", ValueError, "[safetensors] ", path,
                 ": '__metadata__' is reserved and cannot name a tensor");
    HEARTH_CHECK(t.defined(), ValueError, "[safetensors] ", path, ": tensor '", name, "' is undefined");
    Tensor host = t.detach();
    if (!host.device().is_cpu()) host = host.cpu();
    if (!host.is_contiguous()) host = host.contiguous();
    items.push_back({name, host});
  }
  // Largest itemsize first keeps each tensor aligned for its dtype (the data
  // region itself starts 8-byte aligned).
  std::stable_sort(items.begin(), items.end(),
                   [](const Item& a, const Item& b) { return a.tensor.element_size() > b.tensor.element_size(); });

  json header = json::object();
  uint64_t offset = 0;
  for (Item& item : items) {
    item.begin = offset;
    item.end = offset + item.tensor.nbytes();
    offset = item.end;
    header[item.name] = {{"dtype", safetensors_dtype_name(item.tensor.dtype())},
                         {"shape", item.tensor.shape()},
                         {"data_offsets", {item.begin, item.end}}};
  }
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');

  write_file_atomic(path, [&](AtomicFileWriter& w) {
    uint64_t len = text.size();
    w.write(&len, sizeof(len));
    w.write(text);
    for (const Item& item : items)
      if (item.tensor.nbytes() > 0) w.write(item.tensor.data_ptr(), item.tensor.nbytes());
  });
}

}  // namespace hearth::io
