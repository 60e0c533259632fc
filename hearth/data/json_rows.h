// The objects of a JSON data file, one at a time: JSON lines (one object a
// line, blank lines skipped), or one JSON array of objects. JSON lines are
// parsed a line at a time, so memory follows the longest line rather than the
// file; an array is one document and is parsed whole. Every line or document
// is checked against hearth's JSON limits (hearth/io/json_limits.h) first.
#pragma once

#include <cstdint>
#include <fstream>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

namespace hearth::data {

// `path` opened for reading, after the checks every data file gets: it
// exists, and it is a regular file (a FIFO or a folder is named as such and
// never waited on). `component` ("[glue]") starts the messages.
std::ifstream open_data_file(const std::string& path, const std::string& component);

// Calls `row(value, where)` for each value: `where` is the line number in a
// JSON-lines file, the 1-based position in an array. `component` ("[glue]")
// starts the messages, which name the file and the line. The values are not
// checked to be objects: the caller names what it expected.
void for_each_json_row(const std::string& path, const std::string& component,
                       const std::function<void(const nlohmann::ordered_json& value, int64_t where)>& row);

}  // namespace hearth::data
