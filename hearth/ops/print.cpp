// Tensor::to_string and operator<<: PyTorch's printout, so values can be read
// side by side with torch. The same options as torch's defaults: 4 decimals,
// 80 columns, summaries ("...") above 1000 elements showing 3 items per edge.
// Floats print in one shared style per tensor: integers with a trailing '.'
// when all values are whole, fixed-point otherwise, scientific when the
// magnitudes span more than 1000x or leave [1e-4, 1e8].
#include <cmath>
#include <cstdio>
#include <ostream>
#include <string>
#include <vector>

#include "hearth/autograd/node.h"
#include "hearth/core/tensor.h"

namespace hearth {
namespace {

constexpr int kPrecision = 4;
constexpr int kLineWidth = 80;
constexpr int64_t kEdgeItems = 3;
constexpr int64_t kThreshold = 1000;

enum class Kind { floating, integer, boolean };

std::string printf_double(const char* fmt, int width, double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), fmt, width, kPrecision, v);
  return buf;
}

std::string pad_left(const std::string& s, size_t width) {
  return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}

// Host copies of the values in row-major order, as double or int64.
struct Values {
  Kind kind;
  std::vector<double> f;
  std::vector<int64_t> i;
};

class Formatter {
 public:
  Formatter(const Values& v, const std::vector<int64_t>& shown) : kind_(v.kind) {
    if (kind_ != Kind::floating) {
      for (int64_t k : shown) width_ = std::max(width_, raw(v, k).size());
      return;
    }
    std::vector<double> vals;
    for (int64_t k : shown)
      if (std::isfinite(v.f[k]) && v.f[k] != 0) vals.push_back(v.f[k]);
    if (vals.empty()) return;
    double lo = std::abs(vals[0]), hi = lo;
    for (double x : vals) {
      lo = std::min(lo, std::abs(x));
      hi = std::max(hi, std::abs(x));
      if (x != std::ceil(x)) int_mode_ = false;
    }
    sci_mode_ = hi / lo > 1000.0 || hi > 1.0e8 || (!int_mode_ && lo < 1.0e-4);
    for (double x : vals) {
      size_t len = sci_mode_ ? printf_double("%*.*e", 0, x).size()
                             : (int_mode_ ? whole(x).size() + 1 : printf_double("%*.*f", 0, x).size());
      width_ = std::max(width_, len);
    }
  }

  size_t width() const { return width_; }

  std::string format(const Values& v, int64_t k) const {
    if (kind_ != Kind::floating) return pad_left(raw(v, k), width_);
    double x = v.f[k];
    std::string s;
    if (std::isnan(x))
      s = "nan";
    else if (std::isinf(x))
      s = x > 0 ? "inf" : "-inf";
    else if (sci_mode_)
      s = printf_double("%*.*e", 0, x);
    else if (int_mode_)
      s = whole(x) + ".";
    else
      s = printf_double("%*.*f", 0, x);
    return pad_left(s, width_);
  }

 private:
  // x without decimals; the printout adds a '.' to show the dtype is floating.
  static std::string whole(double x) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%.0f", x);
    return buf;
  }
  std::string raw(const Values& v, int64_t k) const {
    if (kind_ == Kind::boolean) return v.i[k] ? "True" : "False";
    return std::to_string(v.i[k]);
  }

  Kind kind_;
  bool int_mode_ = true;
  bool sci_mode_ = false;
  size_t width_ = 1;
};

// Walks the elements a printout shows: all of them, or with `summarize` the
// first and last kEdgeItems of every dimension longer than 2 * kEdgeItems.
class Printer {
 public:
  Printer(const Shape& shape, bool summarize)
      : shape_(shape), strides_(contiguous_strides(shape)), summarize_(summarize) {}

  std::vector<int64_t> shown_offsets() const {
    std::vector<int64_t> out;
    collect(0, 0, out);
    return out;
  }

  std::string render(const Formatter& f, const Values& v, size_t dim, int64_t offset, int indent) const {
    if (shape_.empty()) return f.format(v, offset);
    const int64_t n = shape_[dim];
    const bool cut = summarize_ && n > 2 * kEdgeItems;
    std::vector<std::string> items;
    if (dim + 1 == shape_.size()) {
      for (int64_t k = 0; k < n; ++k) {
        if (cut && k == kEdgeItems) {
          items.push_back(" ...");
          k = n - kEdgeItems;
        }
        items.push_back(f.format(v, offset + k * strides_[dim]));
      }
      const int64_t per_line = std::max<int64_t>(1, (kLineWidth - indent) / static_cast<int64_t>(f.width() + 2));
      std::string s = "[";
      for (size_t k = 0; k < items.size(); ++k) {
        if (k > 0 && static_cast<int64_t>(k) % per_line == 0) {
          s += ",\n";
          s.append(indent + 1, ' ');
        } else if (k > 0) {
          s += ", ";
        }
        s += items[k];
      }
      return s + "]";
    }
    for (int64_t k = 0; k < n; ++k) {
      if (cut && k == kEdgeItems) {
        items.push_back("...");
        k = n - kEdgeItems;
      }
      items.push_back(render(f, v, dim + 1, offset + k * strides_[dim], indent + 1));
    }
    std::string sep(1, ',');
    sep.append(shape_.size() - dim - 1, '\n');
    sep.append(indent + 1, ' ');
    std::string s = "[";
    for (size_t k = 0; k < items.size(); ++k) s += (k ? sep : "") + items[k];
    return s + "]";
  }

 private:
  void collect(size_t dim, int64_t offset, std::vector<int64_t>& out) const {
    if (dim == shape_.size()) {
      out.push_back(offset);
      return;
    }
    const int64_t n = shape_[dim];
    const bool cut = summarize_ && n > 2 * kEdgeItems;
    for (int64_t k = 0; k < n; ++k) {
      if (cut && k == kEdgeItems) k = n - kEdgeItems;
      collect(dim + 1, offset + k * strides_[dim], out);
    }
  }

  Shape shape_;
  Strides strides_;
  bool summarize_;
};

std::string tuple_str(const Shape& s) {
  std::string r = "(";
  for (size_t k = 0; k < s.size(); ++k) r += (k ? ", " : "") + std::to_string(s[k]);
  return r + (s.size() == 1 ? ",)" : ")");
}

// Suffixes go on the same line while it stays within 80 columns.
std::string add_suffixes(const std::string& body, const std::vector<std::string>& suffixes, int indent) {
  std::string s = body;
  size_t nl = body.rfind('\n');
  // Counted as PyTorch counts it (two more than the last line's length).
  size_t last = nl == std::string::npos ? body.size() + 2 : body.size() - nl + 1;
  for (const std::string& suf : suffixes) {
    if (last + suf.size() + 2 > static_cast<size_t>(kLineWidth)) {
      s += ",\n";
      s.append(indent, ' ');
      s += suf;
      last = indent + suf.size();
    } else {
      s += ", " + suf;
      last += suf.size() + 2;
    }
  }
  return s + ")";
}

}  // namespace

std::string Tensor::to_string() const {
  if (!defined()) return "tensor(undefined)";
  const std::string prefix = "tensor(";
  const int indent = static_cast<int>(prefix.size());
  std::vector<std::string> suffixes;
  if (!device().is_cpu()) suffixes.push_back("device='" + device().str() + "'");
  std::string body;
  if (numel() == 0) {
    body = "[]";
    if (dim() != 1) suffixes.push_back("size=" + tuple_str(shape()));
    if (dtype() != DType::float32) suffixes.push_back(std::string("dtype=") + dtype_name(dtype()));
  } else {
    if (dtype() != DType::float32 && dtype() != DType::int64 && dtype() != DType::bool_)
      suffixes.push_back(std::string("dtype=") + dtype_name(dtype()));
    Values v;
    Tensor plain = detach();
    if (is_floating(dtype())) {
      v.kind = Kind::floating;
      v.f = plain.to_vector<double>();
    } else {
      v.kind = dtype() == DType::bool_ ? Kind::boolean : Kind::integer;
      v.i = plain.to_vector<int64_t>();
    }
    Printer printer(shape(), numel() > kThreshold);
    Formatter formatter(v, printer.shown_offsets());
    body = printer.render(formatter, v, 0, 0, indent);
  }
  if (grad_fn())
    suffixes.push_back("grad_fn=<" + grad_fn()->name() + ">");
  else if (requires_grad())
    suffixes.push_back("requires_grad=True");
  return add_suffixes(prefix + body, suffixes, indent);
}

std::ostream& operator<<(std::ostream& os, const Tensor& t) { return os << t.to_string(); }

}  // namespace hearth
