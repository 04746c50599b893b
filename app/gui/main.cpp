// positionlab: the desktop application (thin main: the window and everything in it live in positionlab_ui).
#include "kept_models.h"
#include "main_window.h"
#include "screenshots.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QMessageBox>

int main(int argc, char **argv)
{
    QApplication app(argc, argv);
    plab::ui::setApplicationNames(); // the same as the CLI's: both find the same kept models

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Positional encodings and length extrapolation in transformers"));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument(QStringLiteral("session"), QStringLiteral("A session file to open (optional)"));
    const QCommandLineOption screenshots(QStringLiteral("screenshots"),
                                         QStringLiteral("Drive every view, save DIR/<view>.png, and quit (for the README)"),
                                         QStringLiteral("DIR"));
    parser.addOption(screenshots);
    parser.process(app);

    plab::ui::applyPalette(false);
    plab::ui::MainWindow window;
    window.resize(1400, 900);
    window.show();
    if (!parser.positionalArguments().isEmpty()) {
        QString error;
        if (!window.openSession(parser.positionalArguments().first(), &error))
            QMessageBox::warning(&window, QStringLiteral("Open session"), error);
    }
    if (parser.isSet(screenshots)) {
        QString error;
        const bool ok = plab::ui::takeScreenshots(window, parser.value(screenshots), 1100, &error);
        if (!ok)
            qCritical("positionlab: %s", qPrintable(error));
        return ok ? 0 : 1;
    }
    return app.exec();
}
