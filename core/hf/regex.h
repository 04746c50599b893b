// The tokenizer's regular expressions: PCRE2 (Unicode classes, look-ahead), with Oniguruma's nested classes flattened.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace plab::hf {

// A compiled pattern of a tokenizer.json (Hugging Face runs them with Oniguruma; PCRE2 reads the same syntax once a
// nested character class, which Oniguruma allows and BLOOM's split pattern uses, is written as one class). Matching
// is thread-safe: each thread has its own match data.
class Regex {
public:
    // InputError naming `where` (e.g. "tokenizer.json: pre_tokenizer.pattern.Regex"), the pattern and PCRE2's message.
    Regex(const std::string& pattern, const std::string& where);
    ~Regex();
    Regex(Regex&&) noexcept;
    Regex& operator=(Regex&&) noexcept;

    // Every match in `text` (valid UTF-8), leftmost first and not overlapping, as [start, end) byte offsets, appended
    // to `matches`. An empty match is passed over (the search goes on one character later).
    void findAll(std::string_view text, std::vector<std::pair<size_t, size_t>>& matches) const;

private:
    struct Compiled;
    std::unique_ptr<Compiled> m_compiled;
};

// `pattern` with each nested character class of Oniguruma ("[^(\s|[.,!?])]") merged into its outer class, which is
// what it means there; InputError naming `where` for a nested class that is negated (it has no flat form).
std::string flattenNestedClasses(const std::string& pattern, const std::string& where);

} // namespace plab::hf
