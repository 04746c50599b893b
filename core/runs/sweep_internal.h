// What the sweep's four .cpp files share: typed JSON field access naming source and field, list joining, number text.
#pragma once

#include "base/errors.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

namespace plab::sweep_internal {

inline std::string joined(const std::vector<std::string>& items, const char* separator)
{
    std::string s;
    for (const std::string& item : items)
        s += (s.empty() ? "" : separator) + item;
    return s;
}

// Typed field access with InputError naming the source and the field.
struct JsonReader {
    const nlohmann::json& j;
    std::string source;
    InputError fail(const std::string& what) const { return InputError(source + ": " + what); }
    const nlohmann::json& field(const char* key) const
    {
        if (!j.is_object() || !j.contains(key))
            throw fail(std::string("has no '") + key + "'");
        return j[key];
    }
    long long integer(const char* key, long long lo, long long hi) const
    {
        const nlohmann::json& v = field(key);
        if (!v.is_number_integer() || v.get<long long>() < lo || v.get<long long>() > hi)
            throw fail(std::string("'") + key + "' is " + v.dump() + "; allowed: an integer in [" + std::to_string(lo) +
                       ", " + std::to_string(hi) + "]");
        return v.get<long long>();
    }
    double number(const char* key) const
    {
        const nlohmann::json& v = field(key);
        if (!v.is_number())
            throw fail(std::string("'") + key + "' is " + v.dump() + "; allowed: a number");
        return v.get<double>();
    }
    std::string text(const char* key) const
    {
        const nlohmann::json& v = field(key);
        if (!v.is_string())
            throw fail(std::string("'") + key + "' is " + v.dump() + "; allowed: a string");
        return v.get<std::string>();
    }
    std::vector<std::string> texts(const char* key) const
    {
        const nlohmann::json& v = field(key);
        if (!v.is_array() || !std::all_of(v.begin(), v.end(), [](const nlohmann::json& e) { return e.is_string(); }))
            throw fail(std::string("'") + key + "' is not a list of strings");
        return v.get<std::vector<std::string>>();
    }
    bool boolean(const char* key) const
    {
        const nlohmann::json& v = field(key);
        if (!v.is_boolean())
            throw fail(std::string("'") + key + "' is " + v.dump() + "; allowed: true or false");
        return v.get<bool>();
    }
};

inline std::string numberText(double value)
{
    std::ostringstream text;
    text << value;
    return text.str();
}

} // namespace plab::sweep_internal
