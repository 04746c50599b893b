// positionlab: the desktop application (thin main: the window and everything in it live in positionlab_ui).
#include "window/gui_command_line.h"
#include "settings/i18n.h"
#include "workers/kept_models.h"
#include "window/main_window.h"
#include "tabs/hf_model_view.h"
#include "window/screenshots.h"

#include <QApplication>
#include <QMessageBox>

#include <functional>
#include <utility>

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
    // A screenshot mode drives the window, writes its pictures and ends the program (0: written, 1: a step failed).
    using namespace plab::ui;
    const std::pair<QString, std::function<bool()>> modes[] = {
        {command.rotaryScreenshots,
         [&] { return takeRotaryScreenshots(*window, command.rotaryScreenshots, 1400, &error); }},
        {command.modelScreenshots,
         [&] {
             if (command.modelFolder.isEmpty())
                 error = QStringLiteral("--screenshots-model needs --model FOLDER");
             return !command.modelFolder.isEmpty() &&
                    takeModelScreenshots(*window, command.modelFolder, command.modelScreenshots, &error);
         }},
        {command.layoutScreenshots,
         [&] { return takeLayoutScreenshots(*window, command.layoutScreenshots, &error, command.modelFolder); }},
        {command.taskScreenshots, [&] { return takeTaskScreenshots(*window, command.taskScreenshots, &error); }},
        {command.schemeScreenshots, [&] { return takeSchemeScreenshots(*window, command.schemeScreenshots, &error); }},
        {command.screenshots, [&] { return takeScreenshots(*window, command.screenshots, 1100, &error); }},
    };
    for (const auto& [dir, take] : modes) {
        if (dir.isEmpty())
            continue;
        const bool ok = take();
        if (!ok)
            qCritical("positionlab: %s", qPrintable(error));
        delete window;
        return ok ? 0 : 1;
    }
    if (!command.modelFolder.isEmpty()) {
        window->showView(window->modelView()->viewId());
        window->modelView()->openFolder(command.modelFolder);
    }
    return app.exec();
}
