// Requests, results and worker functions of the model views: attention of a trained model on text, and
// "train short, test long" (training several schemes, then perplexity against evaluation length).
#pragma once

#include "workers/compute.h"
#include "painting/figures.h"

#include "model/checkpoint.h"
#include "runs/evaluation.h"
#include "runs/method_comparison.h"
#include "model/model.h"
#include "model/positions_on_text.h"
#include "model/presets.h"
#include "runs/sweep.h"
#include "runs/training.h"

#include <QPromise>
#include <QString>

#include <memory>
#include <mutex>
#include <vector>

namespace plab::ui {

// A trained model the views share. Model::forward mutates its activations, so every worker locks `mutex`.
struct SharedModel {
    QString name; // e.g. "alibi (trained here, 200 steps)" or a file name
    std::shared_ptr<Model> model;
    std::shared_ptr<std::mutex> mutex;
    std::vector<uint8_t> sampleText; // held-out text for q/k (entropy) when none is given
    CheckpointInfo info;             // steps, last training loss, corpus and training settings, kept on save
    QString file;                    // absolute path of the checkpoint it came from or was saved to; empty: memory only
    bool isValid() const { return model != nullptr; }
};
// What a model is needed for, as requireModel says it.
enum class ModelNeed { Compute, Save, Keep };
// Every refusal for want of a model: InputError "no model[ to save| to keep]: train one in the Train tab or load a
// checkpoint" when `model` holds none, in the GUI's language (the window shows it as it is).
void requireModel(const SharedModel& model, ModelNeed need = ModelNeed::Compute);
SharedModel makeSharedModel(QString name, std::unique_ptr<Model> model, std::vector<uint8_t> sampleText,
                            CheckpointInfo info = {});
// Loads a checkpoint (core validates it); throws InputError naming the file and the problem.
SharedModel loadSharedModel(const QString& path);
// How views and picture titles name a model loaded from `model.file`: "rope.safetensors (rope+yarn, step 5)", the
// scheme as schemeLabel writes it (with the method it is under, as the entropy legend does). loadSharedModel names its
// model so; a caller that applies another method to the model (`render attention --scaling`) names it again.
QString checkpointModelName(const SharedModel& model);
// Writes the model and its info as a checkpoint (atomically, under the model's lock); throws on failure, naming the
// file and the problem.
void saveSharedModel(const SharedModel& model, const QString& path);

// ---- Attention on text --------------------------------------------------------------------------------------
struct AttentionRequest {
    SharedModel model;
    std::vector<uint8_t> tokens; // (N) bytes of the text
    int layer = 0;
};
struct AttentionResult {
    QString error;
    AttentionRequest request;
    SchemeSpec spec;
    int heads = 0;
    int length = 0;
    std::vector<MatrixPtr> probabilities;        // (H) of (N, N), keys the query cannot see are -inf
    std::vector<std::vector<double>> rowEntropy; // (H) of (N), nats
    std::vector<MatrixPtr> biases;    // (H) of (N, N): the positional bias on this text (core's positionsOnText)
    std::vector<MatrixPtr> positions; // (H) of (N, N): cope's contextual positions; empty for other schemes
    // Whether `view` has something to draw for this result (positions: only with contextual positions).
    bool canShow(TextView view) const { return view != TextView::Positions || !positions.empty(); }
};
AttentionResult computeAttention(const AttentionRequest& request, const JobControl& control = {});
// How a byte is written on an axis: printable ASCII as is, space ␣, newline ↵, others as hex.
QString byteLabel(uint8_t byte);
// The heatmap of head `head`: its attention weights, positional bias or contextual positions (`show`; positions
// the result cannot show draw an empty panel).
HeatmapFigure attentionFigure(const AttentionResult& result, int head, const QString& colorMap,
                              TextView show = TextView::Weights);
CurveFigure rowEntropyFigure(const AttentionResult& result, int head);

// Entropy vs length with q and k from a trained model's `layer` reading its sample text; one series, the model's
// scheme with its learned values. Lengths past a learned table's rows are left out.
EntropyResult computeModelEntropy(const SharedModel& model, const std::vector<int>& lengths, int layer,
                                  const JobControl& control = {});

// ---- Train short, test long ---------------------------------------------------------------------------------
// The preset the Train tab starts with and "Train a demo model now" trains (a row of core's presets() table).
inline constexpr const char* kDemoPreset = "demo";
// What a run records as its preset when a field was edited by hand.
inline constexpr const char* kCustomPreset = "custom";
// The schemes the demo trains: Figure 1 of the ALiBi paper in miniature (sinusoidal and rope fall apart past the
// training context, alibi and local hold).
const std::vector<std::string>& demoSchemes();
// The one scheme "Train a demo model now" trains for a view that has no model.
inline constexpr const char* kDemoModelScheme = "alibi";

struct TrainRequest {
    // A scheme may carry a length-extension method, "rope+yarn" (trained under yarn; schemeModelConfig).
    std::vector<std::string> schemes = demoSchemes();
    QString preset = QString::fromLatin1(kCustomPreset); // the presets() row the sizes came from, or "custom"
    ModelConfig model;                                   // architecture; `scheme` is set per run
    TrainConfig train;
    QString corpusPath;                                            // empty: the default fortunes corpus
    std::vector<int> evalMultipliers = extrapolationMultipliers(); // evaluation lengths in units of the context
    EvalMode mode = EvalMode::NonOverlapping;
    size_t evalBytes = 16384; // bytes scored per length (0: the whole validation text)
    int reportEvery = 5;      // steps between loss snapshots
    // Runs per scheme, with seeds model.seed, model.seed + 1, ... (1, 2, 3 by default, as `positionlab-cli sweep
    // --seeds 1,2,3`); each is a sweep cell, so seed s initialises the model and draws the training windows (the
    // sweep's seed rule; train.dataSeed is not read). Seeds vary slowest: every scheme's first seed first.
    int seeds = 1;
};
constexpr int kMaxTrainSeeds = 10;
// One streamed update of a training run; the view accumulates them.
struct TrainSnapshot {
    int schemeIndex = 0; // into request.schemes
    int seed = 0;        // 0..request.seeds-1
    int step = 0;
    double loss = 0; // mean training loss since the previous snapshot
    bool trained = false;
    std::vector<EvalPoint> eval; // set once the scheme is evaluated
    SweepResult result;          // set with eval: the cell's result line, as `sweep` writes it
    SharedModel model;           // set with eval
    QString corpusSource;
    QString error; // the run stopped
    bool canceled = false;
    bool badInput = false; // the error is about the request or its input (the CLI's exit 2), not a failure in the run
};
// The request a preset describes: its sizes and schedule (core's applyPreset), its evaluation bytes, `preset` set.
// InputError naming the allowed presets for an unknown name.
TrainRequest presetTrainRequest(std::string_view preset, const std::vector<std::string>& schemes = demoSchemes());
// The model of run `s` of `request`: request.model with the scheme of schemes[s] and, for "rope+yarn", its method,
// and of model.schemeSettings (`render train --set`) those naming a parameter of that scheme or of its method (core's
// settingsTakenBy; a setting no scheme of the run takes is the caller's to refuse).
ModelConfig schemeModelConfig(const TrainRequest& request, size_t s);
// Scheme s of a request as a sweep grid of one scheme and the request's seeds: what runTraining runs cell by cell
// (core's trainSweepCell), so the Train tab and `sweep` share one seed rule and one train-and-evaluate.
SweepGrid trainGrid(const TrainRequest& request, size_t s);
// One demo-preset run of `schemes` (e.g. {"alibi"} for "Train a demo model now"; the Train tab and lessons too).
TrainRequest demoTrainRequest(const std::vector<std::string>& schemes);
// Steps between loss snapshots of a run of `steps` steps (about 100 points per curve).
int reportInterval(int steps);
// The lengths a run evaluates at (evalMultipliers times the context), in order: what runTraining passes to core.
std::vector<int> evaluationLengths(const TrainRequest& request);
// The evaluation lengths in units of the context as the Train tab names them: "L, 2L, 4L, 8L, 16L".
QString evaluationLengthsText(const std::vector<int>& multipliers = extrapolationMultipliers());

// Runs every scheme of the request, adding snapshots to `promise` (progress: steps and evaluation done). Each
// scheme's evaluated snapshot (with its model) is added as soon as that scheme is evaluated, before the next trains.
// The models record the request's preset in info.training["preset"].
void runTraining(const TrainRequest& request, QPromise<TrainSnapshot>& promise);

// ---- Evaluate a trained rotary model under length-extension methods ------------------------------------------
struct MethodsRequest {
    SharedModel model;
    std::vector<MethodChoice> methods;
    std::vector<int> lengths; // empty: core's extrapolationLengths of the model's context
    EvalMode mode = EvalMode::NonOverlapping;
    size_t evalBytes = 16384; // validation bytes scored per length (0: all)
    QString corpusPath;       // empty: the default fortunes corpus
};
struct MethodsResult {
    QString error;
    bool canceled = false;
    MethodsRequest request; // lengths filled in
    std::string scheme;
    int context = 0;
    nlohmann::json config; // the model's, with the scaling it was trained with
    std::vector<MethodCurve> curves;
    QString corpusSource;
};
// The lengths a request evaluates at.
std::vector<int> methodsLengths(const MethodsRequest& request);
// Core's evaluateUnderMethods on the corpus' held-out text under the model's lock; progress in thousandths.
MethodsResult computeMethods(const MethodsRequest& request, const JobControl& control = {});

CurveFigure trainingLossFigure(const std::vector<std::string>& schemes, const std::vector<Curve>& losses, int context);
CurveFigure perplexityFigure(const std::vector<std::string>& schemes, const std::vector<std::vector<EvalPoint>>& evals,
                             int context);
// Perplexity vs length of one model under several length-extension methods (core's evaluateUnderMethods): one curve
// per method, labelled as core labels them ("rope+yarn (factor 16)").
CurveFigure methodsPerplexityFigure(const std::vector<MethodCurve>& curves, const std::string& scheme, int context);
// Perplexity vs length over seeds (core's summarizeSweep rows): per scheme (and variant) the mean curve with a band of
// mean ± sd; the legend gives the number of seeds.
CurveFigure sweepPerplexityFigure(const std::vector<SweepSummaryRow>& rows);

} // namespace plab::ui
