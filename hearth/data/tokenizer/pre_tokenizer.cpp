#include "hearth/data/tokenizer/pre_tokenizer.h"

#include <algorithm>

#include "hearth/data/tokenizer/byte_level.h"
#include "hearth/data/tokenizer/utf8_lossy.h"

namespace hearth::data {

// Contractions, letters, digits, other symbols (each with an optional space in
// front), whitespace not followed by a non-space (so the last space before a
// word goes with the word), other whitespace.
const char* const kGpt2SplitPattern = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

namespace {

// `prefix` + `text`, built anew: GCC 12 warns (wrongly) about insert(0, ...).
void prepend(std::string& text, std::string_view prefix) {
  std::string out;
  out.reserve(prefix.size() + text.size());
  out.append(prefix).append(text);
  text = std::move(out);
}

struct Range {
  size_t begin, end;
};

// The ranges `behavior` keeps, from the spans, as Hugging Face's NormalizedString::split computes them.
std::vector<Range> kept_ranges(const std::vector<PatternSpan>& spans, SplitBehavior behavior) {
  std::vector<Range> out;
  switch (behavior) {
    case SplitBehavior::isolated:
      for (const PatternSpan& s : spans) out.push_back({s.begin, s.end});
      break;
    case SplitBehavior::removed:
      for (const PatternSpan& s : spans)
        if (!s.is_match) out.push_back({s.begin, s.end});
      break;
    case SplitBehavior::contiguous: {
      // Runs of spans alike (all matches or all gaps) become one piece.
      bool previous_match = false;
      for (const PatternSpan& s : spans) {
        if (s.is_match == previous_match && !out.empty()) {
          out.back().end = s.end;
        } else {
          out.push_back({s.begin, s.end});
        }
        previous_match = s.is_match;
      }
      break;
    }
    case SplitBehavior::merged_with_previous: {
      // A match joins the piece before it, unless that piece was a match too.
      bool previous_match = false;
      for (const PatternSpan& s : spans) {
        if (s.is_match && !previous_match && !out.empty()) {
          out.back().end = s.end;
        } else {
          out.push_back({s.begin, s.end});
        }
        previous_match = s.is_match;
      }
      break;
    }
    case SplitBehavior::merged_with_next: {
      // The mirror image: walk from the end, a match joins the piece after it.
      bool previous_match = false;
      for (auto it = spans.rbegin(); it != spans.rend(); ++it) {
        if (it->is_match && !previous_match && !out.empty()) {
          out.back().begin = it->begin;
        } else {
          out.push_back({it->begin, it->end});
        }
        previous_match = it->is_match;
      }
      std::reverse(out.begin(), out.end());
      break;
    }
  }
  return out;
}

}  // namespace

void split_piece(const TextPiece& piece, const std::vector<PatternSpan>& spans, SplitBehavior behavior,
                 std::vector<TextPiece>& out) {
  for (const Range& r : kept_ranges(spans, behavior)) {
    if (r.end == r.begin) continue;
    out.push_back({piece.text.substr(r.begin, r.end - r.begin), piece.starts_input && r.begin == 0});
  }
}

ByteLevelPreTokenizer::ByteLevelPreTokenizer(bool add_prefix_space, bool use_regex)
    : add_prefix_space_(add_prefix_space),
      use_regex_(use_regex),
      gpt2_(SplitPattern::regex(kGpt2SplitPattern, "[tokenizer] GPT-2's split pattern")) {}

void ByteLevelPreTokenizer::apply(std::vector<TextPiece>& pieces) const {
  std::vector<TextPiece> split;
  split.reserve(pieces.size());
  for (TextPiece& piece : pieces) {
    if (add_prefix_space_ && !piece.text.empty() && piece.text.front() != ' ') prepend(piece.text, " ");
    if (use_regex_) {
      split_piece(piece, gpt2_.find_matches(piece.text), SplitBehavior::isolated, split);
    } else if (!piece.text.empty()) {
      split.push_back(std::move(piece));
    }
  }
  for (TextPiece& piece : split) piece.text = byte_level::encode(piece.text);
  pieces = std::move(split);
}

void SplitPreTokenizer::apply(std::vector<TextPiece>& pieces) const {
  std::vector<TextPiece> split;
  split.reserve(pieces.size());
  for (const TextPiece& piece : pieces) {
    std::vector<PatternSpan> spans = pattern_.find_matches(piece.text);
    if (invert_)
      for (PatternSpan& s : spans) s.is_match = !s.is_match;
    split_piece(piece, spans, behavior_, split);
  }
  pieces = std::move(split);
}

MetaspacePreTokenizer::MetaspacePreTokenizer(char32_t replacement, PrependScheme scheme, bool split)
    : scheme_(scheme), split_(split) {
  utf8::append_code_point(replacement, replacement_);
}

void MetaspacePreTokenizer::apply(std::vector<TextPiece>& pieces) const {
  std::vector<TextPiece> split;
  split.reserve(pieces.size());
  for (TextPiece& piece : pieces) {
    std::string replaced;
    replaced.reserve(piece.text.size());
    for (char c : piece.text) {
      if (c == ' ') {
        replaced.append(replacement_);
      } else {
        replaced.push_back(c);
      }
    }
    const bool starts_with_replacement = replaced.compare(0, replacement_.size(), replacement_) == 0;
    const bool prepend_replacement =
        !replaced.empty() && !starts_with_replacement &&
        (scheme_ == PrependScheme::always || (scheme_ == PrependScheme::first && piece.starts_input));
    if (prepend_replacement) prepend(replaced, replacement_);
    TextPiece rewritten{std::move(replaced), piece.starts_input};
    if (!split_) {
      if (!rewritten.text.empty()) split.push_back(std::move(rewritten));
      continue;
    }
    // Each replacement character is a match of its own (a one-character pattern).
    std::vector<PatternSpan> spans;
    size_t gap = 0;
    const std::string& t = rewritten.text;
    for (size_t at = t.find(replacement_); at != std::string::npos;
         at = t.find(replacement_, at + replacement_.size())) {
      if (at > gap) spans.push_back({gap, at, false});
      spans.push_back({at, at + replacement_.size(), true});
      gap = at + replacement_.size();
    }
    if (gap < t.size()) spans.push_back({gap, t.size(), false});
    split_piece(rewritten, spans, SplitBehavior::merged_with_next, split);
  }
  pieces = std::move(split);
}

void PreTokenizerSequence::apply(std::vector<TextPiece>& pieces) const {
  for (const auto& step : steps_) step->apply(pieces);
}

}  // namespace hearth::data
