// The one training loop: the CLI's train, the GUI's Train tab, lessons and sweeps all run trainModel, none of them
// takes an optimiser step itself. Also the rules every run shares: the corpus check, the warm-up rule, L..16L.
#pragma once

#include "model/checkpoint.h"
#include "model/corpus.h"
#include "model/model.h"
#include "tasks/tasks.h"
#include "model/optimizer.h"

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace plab {

struct TrainStepResult {
    int step = 0;    // steps done so far (1-based after the first)
    double loss = 0; // mean training loss of this step's batch
    double learningRate = 0;
    double gradNorm = 0; // before clipping
};

// Batches drawn by something other than a text's windows (a task, core/tasks): fills inputs and targets (B, T) and the
// loss weight of every target (B, T) for step `step` (0-based), the same batch for the same step.
using BatchSource = std::function<void(int step, int B, int T, uint8_t* inputs, uint8_t* targets, float* weights)>;

// Draws random training windows (seeded), runs forward/backward/clip/AdamW. Same seeds and thread count -> same curve.
class Trainer {
public:
    // `resume`: an optimiser state to continue from (train --init), copied. Checks the config and that the text
    // (`textName` in messages) fills a window, unless `check` says the caller did (trainModel).
    Trainer(Model& model, TrainConfig config, const std::vector<uint8_t>& trainTokens, const AdamW* resume = nullptr,
            ConfigCheck check = ConfigCheck::Validate);
    // Batches of `batches` (rows of `context` tokens) instead of text windows; the loss is their weighted mean.
    Trainer(Model& model, TrainConfig config, BatchSource batches, const AdamW* resume = nullptr,
            ConfigCheck check = ConfigCheck::Validate);
    TrainStepResult step();
    int stepsDone() const { return m_step; }
    const AdamW& optimizer() const { return m_optimizer; }
    const TrainConfig& config() const { return m_config; }
    size_t tokensPerStep() const { return static_cast<size_t>(m_config.batch) * m_model.config().context; }

private:
    Trainer(Model& model, TrainConfig config, const std::vector<uint8_t>& trainTokens, const AdamW* resume,
            BatchSource batches, ConfigCheck check);

    Model& m_model;
    TrainConfig m_config;
    const std::vector<uint8_t>& m_tokens;
    BatchSource m_batches; // set: batches from it, not windows of m_tokens
    AdamW m_optimizer;
    uint64_t m_rngState;
    int m_step = 0;
    std::vector<uint8_t> m_inputs, m_targets; // (B, T)
    std::vector<float> m_weights;             // (B, T) with m_batches
};

// A model of context L trains on windows of L + 1 bytes: InputError naming the text (`source`, e.g. "the training
// text"), its bytes and the need when it is shorter. The words are the CLI's and the GUI's alike (no option names).
void checkTrainingText(size_t bytes, int context, const std::string& source);
void checkTrainingCorpus(const Corpus& corpus, int context); // the corpus's training split

// Sets the steps of a run and keeps the warm-up to at most a fifth of them, so a short run still reaches its peak
// learning rate and decays.
void setTrainingSteps(TrainConfig& config, int steps);

// What a preset gives a run on `task` beyond its row of presets() (the text sizes): a context that holds the task's
// training length, batch, steps and learning rate that learn the task in minutes on 2 cores (measured: README,
// "Tasks"). Presets without a task row are left as they are. The one home of the task presets.
void applyTaskPreset(std::string_view preset, TaskKind task, ModelConfig& model, TrainConfig& train);

// "Train short, test long": the evaluation lengths L, 2L, 4L, 8L, 16L (multipliers of the training context).
const std::vector<int>& extrapolationMultipliers();
std::vector<int> extrapolationLengths(int context, const std::vector<int>& multipliers = extrapolationMultipliers());

// What a run reports every `reportEvery` steps, at the first and at the last.
struct TrainingProgress {
    int step = 0;
    int steps = 0;
    double loss = 0; // mean training loss of the steps since the previous report
    double learningRate = 0;
    double gradNorm = 0;
    double elapsedSeconds = 0;
    double tokensPerSecond = 0;
    double etaSeconds = 0;
};

struct TrainingHooks {
    int reportEvery = 0; // 0: every steps/50
    std::function<void(const TrainingProgress&)> progress;
    // Polled before every step; `interrupt` also stops inside a step, before the optimiser runs, so the model keeps
    // the parameters of its last full step.
    std::function<bool()> shouldStop;
    const std::atomic<bool>* interrupt = nullptr;
    // Called once the run's inputs passed their one check and its model is built, before the first step (the CLI
    // prints its start line here, after the checks and not before them).
    std::function<void(const Model&)> started;
    int saveEvery = 0; // 0: never; else checkpoint(...) every saveEvery steps before the last
    std::function<void(const Model&, const CheckpointInfo&)> checkpoint;
};

struct TrainingResult {
    std::unique_ptr<Model> model;
    CheckpointInfo info;  // steps done, last training loss, corpus, TrainConfig::toJson()
    bool stopped = false; // a stop request ended it before the last step
    double elapsedSeconds = 0;
    double tokensPerSecond = 0;
};

// The one check of a run's inputs (the CLI's train, sweep cells, the GUI's Train tab call nothing else before it):
// validates both configs, the corpus against the context and, with `init`, checkInitCompatible (naming the checkpoint
// `initSource`, the run `initRun`); then builds the model from model.seed and runs train.steps steps of random
// windows of the training split (same seeds and threads: the same run). InputError for bad input, RunError when the
// loss diverges.
// With `init` (train --init) the run starts from that checkpoint's weights and, when it has one, its optimiser state;
// `model` may change the context, the length-extension method and the parameters that leave the weights' shapes
// alone, but not the scheme or a shape: InputError naming both otherwise.
TrainingResult trainModel(const ModelConfig& model, const TrainConfig& train, const Corpus& corpus,
                          const TrainingHooks& hooks = {}, const LoadedCheckpoint* init = nullptr,
                          const std::string& initSource = "checkpoint", const std::string& initRun = "this run");
// The same run on batches of a BatchSource (a task): `source` names them in the checkpoint (its corpus field) and
// `record` joins the checkpoint's training record (e.g. {"task": "copy", "task_length": 15}).
struct TrainingBatches {
    BatchSource draw;
    std::string source;
    nlohmann::json record = nlohmann::json::object();
};
TrainingResult trainModel(const ModelConfig& model, const TrainConfig& train, const TrainingBatches& batches,
                          const TrainingHooks& hooks = {}, const LoadedCheckpoint* init = nullptr,
                          const std::string& initSource = "checkpoint", const std::string& initRun = "this run");

// The --init merge rule, in two steps around the run's own scheme and sizes. First the checkpoint gives the run its
// scheme, logn and seed, and its sizes and context unless `keepSizes` (a preset named sizes of its own, which must then
// match: checkInitSchemeAndSizes); `model` holds the run's defaults (the preset's) before its own options change it.
void takeCheckpointModel(ModelConfig& model, const ModelConfig& checkpoint, bool keepSizes);
// Then, once the scheme and sizes the run asks for passed checkInitSchemeAndSizes: the checkpoint's scheme settings,
// method and method settings, with the run's replacing them: `method`, when given, replaces the method and all its
// settings; each of `settings` (NAME=VALUE) replaces the setting of that name, among the scheme's settings when the
// scheme has a parameter NAME, else among the method's. Ends with keepOriginalContext(model, checkpoint, settings) and
// returns what it returns.
int mergeCheckpointSettings(ModelConfig& model, const ModelConfig& checkpoint, const std::optional<std::string>& method,
                            const std::vector<std::string>& settings);

// Continuing a checkpoint at a longer context: a method that reads the original context L (yarn, llama3, dynamic-ntk,
// rerope, leaky-rerope) keeps the one the checkpoint was first trained at. `given` holds the run's own settings (the
// user's, of the scheme and the method): an original-context among them wins whatever its value, never replaced (it
// is validated with the model like any setting; 0 means this run's context). Of the settings `model` carries from the
// checkpoint, original-context=0 (the checkpoint's own context) counts as unset and is replaced.
// Returns that L when it was added to model.scalingSettings, else 0 (also when the run's context is not longer).
int keepOriginalContext(ModelConfig& model, const ModelConfig& init, const std::vector<std::string>& given);

// The check of continuing from a checkpoint (train --init, trainModel): InputError unless `model` asks for the
// checkpoint's scheme and sizes (checkInitSchemeAndSizes), then unless every tensor has the checkpoint's shape (a
// learned table's rows, t5's buckets), naming the checkpoint `source` ("SOURCE: this run asks for ..."; the CLI puts
// its option before it), what differs and what is allowed. `run` names what asks ("this run", or
// e.g. "this run (--preset quick)").
void checkInitCompatible(const ModelConfig& model, const LoadedCheckpoint& init, const std::string& source,
                         const std::string& run = "this run");
// Its first half, by name only, so `model` need not be valid yet (the CLI calls it before the checkpoint's settings
// join the run's): each of scheme, layers, d-model, heads, d-ff that differs is named, e.g. "this run asks for scheme
// alibi where the checkpoint has rope, heads 2 where the checkpoint has 8".
void checkInitSchemeAndSizes(const ModelConfig& model, const ModelConfig& checkpoint, const std::string& source,
                             const std::string& run = "this run");
// True when `model` continues the rope `checkpoint` as NoPE (scheme none): DroPE's recalibration, every rotation
// removed, weights and optimiser state kept. The one scheme change checkInitSchemeAndSizes allows.
bool droppingPositions(const ModelConfig& model, const ModelConfig& checkpoint);

// ---- DroPE's recalibration (one rule for core's runDropeRecipe and sweep cells with a DroPE recipe) ----

// DroPE's test-time logit scale by default: logit-c about 1/ln L at the lab's contexts (32, 64), where log-n scaling
// (lesson 9) would put it.
inline constexpr double kDropeLogitC = 0.25;
// Recalibration steps: fraction x steps of the rope run, rounded, at least 1.
int recalibrationSteps(double fraction, int steps);
// The setting that scores a dropped model with its logit scale, "logit-c=0.25" (exact digits).
std::string logitCSetting(double c);
// The recalibration run of a trained rope model (`rope`, whose optimiser state it takes): scheme none with the rope
// model's sizes (droppingPositions), `train`'s schedule for recalibrationSteps(fraction, train.steps), its batches
// drawn from a data seed the rope run did not use step for step. Pass `model`, `train` and `init` to trainModel.
struct Recalibration {
    ModelConfig model;
    TrainConfig train;
    LoadedCheckpoint init;
};
Recalibration droppedPositionsRun(TrainingResult&& rope, const TrainConfig& train, double fraction);

} // namespace plab
