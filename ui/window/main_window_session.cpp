// The main window's sessions: the state it saves, applying one all or nothing, session files and the recent list.
#include "window/main_window.h"

#include "settings/session.h"
#include "tabs/attention_view.h"
#include "tabs/scheme_panel.h"
#include "tabs/view_base.h"

#include "base/errors.h"

#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>
#include <QSettings>
#include <QStatusBar>

namespace plab::ui {

namespace {

constexpr int kMaxRecent = 8;

} // namespace

nlohmann::json MainWindow::sessionState() const
{
    nlohmann::json views = nlohmann::json::object();
    for (ViewBase* v : m_views)
        views[v->viewId().toStdString()] = v->saveState();
    nlohmann::json s{{"format", kSessionFormat},
                     {"version", kSessionVersion},
                     {"panel", m_panel->saveState()},
                     {"views", views},
                     {"tab", currentView() ? currentView()->viewId().toStdString() : std::string("bias")},
                     {"dark", m_dark}};
    if (!m_corpus.isEmpty())
        s["corpus"] = m_corpus.toStdString();
    return s;
}

void MainWindow::applySession(const nlohmann::json& session, const QString& folder)
{
    const nlohmann::json before = sessionState();
    try {
        const nlohmann::json views = sessionObject(session, "views", "session");
        const std::string tab = sessionString(session, "tab", "bias", "session");
        if (!view(QString::fromStdString(tab)))
            throw InputError("session: tab = '" + tab +
                             "' is not a view; allowed: bias, compare, dot, entropy, attention, train");
        const bool dark = sessionBool(session, "dark", m_dark, "session");
        m_panel->restoreState(sessionObject(session, "panel", "session"));
        for (ViewBase* v : m_views) {
            const std::string id = v->viewId().toStdString();
            v->restoreState(sessionObject(views, id.c_str(), "views"));
        }
        const std::string corpus = sessionString(session, "corpus", "", "session");
        // Missing or broken files (corpus, checkpoints) are reported, not fatal: the rest of the session applies.
        QStringList problems =
            static_cast<AttentionView*>(view(QStringLiteral("attention")))->loadSessionCheckpoints(folder);
        if (!corpus.empty()) {
            QString error;
            if (!setCorpus(QString::fromStdString(corpus), &error))
                problems << error;
        }
        if (!problems.isEmpty())
            statusBar()->showMessage(problems.join(QStringLiteral("; ")), 8000);
        showView(QString::fromStdString(tab));
        if (dark != m_dark)
            setDark(dark);
    } catch (const InputError&) {
        // All or nothing: put back what was there.
        m_panel->restoreState(before.at("panel"));
        for (ViewBase* v : m_views)
            v->restoreState(before.at("views").at(v->viewId().toStdString()));
        throw;
    }
}

bool MainWindow::openSession(const QString& path, QString* error)
{
    return sessionFileAction(path, error, [&] { applySession(readSessionFile(path), QFileInfo(path).absolutePath()); });
}

bool MainWindow::saveSession(const QString& path, QString* error)
{
    const bool saved = sessionFileAction(path, error, [&] { writeSessionFile(path, sessionState()); });
    const int unsaved = static_cast<AttentionView*>(view(QStringLiteral("attention")))->unsavedModelCount();
    if (saved && unsaved > 0)
        statusBar()->showMessage(tr("Session saved. %n model(s) trained here are not in it: save them with Save model… "
                                    "in Attention on text, then save the session again.",
                                    nullptr, unsaved),
                                 12000);
    return saved;
}

bool MainWindow::sessionFileAction(const QString& path, QString* error, const std::function<void()>& io)
{
    try {
        io();
        m_sessionPath = path;
        addRecent(path);
        setWindowTitle(tr("PositionLab — %1").arg(QFileInfo(path).fileName()));
        return true;
    } catch (const std::exception& e) {
        if (error)
            *error = QString::fromStdString(e.what());
        return false;
    }
}

QStringList MainWindow::recentSessions() const
{
    return QSettings().value(QStringLiteral("recentSessions")).toStringList();
}

void MainWindow::addRecent(const QString& path)
{
    QStringList list = recentSessions();
    const QString absolute = QFileInfo(path).absoluteFilePath();
    list.removeAll(absolute);
    list.prepend(absolute);
    while (list.size() > kMaxRecent)
        list.removeLast();
    QSettings().setValue(QStringLiteral("recentSessions"), list);
    rebuildRecentMenu();
}

void MainWindow::rebuildRecentMenu()
{
    m_recentMenu->clear();
    const QStringList list = recentSessions();
    for (const QString& path : list)
        m_recentMenu
            ->addAction(QFileInfo(path).fileName(), this,
                        [this, path] {
                            QString error;
                            if (!openSession(path, &error))
                                showError(tr("Open session"), error);
                        })
            ->setToolTip(path);
    m_recentMenu->setEnabled(!list.isEmpty());
}

void MainWindow::openSessionDialog()
{
    const QString path =
        QFileDialog::getOpenFileName(this, tr("Open session"), QString(), tr("PositionLab session (*.json)"));
    if (path.isEmpty())
        return;
    QString error;
    if (!openSession(path, &error))
        showError(tr("Open session"), error);
}

void MainWindow::saveSessionDialog(bool saveAs)
{
    QString path = m_sessionPath;
    if (saveAs || path.isEmpty())
        path = QFileDialog::getSaveFileName(this, tr("Save session"), QStringLiteral("session.json"),
                                            tr("PositionLab session (*.json)"));
    if (path.isEmpty())
        return;
    QString error;
    if (!saveSession(path, &error))
        showError(tr("Save session"), error);
}

} // namespace plab::ui
