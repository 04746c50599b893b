// Real models (Hugging Face folders) for the views: opening one, its attention on a text, maps at a level of detail
// and the figures of the "Your model" tab (worker side; every number from core/hf/hf_attention.h).
#pragma once

#include "painting/figures.h"
#include "workers/compute.h"

#include "runs/method_comparison.h"

#include "hf/hf_attention.h"
#include "hf/tokenizer.h"

#include <QString>
#include <QStringList>

#include <memory>
#include <optional>
#include <utility>
#include <vector>

namespace plab::ui {

// An opened folder: the model in its products precision and its tokenizer, shared read-only by the jobs.
struct HfOpened {
    QString folder;
    std::unique_ptr<HfModel> model;
    std::optional<hf::Tokenizer> tokenizer;
};
using HfModelPtr = std::shared_ptr<const HfOpened>;

struct HfOpenResult {
    QString error;
    HfModelPtr model;
};
// Reads config.json, the weights in `precision` (after core's CPU and memory checks, as the CLI's --precision) and
// tokenizer.json; core's message on any refusal.
HfOpenResult openHfModel(const QString& folder, HfPrecision precision = HfPrecision::Float32);

// The summary card: (label, value) rows, translated. Parameters, the precision the model computes in, and the memory
// its weights take (core's weightBytes) and with one forward (core's hfModelMemoryBytes).
std::vector<std::pair<QString, QString>> hfSummaryRows(const HfModel& model);

// A precision as the tab names it ("Float32", "BFloat16 products"), translated.
QString hfPrecisionLabel(HfPrecision precision);
// Empty when this CPU runs `precision` natively, else core's message (checkHfPrecisionSupported) naming the feature.
QString hfPrecisionUnavailable(HfPrecision precision);

// The most tokens the views take: a 30-layer model's rotated q and k at 8192 tokens stay under a gigabyte.
constexpr int kHfMaxTokens = 8192;

// The tab's "Repeat to" rule, one home for every page that takes it: `ids` repeated from their start until `repeatTo`
// tokens (unchanged when repeatTo <= ids.size(), or 0: off). InputError for no ids.
std::vector<int> repeatedTokens(std::vector<int> ids, int repeatTo);

struct HfAttentionRequest {
    HfModelPtr model;
    QString text;
    int repeatTo = 0; // > 0: the text's tokens repeated until this many (to look past the model's context)
    std::optional<SchemeSpec> positions = std::nullopt; // a method applied zero-shot (hfPositionSpec); empty: the config's own
    HfScalingLayers scalingLayers = HfScalingLayers::Full; // the layer types `positions` reaches (hf_scaling_layers.h)
};
struct HfAttentionResult {
    QString error;
    HfAttentionRequest request;
    std::vector<int> ids;
    std::vector<QString> tokens; // each token decoded on its own, line breaks and tabs made visible
    std::shared_ptr<const HfAttentionCapture> capture;
    MatrixPtr sinks;                   // (layers, heads)
    std::vector<MatrixPtr> thumbnails; // layers x heads, layer-major: each head's whole map, rows sampled
};
// Tokenizes the text and captures the model's attention (progress per layer; canceled: an empty result).
HfAttentionResult computeHfAttention(const HfAttentionRequest& request, const JobControl& control = {});

struct HfMapRequest {
    std::shared_ptr<const HfAttentionCapture> capture;
    int layer = 0;
    int head = 0;
    int rowBegin = 0, rowEnd = 0; // query tokens [rowBegin, rowEnd); rowEnd <= rowBegin: the whole map
    int colBegin = 0, colEnd = 0; // key tokens
    int maxCells = 1024;          // level of detail: at most this many cells per side, block maxima beyond
    HfMapReduce reduce = HfMapReduce::Max;
};
struct HfMapResult {
    QString error;
    HfMapRequest request;
    std::shared_ptr<const HfAttentionMap> map; // its cells and which tokens each covers
};
// The map's cells as a figure's matrix.
MatrixPtr hfMapMatrix(const HfAttentionMap& map);
HfMapResult computeHfMap(const HfMapRequest& request, const JobControl& control = {});

// ---- Evaluate under methods ------------------------------------------------------------------------------
struct HfMethodsRequest {
    HfModelPtr model;
    QString textPath;                 // empty: the default corpus' text
    std::vector<int> lengths;         // tokens; empty: core's methodComparisonDefaults
    bool own = true;                  // the config's own scaling, with its settings
    std::vector<std::string> methods; // lab methods (rotaryMethodCatalog names) with the comparison's defaults
    size_t maxTokens = 16384;         // tokens scored per length (0: all)
    HfScalingLayers scalingLayers = HfScalingLayers::Full; // the layer types each method reaches
    // Called on the worker thread with each method's curve as soon as it is done (the view shows it at once).
    std::function<void(const MethodCurve& curve)> curveDone;
};
struct HfMethodsResult {
    QString error;
    bool canceled = false;
    HfMethodsRequest request; // lengths filled in
    QString textSource;
    size_t textTokens = 0;
    int context = 0;
    std::vector<MethodCurve> curves; // the config's own first (labelled so), then the lab's methods
    QStringList leftOut;             // core's message for each method it refused for this model
};
// Core's methodComparisonDefaults for a folder, its cost model HfConfig::prefillFlops at kHfEvalFlopsPerSecond: the
// config's own scaling, none, yarn and ntk at context / 2, the context and up to 2 x it, the longest's tokens each.
MethodComparisonDefaults hfMethodsDefaults(const HfConfig& config);
// The cost model's seconds for evaluating `curves` curves of `request`'s lengths (empty: the defaults) and tokens per
// length: core's methodComparisonSeconds over HfConfig::prefillFlops at kHfEvalFlopsPerSecond, 0 when the tokens are
// "all" (unknown before the text is read).
double hfMethodsSecondsEstimate(const HfConfig& config, const HfMethodsRequest& request, size_t curves);
// Core's evaluateUnderMethods through HfLanguageModel on the text's tokens, one method at a time (each curve handed
// to request.curveDone when done); progress in thousandths over every curve.
HfMethodsResult computeHfMethods(const HfMethodsRequest& request, const JobControl& control = {});

// ---- Figures ----------------------------------------------------------------------------------------------
// One head's map (a max map: its colour scale runs from 0 to the head's peak probability, past the first token unless
// `sinkInScale`), with the window's tokens on both axes when `tokenLabels` and the map has one cell per token, else
// the positions.
HeatmapFigure hfAttentionFigure(const HfAttentionResult& attention, const HfAttentionMap& map, int layer, int head,
                                bool sinkInScale, bool tokenLabels = true);
HeatmapFigure hfAttentionFigure(const HfAttentionResult& attention, const HfMapResult& map, bool sinkInScale);
// Mean attention on the first token per layer (rows) and head (columns).
HeatmapFigure hfSinkFigure(const HfAttentionResult& attention);
// Entropy against the number of tokens a query sees, one curve per layer (mean over heads), and log n (uniform).
// `byLayerType`: one curve per layer type (core's hfEntropyByLayerType) instead of one per layer.
CurveFigure hfEntropyFigure(const HfAttentionResult& attention, bool byLayerType = false);

} // namespace plab::ui
