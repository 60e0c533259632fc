#include "hearth/data/tokenizer/text_normalizer.h"

#include <algorithm>
#include <cstdlib>
#include <memory>

#include <utf8proc.h>

#include "hearth/core/errors.h"

namespace hearth::data {

bool PrependNormalizer::apply(std::string& text, size_t max_bytes) const {
  if (text.empty()) return true;
  if (prefix_.size() + text.size() > max_bytes) return false;
  // Built anew: GCC 12 warns (wrongly) about insert(0, ...).
  std::string out;
  out.reserve(prefix_.size() + text.size());
  out.append(prefix_).append(text);
  text = std::move(out);
  return true;
}

bool replace_matches(const SplitPattern& pattern, const std::string& text, const std::string& content,
                     size_t max_bytes, std::string& out) {
  out.clear();
  out.reserve(std::min(text.size(), max_bytes));
  for (const PatternSpan& s : pattern.find_matches(text)) {
    const size_t added = s.is_match ? content.size() : s.end - s.begin;
    if (out.size() + added > max_bytes) return false;
    if (s.is_match) {
      out.append(content);
    } else {
      out.append(text, s.begin, s.end - s.begin);
    }
  }
  return true;
}

bool ReplaceNormalizer::apply(std::string& text, size_t max_bytes) const {
  std::string out;
  if (!replace_matches(pattern_, text, content_, max_bytes, out)) return false;
  text = std::move(out);
  return true;
}

bool UnicodeNormalizer::apply(std::string& text, size_t max_bytes) const {
  int options = UTF8PROC_STABLE;
  switch (form_) {
    case UnicodeForm::nfc:
      options |= UTF8PROC_COMPOSE;
      break;
    case UnicodeForm::nfd:
      options |= UTF8PROC_DECOMPOSE;
      break;
    case UnicodeForm::nfkc:
      options |= UTF8PROC_COMPOSE | UTF8PROC_COMPAT;
      break;
    case UnicodeForm::nfkd:
      options |= UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT;
      break;
  }
  utf8proc_uint8_t* out = nullptr;
  const utf8proc_ssize_t n =
      utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(text.data()), static_cast<utf8proc_ssize_t>(text.size()),
                   &out, static_cast<utf8proc_option_t>(options));
  HEARTH_CHECK(n >= 0, ValueError, "[tokenizer] Unicode normalisation failed: ", utf8proc_errmsg(n));
  std::unique_ptr<utf8proc_uint8_t, decltype(&std::free)> owned(out, &std::free);
  if (static_cast<size_t>(n) > max_bytes) return false;
  text.assign(reinterpret_cast<const char*>(out), static_cast<size_t>(n));
  return true;
}

bool NormalizerSequence::apply(std::string& text, size_t max_bytes) const {
  for (const auto& step : steps_)
    if (!step->apply(text, max_bytes)) return false;
  return true;
}

}  // namespace hearth::data
