// "Continue the text": a prompt (repeated past the context if asked) continued twice side by side, under the model's
// own positions and under a chosen length-extension method, the tokens appearing as they come. The Your model tab
// shows it for the open folder, the Train tab for its lab models.
#pragma once

#include "workers/generation.h"

#include <QElapsedTimer>
#include <QWidget>

#include <array>
#include <vector>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QGridLayout;
class QHBoxLayout;
class QGroupBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QSpinBox;
class QTextEdit;

namespace plab::ui {

class ContinueTextPage : public QWidget {
    Q_OBJECT
public:
    // Folder: the Your model tab's open folder (setFolder). Lab: a chooser of the lab models offered (addModel).
    enum class Source { Folder, Lab };
    explicit ContinueTextPage(Source source, QWidget* parent = nullptr);
    ~ContinueTextPage() override;

    void setFolder(const HfModelPtr& folder);
    // Offers a lab model (the same file or name again replaces its entry); `select` makes it the current one.
    void addModel(const SharedModel& model, bool select = true);
    int modelCount() const { return static_cast<int>(m_models.size()); }
    GenerationModel currentModel() const;

    void setPrompt(const QString& text);
    void setRepeatTo(int tokens); // 0: off
    // The second continuation's method (a rotaryMethodCatalog name) and its NAME=VALUE settings, as typed.
    void setMethod(const QString& method, const QString& settings = {});
    void setMaxNew(int tokens);
    // temperature 0: greedy (the default); else sampled with top-k (0: all) from `seed`.
    void setSampling(double temperature, int topK = 0, quint64 seed = 0);
    GenerationRequest request() const;

    void start();
    void cancel(); // "Canceled after N s." at once; the worker stops at its next token
    bool isBusy() const;

    QLabel* statusLabel() const { return m_status; }
    QLabel* promptLengthLabel() const { return m_promptLength; }
    QPushButton* continueButton() const { return m_continue; }
    QPushButton* cancelButton() const { return m_cancel; }
    // A side's latest snapshot (0: the model's own positions, 1: the method), and the line under its text.
    const GenerationSnapshot& side(int side) const { return m_sides[static_cast<size_t>(side)]; }
    QString sideStatus(int side) const;

Q_SIGNALS:
    void busyChanged(bool busy);
    void statusMessage(const QString& text);

private:
    QWidget* buildControls();
    QHBoxLayout* buildModelRow(QWidget* box); // the Lab page's model chooser
    void buildSampling(QWidget* box, QGridLayout* grid); // rows 3 and 4: Sample, temperature, top-k, seed
    QWidget* buildSide(int side);
    void showPromptLength();
    void showMethodHint();
    void onSnapshot(const GenerationSnapshot& snapshot);
    void onFinished(bool canceled);
    void showSide(int side);
    void updateAvailability();

    Source m_source;
    HfModelPtr m_folder;
    std::vector<SharedModel> m_models;
    GenerationRun* m_run = nullptr;
    QElapsedTimer m_clock;
    bool m_canceled = false;
    std::array<GenerationSnapshot, 2> m_sides;

    QComboBox* m_model = nullptr; // Lab only
    QPlainTextEdit* m_prompt = nullptr;
    QSpinBox* m_repeat = nullptr;
    QLabel* m_promptLength = nullptr;
    QComboBox* m_method = nullptr;
    QLineEdit* m_settings = nullptr;
    QSpinBox* m_maxNew = nullptr;
    QCheckBox* m_sampled = nullptr;
    QDoubleSpinBox* m_temperature = nullptr;
    QSpinBox* m_topK = nullptr;
    QSpinBox* m_seed = nullptr;
    QPushButton* m_continue = nullptr;
    QPushButton* m_cancel = nullptr;
    QLabel* m_status = nullptr;
    std::array<QGroupBox*, 2> m_sideBoxes{};
    std::array<QTextEdit*, 2> m_sideTexts{};
    std::array<QLabel*, 2> m_sideLines{};
};

} // namespace plab::ui
