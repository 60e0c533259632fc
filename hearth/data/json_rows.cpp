#include "hearth/data/json_rows.h"

#include <filesystem>
#include <fstream>

#include "hearth/core/errors.h"
#include "hearth/io/file_checks.h"
#include "hearth/io/json_limits.h"

namespace hearth::data {

std::ifstream open_data_file(const std::string& path, const std::string& component) {
  HEARTH_CHECK(std::filesystem::exists(path), IoError, component, " cannot read '", path, "': no such file");
  io::check_regular_file(path, component);
  std::ifstream in(path, std::ios::binary);
  HEARTH_CHECK(in.good(), IoError, component, " cannot read '", path, "'");
  return in;
}

void for_each_json_row(const std::string& path, const std::string& component,
                       const std::function<void(const nlohmann::ordered_json& value, int64_t where)>& row) {
  using json = nlohmann::ordered_json;
  std::ifstream in = open_data_file(path, component);
  char c = 0;
  while (in.get(c) && (c == ' ' || c == '\t' || c == '\r' || c == '\n')) {
  }
  if (in && c == '[') {
    in.unget();
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    io::check_json_limits(text, component + " " + path, text.size());
    const json all = json::parse(text, nullptr, false);
    HEARTH_CHECK(!all.is_discarded() && all.is_array(), ValueError, component, " ", path, ": not valid JSON");
    text.clear();
    text.shrink_to_fit();
    int64_t n = 0;
    for (const json& value : all) row(value, ++n);
    return;
  }
  in.clear();
  in.seekg(0);
  int64_t line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    io::check_json_limits(line, component + " " + path + ":" + std::to_string(line_no), line.size());
    const json value = json::parse(line, nullptr, false);
    HEARTH_CHECK(!value.is_discarded(), ValueError, component, " ", path, ":", line_no, ": not a valid JSON line");
    row(value, line_no);
  }
}

}  // namespace hearth::data
