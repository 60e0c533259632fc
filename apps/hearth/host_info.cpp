#include "apps/hearth/host_info.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

#include <sys/utsname.h>

namespace hearth::cli {
namespace {

// The value of `key` in a file of key=value lines (os-release), quotes removed.
std::string os_release_value(const std::string& key) {
  std::ifstream in("/etc/os-release");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(key + "=", 0) != 0) continue;
    std::string v = line.substr(key.size() + 1);
    if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
    return v;
  }
  return {};
}

}  // namespace

std::string operating_system() {
  std::string out = os_release_value("PRETTY_NAME");
  struct utsname u {};
  if (::uname(&u) == 0) {
    if (!out.empty()) out += ", ";
    out += std::string(u.sysname) + " " + u.release + " " + u.machine;
  }
  return out.empty() ? "unknown" : out;
}

std::string physical_memory() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page_size = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_size <= 0) return "unknown";
  const double gib = static_cast<double>(pages) * static_cast<double>(page_size) / (1024.0 * 1024.0 * 1024.0);
  char text[32];
  std::snprintf(text, sizeof text, "%.1f GiB", gib);
  return text;
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string model;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) != 0) continue;
    const size_t colon = line.find(':');
    if (colon != std::string::npos) model = line.substr(line.find_first_not_of(' ', colon + 1));
    break;
  }
  if (model.empty()) return "unknown";
  std::ostringstream os;
  os << model << ", " << std::thread::hardware_concurrency() << " processors";
  return os.str();
}

}  // namespace hearth::cli
