// positionlab: the desktop application (thin main: the window and everything in it live in positionlab_ui).
#include "i18n.h"
#include "kept_models.h"
#include "main_window.h"
#include "screenshots.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QMessageBox>

int main(int argc, char** argv)
{
    QApplication app(argc, argv);
    plab::ui::setApplicationNames(); // the same as the CLI's: both find the same kept models

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Positional encodings and length extrapolation in transformers"));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument(QStringLiteral("session"), QStringLiteral("A session file to open (optional)"));
    const QCommandLineOption screenshots(
        QStringLiteral("screenshots"),
        QStringLiteral("Drive every view, save DIR/<view>.png, and quit (for the README)"), QStringLiteral("DIR"));
    parser.addOption(screenshots);
    const QCommandLineOption rotaryScreenshots(
        QStringLiteral("screenshots-rotary"),
        QStringLiteral("Save the rotary length-extension pictures to DIR and quit"), QStringLiteral("DIR"));
    parser.addOption(rotaryScreenshots);
    const QCommandLineOption lang(QStringLiteral("lang"),
                                  QStringLiteral("Interface language for this run: %1 (default: the one chosen in "
                                                 "View > Language)")
                                      .arg(plab::ui::languageCodes()),
                                  QStringLiteral("CODE"));
    parser.addOption(lang);
    parser.process(app);

    QString error;
    if (!plab::ui::setLanguage(parser.isSet(lang) ? parser.value(lang) : plab::ui::savedLanguage(), &error)) {
        qCritical("positionlab: %s", qPrintable(error));
        return 2;
    }
    plab::ui::applyPalette(false);
    // On the heap: View > Language replaces the window by a new one (MainWindow::switchLanguage).
    auto* window = new plab::ui::MainWindow;
    window->setAttribute(Qt::WA_DeleteOnClose);
    window->resize(1400, 900);
    window->show();
    if (!parser.positionalArguments().isEmpty()) {
        if (!window->openSession(parser.positionalArguments().first(), &error))
            QMessageBox::warning(window, plab::ui::MainWindow::tr("Open session"), error);
    }
    if (parser.isSet(rotaryScreenshots)) {
        const bool ok = plab::ui::takeRotaryScreenshots(*window, parser.value(rotaryScreenshots), 1400, &error);
        if (!ok)
            qCritical("positionlab: %s", qPrintable(error));
        delete window;
        return ok ? 0 : 1;
    }
    if (parser.isSet(screenshots)) {
        const bool ok = plab::ui::takeScreenshots(*window, parser.value(screenshots), 1100, &error);
        if (!ok)
            qCritical("positionlab: %s", qPrintable(error));
        delete window;
        return ok ? 0 : 1;
    }
    return app.exec();
}
