// Runs on a task (core/tasks): one model trained and scored by exact-match accuracy at lengths L..4L, the mean ± sd
// over seeds per (length, depth), and the DroPE recipe (train rope, drop the positions, recalibrate, evaluate).
#pragma once

#include "runs/sweep.h"
#include "runs/training.h"
#include "tasks/task_accuracy.h"
#include "tasks/tasks.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace plab {

// The training length L a checkpoint's default task lengths are multiples of (eval MODEL --task, LabModel.task): its
// own task's when `training` (its training record) names `kind`, else the longest of `kind` that `context` reads (at
// least 1).
int taskEvalTrainLength(TaskKind kind, const nlohmann::json& training, int context);

// The lengths a task run is scored at: L, 3L/2, 2L, 3L, 4L of its training length L (without repeats), as the
// length-generalisation papers test up to a few times the training length.
std::vector<int> taskRunLengths(int trainLength);

struct TaskRunConfig {
    TaskSpec task;
    ModelConfig model;        // sizes and context; scheme and seed are each run's
    TrainConfig train;        // dataSeed is each run's seed
    int examples = 50;        // test examples per (length, depth) cell
    uint64_t testSeed = 1;    // of the test examples (the same for every run, so runs are scored on the same data)
    std::vector<int> lengths; // empty: taskRunLengths(task.trainLength)
};
// InputError naming the problem: the model and training configs, the task length against the context
// (checkTaskLength), examples < 1, and the lengths (checkTaskEvalOptions).
void checkTaskRunConfig(const TaskRunConfig& config);
// The scored lengths of a config (its own, else taskRunLengths).
std::vector<int> taskRunEvalLengths(const TaskRunConfig& config);

// What a task run trains on: fillTaskBatch of `task` seeded by `seed`, named "task copy, lengths 1..15 (payload
// letters)" in the checkpoint, and its record {"task", "task_length"}.
TrainingBatches taskTrainingBatches(const TaskSpec& task, uint64_t seed);

// One model's accuracy at every scored (length, depth): `label` names the curve ("rope", "rope+yarn", "none",
// "drope").
struct TaskCurve {
    std::string label;
    uint64_t seed = 0;
    std::vector<TaskAccuracyPoint> points; // length-major, depths inner (passkey)
};

// Scores `model` on config's lengths (and defaultPasskeyDepths for passkey) with config's examples and test seed;
// nullopt when `progress` (fraction in [0, 1]; may be empty) returned false.
std::optional<TaskCurve> scoreTaskCurve(Model& model, const TaskRunConfig& config, const std::string& label,
                                        uint64_t seed, const std::function<bool(double)>& progress = {});

struct TaskRun {
    TaskCurve curve;
    std::unique_ptr<Model> model;
    CheckpointInfo info;
};
// Trains `model` (its scheme as given) on config's task with the sweep's seed rule (seed s initialises the model and
// draws the batches), then scores it (scoreTaskCurve). nullopt when hooks stopped the training or `evalProgress`
// the scoring.
std::optional<TaskRun> trainTaskRun(const TaskRunConfig& config, const ModelConfig& model, uint64_t seed,
                                    const std::string& label, const TrainingHooks& hooks = {},
                                    const std::function<bool(double)>& evalProgress = {});

// ---- over seeds ----

struct TaskAccuracyRow {
    std::string label;
    int length = 0;
    double depth = -1;    // -1: every depth together (and the tasks without depths)
    SampleStats accuracy; // over seeds; unsupported cells are left out (n counts the seeds that could be scored)
};
// Rows per (label, length, depth), labels in order of first appearance, then as the curves' points are ordered. With
// `overDepths` every depth of a length joins one row: each seed's accuracy there is the mean over its depths (the
// passkey's accuracy against length at all depths).
std::vector<TaskAccuracyRow> summarizeTaskAccuracy(const std::vector<TaskCurve>& curves, bool overDepths);
// CSV (label,length,depth,n,accuracy_mean,accuracy_sd,accuracy_min,accuracy_max) and JSON ({"task", "columns", "rows":
// [{label, length, depth, n, accuracy, sd, min, max}]}; depth only for passkey rows).
std::string taskAccuracyCsv(const std::vector<TaskAccuracyRow>& rows);
nlohmann::json taskAccuracyJson(const std::vector<TaskAccuracyRow>& rows, const TaskSpec& task);

// A task sweep's results as curves, one per summary row (sweepRowScheme, then sweepRowVariant and sweepModelName after
// a space each: "alibi", "rope+yarn zero-shot factor=4", "drope fraction=0.1 logit-c=0.25", "rope nope_every=4",
// "rope layers=4" when the results differ in depth), one point per length, and for passkey lines one
// per (length, depth) as each line holds them; lines without depths (written before them) give their pooled accuracy
// with depth -1. Labels in order of first appearance. What `collect -o x.png` draws with the Train tab's figures.
std::vector<TaskCurve> sweepTaskCurves(const std::vector<SweepResult>& results);

// ---- DroPE ----

// The DroPE recipe (Gelberg et al. 2025) at small scale, per seed: train rope for train.steps; score it, and score it
// zero-shot under YaRN; train NoPE (scheme none) from scratch for train.steps; continue the rope model with every
// rotation removed (scheme none, its weights and AdamW state kept) for fraction x train.steps steps at the same
// length ("recalibration"), then score it.
struct DropeRecipe {
    TaskRunConfig run;       // run.model.scheme is not read: rope
    double fraction = 0.125; // of the rope budget, in (0, 1]; the paper recalibrates with 0.5-12.5%
    std::vector<uint64_t> seeds = {1};
    double yarnFactor = 0; // > 0: YaRN's factor; 0: the longest scored sequence over the context, rounded up
    // DroPE is scored with its test-time logit scale, scores times 1 + c ln(n/L) past L (the logit-c modifier); 0:
    // none.
    double logitC = kDropeLogitC;
};
inline constexpr const char* kDropeLabel = "drope";
inline constexpr const char* kNopeLabel = "none";
inline constexpr const char* kRopeLabel = "rope";
inline constexpr const char* kRopeYarnLabel = "rope+yarn";

// InputError: checkTaskRunConfig, a fraction outside (0, 1], no seeds or a repeated one, a negative YaRN factor, a
// logit-c the modifier refuses.
void checkDropeRecipe(const DropeRecipe& recipe);
// Recalibration steps: fraction x train.steps rounded, at least 1.
int dropeRecalibrationSteps(const DropeRecipe& recipe);
// The YaRN factor the zero-shot rope curve is scored with.
double dropeYarnFactor(const DropeRecipe& recipe);

// The recipe's steps, in the order each seed runs them.
enum class DropeStep { TrainRope, ScoreRope, TrainNope, ScoreNope, Recalibrate, ScoreDrope };
const std::vector<DropeStep>& dropeSteps();
const char* dropeStepName(DropeStep step); // "train rope", "drop the positions and recalibrate", ...

struct DropeHooks {
    int reportEvery = 0;
    std::function<void(size_t seedIndex, DropeStep step)> stepStarted;
    std::function<void(size_t seedIndex, DropeStep step, const TrainingProgress&)> trainingProgress;
    std::function<void(size_t seedIndex, DropeStep step, double fraction)> scoringProgress;
    std::function<void(const TaskCurve&)> curveDone; // each curve as soon as it is scored
    std::function<bool()> shouldStop;
};
struct DropeRecipeResult {
    std::vector<TaskCurve> curves; // per seed: rope, rope+yarn, none, drope
    bool stopped = false;          // shouldStop ended it; curves holds those done
};
// Runs the recipe (checkDropeRecipe first). RunError when a loss diverges.
DropeRecipeResult runDropeRecipe(const DropeRecipe& recipe, const DropeHooks& hooks = {});

} // namespace plab
