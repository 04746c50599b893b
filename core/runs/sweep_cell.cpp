// The sweep's cell runner: one cell trained (or a model folder's method applied), scored and stamped (see sweep.h).
#include "runs/sweep.h"
#include "runs/retrieval_runs.h"
#include "runs/sweep_internal.h"

#include "base/errors.h"
#include "hf/hf_config.h"
#include "hf/hf_model.h"
#include "hf/tokenizer.h"
#include "runs/eval_check.h"
#include "runs/language_model.h"
#include "schemes/schemes.h"
#include "tasks/task_accuracy.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>

#ifndef POSITIONLAB_VERSION
#define POSITIONLAB_VERSION "unknown"
#endif

namespace plab {

using sweep_internal::joined;
using sweep_internal::numberText;

double zeroShotFactor(int longestSequence, int context)
{
    return std::max(1.0, std::ceil(static_cast<double>(longestSequence) / context));
}

int longestTaskSequence(TaskKind kind, const std::vector<int>& lengths)
{
    return taskExampleBytes(kind, *std::max_element(lengths.begin(), lengths.end())) - 1;
}

double sweepZeroShotFactor(const SweepGrid& grid)
{
    const int longest = grid.task ? longestTaskSequence(grid.task->kind, grid.evalLengths)
                                  : *std::max_element(grid.evalLengths.begin(), grid.evalLengths.end());
    return zeroShotFactor(longest, grid.model.context);
}

const char* positionLabVersion()
{
    return POSITIONLAB_VERSION;
}

void poolTaskPoints(const std::vector<TaskAccuracyPoint>& points, const std::vector<int>& lengths,
                    const std::vector<double>& depths, SweepResult& r)
{
    for (int length : lengths) {
        int examples = 0, correct = 0;
        bool supported = true;
        for (const TaskAccuracyPoint& p : points)
            if (p.length == length) {
                examples += p.examples;
                correct += p.correct;
                supported = supported && p.supported;
            }
        r.lengths.push_back(length);
        r.loss.push_back(std::nan(""));
        r.perplexity.push_back(std::nan(""));
        r.accuracy.push_back(supported && examples > 0 ? static_cast<double>(correct) / examples : std::nan(""));
    }
    if (depths.empty())
        return;
    r.depths = depths;
    for (int length : lengths) {
        std::vector<double> row;
        for (double depth : depths)
            for (const TaskAccuracyPoint& p : points)
                if (p.length == length && p.depth == depth)
                    row.push_back(p.supported ? p.accuracy : std::nan(""));
        r.depthAccuracy.push_back(std::move(row));
    }
}

SweepResult sweepResultFromEvaluation(const std::string& scheme, uint64_t seed, const std::string& variant, int context,
                                      const std::vector<EvalPoint>& points)
{
    SweepResult r;
    r.scheme = scheme;
    r.seed = seed;
    r.variant = variant;
    r.context = context;
    for (const EvalPoint& p : points) {
        r.lengths.push_back(p.length);
        r.loss.push_back(p.supported ? p.loss : std::nan(""));
        r.perplexity.push_back(p.supported ? p.perplexity : std::nan(""));
    }
    return r;
}

namespace {

std::string modelTextName(const SweepGrid& grid, const Corpus& corpus)
{
    return "the validation split of " + corpus.source + " (tokenized with " + grid.modelFolder + "/tokenizer.json)";
}

} // namespace

void checkSweepEvalLengths(const SweepGrid& grid, const Corpus& corpus, long long cell)
{
    if (grid.task || grid.retrieval) // a task grid scores generated examples, not the held-out text
        return;
    if (grid.modelGrid()) { // one model and one text for every cell
        const std::string name = modelTextName(grid, corpus);
        const std::vector<int32_t> tokens =
            folderTextTokens(hf::Tokenizer::fromFolder(grid.modelFolder), corpus.validation, name);
        checkEvalLengthsFit(grid.evalLengths, hfMaxLength(readHfConfig(grid.modelFolder)), tokens.size(),
                            grid.evalBytes, name, "token");
        return;
    }
    const size_t first = cell < 0 ? 0 : static_cast<size_t>(cell);
    const size_t end = cell < 0 ? grid.cellCount() : first + 1;
    for (size_t i = first; i < end; ++i)
        checkEvalLengthsFit(grid.evalLengths, modelMaxLength(sweepCell(grid, i).model), corpus.validation.size(),
                            grid.evalBytes, "the validation split of " + corpus.source);
}

Corpus loadSweepCorpus(const SweepGrid& grid)
{
    return grid.corpus.empty() ? loadDefaultCorpus() : loadCorpusFile(grid.corpus);
}

void stampSweepCellIdentity(SweepResult& r, const SweepGrid& grid, const SweepCell& cell)
{
    r.cell = cell.index;
    r.key = cell.key();
    r.threads = omp_get_max_threads();
    r.gridHash = grid.hash();
    r.version = positionLabVersion();
    if (grid.modelGrid() && grid.scalingLayers != HfScalingLayers::Full)
        r.scalingLayers = hfScalingLayersName(grid.scalingLayers);
}

namespace {

// The fields every result line of a cell carries, after its evaluation.
void finishResult(SweepResult& r, const SweepGrid& grid, const SweepCell& cell, const TrainingResult& trained)
{
    r.scaling = grid.model.scaling == "none" ? std::string() : grid.model.scaling;
    r.settings = joined(grid.model.schemeSettings, " ");
    stampSweepCellIdentity(r, grid, cell);
    r.layers = cell.model.layers;
    r.modelOptions = modelOptionsLabel(cell.model);
    r.steps = trained.info.step;
    r.trainLoss = trained.info.trainLoss;
    r.trainSeconds = trained.elapsedSeconds;
}

// A task grid's batches: the task's examples drawn with the cell's data seed (as train --task).
TrainingBatches sweepTaskBatches(const TaskSpec& task, uint64_t seed)
{
    TrainingBatches batches;
    batches.draw = [task, seed](int step, int B, int T, uint8_t* inputs, uint8_t* targets, float* weights) {
        fillTaskBatch(task, seed, step, B, T, inputs, targets, weights);
    };
    batches.source = "task " + taskInfo(task.kind).name;
    batches.record = task.toJson();
    return batches;
}

// A cell's model scored as the grid scores (the task's accuracy, passkey's depths pooled per length and kept per
// depth; or the perplexity at every length): the result's lengths and numbers and its evaluation seconds. nullopt when
// the interrupt flag or `evalProgress` stopped it.
std::optional<SweepResult> scoreCellModel(const SweepGrid& grid, const SweepCell& cell, Model& model,
                                          const Corpus& corpus, const TrainingHooks& hooks,
                                          const std::function<bool(double)>& evalProgress,
                                          std::vector<EvalPoint>* textPoints = nullptr)
{
    bool stopped = false;
    const std::atomic<bool>* flag = hooks.interrupt;
    std::function<bool(double)> progress;
    if (flag || evalProgress)
        progress = [flag, &evalProgress, &stopped](double fraction) {
            stopped = (flag && flag->load()) || (evalProgress && !evalProgress(fraction));
            return !stopped;
        };
    const auto begin = std::chrono::steady_clock::now();
    SweepResult r;
    if (!grid.task) {
        EvalOptions eo;
        eo.lengths = grid.evalLengths;
        eo.mode = grid.evalMode;
        eo.maxTokens = grid.evalBytes;
        eo.textName = "the validation split of " + corpus.source;
        eo.progress = progress;
        std::vector<EvalPoint> points;
        try {
            points = evaluateModel(model, corpus.validation, eo);
        } catch (const RunError&) {
            if (stopped)
                return std::nullopt;
            throw;
        }
        r = sweepResultFromEvaluation(cell.scheme, cell.seed, cell.variant, cell.model.context, points);
        if (textPoints)
            *textPoints = std::move(points);
    } else {
        const TaskSpec& task = *grid.task;
        TaskEvalOptions options;
        options.lengths = grid.evalLengths;
        options.examples = grid.taskExamples;
        options.seed = cell.seed; // the test examples are drawn with the cell's seed too
        options.maxLength = model.maxLength();
        options.progress = progress;
        std::vector<TaskAccuracyPoint> points;
        try {
            points = evaluateTask(task.kind, modelPredictor(model), options);
        } catch (const RunError&) {
            if (stopped)
                return std::nullopt;
            throw;
        }
        r.scheme = cell.scheme;
        r.seed = cell.seed;
        r.variant = cell.variant;
        r.context = cell.model.context;
        r.task = taskInfo(task.kind).name;
        poolTaskPoints(points, grid.evalLengths,
                       task.kind == TaskKind::Passkey ? defaultPasskeyDepths() : std::vector<double>{}, r);
    }
    r.evalSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    return r;
}

// The grid's added evaluations of a trained cell: each zero-shot method on a rotary cell, then DroPE on a rope cell
// (which takes the model and its optimiser state: it must come last). false when stopped.
bool addCellEvaluations(const SweepGrid& grid, const SweepCell& cell, SweepCellRun& run, TrainingResult& trained,
                        const Corpus& corpus, const TrainingHooks& hooks,
                        const std::function<bool(double)>& evalProgress)
{
    auto finish = [&](SweepResult& e, const std::string& method, const std::string& settings) {
        e.method = method;
        e.methodSettings = settings;
        e.scaling = run.result.scaling;
        e.settings = run.result.settings;
        e.cell = run.result.cell;
        e.key = run.result.key;
        e.steps = run.result.steps;
        e.trainLoss = run.result.trainLoss;
        e.threads = run.result.threads;
        e.gridHash = run.result.gridHash;
        e.version = run.result.version;
        e.layers = run.result.layers;
        e.modelOptions = run.result.modelOptions;
    };
    Model& model = *trained.model;
    if (schemeByName(cell.scheme).rotary && !grid.evalScalings.empty()) {
        const std::string factor = "factor=" + numberText(sweepZeroShotFactor(grid));
        for (const std::string& method : grid.evalScalings) {
            model.setScaling(method, {factor});
            std::optional<SweepResult> e = scoreCellModel(grid, cell, model, corpus, hooks, evalProgress);
            model.setScaling(cell.model.scaling, cell.model.scalingSettings);
            if (!e)
                return false;
            finish(*e, method, factor);
            e->trainSeconds = 0; // scored, not trained
            run.result.evaluations.push_back(std::move(*e));
        }
    }
    if (!grid.drope || cell.scheme != "rope")
        return true;
    Recalibration recalibration = droppedPositionsRun(std::move(trained), cell.train, grid.drope->fraction);
    TrainingResult dropped = grid.task ? trainModel(recalibration.model, recalibration.train,
                                                    sweepTaskBatches(*grid.task, recalibration.train.dataSeed), hooks,
                                                    &recalibration.init, "the rope cell", "the DroPE recalibration")
                                       : trainModel(recalibration.model, recalibration.train, corpus, hooks,
                                                    &recalibration.init, "the rope cell", "the DroPE recalibration");
    if (dropped.stopped)
        return false;
    for (double c : grid.drope->logitC) {
        // DroPE's test-time logit scale is a modifier: the weights are not touched.
        dropped.model->setScaling("none",
                                  c > 0 ? std::vector<std::string>{logitCSetting(c)} : std::vector<std::string>{});
        std::optional<SweepResult> e = scoreCellModel(grid, cell, *dropped.model, corpus, hooks, evalProgress);
        if (!e)
            return false;
        finish(*e, "drope", "fraction=" + numberText(grid.drope->fraction) + " logit-c=" + numberText(c));
        e->steps = dropped.info.step;
        e->trainLoss = dropped.info.trainLoss;
        e->trainSeconds = dropped.elapsedSeconds;
        run.result.evaluations.push_back(std::move(*e));
    }
    return true;
}

} // namespace

std::optional<SweepCellRun> trainSweepCell(const SweepGrid& grid, size_t index, const Corpus& corpus,
                                           const TrainingHooks& hooks, const std::function<bool(double)>& evalProgress)
{
    if (grid.modelGrid())
        throw InputError("a model grid trains nothing; its cells are evaluated (evaluateSweepModelCell)");
    const SweepCell cell = sweepCell(grid, index);
    if (!grid.task)
        checkSweepEvalLengths(grid, corpus, static_cast<long long>(index)); // before training, not after it
    TrainingResult trained =
        grid.task ? trainModel(cell.model, cell.train, sweepTaskBatches(*grid.task, cell.train.dataSeed), hooks)
                  : trainModel(cell.model, cell.train, corpus, hooks);
    if (trained.stopped)
        return std::nullopt;
    SweepCellRun run;
    std::optional<SweepResult> scored =
        scoreCellModel(grid, cell, *trained.model, corpus, hooks, evalProgress, &run.points);
    if (!scored)
        return std::nullopt;
    run.result = std::move(*scored);
    finishResult(run.result, grid, cell, trained);
    run.info = trained.info;
    if (!addCellEvaluations(grid, cell, run, trained, corpus, hooks, evalProgress))
        return std::nullopt;
    run.model = std::move(trained.model); // null when DroPE continued it
    return run;
}

std::optional<SweepResult> evaluateSweepModelCell(const SweepGrid& grid, size_t index, const Corpus& corpus,
                                                  const TrainingHooks& hooks)
{
    const SweepCell cell = sweepCell(grid, index);
    const std::string name = modelTextName(grid, corpus);
    const std::vector<int32_t> tokens =
        folderTextTokens(hf::Tokenizer::fromFolder(grid.modelFolder), corpus.validation, name);
    const HfModel hf(grid.modelFolder);
    HfLanguageModel model(hf);
    model.setScalingLayers(grid.scalingLayers);
    EvalOptions eo;
    eo.lengths = grid.evalLengths;
    eo.mode = grid.evalMode;
    eo.maxTokens = grid.evalBytes;
    eo.textName = name;
    bool stopped = false;
    const std::atomic<bool>* flag = hooks.interrupt;
    if (flag)
        eo.progress = [flag, &stopped](double) {
            stopped = flag->load();
            return !stopped;
        };
    const auto begin = std::chrono::steady_clock::now();
    std::vector<EvalPoint> points;
    try {
        if (model.rotary())
            points = evaluateUnderMethods(model, tokens, eo, {{cell.method, cell.settings}}).front().points;
        else // none on alibi or learned positions (validateSweepGrid refuses any other method there)
            points = evaluateModel(model, tokens, eo);
    } catch (const RunError&) {
        if (stopped)
            return std::nullopt;
        throw;
    }
    const HfConfig& config = hf.config();
    SweepResult r = sweepResultFromEvaluation(config.scheme, 0, cell.variant, config.context, points);
    r.scaling = cell.method == "none" ? std::string() : cell.method;
    r.model = grid.modelFolder;
    r.modelType = config.modelType;
    for (const EvalPoint& p : points)
        r.tokens.push_back(static_cast<double>(p.tokens));
    r.evalSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    stampSweepCellIdentity(r, grid, cell);
    return r;
}

std::optional<SweepResult> runSweepCell(const SweepGrid& grid, size_t index, const Corpus& corpus,
                                        const TrainingHooks& hooks)
{
    if (grid.modelGrid() && grid.retrieval)
        return evaluateRetrievalSweepCell(grid, index, corpus, hooks); // core/runs/retrieval_runs
    if (grid.modelGrid())
        return evaluateSweepModelCell(grid, index, corpus, hooks);
    std::optional<SweepCellRun> run = trainSweepCell(grid, index, corpus, hooks);
    if (!run)
        return std::nullopt;
    return std::move(run->result);
}

} // namespace plab
