// The interface languages: the translator (translations/positionlab_<code>.ts, compiled into the resource
// :/i18n/positionlab_<code>.qm), the remembered choice, and the translated texts of core's scheme catalogue.
// core stays English (its error messages too); everything the window and the pictures say goes through tr() here.
#pragma once

#include <QList>
#include <QString>

#include <string>

namespace plab {
struct SchemeInfo;
struct ParamInfo;
struct RotaryMethodInfo;
} // namespace plab

namespace plab::ui {

struct Language {
    QString code;       // "en", "zh_CN": the --lang value and the QSettings value
    QString nativeName; // shown in View → Language as the language calls itself ("English", "中文"), never translated
};

// Every language the program speaks, English first.
const QList<Language>& languages();
bool isKnownLanguage(const QString& code);
// "en, zh_CN": for messages that list the allowed values.
QString languageCodes();

// Installs the translator of `code` in the running application (removing the previous one); "en" removes it.
// False with `error` set for an unknown code or a missing translation resource. Needs a QCoreApplication.
bool setLanguage(const QString& code, QString* error = nullptr);
QString currentLanguage();

// The choice remembered with QSettings ("language"), "en" when none or an unknown one is stored.
QString savedLanguage();
void saveLanguage(const QString& code);

// core's catalogue texts in the current language. The translation table (i18n.cpp) holds core's English texts
// as literals lupdate can see; when core's text no longer matches its entry (core changed, the table did not),
// core's text is shown as it is, never a stale translation.
QString schemeTitle(const SchemeInfo& info);
QString schemeFormula(const SchemeInfo& info);
QString schemeExplanation(const SchemeInfo& info);
QString paramDescription(const SchemeInfo& info, const ParamInfo& param);
// The title of a rotary length-extension method ("YaRN", "Position interpolation").
QString rotaryMethodTitle(const RotaryMethodInfo& info);
// "even integers in [2, 4096]" and the like, as ParamInfo::rangeText() but translated.
QString paramRange(const ParamInfo& param);

// The English texts of the table that no longer match core's catalogue ("scheme.field"), for a test.
QStringList staleSchemeTexts();

} // namespace plab::ui
