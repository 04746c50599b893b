// positionlab: the desktop application (thin main: the window and everything in it live in positionlab_ui).
#include "window/gui_command_line.h"
#include "settings/i18n.h"
#include "workers/kept_models.h"
#include "window/main_window.h"
#include "tabs/hf_model_view.h"
#include "window/screenshots.h"

#include <QApplication>
#include <QMessageBox>

int main(int argc, char** argv)
{
    QApplication app(argc, argv);
    plab::ui::setApplicationNames(); // the same as the CLI's: both find the same kept models

    const plab::ui::GuiCommandLine command = plab::ui::parseGuiCommandLine(app);
    if (!command.error.isEmpty()) {
        qCritical("positionlab: %s", qPrintable(command.error));
        return 2;
    }
    plab::ui::applyPalette(false);
    // On the heap: View > Language replaces the window by a new one (MainWindow::switchLanguage).
    auto* window = new plab::ui::MainWindow;
    window->setAttribute(Qt::WA_DeleteOnClose);
    // The README's pictures are of a 1400 x 900 window whatever the screen; otherwise the window fits the screen.
    if (!command.screenshots.isEmpty() || !command.rotaryScreenshots.isEmpty() || !command.modelScreenshots.isEmpty())
        window->resize(1400, 900);
    window->show();
    QString error;
    if (!command.session.isEmpty()) {
        if (!window->openSession(command.session, &error))
            QMessageBox::warning(window, plab::ui::MainWindow::tr("Open session"), error);
    }
    if (!command.rotaryScreenshots.isEmpty()) {
        const bool ok = plab::ui::takeRotaryScreenshots(*window, command.rotaryScreenshots, 1400, &error);
        if (!ok)
            qCritical("positionlab: %s", qPrintable(error));
        delete window;
        return ok ? 0 : 1;
    }
    if (!command.modelScreenshots.isEmpty()) {
        const bool ok = !command.modelFolder.isEmpty() &&
                        plab::ui::takeModelScreenshots(*window, command.modelFolder, command.modelScreenshots, &error);
        if (!ok)
            qCritical("positionlab: %s", qPrintable(command.modelFolder.isEmpty()
                                                        ? QStringLiteral("--screenshots-model needs --model FOLDER")
                                                        : error));
        delete window;
        return ok ? 0 : 1;
    }
    if (!command.modelFolder.isEmpty()) {
        window->showView(window->modelView()->viewId());
        window->modelView()->openFolder(command.modelFolder);
    }
    if (!command.layoutScreenshots.isEmpty()) {
        const bool ok = plab::ui::takeLayoutScreenshots(*window, command.layoutScreenshots, &error);
        if (!ok)
            qCritical("positionlab: %s", qPrintable(error));
        delete window;
        return ok ? 0 : 1;
    }
    if (!command.taskScreenshots.isEmpty()) {
        const bool ok = plab::ui::takeTaskScreenshots(*window, command.taskScreenshots, &error);
        if (!ok)
            qCritical("positionlab: %s", qPrintable(error));
        delete window;
        return ok ? 0 : 1;
    }
    if (!command.schemeScreenshots.isEmpty()) {
        const bool ok = plab::ui::takeSchemeScreenshots(*window, command.schemeScreenshots, &error);
        if (!ok)
            qCritical("positionlab: %s", qPrintable(error));
        delete window;
        return ok ? 0 : 1;
    }
    if (!command.screenshots.isEmpty()) {
        const bool ok = plab::ui::takeScreenshots(*window, command.screenshots, 1100, &error);
        if (!ok)
            qCritical("positionlab: %s", qPrintable(error));
        delete window;
        return ok ? 0 : 1;
    }
    return app.exec();
}
