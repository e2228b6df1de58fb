// Errors of embscale and the EMBSCALE_EXPECTS precondition macro.
//
// Two kinds of failure, told apart by type because they end a run differently:
//   * InputError: the user's input is wrong (a config field, a file, an output path). The message
//     names the place (JSON path, file, line) and says what was expected and what came. The CLI
//     exits with code 2 (kExitBadInput).
//   * Error: anything else (a broken invariant, an MPI or HDF5 failure). Exit code 1.
#pragma once

#include <stdexcept>
#include <string>

namespace embscale {

inline constexpr int kExitFailure = 1;
inline constexpr int kExitBadInput = 2;

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
  virtual int exit_code() const noexcept { return kExitFailure; }
};

class InputError : public Error {
 public:
  explicit InputError(const std::string& what) : Error(what) {}
  int exit_code() const noexcept override { return kExitBadInput; }
};

// Runs `check`; an InputError it throws is thrown again as "<where>: <message>" (a config file's
// path, so that a field's error names the file as a parse error does).
template <class Check> void naming_input(const std::string& where, Check&& check) {
  try {
    check();
  } catch (const InputError& e) {
    throw InputError(where + ": " + e.what());
  }
}

namespace detail {
// file and line rather than std::source_location: clang 14 (the sanitizer and fuzzer trees)
// cannot compile libstdc++ 12's std::source_location.
[[noreturn]] void throw_expects_failure(const char* condition, const std::string& message, const char* file, int line);
}  // namespace detail

}  // namespace embscale

// Checks a precondition or invariant; on failure throws embscale::Error naming the condition,
// the reason and file:line. Active in every build type: these guard logic, not hot loops.
#define EMBSCALE_EXPECTS(cond, msg)                                                \
  do {                                                                             \
    if (!(cond)) [[unlikely]]                                                      \
      ::embscale::detail::throw_expects_failure(#cond, (msg), __FILE__, __LINE__); \
  } while (false)
