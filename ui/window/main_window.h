// The main window: scheme panel (dock), the view tabs, status bar with hover read-out and job progress, menus
// for sessions, export, palettes; window state in QSettings.
#pragma once

#include "painting/export.h"
#include "workers/model_compute.h"

#include "lessons/lessons.h"

#include <nlohmann/json.hpp>

#include <QElapsedTimer>
#include <QMainWindow>

#include <functional>
#include <optional>
#include <vector>

class QDockWidget;
class QLabel;
class QMenu;
class QProgressBar;
class QPushButton;
class QTabWidget;

namespace plab::ui {

class SchemePanel;
class ViewBase;
class AttentionView;
class BiasView;
class EntropyView;
class HfModelView;
class LessonsPanel;
class TrainView;
class TrainingRun;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    SchemePanel* panel() const { return m_panel; }
    LessonsPanel* lessonsPanel() const { return m_lessons; }
    QTabWidget* tabs() const { return m_tabs; }
    HfModelView* modelView() const { return m_model; }     // "Your model": File → Open model folder…
    QPushButton* cancelButton() const { return m_cancel; } // the status bar's Cancel (Esc) of the current view
    ViewBase* view(const QString& id) const;
    ViewBase* currentView() const;
    void showView(const QString& id);

    // The whole session as JSON, and applying one: all or nothing (a bad file leaves the window as it was).
    nlohmann::json sessionState() const;
    // Relative file names in it (checkpoints) are taken from `folder`, the session file's own.
    void applySession(const nlohmann::json& session, const QString& folder = QString()); // throws InputError
    bool openSession(const QString& path, QString* error = nullptr);
    bool saveSession(const QString& path, QString* error = nullptr);
    QStringList recentSessions() const;

    // The corpus the model views train and read on; checks that the file is readable UTF-8 text.
    bool setCorpus(const QString& path, QString* error = nullptr);
    QString corpus() const { return m_corpus; }

    // What a drop does: a .json file opens as a session, any other file becomes the corpus.
    bool openDroppedFile(const QString& path, QString* error = nullptr);

    void setDark(bool dark);
    // Keeps the window within `available` (the screen's available geometry): shrinks and moves it when it is larger
    // or outside (a geometry saved on a larger screen). Called when the window is built; tests call it too.
    void fitToScreen(const QRect& available);
    // A screen narrower than this opens with the Lessons dock collapsed (Lessons > Show lessons opens it).
    static constexpr int kSmallScreenWidth = 1600;

    // "Show me" of a lesson: sets the panel and the view through the session checks, shows the view; a model view
    // gets its demo model, the Train tab starts its run. False with a status message when the state is refused.
    bool applyLessonState(const LessonState& state);
    // An attention state's model: selected when one of its scheme is here, else trained now with the state's preset.
    void showLessonModel(const LessonState& state);
    bool isDark() const { return m_dark; }

    // Installs the translator of `code` (i18n.h), remembers the choice, and replaces this window by a new one built
    // in that language: session state, window geometry, corpus and the models of this window carry over; results
    // only in memory (the Train tab's curves) and running jobs do not. The new window takes this one's
    // WA_DeleteOnClose; this one is hidden, and deleted later when it had WA_DeleteOnClose (else its owner deletes
    // it). Returns the window now shown (this when `code` is already the language), nullptr with `error` set.
    MainWindow* switchLanguage(const QString& code, QString* error = nullptr);
    // Trains one demo model in the background (default: demoTrainRequest({kDemoModelScheme}) on the window's corpus);
    // it is kept and shown in the attention and entropy views. False while one trains already.
    bool trainDemoModel(const std::optional<TrainRequest>& request = std::nullopt);
    TrainingRun* demoRun() const { return m_demoRun; }
    // A model trained here: kept in keptModelsFolder() (a failure is reported, not fatal) and offered to the
    // attention and entropy views as their current model.
    void adoptTrainedModel(const SharedModel& model);

    // File → Open sweep results…: a sweep folder's results (core's collectSweepResults) in the Train tab, as mean
    // curves with ± sd bands; false with the reason (no results, not a sweep folder, a run in progress).
    bool openSweepResults(const QString& dir, QString* error = nullptr);

    // Export the current view's picture or data, by extension; false with a message on failure.
    bool exportCurrent(const QString& path, const ImageOptions& options, QString* error = nullptr);

protected:
    void closeEvent(QCloseEvent* event) override;
    void showEvent(QShowEvent* event) override; // the first show fits the window again, now with its frame
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    void buildSchemeDock();  // the scheme-and-parameters panel on the left
    void buildLessonsDock(); // the lessons on the right
    void buildStatusBar();   // hover read-out, progress and Cancel
    void buildMenus();       // File, View, Lessons, Help
    void buildFileMenu();
    void buildViewMenu();
    void buildLessonsMenu();
    void buildHelpMenu();
    void addView(ViewBase* view);
    void onPanelChanged();
    void onTabChanged(int index);
    // The scheme panel on the tabs that read it (ViewBase::usesSchemePanel), hidden on the others; a panel the user
    // closed stays closed.
    void placeSchemeDock();
    void onBusyChanged();
    void exportDialog();
    void copyImage();
    void openSessionDialog();
    void saveSessionDialog(bool saveAs);
    void openCorpusDialog();
    void openSweepDialog();
    void addRecent(const QString& path);
    // Runs `io` (opening or saving the session at `path`); on success the file becomes the window's session.
    bool sessionFileAction(const QString& path, QString* error, const std::function<void()>& io);
    void rebuildRecentMenu();
    void showError(const QString& title, const QString& message);
    void restoreSettings();
    void chooseLanguage(const QString& code); // View → Language: asks first when results would be lost

    SchemePanel* m_panel = nullptr;
    LessonsPanel* m_lessons = nullptr;
    QDockWidget* m_schemeDock = nullptr;
    QDockWidget* m_lessonsDock = nullptr;
    QTabWidget* m_tabs = nullptr;
    std::vector<ViewBase*> m_views;
    AttentionView* m_attention = nullptr;
    TrainView* m_train = nullptr;
    EntropyView* m_entropy = nullptr;
    BiasView* m_bias = nullptr;
    HfModelView* m_model = nullptr;
    TrainingRun* m_demoRun = nullptr;
    QLabel* m_hover = nullptr;
    QProgressBar* m_progress = nullptr;
    QElapsedTimer m_busyClock; // since the current view became busy: the time a Cancel reports
    QPushButton* m_cancel = nullptr;
    QMenu* m_recentMenu = nullptr;
    QString m_sessionPath;
    QString m_corpus;
    bool m_dark = false;
    bool m_shownOnce = false;
    bool m_schemePanelWanted = true;  // the user's choice (View > Show scheme panel, the dock's close button)
    bool m_placingSchemeDock = false; // the window, not the user, shows or hides it
    bool m_lessonsDockSized = false;  // on a small screen: the Lessons dock got its starting width
};

// Fusion style with a light or dark palette that keeps text, links and highlights readable.
void applyPalette(bool dark);

} // namespace plab::ui
