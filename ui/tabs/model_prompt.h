// What a view that needs a trained model shows while it has none: why, and a button that trains a demo model now
// (with its progress), instead of an empty panel.
#pragma once

#include <QElapsedTimer>
#include <QWidget>

class QLabel;
class QProgressBar;
class QPushButton;

namespace plab::ui {

class TrainingRun;

class ModelPrompt : public QWidget {
    Q_OBJECT
public:
    explicit ModelPrompt(const QString& message, QWidget* parent = nullptr);
    // Follows `run` (the window's demo run): its progress while it runs, its error if it fails; the button waits.
    void watch(TrainingRun* run);
    QString message() const;
    QPushButton* trainButton() const { return m_train; }
    QString progressText() const;

Q_SIGNALS:
    void trainRequested(); // the button: train a demo model now

private:
    QLabel* m_message = nullptr;
    QPushButton* m_train = nullptr;
    QLabel* m_note = nullptr;
    QProgressBar* m_progress = nullptr;
    QLabel* m_state = nullptr;
    QElapsedTimer m_clock; // since the run started: the time a Cancel reports
};

} // namespace plab::ui
