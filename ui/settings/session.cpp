// Strict reading and atomic writing of session files.
#include "settings/session.h"

#include "base/atomic_file.h"
#include "base/errors.h"
#include "schemes/schemes.h"

#include <QFile>

#include <cmath>

namespace plab::ui {

namespace {

std::string field(const std::string& where, const char* key)
{
    return "session: " + where + "." + key;
}

} // namespace

nlohmann::json parseSession(const std::string& text, const std::string& source)
{
    nlohmann::json doc;
    try {
        doc = nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
        // e.what() is long and technical; keep the byte position, which is what a person needs.
        throw InputError(source + ": not a valid JSON file (syntax error at byte " + std::to_string(e.byte) + ")");
    } catch (const nlohmann::json::exception&) {
        // e.g. out_of_range.406 for a number beyond double range such as 1e315
        throw InputError(source + ": not a valid JSON file (a number is out of range)");
    }
    if (!doc.is_object() || !doc.contains("format") || !doc["format"].is_string() ||
        doc["format"].get<std::string>() != kSessionFormat)
        throw InputError(source + ": not a PositionLab session (expected \"format\": \"" + kSessionFormat + "\")");
    if (!doc.contains("version") || !doc["version"].is_number_integer())
        throw InputError(source + ": session has no integer \"version\"");
    // Compare as 64-bit values: get<int>() would truncate 4294967297 to 1.
    const nlohmann::json& versionValue = doc["version"];
    const bool supported =
        versionValue.is_number_unsigned()
            ? versionValue.get<unsigned long long>() >= 1 && versionValue.get<unsigned long long>() <= kSessionVersion
            : versionValue.get<long long>() >= 1 && versionValue.get<long long>() <= kSessionVersion;
    if (!supported)
        throw InputError(source + ": session version " + versionValue.dump() +
                         " is not supported; this build reads 1.." + std::to_string(kSessionVersion));
    return doc;
}

nlohmann::json readSessionFile(const QString& path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        throw InputError(path.toStdString() + ": cannot open (" + file.errorString().toStdString() + ")");
    if (file.size() > 16 * 1024 * 1024)
        throw InputError(path.toStdString() + ": too large for a session file (" + std::to_string(file.size()) +
                         " bytes)");
    return parseSession(file.readAll().toStdString(), path.toStdString());
}

void writeSessionFile(const QString& path, const nlohmann::json& session)
{
    writeFileAtomically(path.toStdString(), session.dump(2) + "\n");
}

int sessionInt(const nlohmann::json& object, const char* key, int fallback, int lo, int hi, const std::string& where)
{
    if (!object.is_object() || !object.contains(key))
        return fallback;
    const nlohmann::json& v = object.at(key);
    // Check the double before any cast: casting 1e300 to an integer is undefined behaviour.
    const bool wholeFloat =
        v.is_number_float() && std::isfinite(v.get<double>()) && v.get<double>() == std::floor(v.get<double>());
    if (!v.is_number_integer() && !wholeFloat)
        throw InputError(field(where, key) + " = " + v.dump() + " is not an integer");
    const double asDouble = v.get<double>();
    if (asDouble < lo || asDouble > hi)
        throw InputError(field(where, key) + " = " + v.dump() + " is out of range; allowed: integers in [" +
                         std::to_string(lo) + ", " + std::to_string(hi) + "]");
    const long long x = v.is_number_integer() ? v.get<long long>() : static_cast<long long>(asDouble);
    if (x < lo || x > hi)
        throw InputError(field(where, key) + " = " + std::to_string(x) + " is out of range; allowed: integers in [" +
                         std::to_string(lo) + ", " + std::to_string(hi) + "]");
    return static_cast<int>(x);
}

double sessionNumber(const nlohmann::json& object, const char* key, double fallback, const std::string& where)
{
    if (!object.is_object() || !object.contains(key))
        return fallback;
    const nlohmann::json& v = object.at(key);
    if (!v.is_number())
        throw InputError(field(where, key) + " = " + v.dump() + " is not a number");
    return v.get<double>();
}

bool sessionBool(const nlohmann::json& object, const char* key, bool fallback, const std::string& where)
{
    if (!object.is_object() || !object.contains(key))
        return fallback;
    const nlohmann::json& v = object.at(key);
    if (!v.is_boolean())
        throw InputError(field(where, key) + " = " + v.dump() + " is not true or false");
    return v.get<bool>();
}

std::string sessionString(const nlohmann::json& object, const char* key, const std::string& fallback,
                          const std::string& where)
{
    if (!object.is_object() || !object.contains(key))
        return fallback;
    const nlohmann::json& v = object.at(key);
    if (!v.is_string())
        throw InputError(field(where, key) + " = " + v.dump() + " is not a string");
    return v.get<std::string>();
}

nlohmann::json sessionObject(const nlohmann::json& object, const char* key, const std::string& where)
{
    if (!object.is_object() || !object.contains(key))
        return nlohmann::json::object();
    const nlohmann::json& v = object.at(key);
    if (!v.is_object())
        throw InputError(field(where, key) + " must be an object");
    return v;
}

QStringList sessionStringList(const nlohmann::json& object, const char* key, const std::string& where)
{
    QStringList strings;
    if (!object.is_object() || !object.contains(key))
        return strings;
    const nlohmann::json& list = object.at(key);
    if (!list.is_array())
        throw InputError(field(where, key) + " must be a list of strings");
    for (const nlohmann::json& s : list) {
        if (!s.is_string())
            throw InputError(field(where, key) + " holds a non-string " + s.dump());
        strings << QString::fromStdString(s.get<std::string>());
    }
    return strings;
}

QStringList sessionSchemeNames(const nlohmann::json& object, const char* key, const std::string& where)
{
    QStringList names;
    for (const QString& name : sessionStringList(object, key, where))
        names << QString::fromStdString(schemeByName(name.toStdString()).name);
    return names;
}

} // namespace plab::ui
