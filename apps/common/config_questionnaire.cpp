#include "apps/common/config_questionnaire.h"

#include <istream>
#include <ostream>

#include "hearth/core/errors.h"

namespace hearth::cli {
namespace {

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

}  // namespace

UserConfig ask_user_config(std::istream& in, std::ostream& out, const UserConfig& start, bool echo_answers) {
  UserConfig config = start;
  bool input_ended = false;
  for (const UserConfigSetting& s : user_config_settings()) {
    while (true) {
      out << s.question << " [" << s.get(config) << "]: ";
      out.flush();
      std::string line;
      if (input_ended || !std::getline(in, line)) {
        if (!input_ended) out << "\n(end of input: keeping " << s.get(config) << " and the values shown from here on)";
        out << "\n";
        input_ended = true;
        break;
      }
      std::string answer = trim(line);
      if (echo_answers) out << answer << "\n";
      if (answer.empty()) break;
      try {
        s.set(config, answer, s.key);
        break;
      } catch (const ValueError&) {
        // Asked again: a typo should not cost the answers already given.
        out << "  \"" << answer << "\" is not valid for " << s.key << ": expected " << s.allowed << ".\n";
      }
    }
  }
  return config;
}

}  // namespace hearth::cli
