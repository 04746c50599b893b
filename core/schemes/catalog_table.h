// The parameter-table row shared by the scheme and rotary-method catalogues, and their name look-ups.
#pragma once

#include "base/errors.h"
#include "schemes/schemes.h"

#include <algorithm>
#include <cstddef>
#include <map>
#include <sstream>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace plab::catalog {

// How a parameter's range reads: a closed real interval, one open at its minimum, integers, or even integers.
enum class Range { Real, RealAboveMin, Integer, EvenInteger };

// One tunable parameter of one scheme or method, as a constant row: owner, then ParamInfo's fields.
struct ParamRow {
    std::string_view owner; // the scheme's or method's name
    std::string_view name;  // as in --set NAME=VALUE
    double defaultValue;
    double minValue;
    double maxValue;
    Range range;
    std::string_view description;
};

// The ParamInfo of every row of `owner`, in table order.
inline std::vector<ParamInfo> paramsOf(std::span<const ParamRow> rows, std::string_view owner)
{
    std::vector<ParamInfo> params;
    for (const ParamRow& row : rows) {
        if (row.owner != owner)
            continue;
        ParamInfo p;
        p.name = row.name;
        p.defaultValue = row.defaultValue;
        p.minValue = row.minValue;
        p.maxValue = row.maxValue;
        p.minExclusive = row.range == Range::RealAboveMin;
        p.integer = row.range == Range::Integer || row.range == Range::EvenInteger;
        p.even = row.range == Range::EvenInteger;
        p.description = row.description;
        params.push_back(std::move(p));
    }
    return params;
}

// A catalogue from its constant rows: fromRow(row) for each, in table order.
template <typename Info, typename Row, size_t N>
std::vector<Info> entriesFrom(const Row (&rows)[N], Info (*fromRow)(const Row&))
{
    std::vector<Info> entries;
    for (const Row& row : rows)
        entries.push_back(fromRow(row));
    return entries;
}

// "a, b, c": the names of catalogue entries or parameters, for "known ...:" and "its parameters:" messages.
template <typename Info>
std::string namesOf(const std::vector<Info>& entries)
{
    std::string out;
    for (const Info& e : entries)
        out += (out.empty() ? "" : ", ") + e.name;
    return out;
}

// The entry whose `key` member (kind or method) equals `value`: a missing one is a programming error.
template <typename Info, typename Key>
const Info& entryWithKey(const std::vector<Info>& entries, Key Info::*key, Key value)
{
    for (const Info& e : entries)
        if (e.*key == value)
            return e;
    throw std::logic_error("an entry is missing from a catalogue");
}

// The entry named `name`, or nullptr: the caller's message names what it looked for.
template <typename Info>
const Info* entryNamed(const std::vector<Info>& entries, std::string_view name)
{
    for (const Info& e : entries)
        if (e.name == name)
            return &e;
    return nullptr;
}

// A parameter value as messages and range texts write it: at most 10 significant digits.
inline std::string shortNumberText(double value)
{
    std::ostringstream out;
    out.precision(10);
    out << value;
    return out.str();
}

// The one check of parameter values against their table rows: every parameter present and in range, no other name.
// `owner` starts the first two messages ("scheme t5", "scaling yarn"), `unknownPrefix` the third.
inline void checkParamValues(const std::vector<ParamInfo>& params, const std::map<std::string, double>& values,
                             const std::string& owner, const std::string& unknownPrefix)
{
    for (const ParamInfo& p : params) {
        auto it = values.find(p.name);
        if (it == values.end())
            throw InputError(owner + ": parameter " + p.name + " is missing");
        if (!p.accepts(it->second))
            throw InputError(owner + ": " + p.name + " = " + shortNumberText(it->second) +
                             " is out of range; allowed: " + p.rangeText());
    }
    for (const auto& entry : values) {
        const std::string& name = entry.first; // not a structured binding: clang 14 cannot capture those
        if (std::none_of(params.begin(), params.end(), [&](const ParamInfo& p) { return p.name == name; })) {
            const std::string names = namesOf(params);
            throw InputError(unknownPrefix + "'" + name + "'; its parameters: " + (names.empty() ? "none" : names));
        }
    }
}

} // namespace plab::catalog
