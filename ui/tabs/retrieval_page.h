// The Your model tab's Retrieval page: a retrieval task (passkey, needles, variable tracking) in the folder's own
// tokens under methods, each method's depth x length heatmap filling in as its cells finish, with an estimate,
// progress with the time left, and Cancel.
#pragma once

#include "workers/hf_compute.h"
#include "workers/job.h"
#include "workers/retrieval_compute.h"

#include <QElapsedTimer>
#include <QWidget>

#include <functional>
#include <memory>

class QComboBox;
class QFormLayout;
class QLabel;
class QLineEdit;
class QListWidget;
class QPushButton;
class QSpinBox;

namespace plab::ui {

class HeatmapWidget;
class ScalingLayersCombo;

// What the worker delivers at the end.
struct RetrievalPageResult {
    QString error;
    bool canceled = false;
    RetrievalRun run;
};

class RetrievalPage : public QWidget {
    Q_OBJECT
public:
    // `model` gives the folder opened in the tab (null while none is).
    RetrievalPage(std::function<HfModelPtr()> model, QWidget* parent = nullptr);
    ~RetrievalPage() override;

    // The options the controls say, the defaults (core's retrievalDefaults) where they are empty; InputError naming
    // the control.
    RetrievalOptions options() const;
    // The lengths and depths fields as typed (screenshots, tests); empty: the defaults.
    void setInputs(const QString& lengths, const QString& depths);
    void run();
    void cancel();
    bool isBusy() const { return m_job.isRunning(); }
    // Recomputes the estimate line (the tab calls it when a folder opens).
    void refreshEstimate();
    HeatmapWidget* heatmap() const { return m_heatmap; }
    bool hasResults() const { return !m_shownCells.empty(); }
    // The cells shown as data (core's writeRetrievalRun), `meta` first.
    void writeData(std::ostream& out, DataFormat format, const nlohmann::json& meta) const;
    QLabel* status() const { return m_status; }
    ScalingLayersCombo* scalingLayers() const { return m_layers; }

private:
    QFormLayout* makeInputsForm(QWidget* side);
    RetrievalOptions defaults() const;
    void showCells();
    void finished(RetrievalPageResult result);

    std::function<HfModelPtr()> m_model;
    QComboBox* m_task = nullptr;
    QLineEdit* m_lengths = nullptr;
    QLineEdit* m_depths = nullptr;
    QSpinBox* m_examples = nullptr;
    QListWidget* m_methods = nullptr;
    ScalingLayersCombo* m_layers = nullptr; // the layer types the methods reach (--scaling-layers)
    QPushButton* m_run = nullptr;
    QLabel* m_estimate = nullptr;
    QLabel* m_status = nullptr;
    HeatmapWidget* m_heatmap = nullptr;
    QElapsedTimer m_clock;
    int m_runId = 0;
    RetrievalOptions m_running;
    std::vector<RetrievalMethod> m_shownMethods;
    std::vector<RetrievalCell> m_shownCells;
    LatestJob<RetrievalPageResult> m_job;
};

} // namespace plab::ui
