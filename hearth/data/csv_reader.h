// Reading delimited text (CSV, TSV) into rows of string fields.
//
// Quoting follows RFC 4180 and Python's csv module: a field that starts with
// the quote character runs to the matching quote, may hold delimiters and line
// breaks, and writes a quote as two. Every record must have as many fields as
// the first (the header, when there is one). Errors are IoError
// "[csv] <file>:<line>: <problem>".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace hearth::data {

// A field longer than this is cut to it (at a UTF-8 character boundary):
// text is tokenized to a few hundred tokens at most, and tokenizing costs tens
// of bytes of memory per byte of text, so a field of 200 MB cost gigabytes.
inline constexpr size_t kMaxFieldBytes = size_t{1} << 20;

// Cuts `text` to at most `max_bytes`, never inside a UTF-8 character.
// Returns whether anything was cut.
bool truncate_utf8(std::string& text, size_t max_bytes);

struct CsvOptions {
  char delimiter = ',';
  // '\0' turns quoting off: quotes are ordinary characters. GLUE's TSV files
  // need this, as their sentences hold unbalanced quotes.
  char quote = '"';
  // The first record names the columns.
  bool header = true;
  // false: every record is one line, so a quoted field that runs past the end
  // of its line (an unbalanced quote) is an error naming that line instead of
  // merging the lines after it into one record.
  bool multiline_fields = true;
  // Longer fields are cut to this many bytes (see kMaxFieldBytes).
  size_t max_field_bytes = kMaxFieldBytes;
};

struct CsvTable {
  std::string source;                          // the file name, for messages
  std::vector<std::string> columns;            // empty without a header
  std::vector<std::vector<std::string>> rows;  // the records after the header
  std::vector<int64_t> row_lines;              // the line each row starts on (1-based)
  int64_t truncated_fields = 0;                // fields cut to CsvOptions::max_field_bytes

  size_t num_rows() const { return rows.size(); }
  // Index of a named column; IoError naming the file and the columns there are.
  size_t column(const std::string& name) const;
  const std::string& cell(size_t row, const std::string& column_name) const {
    return rows.at(row).at(column(column_name));
  }
};

CsvTable read_csv(const std::string& path, const CsvOptions& options = {});
// Parses text already in memory; `source` names it in error messages.
CsvTable parse_csv(std::string_view text, const CsvOptions& options = {}, const std::string& source = "<text>");

}  // namespace hearth::data
