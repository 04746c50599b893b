// The Train short / test long tab: trains schemes in the background, then perplexity against evaluation length.
#pragma once

#include "tabs/view_base.h"
#include "workers/model_compute.h"
#include "workers/task_run.h"

#include <QElapsedTimer>
#include <QStringList>

#include <functional>
#include <utility>
#include <vector>

class QDoubleSpinBox;
class QFormLayout;
class QLabel;
class QListWidget;
class QPushButton;
class QSpinBox;
class QSplitter;
class QTabWidget;
class QTableWidget;
class QCheckBox;
class QComboBox;

namespace plab::ui {

class ContinueTextPage;
class CurvePlot;
class LayerTypeFields;
class HeatmapWidget;
class MethodsPanel;
class TrainingRun;

// Train short, test long: trains the chosen schemes in the background (live loss curves, progress, cancel), then
// plots perplexity against evaluation length (log x) with the numbers in a table, as the ALiBi paper's Figure 1.
class TrainView : public ViewBase {
    Q_OBJECT
public:
    explicit TrainView(QWidget* parent = nullptr);
    ~TrainView() override;
    QString viewId() const override { return QStringLiteral("train"); }
    // Short: eight tabs share a 1366-pixel-wide window.
    QString viewTitle() const override { return tr("Train"); }
    // Export, copy and render act on the page shown: the training runs, or the methods chart.
    bool hasPicture() const override;
    QString pictureTitle() const override;
    QSize defaultImageSize() const override;
    void paintPicture(QPainter& painter, const QRectF& target, const PictureStyle& style) const override;
    void writeData(std::ostream& out, DataFormat format) const override;
    bool usesSchemePanel() const override { return false; } // its own scheme list and fields
    nlohmann::json saveState() const override;
    void restoreState(const nlohmann::json& state) override;
    void cancelJob() override;
    bool isBusy() const override;
    void setDark(bool dark) override;

    // "Evaluate under methods": a trained rope/xpos model under a chosen set of length-extension methods.
    MethodsPanel* methodsPanel() const { return m_methods; }
    ContinueTextPage* continueTextPage() const { return m_continueText; } // its models: those offered to addModel
    QPushButton* stopButton() const { return m_stop; } // Cancel of the training or task run (and the methods)
    // Offers a model to the methods page (models trained here are offered as they are evaluated); a rotary one, or
    // any while none is chosen, becomes the current one when `select`.
    void addModel(const SharedModel& model, bool select = true);
    void showMethodsPage(bool show); // the methods page, or the training runs

    void setCorpus(const QString& path);
    // The chosen preset's name, or "custom" once a field was edited by hand.
    QString preset() const;
    // Sets every field from a preset of core's table (InputError for an unknown name).
    void setPreset(const QString& name);
    // The request the controls describe (tests pass their own, smaller one to start()).
    TrainRequest request() const;
    void start(const TrainRequest& request);
    // Sweep results (core's results.jsonl lines, e.g. collectSweepResults of a sweep folder) shown as the seeds of a
    // run are: mean curves with a ± sd band, a mean ± sd table; exported as the summary. `source` names them.
    void showSweepResults(const std::vector<SweepResult>& results, const QString& source);
    // The summary the perplexity plot and table show when a run has several seeds or sweep results are loaded.
    const std::vector<SweepSummaryRow>& summary() const { return m_summary; }
    QSpinBox* seedsBox() const { return m_seeds; }
    // The model options beyond the sizes (core's ModelConfig): the NoPE layer schedule, Llama 4's temperature on those
    // layers, and the softmax modifiers SSMax and the sink logit, which combine with every ticked scheme.
    QSpinBox* nopeEveryBox() const { return m_nopeEvery; } // its minimum, 1, reads "off"
    QLabel* scheduleNote() const { return m_scheduleNote; }
    QCheckBox* temperatureBox() const { return m_temperature; }
    QDoubleSpinBox* floorScaleBox() const { return m_floorScale; }
    QDoubleSpinBox* attnScaleBox() const { return m_attnScale; }
    QCheckBox* ssmaxBox() const { return m_ssmax; }
    QCheckBox* sinkLogitBox() const { return m_sinkLogit; }
    LayerTypeFields* layerTypeFields() const { return m_layerTypeFields; }
    // A scheme of the run as its curve, table row and kept model are named: the scheme, then core's
    // modelOptionsLabel when the run sets any ("rope nope_every=4 ssmax").
    QString runLabel(const std::string& scheme) const;
    std::vector<std::string> runLabels() const; // of every scheme of the run
    const std::vector<std::vector<EvalPoint>>& evaluations() const { return m_evals; }
    const std::vector<Curve>& losses() const { return m_losses; }
    QTableWidget* table() const { return m_table; }
    CurvePlot* lossPlot() const { return m_lossPlot; }
    CurvePlot* perplexityPlot() const { return m_pplPlot; }
    std::function<void(const SharedModel&)> onModelReady; // each scheme's model, as soon as it is evaluated

    // ---- tasks (core/tasks): accuracy against length instead of perplexity, and the DroPE recipe ----
    QComboBox* taskBox() const { return m_task; }              // "text" (perplexity) or a task name
    QSpinBox* taskLengthBox() const { return m_taskLength; }   // the training length L (1..L)
    QDoubleSpinBox* fractionBox() const { return m_fraction; } // the recipe's recalibration share, percent
    QPushButton* dropeButton() const { return m_drope; }
    // The task run the controls describe: the ticked schemes, or the DroPE recipe. InputError when text is chosen.
    TaskRequest taskRequest(bool drope) const;
    void startTask(const TaskRequest& request);
    const std::vector<TaskCurve>& taskCurves() const { return m_taskCurves; }
    bool taskShown() const { return m_taskShown; } // the plots and table show a task run
    HeatmapWidget* passkeyHeatmap() const { return m_heatmap; }
    QString statusText() const;
    // The stages the last task run went through, as the status line said them ("train rope", ...).
    const QStringList& taskStages() const { return m_taskStages; }

Q_SIGNALS:
    void trainingFinished(const QString& error); // empty when every scheme trained and evaluated

protected:
    void refresh() override {}
    bool eventFilter(QObject* watched, QEvent* event) override; // the table's new width: its columns fit anew

private:
    // The task chooser's first entry: train on text and score perplexity (no task).
    static constexpr const char* kTextTask = "text";
    QWidget* buildControlColumn(); // the scrolling controls over the buttons and the status that stay in view
    QWidget* buildControls();   // schemes, the fields, corpus, Train / Cancel, status
    QFormLayout* buildFields(); // the preset and every field of the run
    void addPresetRows(QFormLayout* form);      // the preset, the task and its length
    void addSizeRows(QFormLayout* form);        // steps, learning rate, context and the model's sizes
    void addModelOptionRows(QFormLayout* form); // the NoPE schedule, the temperature, softmax modifiers, layer types
    void addRunRows(QFormLayout* form);         // batch, evaluation bytes, seeds, evaluation mode
    void addDropeRows(QFormLayout* form);       // the DroPE recipe's recalibration share and logit-c
    // A row of `form` whose hand edit makes the preset "custom".
    QSpinBox* addIntField(QFormLayout* form, const QString& label, const QString& tip, int lo, int hi, int step = 1);
    QDoubleSpinBox* addNumberField(QFormLayout* form, const QString& label, const QString& tip, double lo, double hi,
                                   double value, int decimals, double step);
    QWidget* buildResults();    // loss and perplexity curves above the table
    // The integer fields in sessions: key -> spin box (whose range is the allowed one).
    std::vector<std::pair<const char*, QSpinBox*>> intFields() const;
    // A session's task length (0 for text), within what its task and context allow; `values` its integer fields.
    int sessionTaskLength(const nlohmann::json& state, const std::string& task,
                          const std::vector<std::pair<QSpinBox*, int>>& values, const std::string& where) const;
    void onSnapshot(const TrainSnapshot& snapshot);
    void onFinished(const QString& error, bool canceled);
    void onFieldEdited(); // a hand edit: the preset box shows "custom"
    void updateModelOptions(); // the temperature fields follow their box; the note says what the schedule does
    void connectTaskRuns(); // Train and the DroPE recipe on a task, the runner's updates, the heatmap's read-out
    void onTaskChosen();  // the task length's range follows the task and the context
    void onTaskSnapshot(const TaskSnapshot& snapshot);
    void showTaskResults(); // m_taskCurves in the accuracy plot, the heatmap (passkey) and the table
    void finishRun(const QString& error, bool canceled);
    void previewTable(); // before the first run: the table's rows and columns for the current fields
    void updateTable();  // the running (or previewed) request's schemes and lengths with m_seedResults
    void showSummary();  // m_summary in the perplexity plot and the table
    // The one table builder: rows for `schemes` (then any other scheme of `rows`), columns `lengths`.
    void fillTable(const std::vector<std::string>& schemes, const std::vector<int>& lengths,
                   const std::vector<SweepSummaryRow>& rows);
    void fitTableColumns(); // one-line headers when the columns fit the table's width, else two-line ones
    QListWidget* m_schemes = nullptr;
    QComboBox* m_preset = nullptr;
    QSpinBox* m_steps = nullptr;
    QDoubleSpinBox* m_lr = nullptr;
    QSpinBox* m_context = nullptr;
    QSpinBox* m_layers = nullptr;
    QSpinBox* m_dModel = nullptr;
    QSpinBox* m_heads = nullptr;
    QSpinBox* m_dFf = nullptr;
    QSpinBox* m_batch = nullptr;
    QSpinBox* m_evalBytes = nullptr;
    QComboBox* m_mode = nullptr;
    QSpinBox* m_nopeEvery = nullptr;
    QLabel* m_scheduleNote = nullptr;
    QCheckBox* m_temperature = nullptr;
    QDoubleSpinBox* m_floorScale = nullptr;
    QDoubleSpinBox* m_attnScale = nullptr;
    QCheckBox* m_ssmax = nullptr;
    QCheckBox* m_sinkLogit = nullptr;
    LayerTypeFields* m_layerTypeFields = nullptr; // --layer-types, --window, --chunk, --full-scheme, --full-set
    bool m_applyingPreset = false;
    QString m_basePreset; // the preset last chosen: what the fields do not show comes from it
    QPushButton* m_train = nullptr;
    QPushButton* m_stop = nullptr;
    QLabel* m_status = nullptr;
    QLabel* m_corpusLabel = nullptr;
    CurvePlot* m_lossPlot = nullptr;
    CurvePlot* m_pplPlot = nullptr;
    QTableWidget* m_table = nullptr;
    TrainingRun* m_run = nullptr;
    QString m_corpus;
    TrainRequest m_running;
    QElapsedTimer m_runClock; // since the training or task run started: the time a Cancel reports
    bool m_canceled = false;  // the running one was canceled (its status line says so)
    std::vector<Curve> m_losses;
    std::vector<std::vector<EvalPoint>> m_evals; // per scheme, its first seed
    QSpinBox* m_seeds = nullptr;
    std::vector<int> m_lossSeed;            // per scheme: the seed its loss curve shows (the latest)
    std::vector<SweepResult> m_seedResults; // every evaluated (scheme, seed) of the run
    std::vector<SweepSummaryRow> m_summary; // over seeds: of the run (seeds > 1) or of loaded sweep results
    QString m_sweepSource;                  // loaded sweep results: where from; empty for a run
    QTabWidget* m_pages = nullptr;          // training runs | evaluate under methods
    QWidget* m_controls = nullptr;          // the training fields (hidden on the methods page)
    MethodsPanel* m_methods = nullptr;
    ContinueTextPage* m_continueText = nullptr;
    QComboBox* m_task = nullptr;
    QSpinBox* m_taskLength = nullptr;
    QDoubleSpinBox* m_fraction = nullptr;
    QDoubleSpinBox* m_logitC = nullptr;
    QPushButton* m_drope = nullptr;
    HeatmapWidget* m_heatmap = nullptr;
    QSplitter* m_results = nullptr; // charts over the heatmap (passkey) over the table
    TaskRunner* m_taskRunner = nullptr;
    TaskRequest m_taskRunning;
    std::vector<TaskCurve> m_taskCurves;
    std::vector<Curve> m_taskLosses; // per label of m_taskRunning (the latest seed's)
    bool m_taskShown = false;
    QStringList m_taskStages;
    bool methodsShown() const;
    void syncMethodsEvaluation(); // the eval bytes, mode and corpus fields, for the methods page too
};

} // namespace plab::ui
