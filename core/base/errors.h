// Error types of the core library: bad input (exit 2) versus a failure while running (exit 1).
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

namespace plab {

// Core's messages are shown by the GUI and the CLI alike, so they name no command-line option. When a message is
// about one setting, `parameter` names it as core does ("scaling", "set", "corpus"): the CLI puts its option before
// the message where it reports it (cliMessage), the GUI shows the message as it is.
class ParameterError : public std::runtime_error {
public:
    explicit ParameterError(const std::string& what, std::string parameter = {})
        : std::runtime_error(what), m_parameter(std::move(parameter))
    {
    }
    const std::string& parameter() const { return m_parameter; }

private:
    std::string m_parameter;
};

// Bad user input: a wrong parameter, an unknown name, a corrupt or unsuitable file, an absurd size.
// The message names what is wrong and what is allowed; the CLI maps it to exit code 2.
class InputError : public ParameterError {
public:
    using ParameterError::ParameterError;
};

// A failure while running on valid input (I/O error, cancelled job); the CLI maps it to exit code 1.
class RunError : public ParameterError {
public:
    using ParameterError::ParameterError;
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
