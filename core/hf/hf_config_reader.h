// Reading one config.json field by field with messages naming the file and the field (shared by hf_config and the
// family table's readers; internal to core/hf).
#pragma once

#include "base/errors.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <string>
#include <vector>

namespace plab {
namespace hf_detail {

using nlohmann::json;

// Messages about one config.json (or a nested object of it, such as gemma3's text_config) name the file and the field.
struct ConfigReader {
    const json& root;
    std::string file;

    InputError fail(const std::string& what) const { return InputError(file + ": " + what); }

    bool has(const char* key) const { return root.contains(key) && !root[key].is_null(); }

    int positiveInt(const char* key) const
    {
        if (!has(key))
            throw fail("field '" + std::string(key) + "' is missing; it must be a positive integer");
        return positiveIntFrom(root[key], key);
    }
    int positiveInt(const char* key, int fallback) const
    {
        return has(key) ? positiveIntFrom(root[key], key) : fallback;
    }
    int positiveIntFrom(const json& v, const std::string& key) const
    {
        if (!v.is_number_integer() || v.get<long long>() < 1 || v.get<long long>() > (1ll << 30))
            throw fail("field '" + key + "' = " + v.dump() + " is not allowed; allowed: a positive integer");
        return static_cast<int>(v.get<long long>());
    }
    double positiveNumber(const json& v, const std::string& key) const
    {
        if (!v.is_number() || !(v.get<double>() > 0) || !std::isfinite(v.get<double>()))
            throw fail("field '" + key + "' = " + v.dump() + " is not allowed; allowed: a positive number");
        return v.get<double>();
    }
    double positiveNumber(const char* key, double fallback) const
    {
        return has(key) ? positiveNumber(root[key], key) : fallback;
    }
    bool flag(const char* key, bool fallback) const
    {
        if (!has(key))
            return fallback;
        if (!root[key].is_boolean())
            throw fail("field '" + std::string(key) + "' = " + root[key].dump() +
                       " is not allowed; allowed: true, false");
        return root[key].get<bool>();
    }
    std::string text(const char* key, const std::string& fallback) const
    {
        if (!has(key))
            return fallback;
        if (!root[key].is_string())
            throw fail("field '" + std::string(key) + "' = " + root[key].dump() + " is not a string");
        return root[key].get<std::string>();
    }
};
} // namespace hf_detail

struct HfFamilyRow;
struct HfConfig;
enum class HfLayerType;

namespace hf_detail {
// The shared readers (hf_config.cpp) the family table's rows call.
std::string activationOf(const ConfigReader& r, const char* key, const std::string& fallback);
std::string numberText(double v);
void readRope(const ConfigReader& r, HfConfig& c, const char* thetaKey, double thetaDefault);
void finishRotary(const ConfigReader& r, HfConfig& c);
void readLayerTypes(const ConfigReader& r, HfConfig& c, const std::vector<HfLayerType>& fallback);
// The row's flags into c, then its reader (hf_family.cpp).
void applyFamilyRow(const HfFamilyRow& row, const ConfigReader& r, HfConfig& c);
} // namespace hf_detail
} // namespace plab
