// The main window: scheme panel (dock), the view tabs, status bar with hover read-out and job progress, menus
// for sessions, export, palettes; window state in QSettings.
#pragma once

#include "export.h"
#include "model_compute.h"

#include <nlohmann/json.hpp>

#include <QMainWindow>

#include <functional>
#include <optional>
#include <vector>

class QLabel;
class QMenu;
class QProgressBar;
class QPushButton;
class QTabWidget;

namespace plab::ui {

class SchemePanel;
class ViewBase;
class AttentionView;
class EntropyView;
class TrainView;
class TrainingRun;

class MainWindow : public QMainWindow
{
    Q_OBJECT
public:
    explicit MainWindow(QWidget *parent = nullptr);
    ~MainWindow() override;

    SchemePanel *panel() const { return m_panel; }
    QTabWidget *tabs() const { return m_tabs; }
    ViewBase *view(const QString &id) const;
    ViewBase *currentView() const;
    void showView(const QString &id);

    // The whole session as JSON, and applying one: all or nothing (a bad file leaves the window as it was).
    nlohmann::json sessionState() const;
    // Relative file names in it (checkpoints) are taken from `folder`, the session file's own.
    void applySession(const nlohmann::json &session, const QString &folder = QString()); // throws InputError
    bool openSession(const QString &path, QString *error = nullptr);
    bool saveSession(const QString &path, QString *error = nullptr);
    QStringList recentSessions() const;

    // The corpus the model views train and read on; checks that the file is readable UTF-8 text.
    bool setCorpus(const QString &path, QString *error = nullptr);
    QString corpus() const { return m_corpus; }

    // What a drop does: a .json file opens as a session, any other file becomes the corpus.
    bool openDroppedFile(const QString &path, QString *error = nullptr);

    void setDark(bool dark);
    bool isDark() const { return m_dark; }

    // Trains one demo model in the background (default: demoTrainRequest({kDemoModelScheme}) on the window's corpus);
    // it is kept and shown in the attention and entropy views. False while one trains already.
    bool trainDemoModel(const std::optional<TrainRequest> &request = std::nullopt);
    TrainingRun *demoRun() const { return m_demoRun; }
    // A model trained here: kept in keptModelsFolder() (a failure is reported, not fatal) and offered to the
    // attention and entropy views as their current model.
    void adoptTrainedModel(const SharedModel &model);

    // Export the current view's picture or data, by extension; false with a message on failure.
    bool exportCurrent(const QString &path, const ImageOptions &options, QString *error = nullptr);

protected:
    void closeEvent(QCloseEvent *event) override;
    void dragEnterEvent(QDragEnterEvent *event) override;
    void dropEvent(QDropEvent *event) override;

private:
    void buildMenus();
    void addView(ViewBase *view);
    void onPanelChanged();
    void onTabChanged(int index);
    void onBusyChanged();
    void exportDialog();
    void copyImage();
    void openSessionDialog();
    void saveSessionDialog(bool saveAs);
    void openCorpusDialog();
    void addRecent(const QString &path);
    // Runs `io` (opening or saving the session at `path`); on success the file becomes the window's session.
    bool sessionFileAction(const QString &path, QString *error, const std::function<void()> &io);
    void rebuildRecentMenu();
    void showError(const QString &title, const QString &message);
    void restoreSettings();

    SchemePanel *m_panel = nullptr;
    QTabWidget *m_tabs = nullptr;
    std::vector<ViewBase *> m_views;
    AttentionView *m_attention = nullptr;
    TrainView *m_train = nullptr;
    EntropyView *m_entropy = nullptr;
    TrainingRun *m_demoRun = nullptr;
    QLabel *m_hover = nullptr;
    QProgressBar *m_progress = nullptr;
    QPushButton *m_cancel = nullptr;
    QMenu *m_recentMenu = nullptr;
    QString m_sessionPath;
    QString m_corpus;
    bool m_dark = false;
};

// Fusion style with a light or dark palette that keeps text, links and highlights readable.
void applyPalette(bool dark);

} // namespace plab::ui
