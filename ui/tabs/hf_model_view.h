// The "Your model" tab: a Hugging Face folder's summary card, its attention on a text (tokens on the axes, a layer x
// head grid), entropy against length per layer and the first-token sinks per layer and head.
#pragma once

#include "tabs/heatmap_widget.h"
#include "tabs/hf_attention_widgets.h"
#include "tabs/view_base.h"
#include "workers/hf_compute.h"

#include <QElapsedTimer>
#include <QImage>
#include <QStringList>

#include <optional>
#include <utility>
#include <vector>

class QCheckBox;
class QComboBox;
class QFormLayout;
class QLabel;
class QLineEdit;
class QListWidget;
class QPlainTextEdit;
class QPushButton;
class QScrollArea;
class QSpinBox;
class QTabWidget;
class QTimer;

namespace plab::ui {

class ContinueTextPage;
class HfEntropyPage;
class ScalingLayersCombo;

class CurvePlot;
class RetrievalPage;
class ParamControl;

class HfModelView : public ViewBase {
    Q_OBJECT
public:
    enum Page { AttentionPage, EntropyPage, SinksPage, MethodsPage, ContinuePage, RetrievalTab };

    explicit HfModelView(QWidget* parent = nullptr);
    QString viewId() const override { return QStringLiteral("model"); }
    QString viewTitle() const override { return tr("Your model"); }
    bool hasPicture() const override;
    QString pictureTitle() const override;
    void paintPicture(QPainter& painter, const QRectF& target, const PictureStyle& style) const override;
    void writeData(std::ostream& out, DataFormat format) const override;
    nlohmann::json saveState() const override;
    void restoreState(const nlohmann::json& state) override;
    void setDark(bool dark) override;
    void resetZoom() override;
    bool usesSchemePanel() const override { return false; } // a folder's own scheme, not the panel's

    // Loads the folder in the background; the card, and then the pages, follow. openFolderDialog asks for it.
    void openFolder(const QString& folder);
    void openFolderDialog();
    const HfModelPtr& model() const { return m_model; }
    // The card's (label, value) rows as shown.
    const std::vector<std::pair<QString, QString>>& summaryRows() const { return m_summaryRows; }
    void setText(const QString& text);
    void setRepeatTo(int tokens);           // 0: off
    void setLayerHead(int layer, int head); // 0-based
    void setPage(Page page);
    RetrievalPage* retrievalPage() const { return m_retrieval; }
    void setSinkInScale(bool include);
    // The positions of the attention, entropy and sinks pages: empty method, the config's own; else a rotary method
    // applied zero-shot, each of `settings` (NAME=VALUE) replacing a shown parameter. Throws InputError (core's words)
    // for an unknown method or setting.
    void setPositions(const QString& method, const QStringList& settings = {});
    // The Entropy page's curves one per layer type (a folder that mixes them) instead of one per layer.
    void setEntropyByLayerType(bool grouped);
    QString positionsMethod() const;
    QStringList positionsSettings() const; // NAME=VALUE of every shown parameter (empty for the config's own)
    QComboBox* positionsBox() const { return m_positions; }
    // How the model's products compute: the chooser's choice (the model reloads in it in the background, then the
    // current page recomputes). BF16 is offered only where core's CPU check passes; its item says why otherwise.
    HfPrecision precision() const;
    void setPrecision(HfPrecision precision);
    QComboBox* precisionChoice() const { return m_precision; }
    // A note on what the view changed of a request (a saved zoom window past the text, a precision this CPU lacks);
    // empty when there is none.
    QString note() const;
    const HfAttentionResult& attention() const { return m_attention; }
    const HfMapResult& map() const { return m_map; }       // the head's overview: the whole map, block maxima
    const HfMapResult& detail() const { return m_detail; } // the zoomed window's finer map, when one was needed
    HeadGrid* grid() const { return m_grid; }
    TokenMapWidget* heatmap() const { return m_heatmap; }
    QWidget* summaryCard() const { return m_card; }
    // Evaluate under methods: the text file (empty: the default corpus), then evaluate with the ticked methods.
    void setMethodsTextFile(const QString& path);
    void setMethodsLengths(const QString& lengths); // "16,32,64"; empty: the model's defaults
    void setMethodsTokensPerLength(int tokens);     // 0: all
    // Ticks exactly these methods ("" the config's own scaling, else catalogue names); the others are unticked.
    void setMethodsChecked(const QStringList& names);
    QStringList methodsChecked() const;
    // Core's defaults (methodComparisonDefaults) for the open model: its methods ticked, its tokens per length and
    // its lengths as the field's hint. Applied when a folder opens.
    void applyMethodsDefaults();
    // The cost model's estimate of the ticked evaluation, shown before it starts (empty without a model).
    QString methodsEstimateText() const;
    void evaluateMethods();
    // Stops the evaluation: "Canceled" and the time spent at once, whatever the worker still finishes.
    void cancelMethods();
    void cancelJob() override;
    bool isBusy() const override;
    ContinueTextPage* continueTextPage() const { return m_continueText; } // "Continue the text"
    QLabel* methodsStatus() const { return m_methodsStatus; }
    // The curves of the running (or last) evaluation shown so far, one per finished method.
    const std::vector<MethodCurve>& methodsCurvesShown() const { return m_methodsShown; }
    const HfMethodsResult& methodsResult() const { return m_methods; }
    CurvePlot* methodsPlot() const { return m_methodsPlot; }

protected:
    void refresh() override;

private:
    QWidget* buildControls();
    QFormLayout* buildPrecisionRow(QWidget* parent);
    QWidget* buildSummaryCard(QWidget* parent);
    QWidget* buildFields(QWidget* parent); // repeat, positions and their parameters, layer, head: scrolling
    QWidget* buildPages();
    QWidget* buildMethodsPage();
    QFormLayout* buildMethodsForm(QWidget* side); // lengths, tokens per length, the layers methods reach
    QListWidget* buildMethodList(QWidget* parent); // every method, ticked; the config's own first
    HfMethodsRequest methodsRequest() const;       // the ticked methods, lengths and tokens; InputError for lengths
    void showMethodsCurves(const std::vector<MethodCurve>& curves, int context, HfPrecision precision);
    void methodsFinished(HfMethodsResult result);
    // The background jobs' results, on the GUI thread: the folder opened, the text's attention, the head's overview
    // map and its zoomed window's finer map.
    void openFinished(HfOpenResult result);
    void attentionFinished(HfAttentionResult result);
    void mapFinished(HfMapResult result);
    void detailFinished(HfMapResult result);
    void connectMap();                                    // the map's zoom, hover and the grid's clicks
    void mapHovered(int panel, int row, int col, float value); // the pair (or block) under the cursor, in the status
    void showMethodsEstimate();
    void showSummary();
    void startMap();
    void showMap();     // composes the visible window from the overview and the detail
    void startDetail(); // a finer map of the visible window (and a margin) when the overview is too coarse for it
    void showGrid();
    void precisionChosen();
    void applyWantedWindow(); // a session's zoom window, once the text's token count is known
    void setNote(const QString& note);
    QString noModelHint() const;
    void rebuildPositionParameters(); // the chosen method's parameters, at the values core applies without settings
    void showPositionsAvailability(); // rotary methods only for a rope model; otherwise core's reason as the tooltip
    std::optional<SchemeSpec> chosenPositions() const; // nullopt: the config's own; InputError from core
    nlohmann::json positionsJson() const;              // the session's {"method": ..., "settings": [...]}
    // A method and its settings as the tab and its sessions take them: core's check of a method choice (known method,
    // parameters it takes, values in range); settings only with a method.
    static void checkPositions(const QString& method, const QStringList& settings);

    // The text the tab opens with (and a session without one gets).
    static constexpr const char* kDefaultText = "The quick brown fox jumps over the lazy dog. The quick brown fox "
                                                "jumps over the lazy dog again, and the dog does not move.";

    HfModelPtr m_model;
    std::vector<std::pair<QString, QString>> m_summaryRows;
    HfAttentionResult m_attention;
    HfMapResult m_map;
    HfMapResult m_detail;
    HfMethodsResult m_methods;
    QString m_methodsText;
    QElapsedTimer m_methodsClock;
    std::vector<MethodCurve> m_methodsShown; // the running evaluation's finished curves
    int m_methodsRun = 0;                    // which evaluation a finished curve belongs to
    QString m_openingFolder;
    std::optional<std::pair<int, int>> m_wantedLayerHead; // restored before the model's size is known
    std::optional<QRectF> m_wantedWindow;                 // likewise the zoom window (x keys, y queries, in tokens)
    bool m_wantedWindowFromSession = false;               // checked against the text with a note (not a reload's own)
    bool m_reevaluateMethods = false;                     // after a precision change on the methods page

    QPushButton* m_open = nullptr;
    QWidget* m_card = nullptr;
    QScrollArea* m_cardScroll = nullptr; // the card, scrolling when the screen is short
    QFormLayout* m_cardRows = nullptr;
    QLabel* m_cardTitle = nullptr;
    QPlainTextEdit* m_text = nullptr;
    QSpinBox* m_repeat = nullptr;
    QComboBox* m_positions = nullptr;
    QFormLayout* m_positionParamForm = nullptr;
    std::vector<ParamControl*> m_positionParams;
    QSpinBox* m_layer = nullptr;
    QSpinBox* m_head = nullptr;
    QPushButton* m_showAll = nullptr;
    QTimer* m_detailTimer = nullptr;
    QCheckBox* m_sinkInScale = nullptr;
    QComboBox* m_precision = nullptr;
    QLabel* m_note = nullptr;
    QTabWidget* m_pages = nullptr;
    HeadGrid* m_grid = nullptr;
    TokenMapWidget* m_heatmap = nullptr;
    CurvePlot* m_entropy = nullptr;
    HfEntropyPage* m_entropyPage = nullptr;
    ScalingLayersCombo* m_methodsLayers = nullptr;           // Evaluate under methods: the layer types methods reach
    HfScalingLayers m_positionsLayers = HfScalingLayers::Full; // Positions: the layer types the method reaches
    HeatmapWidget* m_sinks = nullptr;
    QListWidget* m_methodList = nullptr;
    QLineEdit* m_lengths = nullptr;
    QSpinBox* m_tokensPerLength = nullptr;
    QLabel* m_methodsSource = nullptr;
    QLabel* m_methodsStatus = nullptr;
    QLabel* m_methodsEstimate = nullptr;
    QPushButton* m_evaluate = nullptr;
    CurvePlot* m_methodsPlot = nullptr;
    ContinueTextPage* m_continueText = nullptr;
    RetrievalPage* m_retrieval = nullptr; // the Retrieval page (ui/tabs/retrieval_page)

    ViewJob<HfOpenResult> m_openJob;
    ViewJob<HfAttentionResult> m_attentionJob;
    ViewJob<HfMapResult> m_mapJob;
    ViewJob<HfMapResult> m_detailJob;
    ViewJob<HfMethodsResult> m_methodsJob;
};

} // namespace plab::ui
