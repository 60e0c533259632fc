#include "hearth/data/csv_reader.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "hearth/core/errors.h"
#include "hearth/io/file_checks.h"

namespace hearth::data {

size_t CsvTable::column(const std::string& name) const {
  for (size_t i = 0; i < columns.size(); ++i)
    if (columns[i] == name) return i;
  std::string known;
  for (const std::string& c : columns) known += (known.empty() ? "'" : ", '") + c + "'";
  HEARTH_THROW(IoError, "[csv] ", source, ": no column named '", name,
               "' (columns: ", known.empty() ? "none, the table has no header" : known, ")");
}

bool truncate_utf8(std::string& text, size_t max_bytes) {
  if (text.size() <= max_bytes) return false;
  size_t cut = max_bytes;
  // Back over continuation bytes (10xxxxxx) to the start of the character.
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  text.resize(cut);
  return true;
}

namespace {

class Parser {
 public:
  Parser(std::string_view text, const CsvOptions& options, const std::string& source)
      : text_(text), opt_(options), table_{source, {}, {}, {}} {
    // A UTF-8 byte order mark is not part of the first column's name.
    if (text_.substr(0, 3) == "\xEF\xBB\xBF") text_.remove_prefix(3);
  }

  CsvTable run() {
    for (size_t i = 0; i < text_.size(); ++i) {
      char c = text_[i];
      if (in_quotes_) {
        if (c == opt_.quote) {
          if (i + 1 < text_.size() && text_[i + 1] == opt_.quote) {
            add(c);
            ++i;
          } else {
            in_quotes_ = false;
            after_quote_ = true;
          }
        } else {
          if (c == '\n') {
            if (!opt_.multiline_fields)
              fail(quote_line_,
                   "a quoted field opened on this line runs past its end (an unbalanced quote?); "
                   "every row of this file is one line");
            ++line_;
          }
          add(c);
        }
        continue;
      }
      if (c == opt_.delimiter) {
        finish_field();
        record_.push_back(std::move(field_));
        field_.clear();
        after_quote_ = false;
        has_content_ = true;
      } else if (c == '\n' || (c == '\r' && i + 1 < text_.size() && text_[i + 1] == '\n')) {
        if (c == '\r') ++i;
        end_record();
        ++line_;
        record_line_ = line_;
      } else if (after_quote_) {
        fail(line_, "unexpected character '", c,
             "' after a closing quote (a quote inside a quoted field is written as two)");
      } else if (opt_.quote != '\0' && c == opt_.quote && field_.empty()) {
        in_quotes_ = true;
        has_content_ = true;
        quote_line_ = line_;
      } else {
        add(c);
        has_content_ = true;
      }
    }
    if (in_quotes_) fail(quote_line_, "a quoted field opened here is never closed");
    end_record();
    return std::move(table_);
  }

 private:
  template <typename... Args>
  [[noreturn]] void fail(int64_t line, const Args&... args) const {
    HEARTH_THROW(IoError, "[csv] ", table_.source, ":", line, ": ", args...);
  }

  // Keeps a field's first max_field_bytes (and up to 3 more, so the cut can
  // fall on a character boundary); the rest is dropped as it is read.
  void add(char c) {
    if (field_.size() < opt_.max_field_bytes + 3)
      field_ += c;
    else
      field_cut_ = true;
  }

  void finish_field() {
    if (truncate_utf8(field_, opt_.max_field_bytes) || field_cut_) ++table_.truncated_fields;
    field_cut_ = false;
  }

  void end_record() {
    if (!has_content_ && field_.empty()) return;  // blank line
    finish_field();
    record_.push_back(std::move(field_));
    field_.clear();
    after_quote_ = false;
    has_content_ = false;
    if (expected_fields_ == 0) {
      expected_fields_ = record_.size();
    } else if (record_.size() != expected_fields_) {
      fail(record_line_, "expected ", expected_fields_, " fields (as in ", opt_.header ? "the header" : "the first row",
           "), found ", record_.size());
    }
    if (opt_.header && table_.columns.empty()) {
      table_.columns = std::move(record_);
    } else {
      table_.rows.push_back(std::move(record_));
      table_.row_lines.push_back(record_line_);
    }
    record_.clear();
  }

  std::string_view text_;
  const CsvOptions& opt_;
  CsvTable table_;
  std::vector<std::string> record_;
  std::string field_;
  size_t expected_fields_ = 0;
  int64_t line_ = 1;
  int64_t record_line_ = 1;
  int64_t quote_line_ = 1;
  bool in_quotes_ = false;
  bool after_quote_ = false;
  bool has_content_ = false;
  bool field_cut_ = false;
};

}  // namespace

CsvTable parse_csv(std::string_view text, const CsvOptions& options, const std::string& source) {
  HEARTH_CHECK(options.delimiter != '\n' && options.delimiter != '\r' && options.delimiter != '\0', ValueError,
               "[csv] the delimiter cannot be a line break or NUL");
  HEARTH_CHECK(options.quote != options.delimiter, ValueError, "[csv] the quote and the delimiter must differ");
  return Parser(text, options, source).run();
}

CsvTable read_csv(const std::string& path, const CsvOptions& options) {
  io::check_regular_file(path, "[csv]");
  std::ifstream in(path, std::ios::binary);
  if (!in) HEARTH_THROW(IoError, "[csv] ", path, ": cannot open: ", std::strerror(errno));
  // Read into one string of the file's size (a string stream held two copies).
  std::string text;
  char chunk[1 << 16];
  while (in.read(chunk, sizeof chunk) || in.gcount() > 0) text.append(chunk, static_cast<size_t>(in.gcount()));
  if (in.bad()) HEARTH_THROW(IoError, "[csv] ", path, ": read failed");
  return parse_csv(text, options, path);
}

}  // namespace hearth::data
