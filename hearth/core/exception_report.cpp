#include "hearth/core/exception_report.h"

#include <exception>
#include <iostream>
#include <new>
#include <sstream>

namespace hearth {
namespace {
thread_local size_t last_request = 0;
}  // namespace

void note_allocation_request(size_t bytes) { last_request = bytes; }

std::string describe_current_exception() {
  try {
    throw;
  } catch (const std::bad_alloc& e) {
    std::ostringstream os;
    os << "out of memory (" << e.what() << ")";
    if (last_request > 0) os << " while allocating " << last_request << " bytes";
    return os.str();
  } catch (const std::exception& e) {
    std::string s = e.what();
    for (char& c : s)
      if (c == '\n') c = ' ';
    return s;
  } catch (...) {
    return "unknown exception";
  }
}

int run_reporting_exceptions(const char* program, const std::function<int()>& body) {
  try {
    return body();
  } catch (...) {
    std::cerr << program << ": error: " << describe_current_exception() << "\n";
    return 1;
  }
}

}  // namespace hearth
