// Retrieval prompts read back from JSON lines: bounded, checked field by field, deduplicated and grouped into cells.
#include "runs/retrieval_prompts.h"

#include "base/errors.h"
#include "base/json_input.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

namespace plab {

namespace {

// A non-empty array of ids in [0, vocab).
std::vector<int> idsField(const nlohmann::json& line, const char* field, int vocab, const std::string& where)
{
    if (!line.contains(field))
        throw InputError(where + ": \"" + field + "\" is missing; allowed: an array of token ids");
    const nlohmann::json& value = line.at(field);
    if (!value.is_array() || value.empty())
        throw InputError(where + ": \"" + field + "\" must be a non-empty array of token ids, not " +
                         jsonKindName(value) + " " + jsonExcerpt(value));
    std::vector<int> ids;
    ids.reserve(value.size());
    for (const nlohmann::json& id : value) {
        if (!id.is_number_integer() || id.get<long long>() < 0 || id.get<long long>() >= vocab)
            throw InputError(where + ": \"" + field + "\" holds " + jsonExcerpt(id) + "; allowed: token ids in [0, " +
                             std::to_string(vocab) + ") (the model's vocabulary)");
        ids.push_back(id.get<int>());
    }
    return ids;
}

RetrievalExample exampleFromLine(const nlohmann::json& line, int vocab, const std::string& where, int& length)
{
    if (!line.is_object())
        throw InputError(where + " must be a JSON object (one example), not " + jsonKindName(line));
    RetrievalExample e;
    e.promptIds = idsField(line, "prompt_ids", vocab, where);
    e.answerIds = idsField(line, "answer_ids", vocab, where);
    const nlohmann::json* l = line.contains("length") ? &line.at("length") : nullptr;
    if (!l || !l->is_number_integer() || l->get<long long>() < 1 || l->get<long long>() > (1LL << 30))
        throw InputError(where + ": \"length\" must be an integer of at least 1, not " +
                         (l ? jsonExcerpt(*l) : std::string("missing")));
    length = l->get<int>();
    const nlohmann::json* d = line.contains("depth") ? &line.at("depth") : nullptr;
    const double depth = d && d->is_number() ? d->get<double>() : NAN;
    if (!(depth == -1 || (depth >= 0 && depth <= 1)))
        throw InputError(where + ": \"depth\" must be a number in [0, 1] (or -1 for a task without a needle), not " +
                         (d ? jsonExcerpt(*d) : std::string("missing")));
    e.depth = depth;
    e.needleStart = e.needleEnd = 0;
    if (line.contains("needle_span")) {
        const nlohmann::json& span = line.at("needle_span");
        const int n = static_cast<int>(e.promptIds.size());
        if (!span.is_array() || span.size() != 2 || !span[0].is_number_integer() || !span[1].is_number_integer() ||
            span[0].get<long long>() < 0 || span[0].get<long long>() > span[1].get<long long>() ||
            span[1].get<long long>() > n)
            throw InputError(where + ": \"needle_span\" must be [start, end] with 0 <= start <= end <= " +
                             std::to_string(n) + " (the prompt's tokens), not " + jsonExcerpt(span));
        e.needleStart = span[0].get<int>();
        e.needleEnd = span[1].get<int>();
    }
    if (line.contains("answer") && line.at("answer").is_string())
        e.answerText = line.at("answer").get<std::string>();
    e.hayStart = 0;
    e.hayEnd = static_cast<int>(e.promptIds.size());
    e.candidates = {e.answerIds};
    e.correctCandidate = 0;
    return e;
}

} // namespace

std::vector<RetrievalPromptCell> parseRetrievalPrompts(const std::string& text, const std::string& source, int vocab)
{
    std::map<std::pair<int, double>, RetrievalPromptCell> cells;
    std::set<std::tuple<int, double, std::vector<int>, std::vector<int>>> seen;
    size_t examples = 0;
    size_t lineNumber = 0;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        ++lineNumber;
        if (line.find_first_not_of(" \t\r") == std::string::npos)
            continue;
        const std::string where = source + " line " + std::to_string(lineNumber);
        int length = 0;
        RetrievalExample e = exampleFromLine(parseUntrustedJson(line, where), vocab, where, length);
        if (!seen.insert({length, e.depth, e.promptIds, e.answerIds}).second)
            continue; // the same prompt under another method
        if (++examples > kMaxPromptExamples)
            throw InputError(source + " holds more than " + std::to_string(kMaxPromptExamples) +
                             " distinct examples; allowed: at most that many");
        RetrievalPromptCell& cell = cells[{length, e.depth}];
        cell.length = length;
        cell.depth = e.depth;
        cell.examples.push_back(std::move(e));
    }
    if (cells.empty())
        throw InputError(source + " holds no example; allowed: JSON lines with prompt_ids, answer_ids, length and "
                                  "depth, as eval --examples-out writes them");
    std::vector<RetrievalPromptCell> out;
    for (auto& [key, cell] : cells)
        out.push_back(std::move(cell));
    return out;
}

std::vector<RetrievalPromptCell> readRetrievalPrompts(const std::string& path, int vocab)
{
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    if (!in)
        throw InputError("--examples-in: cannot read " + path + ": " + std::strerror(errno));
    const std::streamoff size = in.tellg();
    if (size < 0 || static_cast<unsigned long long>(size) > kMaxPromptFileBytes)
        throw InputError("--examples-in: " + path + " has " + std::to_string(size) + " bytes; allowed: at most " +
                         std::to_string(kMaxPromptFileBytes) + " (1 GiB)");
    in.seekg(0);
    std::string text(static_cast<size_t>(size), '\0');
    in.read(text.data(), size);
    return parseRetrievalPrompts(text, "--examples-in " + path, vocab);
}

int longestPromptRead(const std::vector<RetrievalPromptCell>& cells)
{
    int longest = 0;
    for (const RetrievalPromptCell& c : cells)
        for (const RetrievalExample& e : c.examples)
            longest = std::max(longest, static_cast<int>(e.promptIds.size() + e.answerIds.size()) - 1);
    return longest;
}

} // namespace plab
