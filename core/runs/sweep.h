// Sweeps: a grid of schemes x seeds x option variants, one trained-and-evaluated cell at a time, results appended to
// a JSON-lines file that survives kills and concurrent writers, and mean/sd/min/max over seeds.
#pragma once

#include "hf/hf_scaling_layers.h"
#include "model/corpus.h"
#include "runs/evaluation.h"
#include "runs/method_comparison.h"
#include "model/model.h"
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

// The file names inside a sweep folder.
constexpr const char* kSweepGridFile = "sweep.json";
constexpr const char* kSweepResultsFile = "results.jsonl";

// A sweep's DroPE recipe (Gelberg et al. 2025): every rope cell, once trained and evaluated, is continued with its
// positions dropped (droppedPositionsRun) for `fraction` of its steps and scored once per test-time logit-c.
struct SweepDrope {
    double fraction = 0.1;                    // of the rope cell's steps, in (0, 1]
    std::vector<double> logitC{kDropeLogitC}; // each >= 0, distinct; 0: unscaled
};

// A model grid's retrieval task (core/tasks/retrieval): its name, depths, examples per cell, prompt seed and scoring.
struct SweepRetrieval {
    std::string task;
    std::vector<double> depths{0, 0.5, 1};
    int examples = 1;
    uint64_t seed = 1;
    std::string score = "exact";
};

// What a sweep runs. Every cell trains cell(i).model with cell(i).train on the corpus and evaluates it at evalLengths.
struct SweepGrid {
    std::vector<std::string> schemes;
    std::vector<uint64_t> seeds;                        // model seed and data seed of a cell
    std::vector<std::vector<std::string>> variants{{}}; // each a list of NAME=VALUE scheme settings; {{}}: one plain
    std::string preset;                                 // the presets() row the sizes came from (informative)
    ModelConfig model;                                  // sizes, logn and common settings; scheme and seed per cell
    TrainConfig train;                                  // dataSeed per cell
    std::string corpus;                                 // a file path; empty: the default fortunes corpus
    std::vector<int> evalLengths;                       // evaluation lengths (default L..16L)
    EvalMode evalMode = EvalMode::NonOverlapping;
    size_t evalBytes = 16384; // held-out bytes scored per length (0: all)
    // A task grid (--task) trains every cell on the task's examples and scores exact-match accuracy at evalLengths
    // (the task's lengths, passkey at its default depths pooled), taskExamples test examples per length and depth.
    std::optional<TaskSpec> task;
    int taskExamples = 100;
    // Evaluations a cell adds to its own (the model as trained), each written inside its result line: every rotary cell
    // scored zero-shot under each method of evalScalings (factor: zeroShotFactor of the longest scored sequence), and
    // every rope cell continued as DroPE. Empty / unset: none (and the grid's JSON and hash are as before).
    std::vector<std::string> evalScalings; // methods with a factor: pi, ntk, dynamic-ntk, yarn, llama3, longrope
    std::optional<SweepDrope> drope;

    // A model grid (empty modelFolder: a training grid): the Hugging Face folder `modelFolder` (absolute) evaluated
    // zero-shot under each of `methods` (items as parseMethodList reads them: "none", "yarn:factor=8") and each variant
    // (sweepModelChoices), nothing trained: schemes, seeds, model sizes, training and task are unused. Lengths count
    // the folder's tokens and evalBytes is then the tokens scored per length (0: all).
    std::string modelFolder;
    std::vector<std::string> methods;
    bool modelGrid() const { return !modelFolder.empty(); }
    // A model grid's layer types its methods reach (--scaling-layers; hf_scaling_layers.h's rule), the same for every
    // cell: full by default, and then left out of the JSON, so older grids keep their hash.
    HfScalingLayers scalingLayers = HfScalingLayers::Full;
    // A model grid's retrieval task (sweep --model DIR --task NAME): each cell scores the task at evalLengths x
    // depths under its method (core/runs/retrieval_runs) instead of perplexity. Unset: perplexity.
    std::optional<SweepRetrieval> retrieval;

    size_t cellCount() const;
    nlohmann::json toJson() const; // canonical: the hash is taken over its dump
    static SweepGrid fromJson(const nlohmann::json& j, const std::string& source); // InputError naming source
    std::string hash() const; // 16 hex digits (FNV-1a 64 of the canonical JSON)
};

// A model grid's cells in order: each method (in the order given) with each variant, a variant keeping only the
// settings the method has (a method without any of them, none, runs once); the method item's own settings first.
// InputError for a malformed or unknown method (parseMethodList's).
std::vector<MethodChoice> sweepModelChoices(const SweepGrid& grid);

// One cell of a grid: seeds vary slowest, so an interrupted sweep has whole seeds of every scheme first.
struct SweepCell {
    size_t index = 0;
    std::string method; // a model grid's cell: the method (then scheme, seed, model and train are unused)
    std::vector<std::string> settings; // and its NAME=VALUE settings (variant: the same joined by spaces)
    std::string scheme;
    uint64_t seed = 0;
    std::string variant; // "NAME=VALUE NAME=VALUE", empty for the plain scheme
    ModelConfig model;
    TrainConfig train;
    std::string key() const; // "scheme=alibi seed=2 window=16" ("method=yarn factor=2" in a model grid): names the cell
};
SweepCell sweepCell(const SweepGrid& grid, size_t index); // InputError when index is out of range

// The checks a grid must pass before any cell runs: schemes listed, known and distinct; seeds listed and distinct;
// variants distinct; every cell's model and training configs valid. InputError naming the problem.
void validateSweepGrid(const SweepGrid& grid);

// "schemes: [a, b] here, [a, c] in the folder": the first field in which two grids differ, each value followed by
// where it stands (oursWhere, theirsWhere); empty when equal.
std::string sweepGridDifference(const SweepGrid& ours, const SweepGrid& theirs, const std::string& oursWhere = "here",
                                const std::string& theirsWhere = "in the folder");

// A finished cell: what results.jsonl holds, one line each.
struct SweepResult {
    size_t cell = 0;
    std::string key;
    std::string scheme;
    uint64_t seed = 0;
    std::string variant;
    // What the grid gave every cell (written only when set, so older result lines read as before): the length-extension
    // method ("yarn") and the settings common to all cells ("factor=2"). collect tells curves apart by them.
    std::string scaling;
    std::string settings;
    // A model grid's --scaling-layers when not full ("sliding", "all"; written only when set).
    std::string scalingLayers;
    // A model grid's cell (written only when set): the model folder, its model_type and the tokens scored per length.
    std::string model;
    std::string modelType;
    std::vector<double> tokens;
    int context = 0;
    std::vector<int> lengths;
    std::vector<double> loss;       // nats per byte; NaN where unsupported
    std::vector<double> perplexity; // NaN where unsupported
    // A task cell's: the task's name and the exact-match accuracy at each length (empty task: a text cell; then
    // loss and perplexity hold NaN in a task cell).
    std::string task;
    std::vector<double> accuracy; // NaN where unsupported
    // Passkey's accuracy per depth (empty for the other tasks): depthAccuracy[i][d] at lengths[i] and depths[d], what
    // the depth x length heatmap draws; `accuracy` is their mean over the depths.
    std::vector<double> depths;
    std::vector<std::vector<double>> depthAccuracy;
    // An evaluation the cell added (SweepGrid::evalScalings, drope): the method ("yarn", or "drope") and its settings
    // ("factor=4"; "fraction=0.1 logit-c=0.25"); both empty for the model as trained. steps and trainSeconds of a DroPE
    // evaluation are its recalibration's.
    std::string method;
    std::string methodSettings;
    std::vector<SweepResult> evaluations; // the cell's added evaluations, written inside its line ("evaluations")
    // The trained model beyond its scheme: its depth and modelOptionsLabel ("nope_every=4 ssmax"). Not in the result
    // line (its folder's grid holds them): set for a cell trained here (trainSweepCell) and by collectSweepResults
    // from each folder's grid, so rows of different models never pool. 0 and empty for a model grid's cell.
    int layers = 0;
    std::string modelOptions;
    int steps = 0;
    double trainLoss = 0;
    double trainSeconds = 0;
    double evalSeconds = 0;
    int threads = 0;
    std::string gridHash;
    std::string version;
    nlohmann::json toJson() const;
    static SweepResult fromJson(const nlohmann::json& j, const std::string& source); // InputError naming source
};

// The zero-shot factor of a length-extension method scored past the context: the longest sequence a model reads over
// the context, rounded up, at least 1 (YaRN told to stretch exactly that far); core's DroPE recipe and sweeps use it.
double zeroShotFactor(int longestSequence, int context);
// The positions a model reads of the longest example at `lengths` (taskExampleBytes - 1).
int longestTaskSequence(TaskKind kind, const std::vector<int>& lengths);
// The zero-shot factor of a grid's evaluations (its longest evaluation length, or its task's longest example).
double sweepZeroShotFactor(const SweepGrid& grid);

// How a summary row names a result: the scheme with the grid's method ("rope+yarn") or with a zero-shot method
// ("rope+yarn"; its variant starts "zero-shot"), "drope" for a DroPE evaluation; the variant: the grid's common
// settings, the cell's variant, then the evaluation's settings.
std::string sweepRowScheme(const SweepResult& r);
std::string sweepRowVariant(const SweepResult& r);

// The model part of a row's or curve's name: "layers=4 nope_every=4 ssmax", the depth only when `withDepth` (the rows
// shown differ in it), then the options; empty for a plain model whose depth is not shown.
std::string sweepModelName(int layers, const std::string& modelOptions, bool withDepth);

// A result from an evaluation (scheme, seed, variant and context as given; NaN where a length is unsupported): the
// form runSweepCell writes and the GUI's seeds aggregate.
SweepResult sweepResultFromEvaluation(const std::string& scheme, uint64_t seed, const std::string& variant, int context,
                                      const std::vector<EvalPoint>& points);

// A task cell's accuracies as its result line keeps them, into r.lengths, r.accuracy (every example at lengths[i]
// pooled: correct / examples, NaN where the model cannot read them) and, with depths (passkey), r.depths and
// r.depthAccuracy[i][d] at (lengths[i], depths[d]); loss and perplexity NaN.
void poolTaskPoints(const std::vector<TaskAccuracyPoint>& points, const std::vector<int>& lengths,
                    const std::vector<double>& depths, SweepResult& r);

// The version written into every result line.
const char* positionLabVersion();

// What every cell's result records of where it came from: its index and key, the threads, the grid's hash,
// PositionLab's version and a model grid's --scaling-layers (the one place a runner stamps them).
void stampSweepCellIdentity(SweepResult& result, const SweepGrid& grid, const SweepCell& cell);

// One (scheme, seed) trained and evaluated: what every entry point that trains and evaluates runs (sweep cells, the
// GUI's Train tab). The seed rule is the cell's (sweepCell): seed s initialises the model and draws the training
// windows. Besides the result line it keeps the trained model, its checkpoint info and the evaluated points.
struct SweepCellRun {
    SweepResult result;
    std::unique_ptr<Model> model;
    CheckpointInfo info;
    std::vector<EvalPoint> points;
};
// Trains and evaluates cell `index` (trainModel, then evaluateModel: no optimiser step of its own). nullopt when
// hooks stopped the training before its last step or the evaluation. `evalProgress` (may be empty) sees the
// evaluation's progress in [0, 1] and stops it by returning false (then nullopt).
std::optional<SweepCellRun> trainSweepCell(const SweepGrid& grid, size_t index, const Corpus& corpus,
                                           const TrainingHooks& hooks = {},
                                           const std::function<bool(double)>& evalProgress = {});
// trainSweepCell's result line (a model grid's cell: evaluateSweepModelCell's): what `sweep` appends.
std::optional<SweepResult> runSweepCell(const SweepGrid& grid, size_t index, const Corpus& corpus,
                                        const TrainingHooks& hooks = {});

// A model grid's cell: the folder's model (loaded here) under the cell's method on the validation split of the corpus
// in its tokens, through evaluateUnderMethods (a rotary model) or evaluateModel (none on alibi or learned positions).
// nullopt when hooks.interrupt stopped it.
std::optional<SweepResult> evaluateSweepModelCell(const SweepGrid& grid, size_t index, const Corpus& corpus,
                                                  const TrainingHooks& hooks = {});

// evaluateModel's rule for every cell, before any training: InputError (checkEvalLengthsFit) when an evaluation length
// a cell's model supports exceeds the held-out bytes it scores (a model grid: the validation split's tokens in the
// folder's tokenizer). `cell` >= 0 checks that cell only.
void checkSweepEvalLengths(const SweepGrid& grid, const Corpus& corpus, long long cell = -1);
// The corpus a grid names (loadCorpusFile or loadDefaultCorpus).
Corpus loadSweepCorpus(const SweepGrid& grid);

// The good lines of a results file. A last line without its newline is a torn append of a killed writer: skipped
// (appendSweepResult removes it). Any other line that is not a result of `grid` (when given) is an InputError naming
// the file, the line number and what is wrong, and saying the other lines are kept. A missing file has no results.
struct SweepResultsRead {
    std::vector<SweepResult> results; // in file order, one per cell (a repeated cell keeps its first line)
    bool tornTail = false;
};
SweepResultsRead readSweepResults(const std::string& path, const SweepGrid* grid = nullptr);

// Appends one line under an exclusive flock: drops a torn tail, skips the line when its cell is already there
// (returns false), writes the line with one write() and fsyncs. RunError on an I/O failure.
bool appendSweepResult(const std::string& path, const SweepResult& result);

// ---- a sweep folder ----

// Creates DIR and writes DIR/sweep.json, or checks the one there: InputError when DIR is a file, cannot be written,
// or holds another grid (naming the difference). Returns the grid as stored.
void prepareSweepFolder(const std::string& dir, const SweepGrid& grid);
// Reads DIR/sweep.json; InputError naming the file when it is missing or not a grid.
SweepGrid loadSweepGrid(const std::string& dir);

// ---- aggregation over seeds ----

struct SampleStats {
    int n = 0;
    double mean = 0, sd = 0, min = 0, max = 0; // sd: the sample standard deviation (n - 1), 0 for n = 1
};
SampleStats sampleStats(const std::vector<double>& values); // NaNs are left out; n = 0 when none is left

// One row of a summary: a scheme (and variant) at one length, over every seed collected.
struct SweepSummaryRow {
    std::string scheme;  // with the grid's method, as the compare view writes it: "rope+yarn"
    std::string variant; // the grid's common settings, then the cell's variant: "factor=2 window=16"
    int context = 0;
    int length = 0;
    SampleStats perplexity;
    SampleStats ratio;    // ppl(length) / ppl(context) of each seed; n = 0 when the context length was not evaluated
    std::string task;     // a task grid's rows: the task, and accuracy in place of perplexity
    SampleStats accuracy; // exact-match accuracy over the seeds (task rows)
    std::string model;    // a model grid's rows: the model folder (lengths then count its tokens)
    int layers = 0;       // the trained model's depth (SweepResult::layers; 0: not known, a model grid)
    std::string modelOptions; // and its options (SweepResult::modelOptions), "" for none
};
// Rows grouped by (scheme, method, settings, variant, model depth and options, context) in order of first appearance,
// lengths ascending; a cell's added evaluations (zero-shot methods, DroPE) are rows of their own.
std::vector<SweepSummaryRow> summarizeSweep(const std::vector<SweepResult>& results);

// The results of every folder (loadSweepGrid + readSweepResults each), each folder's in grid order, each stamped with
// its grid's depth and model options: InputError naming a folder that has no finished cell, or none given, or two
// folders whose grids differ in more than what a row names (scheme, method, settings, variant, the model's depth and
// options, context), naming both folders and the first such field.
std::vector<SweepResult> collectSweepResults(const std::vector<std::string>& dirs);

// The summary as CSV (header scheme,variant,context,length,n,ppl_mean,ppl_sd,ppl_min,ppl_max,ratio_n,ratio_mean,
// ratio_sd,ratio_min,ratio_max,layers,options; ratio = ppl(length) / ppl(L); layers empty for a model grid, options
// the model's modelOptionsLabel, quoted when it holds a comma) and as JSON ({"columns", "rows": [{...}]}, each row
// with "layers" and "options"). Task rows (a task grid's) are written as scheme,variant,context,task,length,n,acc_mean,
// acc_sd,acc_min,acc_max,layers,options, and in JSON with "task" and "accuracy" in place of "perplexity" and "ratio";
// a summary holds one kind or the other. The two model columns come last, so the older columns keep their places.
std::string sweepSummaryCsv(const std::vector<SweepSummaryRow>& rows);
nlohmann::json sweepSummaryJson(const std::vector<SweepSummaryRow>& rows, const std::vector<std::string>& dirs);

} // namespace plab
