// The shared parts of reading and splitting a tokenizer.json (tokenizer_steps.h): type messages, replacing, splitting.
#include "hf/tokenizer_steps.h"

#include <algorithm>

namespace plab::hf::detail {

std::string unsupportedType(const Fields& fields, const std::string& type, const std::string& supported)
{
    return fields.origin() + ": " + fields.path("type") + " \"" + type +
           "\" is not supported (supported: " + supported + ")";
}

std::string replaceAll(std::string_view text, const Pattern& pattern, std::string_view content)
{
    Ranges matches;
    pattern.findAll(text, matches);
    if (matches.empty())
        return std::string(text);
    std::string out;
    size_t last = 0;
    for (const auto& [start, end] : matches) {
        out.append(text.substr(last, start - last));
        out.append(content);
        last = end;
    }
    out.append(text.substr(last));
    return out;
}

SplitBehavior splitBehaviorOf(const Fields& fields)
{
    const std::string name = fields.text("behavior");
    static const std::vector<std::pair<std::string, SplitBehavior>> names = {
        {"Removed", SplitBehavior::Removed},
        {"Isolated", SplitBehavior::Isolated},
        {"MergedWithPrevious", SplitBehavior::MergedWithPrevious},
        {"MergedWithNext", SplitBehavior::MergedWithNext},
        {"Contiguous", SplitBehavior::Contiguous}};
    for (const auto& [known, behavior] : names)
        if (name == known)
            return behavior;
    fields.fail("behavior", "\"" + name +
                                "\" is not one of Removed, Isolated, MergedWithPrevious, MergedWithNext, "
                                "Contiguous");
}

// The kept ranges of a text of `length` bytes split at `matches` (sorted, not overlapping), empty ones left out.
Ranges splitRanges(size_t length, const Ranges& matches, SplitBehavior behavior, bool invert)
{
    // Every byte of the text lies in one range, a match or the gap between matches.
    std::vector<std::pair<std::pair<size_t, size_t>, bool>> parts;
    parts.reserve(2 * matches.size() + 1);
    size_t last = 0;
    for (const auto& range : matches) {
        if (range.first > last)
            parts.push_back({{last, range.first}, invert});
        parts.push_back({range, !invert});
        last = range.second;
    }
    if (last < length || parts.empty())
        parts.push_back({{last, length}, invert});

    Ranges kept;
    kept.reserve(parts.size());
    bool previousMatch = false;
    switch (behavior) {
    case SplitBehavior::Removed:
        for (const auto& [range, isMatch] : parts)
            if (!isMatch)
                kept.push_back(range);
        break;
    case SplitBehavior::Isolated:
        for (const auto& part : parts)
            kept.push_back(part.first);
        break;
    case SplitBehavior::MergedWithPrevious:
        for (const auto& [range, isMatch] : parts) {
            if (isMatch && !previousMatch && !kept.empty())
                kept.back().second = range.second;
            else
                kept.push_back(range);
            previousMatch = isMatch;
        }
        break;
    case SplitBehavior::MergedWithNext:
        for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
            if (it->second && !previousMatch && !kept.empty())
                kept.back().first = it->first.first;
            else
                kept.push_back(it->first);
            previousMatch = it->second;
        }
        std::reverse(kept.begin(), kept.end());
        break;
    case SplitBehavior::Contiguous:
        for (size_t i = 0; i < parts.size(); ++i) {
            if (i > 0 && parts[i].second == previousMatch)
                kept.back().second = parts[i].first.second;
            else
                kept.push_back(parts[i].first);
            previousMatch = parts[i].second;
        }
        break;
    }
    kept.erase(std::remove_if(kept.begin(), kept.end(), [](const auto& r) { return r.first == r.second; }), kept.end());
    return kept;
}

void splitPieces(std::vector<Piece>& pieces, const std::function<void(const std::string&, Ranges&)>& find,
                 SplitBehavior behavior, bool invert)
{
    std::vector<Piece> out;
    out.reserve(pieces.size());
    Ranges matches;
    for (const Piece& piece : pieces) {
        matches.clear();
        find(piece.text, matches);
        if (const size_t need = out.size() + 2 * matches.size() + 1; need > out.capacity())
            out.reserve(std::max(need, 2 * out.capacity())); // geometric, so many small pieces stay linear
        for (const auto& [start, end] : splitRanges(piece.text.size(), matches, behavior, invert))
            out.push_back({piece.text.substr(start, end - start), piece.atStart && start == 0});
    }
    pieces = std::move(out);
}

} // namespace plab::hf::detail
