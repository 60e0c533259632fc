// The few exception types hearth throws. Every message starts with the op or
// component in brackets ("[conv2d] ...") and names what was expected and found.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace hearth {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
class ValueError : public Error {
 public:
  using Error::Error;
};
class ShapeError : public Error {
 public:
  using Error::Error;
};
class TypeError : public Error {
 public:
  using Error::Error;
};
class DeviceError : public Error {
 public:
  using Error::Error;
};
class NotImplementedError : public Error {
 public:
  using Error::Error;
};
class OutOfMemoryError : public Error {
 public:
  using Error::Error;
};
class IoError : public Error {
 public:
  using Error::Error;
};
class AutogradError : public Error {
 public:
  using Error::Error;
};

namespace detail {
template <typename... Args>
std::string concat(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}
}  // namespace detail

}  // namespace hearth

// HEARTH_CHECK(cond, ErrorType, "[op] message parts", ...): throws ErrorType with
// the concatenated message when cond is false.
#define HEARTH_CHECK(cond, ErrorType, ...)                         \
  do {                                                             \
    if (!(cond)) throw ErrorType(::hearth::detail::concat(__VA_ARGS__)); \
  } while (0)

#define HEARTH_THROW(ErrorType, ...) throw ErrorType(::hearth::detail::concat(__VA_ARGS__))
