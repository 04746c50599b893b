// The main window's menus: File, View (views, panels, palette, language), Lessons and Help, with their shortcuts.
#include "window/main_window.h"

#include "window/lessons_panel.h"
#include "settings/i18n.h"
#include "tabs/hf_model_view.h"
#include "tabs/view_base.h"

#include <QAction>
#include <QActionGroup>
#include <QDockWidget>
#include <QFileDialog>
#include <QMenuBar>
#include <QMessageBox>
#include <QTabWidget>

namespace plab::ui {

void MainWindow::buildMenus()
{
    buildFileMenu();
    buildViewMenu();
    buildLessonsMenu();
    buildHelpMenu();
    rebuildRecentMenu();
}

void MainWindow::buildFileMenu()
{
    QMenu* file = menuBar()->addMenu(tr("&File"));
    file->addAction(tr("&Open session…"), QKeySequence::Open, this, &MainWindow::openSessionDialog);
    m_recentMenu = file->addMenu(tr("Open &recent"));
    file->addAction(tr("&Save session"), QKeySequence::Save, this, [this] { saveSessionDialog(false); });
    file->addAction(tr("Save session &as…"), QKeySequence::SaveAs, this, [this] { saveSessionDialog(true); });
    file->addSeparator();
    file->addAction(tr("Open &corpus…"), QKeySequence(tr("Ctrl+Shift+O")), this, &MainWindow::openCorpusDialog);
    file->addAction(tr("Open s&weep results…"), this, &MainWindow::openSweepDialog);
    file->addAction(tr("Open &model folder…"), this, [this] {
        showView(m_model->viewId());
        m_model->openFolderDialog();
    });
    file->addSeparator();
    file->addAction(tr("&Export view…"), QKeySequence(tr("Ctrl+E")), this, &MainWindow::exportDialog);
    file->addAction(tr("Copy &image"), QKeySequence(tr("Ctrl+Shift+C")), this, &MainWindow::copyImage);
    file->addSeparator();
    file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);
}

void MainWindow::buildViewMenu()
{
    QMenu* viewMenu = menuBar()->addMenu(tr("&View"));
    for (int i = 0; i < static_cast<int>(m_views.size()); ++i) {
        ViewBase* v = m_views[i];
        viewMenu->addAction(v->viewTitle(), QKeySequence(tr("Ctrl+%1").arg(i + 1)), this,
                            [this, v] { m_tabs->setCurrentWidget(v); });
    }
    viewMenu->addSeparator();
    QAction* showScheme = m_schemeDock->toggleViewAction();
    showScheme->setText(tr("Show &scheme panel"));
    showScheme->setShortcut(QKeySequence(tr("Ctrl+Shift+P")));
    viewMenu->addAction(showScheme);
    viewMenu->addAction(tr("Reset &zoom"), QKeySequence(tr("Ctrl+0")), this, [this] {
        if (ViewBase* v = currentView())
            v->resetZoom();
    });
    QAction* dark = viewMenu->addAction(tr("&Dark palette"));
    dark->setCheckable(true);
    dark->setShortcut(QKeySequence(tr("Ctrl+Shift+D")));
    dark->setObjectName(QStringLiteral("darkAction"));
    connect(dark, &QAction::toggled, this, &MainWindow::setDark);
    // Each language by its own name, untranslated, so a reader can find theirs whatever the current one.
    QMenu* language = viewMenu->addMenu(tr("&Language"));
    language->setObjectName(QStringLiteral("languageMenu"));
    auto* languageGroup = new QActionGroup(language);
    for (const Language& l : languages()) {
        QAction* a = language->addAction(l.nativeName);
        a->setObjectName(QStringLiteral("language_") + l.code);
        a->setCheckable(true);
        a->setChecked(l.code == currentLanguage());
        languageGroup->addAction(a);
        connect(a, &QAction::triggered, this, [this, code = l.code] { chooseLanguage(code); });
    }
}

void MainWindow::buildLessonsMenu()
{
    QMenu* lessons = menuBar()->addMenu(tr("&Lessons"));
    QAction* showLessons = m_lessonsDock->toggleViewAction();
    showLessons->setText(tr("Show &lessons"));
    showLessons->setShortcut(QKeySequence(tr("Ctrl+L")));
    lessons->addAction(showLessons);
    lessons->addAction(tr("&Next figure"), QKeySequence(Qt::ALT | Qt::Key_Right), m_lessons, &LessonsPanel::next);
    lessons->addAction(tr("&Previous figure"), QKeySequence(Qt::ALT | Qt::Key_Left), m_lessons, &LessonsPanel::back);
    lessons->addSeparator();
    lessons->addAction(tr("&Open folder…"), this, [this] {
        const QString folder =
            QFileDialog::getExistingDirectory(this, tr("Open a folder of lessons"), m_lessons->folder());
        if (folder.isEmpty())
            return;
        QString error;
        if (!m_lessons->openFolder(folder, &error))
            showError(tr("Open lessons"), error);
        else
            m_lessonsDock->show();
    });
    lessons->addAction(tr("&Built-in lessons"), this, [this] {
        m_lessons->openFolder(QString());
        m_lessonsDock->show();
    });
}

void MainWindow::buildHelpMenu()
{
    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&Keyboard shortcuts"), this, [this] {
        QMessageBox::information(
            this, tr("Keyboard shortcuts"),
            tr("Ctrl+O open session · Ctrl+S save · Ctrl+Shift+S save as\n"
               "Ctrl+E export view · Ctrl+Shift+C copy image · Ctrl+Shift+O open corpus\n"
               "Ctrl+1…6 views · Ctrl+0 reset zoom · Ctrl+Shift+D dark palette · Esc cancel job\n"
               "Heatmaps: wheel zoom, drag pan, double-click whole matrix, hover for (m, n, value)"));
    });
    help->addAction(tr("&About PositionLab"), this, [this] {
        QMessageBox::about(this, tr("About PositionLab"),
                           tr("PositionLab 0.1 — positional encodings and length extrapolation in transformers.\n"
                              "Every number shown comes from the core library; positionlab-cli renders the same "
                              "pictures headless."));
    });
}

} // namespace plab::ui
