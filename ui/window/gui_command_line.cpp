// The desktop application's command line, translated: the language is chosen before the option texts are built.
#include "window/gui_command_line.h"

#include "settings/i18n.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QStringList>

namespace plab::ui {

namespace {

// The value of --lang CODE or --lang=CODE among the raw arguments, or empty; the parser checks the syntax later.
QString requestedLanguage(const QStringList& arguments)
{
    for (int i = 1; i < arguments.size(); ++i) {
        if (arguments[i] == QLatin1String("--lang") && i + 1 < arguments.size())
            return arguments[i + 1];
        if (arguments[i].startsWith(QLatin1String("--lang=")))
            return arguments[i].mid(7);
    }
    return {};
}

} // namespace

GuiCommandLine parseGuiCommandLine(QCoreApplication& app)
{
    GuiCommandLine result;
    const QString asked = requestedLanguage(app.arguments());
    if (!setLanguage(asked.isEmpty() ? savedLanguage() : asked, &result.error))
        setLanguage(QStringLiteral("en"));

    QCommandLineParser parser;
    parser.setApplicationDescription(
        QCoreApplication::translate("CommandLine", "Positional encodings and length extrapolation in transformers"));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument(QStringLiteral("session"),
                                 QCoreApplication::translate("CommandLine", "A session file to open (optional)"));
    const QCommandLineOption screenshots(
        QStringLiteral("screenshots"),
        QCoreApplication::translate("CommandLine", "Drive every view, save DIR/<view>.png, and quit (for the README)"),
        QStringLiteral("DIR"));
    parser.addOption(screenshots);
    const QCommandLineOption rotaryScreenshots(
        QStringLiteral("screenshots-rotary"),
        QCoreApplication::translate("CommandLine", "Save the rotary length-extension pictures to DIR and quit"),
        QStringLiteral("DIR"));
    parser.addOption(rotaryScreenshots);
    const QCommandLineOption layoutScreenshots(
        QStringLiteral("screenshots-layout"),
        QCoreApplication::translate("CommandLine",
                                    "Save every view as the window opens on this screen, with the Lessons dock open, "
                                    "to DIR and quit (to check that nothing is clipped)"),
        QStringLiteral("DIR"));
    parser.addOption(layoutScreenshots);
    const QCommandLineOption model(
        QStringLiteral("model"),
        QCoreApplication::translate("CommandLine", "Open a Hugging Face model folder in the Your model tab"),
        QStringLiteral("FOLDER"));
    parser.addOption(model);
    const QCommandLineOption modelScreenshots(
        QStringLiteral("screenshots-model"),
        QCoreApplication::translate("CommandLine",
                                    "Save the Your model tab's pictures of the --model folder to DIR and quit"),
        QStringLiteral("DIR"));
    parser.addOption(modelScreenshots);
    const QCommandLineOption taskScreenshots(
        QStringLiteral("screenshots-tasks"),
        QCoreApplication::translate("CommandLine",
                                    "Run the DroPE recipe on passkey in the Train tab as the window opens on this "
                                    "screen, save it running and done to DIR, and quit"),
        QStringLiteral("DIR"));
    parser.addOption(taskScreenshots);
    const QCommandLineOption schemeScreenshots(
        QStringLiteral("screenshots-schemes"),
        QCoreApplication::translate("CommandLine",
                                    "Save the Rotary frequencies view with keep and rotary-fraction, the Train tab "
                                    "with its model options and FIRE's learned curve, as the window opens on this "
                                    "screen, to DIR and quit"),
        QStringLiteral("DIR"));
    parser.addOption(schemeScreenshots);
    const QCommandLineOption lang(
        QStringLiteral("lang"),
        QCoreApplication::translate("CommandLine",
                                    "Interface language for this run: %1 (default: the one chosen in View > Language)")
            .arg(languageCodes()),
        QStringLiteral("CODE"));
    parser.addOption(lang);
    parser.process(app);

    if (!parser.positionalArguments().isEmpty())
        result.session = parser.positionalArguments().first();
    result.screenshots = parser.value(screenshots);
    result.rotaryScreenshots = parser.value(rotaryScreenshots);
    result.layoutScreenshots = parser.value(layoutScreenshots);
    result.modelScreenshots = parser.value(modelScreenshots);
    result.modelFolder = parser.value(model);
    result.taskScreenshots = parser.value(taskScreenshots);
    result.schemeScreenshots = parser.value(schemeScreenshots);
    return result;
}

} // namespace plab::ui
