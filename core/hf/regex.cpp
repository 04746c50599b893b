// The tokenizer's regular expressions over PCRE2 (see regex.h).
#include "hf/regex.h"

#include "base/errors.h"
#include "hf/unicode_text.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

namespace plab::hf {

struct Regex::Compiled {
    pcre2_code* code = nullptr;
    ~Compiled() { pcre2_code_free(code); }
};

std::string flattenNestedClasses(const std::string& pattern, const std::string& where)
{
    std::string out;
    out.reserve(pattern.size());
    int depth = 0; // 0 outside a class, 1 inside, 2+ inside nested classes
    for (size_t i = 0; i < pattern.size(); ++i) {
        const char c = pattern[i];
        if (c == '\\' && i + 1 < pattern.size()) {
            out += c;
            out += pattern[++i];
            continue;
        }
        if (c == '[') {
            const bool posixClass = i + 1 < pattern.size() && pattern[i + 1] == ':';
            if (depth == 0) {
                out += c;
                depth = 1;
                // A ']' right after '[' or '[^' is a literal member, not the end.
                if (i + 1 < pattern.size() && pattern[i + 1] == '^')
                    out += pattern[++i];
                if (i + 1 < pattern.size() && pattern[i + 1] == ']')
                    out += pattern[++i];
                continue;
            }
            if (posixClass) {
                const size_t end = pattern.find(":]", i + 2);
                if (end != std::string::npos) {
                    out.append(pattern, i, end + 2 - i);
                    i = end + 1;
                    continue;
                }
            }
            if (i + 1 < pattern.size() && pattern[i + 1] == '^')
                throw InputError(where + ": the pattern \"" + pattern +
                                 "\" has a negated character class inside a class, which is not supported");
            ++depth; // the inner class's members join the outer class
            continue;
        }
        if (c == ']' && depth > 0) {
            if (depth == 1)
                out += c;
            --depth;
            continue;
        }
        out += c;
    }
    return out;
}

Regex::Regex(const std::string& pattern, const std::string& where) : m_compiled(std::make_unique<Compiled>())
{
    const std::string flat = flattenNestedClasses(pattern, where);
    int errorCode = 0;
    PCRE2_SIZE errorOffset = 0;
    m_compiled->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(flat.data()), flat.size(), PCRE2_UTF | PCRE2_UCP,
                                     &errorCode, &errorOffset, nullptr);
    if (!m_compiled->code) {
        PCRE2_UCHAR message[256];
        pcre2_get_error_message(errorCode, message, sizeof message);
        throw InputError(where + ": the pattern \"" + pattern + "\" does not compile (at offset " +
                         std::to_string(errorOffset) + ": " + reinterpret_cast<const char*>(message) + ")");
    }
    // JIT makes the pre-tokenizer several times faster; without it (an unsupported CPU) the interpreter still works.
    pcre2_jit_compile(m_compiled->code, PCRE2_JIT_COMPLETE);
}

Regex::~Regex() = default;
Regex::Regex(Regex&&) noexcept = default;
Regex& Regex::operator=(Regex&&) noexcept = default;

void Regex::findAll(std::string_view text, std::vector<std::pair<size_t, size_t>>& matches) const
{
    // Only the whole match is read, so one pair of offsets serves every pattern; one block per thread keeps matching
    // thread-safe without an allocation per call (pre-tokenizers call this once per piece).
    thread_local const std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> data(
        pcre2_match_data_create(1, nullptr), &pcre2_match_data_free);
    const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
    size_t start = 0;
    while (start <= text.size()) {
        // The text was checked once on entry (encode): no UTF check per call.
        const int rc =
            pcre2_match(m_compiled->code, subject, text.size(), start, PCRE2_NO_UTF_CHECK, data.get(), nullptr);
        if (rc == PCRE2_ERROR_NOMATCH)
            return;
        if (rc < 0) {
            PCRE2_UCHAR message[256];
            pcre2_get_error_message(rc, message, sizeof message);
            throw RunError(std::string("tokenizer: a pattern failed to match: ") +
                           reinterpret_cast<const char*>(message));
        }
        const PCRE2_SIZE* range = pcre2_get_ovector_pointer(data.get());
        if (range[1] > range[0]) {
            matches.emplace_back(range[0], range[1]);
            start = range[1];
        } else {
            if (range[0] >= text.size())
                return;
            start = range[0] + charLength(text, range[0]);
        }
    }
}

} // namespace plab::hf
