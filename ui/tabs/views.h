// The tabs of the main window. Each view owns its controls, runs its work on a worker thread (LatestJob: the newest
// request wins; the Train tab through TrainingRun, which streams snapshots of one long run), paints through the
// shared painters, and offers the same export, data and session hooks (ViewBase).
#pragma once

#include "workers/compute.h"
#include "painting/export.h"
#include "painting/heatmap_painter.h"
#include "workers/job.h"
#include "workers/model_compute.h"
#include "tabs/scheme_panel.h"

#include <nlohmann/json.hpp>

#include <QWidget>

class QCheckBox;
class QComboBox;
class QLabel;
class QListWidget;
class QPlainTextEdit;
class QPushButton;
class QDoubleSpinBox;
class QFormLayout;
class QHBoxLayout;
class QVBoxLayout;
class QSpinBox;
class QStackedWidget;
class QTableWidget;
class QTabWidget;

namespace plab::ui {

class CurvePlot;
class HeatmapWidget;
class MethodsPanel;
class ModelPrompt;
class ThumbnailStrip;
class TrainingRun;

// Every catalogue scheme with a check box (the entropy and train views' scheme lists).
QListWidget* newSchemeChecklist(const QStringList& checked, QWidget* parent);
QStringList checkedSchemes(const QListWidget* list);
void setCheckedSchemes(QListWidget* list, const QStringList& names);

class ViewBase : public QWidget {
    Q_OBJECT
public:
    using QWidget::QWidget;

    virtual QString viewId() const = 0;    // "bias", "compare", "dot", "entropy", "attention", "train"
    virtual QString viewTitle() const = 0; // the tab's text
    // Picture export (Ctrl+E, copy image, render).
    virtual bool hasPicture() const = 0;
    virtual QString pictureTitle() const { return viewTitle(); }
    virtual QSize defaultImageSize() const { return {1000, 820}; }
    virtual void paintPicture(QPainter& painter, const QRectF& target, const PictureStyle& style) const = 0;
    // Data export (CSV, JSON, NPY through core/base/matrix_output.h); throws core errors.
    virtual bool hasData() const { return hasPicture(); }
    virtual void writeData(std::ostream& out, DataFormat format) const = 0;
    // Session state of the view's own controls; restoreState() validates first and throws InputError.
    virtual nlohmann::json saveState() const { return nlohmann::json::object(); }
    virtual void restoreState(const nlohmann::json&) {}
    virtual void cancelJob() {}
    virtual bool isBusy() const { return false; }
    virtual void setDark(bool) {}
    virtual void resetZoom() {}

    // The panel's state; views recompute only while visible (setActive) and catch up when shown.
    void setPanelState(const PanelState& state);
    void setActive(bool active);
    const PanelState& panelState() const { return m_panel; }
    // Recomputes now if anything changed (tests and the benchmark call this directly).
    void refreshIfDirty();
    // For writeData(): InputError "the <view> view has nothing to export yet" while there is no picture.
    void requirePicture() const;

    PaintFunction paintFunction() const
    {
        return [this](QPainter& p, const QRectF& r, const PictureStyle& s) { paintPicture(p, r, s); };
    }

Q_SIGNALS:
    void hoverText(const QString& text);
    void statusMessage(const QString& text);
    void progress(int done, int total);
    void busyChanged(bool busy);
    void pictureUpdated(); // a new result is shown
    void headRequested(int head);

protected:
    virtual void refresh() = 0; // start the job for the current state
    void markDirty();           // the view's own controls changed
    PanelState m_panel;
    bool m_hasPanel = false;

private:
    bool m_active = false;
    bool m_dirty = true;
};

class BiasView : public ViewBase {
    Q_OBJECT
public:
    explicit BiasView(QWidget* parent = nullptr);
    QString viewId() const override { return QStringLiteral("bias"); }
    QString viewTitle() const override { return tr("Bias"); }
    bool hasPicture() const override;
    void paintPicture(QPainter& painter, const QRectF& target, const PictureStyle& style) const override;
    void writeData(std::ostream& out, DataFormat format) const override;
    nlohmann::json saveState() const override;
    void restoreState(const nlohmann::json& state) override;
    void cancelJob() override;
    bool isBusy() const override;
    void setDark(bool dark) override;
    void resetZoom() override;

    HeatmapWidget* heatmap() const { return m_heatmap; }
    ThumbnailStrip* thumbnails() const { return m_strip; }
    const BiasResult& result() const { return m_result; }
    void setBuckets(bool buckets);

protected:
    void refresh() override;

private:
    // A result with its picture already coloured on the worker (16M cells at N = 4096 would stall the GUI thread).
    struct Prepared {
        BiasResult result;
        HeatmapPainter heatmap;
        std::vector<QImage> thumbnails;
        ColorScale thumbnailScale;
    };
    void showResult(Prepared prepared);
    void setThumbnailPalette(bool dark); // moves the thumbnails' masked cells to the palette's mask colour
    ColorScale m_thumbnailScale;
    HeatmapWidget* m_heatmap = nullptr;
    ThumbnailStrip* m_strip = nullptr;
    QCheckBox* m_buckets = nullptr;
    LatestJob<Prepared> m_job;
    BiasResult m_result;
};

class CompareView : public ViewBase {
    Q_OBJECT
public:
    explicit CompareView(QWidget* parent = nullptr);
    QString viewId() const override { return QStringLiteral("compare"); }
    QString viewTitle() const override { return tr("Compare"); }
    bool hasPicture() const override;
    QSize defaultImageSize() const override;
    void paintPicture(QPainter& painter, const QRectF& target, const PictureStyle& style) const override;
    void writeData(std::ostream& out, DataFormat format) const override;
    nlohmann::json saveState() const override;
    void restoreState(const nlohmann::json& state) override;
    void cancelJob() override;
    bool isBusy() const override;
    void setDark(bool dark) override;
    void resetZoom() override;

    void setSchemes(const QStringList& names); // 2..4 catalogue names
    QStringList schemes() const;
    // The A − B panel: on or off, and which of the shown schemes (0-based) are A and B.
    void setDifference(bool shown, int a = 0, int b = 1);
    bool differenceShown() const;
    std::pair<int, int> differencePair() const;
    HeatmapWidget* heatmap() const { return m_heatmap; }
    const CompareResult& result() const { return m_result; }

protected:
    void refresh() override;

private:
    QHBoxLayout* buildSchemeBar();     // how many schemes, which, shared scale, reset zoom
    QHBoxLayout* buildDifferenceBar(); // the difference A - B and its two sides
    void updateDifferenceChoices();    // the A and B lists follow the shown schemes
    QSpinBox* m_count = nullptr;
    std::vector<QComboBox*> m_choices;
    QCheckBox* m_shared = nullptr;
    QCheckBox* m_difference = nullptr;
    QComboBox* m_diffA = nullptr;
    QComboBox* m_diffB = nullptr;
    HeatmapWidget* m_heatmap = nullptr;
    struct Prepared {
        CompareResult result;
        HeatmapPainter heatmap; // coloured on the worker
    };
    LatestJob<Prepared> m_job;
    CompareResult m_result;
};

// A view whose picture is one curve plot (dot, entropy).
class CurveViewBase : public ViewBase {
    Q_OBJECT
public:
    using ViewBase::ViewBase;
    void paintPicture(QPainter& painter, const QRectF& target, const PictureStyle& style) const override;
    void setDark(bool dark) override;
    CurvePlot* plot() const { return m_plot; }

protected:
    CurvePlot* m_plot = nullptr; // created by the derived view
};

class DotView : public CurveViewBase {
    Q_OBJECT
public:
    explicit DotView(QWidget* parent = nullptr);
    QString viewId() const override { return QStringLiteral("dot"); }
    QString viewTitle() const override { return tr("Sinusoidal dot"); }
    bool hasPicture() const override;
    QSize defaultImageSize() const override { return {1100, 700}; }
    void writeData(std::ostream& out, DataFormat format) const override;
    nlohmann::json saveState() const override;
    void restoreState(const nlohmann::json& state) override;

    DotRequest request() const;
    void setRequest(const DotRequest& request, bool logX);
    const DotResult& result() const { return m_result; }

protected:
    void refresh() override;

private:
    QTableWidget* m_curves = nullptr;
    QSpinBox* m_maxDistance = nullptr;
    QCheckBox* m_logX = nullptr;
    LatestJob<DotResult> m_job;
    DotResult m_result;
};

// θ_i and θ'_i of the panel's rotary scheme under its length-extension method (the panel's context is L).
class FrequencyView : public CurveViewBase {
    Q_OBJECT
public:
    explicit FrequencyView(QWidget* parent = nullptr);
    QString viewId() const override { return QStringLiteral("frequencies"); }
    QString viewTitle() const override { return tr("Rotary frequencies"); }
    bool hasPicture() const override;
    QSize defaultImageSize() const override { return {1100, 700}; }
    void writeData(std::ostream& out, DataFormat format) const override;
    nlohmann::json saveState() const override { return nlohmann::json::object(); }
    void restoreState(const nlohmann::json&) override {}

protected:
    void refresh() override;

private:
    QLabel* m_note = nullptr;
    bool m_rotary = false;
};

class EntropyView : public CurveViewBase {
    Q_OBJECT
public:
    explicit EntropyView(QWidget* parent = nullptr);
    QString viewId() const override { return QStringLiteral("entropy"); }
    QString viewTitle() const override { return tr("Entropy"); }
    bool hasPicture() const override;
    QSize defaultImageSize() const override { return {1100, 720}; }
    void writeData(std::ostream& out, DataFormat format) const override;
    nlohmann::json saveState() const override;
    void restoreState(const nlohmann::json& state) override;
    void cancelJob() override;
    bool isBusy() const override;

    void setSchemes(const QStringList& names);
    QStringList schemes() const;
    void setMaxLength(int length);
    void setQk(QkSource qk);
    // Layer (1-based) of the model source; defaults to the chosen model's last layer.
    int modelLayer() const;
    void setModelLayer(int layer);
    // Listed last; becomes the model source's current model when `select` (or when it is the first).
    void addModel(const SharedModel& model, bool select = true);
    int modelCount() const { return static_cast<int>(m_models.size()); }
    // "q/k from a trained model" without a model: a message and "Train a demo model now" instead of the plot.
    ModelPrompt* modelPrompt() const { return m_prompt; }
    bool isShowingModelPrompt() const;
    EntropyRequest request() const;
    EntropyMeasure measure() const;
    const EntropyResult& result() const { return m_result; }

protected:
    void refresh() override;

private:
    QVBoxLayout* buildOptions();  // q and k source, model and layer, seed, lengths, measure
    QStackedWidget* buildPages(); // the plot, or the prompt for a model source without a model
    QListWidget* m_schemes = nullptr;
    QComboBox* m_qk = nullptr;
    QSpinBox* m_seed = nullptr;
    QComboBox* m_maxLength = nullptr;
    QComboBox* m_measure = nullptr;
    QComboBox* m_modelChoice = nullptr;
    QSpinBox* m_layer = nullptr;       // 1-based layer of the model source
    QStackedWidget* m_pages = nullptr; // the plot, or the prompt for a model source without a model
    ModelPrompt* m_prompt = nullptr;
    void updatePages();
    std::vector<SharedModel> m_models;
    LatestJob<EntropyResult> m_job;
    EntropyResult m_result;
};

// Attention of a trained model on text: probabilities per layer and head with the characters on the axes, and the
// entropy of every query row, also past the training context.
class AttentionView : public ViewBase {
    Q_OBJECT
public:
    explicit AttentionView(QWidget* parent = nullptr);
    QString viewId() const override { return QStringLiteral("attention"); }
    QString viewTitle() const override { return tr("Attention on text"); }
    bool hasPicture() const override;
    QSize defaultImageSize() const override { return {1000, 1150}; }
    void paintPicture(QPainter& painter, const QRectF& target, const PictureStyle& style) const override;
    void writeData(std::ostream& out, DataFormat format) const override;
    nlohmann::json saveState() const override;
    void restoreState(const nlohmann::json& state) override;
    void cancelJob() override;
    bool isBusy() const override;
    void setDark(bool dark) override;
    void resetZoom() override;

    // Listed last; becomes the current model when `select` (or when it is the first).
    void addModel(const SharedModel& model, bool select = true);
    int modelCount() const { return static_cast<int>(m_models.size()); }
    const std::vector<SharedModel>& models() const { return m_models; }
    void selectModel(int index); // 0-based, as listed
    int selectedModel() const;   // -1 when there is none
    // Shown instead of the attention while there is no model: a message and "Train a demo model now".
    ModelPrompt* modelPrompt() const { return m_prompt; }
    bool isShowingModelPrompt() const;
    bool loadModel(const QString& path, QString* error = nullptr);
    // Writes model `index` (0-based, as listed) as a .safetensors checkpoint; false with `error` set on failure.
    bool saveModel(int index, const QString& path, QString* error = nullptr);
    // Models that exist only in memory (trained here, never saved): a session cannot bring them back.
    int unsavedModelCount() const;
    // Loads the checkpoints the last restoreState() named (those not loaded yet; relative names from `folder`) and
    // selects its current model. Run once the whole session is accepted; returns one message per problem (a file
    // missing or corrupt, a chosen model that did not come back).
    QStringList loadSessionCheckpoints(const QString& folder = QString());
    void setText(const QString& text);
    void setLayer(int layer); // 0-based
    void setRepeatTo(int length);
    const AttentionResult& result() const { return m_result; }
    HeatmapWidget* heatmap() const { return m_heatmap; }
    std::function<void(const SharedModel&)> onModelLoaded; // shares checkpoints loaded here with other views

protected:
    void refresh() override;

private:
    QWidget* buildControls(); // the model, its buttons, the text, layer and repeat
    QWidget* buildPages();    // the prompt (no model yet) or the attention and row entropies
    void loadModelFromDialog();
    void saveModelFromDialog(); // the chosen model
    std::vector<uint8_t> tokens() const;
    int modelIndexForFile(const QString& file) const; // -1 when no model came from or went to `file`
    std::vector<SharedModel> m_models;
    QStringList m_sessionCheckpoints; // named by the last restoreState(), loaded by loadSessionCheckpoints()
    QString m_sessionModel;
    QComboBox* m_modelChoice = nullptr;
    QPushButton* m_save = nullptr;
    QPlainTextEdit* m_text = nullptr;
    QSpinBox* m_layer = nullptr;
    QSpinBox* m_repeat = nullptr;
    QLabel* m_info = nullptr;
    QStackedWidget* m_pages = nullptr; // the prompt (no model yet) or the attention
    ModelPrompt* m_prompt = nullptr;
    HeatmapWidget* m_heatmap = nullptr;
    CurvePlot* m_entropy = nullptr;
    LatestJob<AttentionResult> m_job;
    AttentionResult m_result;
};

// Train short, test long: trains the chosen schemes in the background (live loss curves, progress, cancel), then
// plots perplexity against evaluation length (log x) with the numbers in a table, as the ALiBi paper's Figure 1.
class TrainView : public ViewBase {
    Q_OBJECT
public:
    explicit TrainView(QWidget* parent = nullptr);
    ~TrainView() override;
    QString viewId() const override { return QStringLiteral("train"); }
    QString viewTitle() const override { return tr("Train short / test long"); }
    // Export, copy and render act on the page shown: the training runs, or the methods chart.
    bool hasPicture() const override;
    QString pictureTitle() const override;
    QSize defaultImageSize() const override;
    void paintPicture(QPainter& painter, const QRectF& target, const PictureStyle& style) const override;
    void writeData(std::ostream& out, DataFormat format) const override;
    nlohmann::json saveState() const override;
    void restoreState(const nlohmann::json& state) override;
    void cancelJob() override;
    bool isBusy() const override;
    void setDark(bool dark) override;

    // "Evaluate under methods": a trained rope/xpos model under a chosen set of length-extension methods.
    MethodsPanel* methodsPanel() const { return m_methods; }
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
    const std::vector<std::vector<EvalPoint>>& evaluations() const { return m_evals; }
    const std::vector<Curve>& losses() const { return m_losses; }
    QTableWidget* table() const { return m_table; }
    CurvePlot* lossPlot() const { return m_lossPlot; }
    CurvePlot* perplexityPlot() const { return m_pplPlot; }
    std::function<void(const SharedModel&)> onModelReady; // each scheme's model, as soon as it is evaluated

Q_SIGNALS:
    void trainingFinished(const QString& error); // empty when every scheme trained and evaluated

protected:
    void refresh() override {}

private:
    QWidget* buildControls();   // schemes, the fields, corpus, Train / Cancel, status
    QFormLayout* buildFields(); // the preset and every field of the run
    QWidget* buildResults();    // loss and perplexity curves above the table
    // The integer fields in sessions: key -> spin box (whose range is the allowed one).
    std::vector<std::pair<const char*, QSpinBox*>> intFields() const;
    void onSnapshot(const TrainSnapshot& snapshot);
    void onFinished(const QString& error, bool canceled);
    void onFieldEdited(); // a hand edit: the preset box shows "custom"
    void previewTable();  // before the first run: the table's rows and columns for the current fields
    void updateTable();
    void showSummary(); // m_summary in the perplexity plot and the table
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
    bool methodsShown() const;
    void syncMethodsEvaluation(); // the eval bytes, mode and corpus fields, for the methods page too
};

} // namespace plab::ui
