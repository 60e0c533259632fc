// What a program's main prints for an exception nothing else caught.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

namespace hearth {

// One line describing the exception being handled (call it inside a catch
// block): its what(); for std::bad_alloc "out of memory" and, when hearth
// knows it, how many bytes were asked for; for a non-standard exception
// "unknown exception".
std::string describe_current_exception();

// Records the size of an allocation about to be attempted, for the message
// of a std::bad_alloc it throws; 0 once it succeeded.
void note_allocation_request(size_t bytes);

// Runs `body` and returns its exit status; an exception escaping it prints
// "<program>: error: <describe_current_exception()>" on stderr and gives 1.
int run_reporting_exceptions(const char* program, const std::function<int()>& body);

}  // namespace hearth
