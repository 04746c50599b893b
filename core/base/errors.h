// Error types of the core library: bad input (exit 2) versus a failure while running (exit 1).
#pragma once

#include <stdexcept>
#include <string>

namespace plab {

// Bad user input: a wrong parameter, an unknown name, a corrupt or unsuitable file, an absurd size.
// The message names what is wrong and what is allowed; the CLI maps it to exit code 2.
class InputError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// A failure while running on valid input (I/O error, cancelled job); the CLI maps it to exit code 1.
class RunError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// InputError "what = value is out of range; allowed: integers in [lo, hi]" unless lo <= value <= hi.
inline void checkIntegerRange(const char* what, long long value, long long lo, long long hi)
{
    if (value < lo || value > hi)
        throw InputError(std::string(what) + " = " + std::to_string(value) +
                         " is out of range; allowed: integers in [" + std::to_string(lo) + ", " + std::to_string(hi) +
                         "]");
}

} // namespace plab
