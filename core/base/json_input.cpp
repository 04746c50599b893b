// A pre-scan bounds the nesting of untrusted JSON before nlohmann builds it; excerpts are written piece by piece.
#include "base/json_input.h"

#include "base/errors.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace plab {

namespace {

// Line and column (1-based, bytes) of `offset` in `text`.
std::string positionText(std::string_view text, size_t offset)
{
    size_t line = 1, column = 1;
    for (size_t i = 0; i < offset && i < text.size(); ++i) {
        if (text[i] == '\n') {
            ++line;
            column = 1;
        } else {
            ++column;
        }
    }
    return "line " + std::to_string(line) + ", column " + std::to_string(column) + " (byte " + std::to_string(offset) +
           ")";
}

// The offset of the first bracket that opens level maxDepth + 1, or npos. Brackets inside strings do not count;
// the syntax itself is the parser's business.
size_t tooDeepAt(std::string_view text, int maxDepth)
{
    int depth = 0;
    bool inString = false;
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (inString) {
            if (c == '\\')
                ++i;
            else if (c == '"')
                inString = false;
            continue;
        }
        if (c == '"') {
            inString = true;
        } else if (c == '[' || c == '{') {
            if (++depth > maxDepth)
                return i;
        } else if (c == ']' || c == '}') {
            --depth;
        }
    }
    return std::string_view::npos;
}

// Appends `value` to `out` until `out` holds `limit` characters; false when it stopped short. Recursion is bounded by
// the nesting limit of parseUntrustedJson, and no scalar longer than the budget is serialised whole.
bool appendExcerpt(const nlohmann::json& value, std::string& out, size_t limit)
{
    if (out.size() >= limit)
        return false;
    if (value.is_array() || value.is_object()) {
        out += value.is_array() ? '[' : '{';
        bool first = true;
        for (auto it = value.begin(); it != value.end(); ++it) {
            if (!first)
                out += ',';
            first = false;
            if (value.is_object())
                out += nlohmann::json(it.key().substr(0, limit))
                           .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
                       ':';
            if (!appendExcerpt(*it, out, limit))
                return false;
        }
        out += value.is_array() ? ']' : '}';
        return out.size() <= limit;
    }
    if (value.is_string()) {
        const std::string& text = value.get_ref<const std::string&>();
        const bool cut = text.size() > limit;
        out += nlohmann::json(cut ? text.substr(0, limit) : text)
                   .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
        return !cut && out.size() <= limit;
    }
    out += value.dump();
    return out.size() <= limit;
}

} // namespace

nlohmann::json parseUntrustedJson(std::string_view text, const std::string& source, int maxDepth)
{
    if (const size_t at = tooDeepAt(text, maxDepth); at != std::string_view::npos)
        throw InputError(source + " is nested deeper than " + std::to_string(maxDepth) + " levels at " +
                         positionText(text, at) + "; allowed: at most " + std::to_string(maxDepth) +
                         " levels of arrays and objects");
    // nlohmann's messages quote the token they stopped at, which can be the whole of a 100 KB number or string.
    const auto shortened = [](std::string reason) {
        if (const size_t colon = reason.find("] "); colon != std::string::npos)
            reason = reason.substr(colon + 2); // drop "[json.exception.parse_error.101] "
        return reason.size() > 160 ? reason.substr(0, 160) + "..." : reason;
    };
    try {
        return nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
        // "parse error at line 3, column 5: syntax error ...": keep the reason after the position, and give the
        // position with the byte offset.
        std::string reason = e.what();
        if (const size_t colon = reason.find(": "); colon != std::string::npos)
            reason = reason.substr(colon + 2);
        const size_t at = e.byte > 0 ? e.byte - 1 : 0;
        throw InputError(source + " is not valid JSON at " + positionText(text, at) + ": " + shortened(reason));
    } catch (const nlohmann::json::exception& e) {
        // out_of_range 406: a number too large even for a double ("1e999", a 100000-digit integer).
        throw InputError(source + " is not valid JSON: " + shortened(e.what()));
    }
}

nlohmann::json readUntrustedJsonFile(const std::string& path, int maxDepth)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw InputError("cannot read " + path + ": " + std::strerror(errno));
    std::ostringstream text;
    text << in.rdbuf();
    return parseUntrustedJson(text.str(), path, maxDepth);
}

std::string jsonExcerpt(const nlohmann::json& value, size_t maxChars)
{
    std::string out;
    if (appendExcerpt(value, out, maxChars))
        return out;
    if (out.size() > maxChars)
        out.resize(maxChars);
    // Not inside a UTF-8 sequence: drop continuation bytes and the lead byte they follow.
    while (!out.empty() && (static_cast<unsigned char>(out.back()) & 0xC0) == 0x80)
        out.pop_back();
    if (!out.empty() && static_cast<unsigned char>(out.back()) >= 0xC0)
        out.pop_back();
    return out + "...";
}

std::string jsonKindName(const nlohmann::json& value)
{
    switch (value.type()) {
    case nlohmann::json::value_t::null:
        return "null";
    case nlohmann::json::value_t::object:
        return "an object";
    case nlohmann::json::value_t::array:
        return "an array";
    case nlohmann::json::value_t::string:
        return "a string";
    case nlohmann::json::value_t::boolean:
        return "a boolean";
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned:
        return "an integer";
    case nlohmann::json::value_t::number_float:
        return "a number";
    default:
        return "a binary value";
    }
}

} // namespace plab
