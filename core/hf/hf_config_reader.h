// Reading one config.json field by field with messages naming the file and the field (shared by hf_config and the
// family table's readers; internal to core/hf).
#pragma once

#include "base/errors.h"
#include "base/json_input.h"

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
    // "field 'KEY' = VALUE is not allowed (it is an array); allowed: WHAT": an excerpt of the value, never all of it,
    // and what it is when that is what is wrong (`rightType` false).
    InputError wrong(const std::string& key, const json& v, const std::string& allowed, bool rightType = false) const
    {
        return fail("field '" + key + "' = " + jsonExcerpt(v) + " is not allowed" +
                    (rightType ? "" : " (it is " + jsonKindName(v) + ")") + "; allowed: " + allowed);
    }

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
            throw wrong(key, v, "a positive integer up to 2^30", v.is_number_integer());
        return static_cast<int>(v.get<long long>());
    }
    double positiveNumber(const json& v, const std::string& key) const
    {
        if (!v.is_number() || !(v.get<double>() > 0) || !std::isfinite(v.get<double>()))
            throw wrong(key, v, "a positive finite number", v.is_number());
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
            throw wrong(key, root[key], "true, false");
        return root[key].get<bool>();
    }
    std::string text(const char* key, const std::string& fallback) const
    {
        if (!has(key))
            return fallback;
        if (!root[key].is_string())
            throw wrong(key, root[key], "a string");
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
// 4 x the hidden size (gpt2's default n_inner, bloom's MLP), refused by name when it overflows the lab's sizes.
int fourTimes(const ConfigReader& r, const char* key, int hidden);
void readRope(const ConfigReader& r, HfConfig& c, const char* thetaKey, double thetaDefault);
void finishRotary(const ConfigReader& r, HfConfig& c);
// `windowDefault` > 0: the sliding_window a family's configuration class gives when config.json leaves it out.
void readLayerTypes(const ConfigReader& r, HfConfig& c, const std::vector<HfLayerType>& fallback,
                    int windowDefault = 0);
// The sliding-window pattern P (gemma2's 2, gemma3's 6, cohere2's 4): layer i slides unless (i + 1) % P == 0.
std::vector<HfLayerType> slidingPattern(int layers, int period);
// The row's flags into c, then its reader (hf_family.cpp).
void applyFamilyRow(const HfFamilyRow& row, const ConfigReader& r, HfConfig& c);
} // namespace hf_detail
} // namespace plab
