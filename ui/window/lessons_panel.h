// The Lessons panel: a lesson's text beside the live views, "Show me" for each of its states, Back and Next.
#pragma once

#include "lessons/lessons.h"

#include <nlohmann/json.hpp>

#include <QWidget>

class QComboBox;
class QLabel;
class QPushButton;
class QScrollArea;
class QVBoxLayout;

namespace plab::ui {

// What "Show me" does to the window, as session parts: the view to show, the scheme panel's state and the view's
// own state (the formats of MainWindow::sessionState()), so a lesson state is applied by the session code's checks.
struct LessonStateSession {
    QString view;             // "bias", "compare", ...
    nlohmann::json panel;     // empty when the view does not read the panel
    nlohmann::json viewState; // the view's restoreState() input
};
LessonStateSession lessonStateSession(const LessonState& state);

class LessonsPanel : public QWidget {
    Q_OBJECT
public:
    explicit LessonsPanel(QWidget* parent = nullptr);

    // "en" or "zh_CN": each lesson's Chinese twin where there is one. Reloads the current folder.
    void setLanguage(const QString& language);
    QString language() const { return m_language; }
    // Loads a teacher's folder of NN-slug.md files (empty: the lessons that ship). Broken files are listed with their
    // error and the others still load; false with `error` set when the folder itself cannot be read.
    bool openFolder(const QString& folder, QString* error = nullptr);
    QString folder() const { return m_folder; }
    const LessonSet& lessons() const { return m_set; }

    void showLesson(int index); // into lessons().lessons
    int currentLesson() const { return m_lesson; }
    int currentState() const { return m_state; }
    // Emits stateRequested for state `index` of the current lesson and marks it as the current one.
    void showState(int index);
    void next(); // the next state; past the last one, the next lesson's first
    void back();

Q_SIGNALS:
    void stateRequested(const plab::LessonState& state);

private:
    void reload();
    void rebuildPage();
    void updateButtons();
    QString m_language = QStringLiteral("en");
    QString m_folder;
    LessonSet m_set;
    int m_lesson = -1;
    int m_state = -1;
    QComboBox* m_choice = nullptr;
    QLabel* m_problems = nullptr;
    QScrollArea* m_scroll = nullptr;
    QWidget* m_page = nullptr;
    QVBoxLayout* m_pageLayout = nullptr;
    std::vector<QPushButton*> m_showButtons;
    QPushButton* m_back = nullptr;
    QPushButton* m_next = nullptr;
    QLabel* m_position = nullptr;
};

} // namespace plab::ui
