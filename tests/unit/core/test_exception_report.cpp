// The one line a program's main prints for an exception nothing else caught.
#include <filesystem>
#include <new>
#include <string>

#include <gtest/gtest.h>

#include "hearth/core/errors.h"
#include "hearth/core/exception_report.h"
#include "hearth/core/tensor.h"

namespace hearth {
namespace {

std::string described(const std::function<void()>& thrower) {
  try {
    thrower();
  } catch (...) {
    return describe_current_exception();
  }
  return "nothing thrown";
}

TEST(ExceptionReport, EveryKindOfExceptionBecomesOneLine) {
  EXPECT_EQ(described([] { throw ValueError("[x] a.json: bad\nsecond line"); }), "[x] a.json: bad second line");
  EXPECT_NE(described([] {
              throw std::filesystem::filesystem_error("cannot rotate", std::error_code());
            }).find("cannot rotate"),
            std::string::npos);
  EXPECT_EQ(described([] { throw 42; }), "unknown exception");
  note_allocation_request(123456);
  EXPECT_EQ(described([] { throw std::bad_alloc(); }), "out of memory (std::bad_alloc) while allocating 123456 bytes");
  // A tensor allocated since clears it: the size named is never a stale one.
  (void)Tensor::empty({16});
  EXPECT_EQ(described([] { throw std::bad_alloc(); }), "out of memory (std::bad_alloc)");
}

TEST(ExceptionReport, RunReportingExceptionsReturnsOneOnAnyException) {
  EXPECT_EQ(run_reporting_exceptions("prog", [] { return 3; }), 3);
  EXPECT_EQ(run_reporting_exceptions("prog", []() -> int { throw std::bad_alloc(); }), 1);
  EXPECT_EQ(run_reporting_exceptions("prog", []() -> int { throw "a string"; }), 1);
}

}  // namespace
}  // namespace hearth
