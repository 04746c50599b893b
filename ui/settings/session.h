// Session files: every setting of the window as one JSON document, read strictly (clear messages, never a crash).
#pragma once

#include <nlohmann/json.hpp>

#include <QString>
#include <QStringList>

#include <string>

namespace plab::ui {

constexpr const char* kSessionFormat = "positionlab-session";
constexpr int kSessionVersion = 1;

// Reads and checks a session file: unreadable, not JSON (with line and column), not a session, or a newer
// version each throw InputError with a one-line message naming the file.
nlohmann::json readSessionFile(const QString& path);
// Writes atomically; throws InputError / RunError.
void writeSessionFile(const QString& path, const nlohmann::json& session);
// Parses session text (for tests and drops); `source` names it in messages.
nlohmann::json parseSession(const std::string& text, const std::string& source);

// Typed fields of a session object; a missing key gives the fallback, a wrong type or range throws InputError
// naming `where.key`, the value and what is allowed.
int sessionInt(const nlohmann::json& object, const char* key, int fallback, int lo, int hi, const std::string& where);
double sessionNumber(const nlohmann::json& object, const char* key, double fallback, const std::string& where);
bool sessionBool(const nlohmann::json& object, const char* key, bool fallback, const std::string& where);
std::string sessionString(const nlohmann::json& object, const char* key, const std::string& fallback,
                          const std::string& where);
// A sub-object (empty when missing); throws when present but not an object.
nlohmann::json sessionObject(const nlohmann::json& object, const char* key, const std::string& where);
// A list of strings under `key` (missing: empty); throws when present but not a list of strings.
QStringList sessionStringList(const nlohmann::json& object, const char* key, const std::string& where);
// A list of scheme names under `key` (missing: empty), each checked against the catalogue.
QStringList sessionSchemeNames(const nlohmann::json& object, const char* key, const std::string& where);

} // namespace plab::ui
