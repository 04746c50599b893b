// Runs on a task: train and score one model, the accuracy over seeds, and the DroPE recipe.
#include "runs/task_runs.h"

#include "base/errors.h"
#include "schemes/schemes.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <utility>

namespace plab {

int taskEvalTrainLength(TaskKind kind, const nlohmann::json& training, int context)
{
    TaskSpec trained;
    if (TaskSpec::fromJson(training, trained) && trained.kind == kind)
        return trained.trainLength;
    return std::max(1, taskLongestLength(kind, context));
}

std::vector<int> taskRunLengths(int trainLength)
{
    std::vector<int> lengths;
    for (int halves : {2, 3, 4, 6, 8}) {
        const int length = std::max(1, halves * trainLength / 2);
        if (lengths.empty() || lengths.back() != length)
            lengths.push_back(length);
    }
    return lengths;
}

std::vector<int> taskRunEvalLengths(const TaskRunConfig& config)
{
    return config.lengths.empty() ? taskRunLengths(config.task.trainLength) : config.lengths;
}

void checkTaskRunConfig(const TaskRunConfig& config)
{
    validateModelConfig(config.model);
    validateTrainConfig(config.train);
    checkTaskLength(config.task.kind, config.task.trainLength, config.model.context);
    TaskEvalOptions options;
    options.lengths = taskRunEvalLengths(config);
    options.examples = config.examples;
    checkTaskEvalOptions(config.task.kind, options); // examples >= 1, lengths a model can read
}

TrainingBatches taskTrainingBatches(const TaskSpec& task, uint64_t seed)
{
    TrainingBatches batches;
    batches.draw = [task, seed](int step, int B, int T, uint8_t* inputs, uint8_t* targets, float* weights) {
        fillTaskBatch(task, seed, step, B, T, inputs, targets, weights);
    };
    const TaskInfo& info = taskInfo(task.kind);
    batches.source =
        "task " + info.name + ", lengths 1.." + std::to_string(task.trainLength) + " (" + info.length + ")";
    batches.record = task.toJson();
    return batches;
}

std::optional<TaskCurve> scoreTaskCurve(Model& model, const TaskRunConfig& config, const std::string& label,
                                        uint64_t seed, const std::function<bool(double)>& progress)
{
    TaskEvalOptions options;
    options.lengths = taskRunEvalLengths(config);
    options.examples = config.examples;
    options.seed = config.testSeed;
    options.maxLength = model.maxLength();
    bool stopped = false;
    options.progress = [&](double fraction) {
        stopped = progress && !progress(fraction);
        return !stopped;
    };
    TaskCurve curve;
    curve.label = label;
    curve.seed = seed;
    try {
        curve.points = evaluateTask(config.task.kind, modelPredictor(model), options);
    } catch (const RunError&) {
        if (!stopped)
            throw;
        return std::nullopt;
    }
    return curve;
}

std::optional<TaskRun> trainTaskRun(const TaskRunConfig& config, const ModelConfig& model, uint64_t seed,
                                    const std::string& label, const TrainingHooks& hooks,
                                    const std::function<bool(double)>& evalProgress)
{
    TaskRunConfig checked = config;
    checked.model = model;
    checkTaskRunConfig(checked);
    ModelConfig seeded = model;
    seeded.seed = seed; // the sweep's seed rule: one seed initialises the model and draws the data
    TrainConfig train = config.train;
    train.dataSeed = seed;
    TrainingResult trained = trainModel(seeded, train, taskTrainingBatches(config.task, seed), hooks);
    if (trained.stopped)
        return std::nullopt;
    std::optional<TaskCurve> curve = scoreTaskCurve(*trained.model, config, label, seed, evalProgress);
    if (!curve)
        return std::nullopt;
    return TaskRun{std::move(*curve), std::move(trained.model), std::move(trained.info)};
}

// ---- over seeds ----

std::vector<TaskAccuracyRow> summarizeTaskAccuracy(const std::vector<TaskCurve>& curves, bool overDepths)
{
    struct Cell {
        std::string label;
        int length;
        double depth;
        std::vector<double> values; // one per seed
    };
    std::vector<Cell> cells;
    auto cellOf = [&](const std::string& label, int length, double depth) -> Cell& {
        for (Cell& c : cells)
            if (c.label == label && c.length == length && c.depth == depth)
                return c;
        cells.push_back({label, length, depth, {}});
        return cells.back();
    };
    for (const TaskCurve& curve : curves) {
        if (!overDepths) {
            for (const TaskAccuracyPoint& p : curve.points)
                cellOf(curve.label, p.length, p.depth).values.push_back(p.supported ? p.accuracy : NAN);
            continue;
        }
        // This seed's mean over the depths of each length (NaN when a depth could not be scored).
        for (size_t i = 0; i < curve.points.size();) {
            const int length = curve.points[i].length;
            double sum = 0;
            int count = 0;
            bool supported = true;
            for (; i < curve.points.size() && curve.points[i].length == length; ++i) {
                supported = supported && curve.points[i].supported;
                sum += curve.points[i].accuracy;
                ++count;
            }
            cellOf(curve.label, length, -1).values.push_back(supported ? sum / count : NAN);
        }
    }
    std::vector<TaskAccuracyRow> rows;
    for (const Cell& c : cells)
        rows.push_back({c.label, c.length, c.depth, sampleStats(c.values)});
    return rows;
}

namespace {

std::string number(double value)
{
    if (std::isnan(value))
        return "nan";
    std::ostringstream out;
    out.precision(6);
    out << value;
    return out.str();
}

nlohmann::json jsonNumber(double value)
{
    return std::isnan(value) ? nlohmann::json(nullptr) : nlohmann::json(value);
}

} // namespace

std::string taskAccuracyCsv(const std::vector<TaskAccuracyRow>& rows)
{
    std::string csv = "label,length,depth,n,accuracy_mean,accuracy_sd,accuracy_min,accuracy_max\n";
    for (const TaskAccuracyRow& r : rows) {
        const SampleStats& a = r.accuracy;
        const bool none = a.n == 0;
        csv += r.label + ',' + std::to_string(r.length) + ',' + (r.depth < 0 ? std::string() : number(r.depth)) + ',' +
               std::to_string(a.n) + ',' + number(none ? NAN : a.mean) + ',' + number(none ? NAN : a.sd) + ',' +
               number(none ? NAN : a.min) + ',' + number(none ? NAN : a.max) + '\n';
    }
    return csv;
}

nlohmann::json taskAccuracyJson(const std::vector<TaskAccuracyRow>& rows, const TaskSpec& task)
{
    nlohmann::json out;
    out["task"] = taskInfo(task.kind).name;
    out["task_length"] = task.trainLength;
    out["columns"] = {"label", "length", "depth", "n", "accuracy", "sd", "min", "max"};
    out["rows"] = nlohmann::json::array();
    for (const TaskAccuracyRow& r : rows) {
        const SampleStats& a = r.accuracy;
        const bool none = a.n == 0;
        nlohmann::json row{{"label", r.label},
                           {"length", r.length},
                           {"n", a.n},
                           {"accuracy", jsonNumber(none ? NAN : a.mean)},
                           {"sd", jsonNumber(none ? NAN : a.sd)},
                           {"min", jsonNumber(none ? NAN : a.min)},
                           {"max", jsonNumber(none ? NAN : a.max)}};
        if (r.depth >= 0)
            row["depth"] = r.depth;
        out["rows"].push_back(std::move(row));
    }
    return out;
}

std::vector<TaskCurve> sweepTaskCurves(const std::vector<SweepResult>& results)
{
    std::vector<TaskCurve> curves;
    // The depth is named only when the results differ in it (folders of 2 and 4 layers collected together).
    const bool withDepth = std::any_of(results.begin(), results.end(),
                                       [&](const SweepResult& r) { return r.layers != results.front().layers; });
    auto add = [&](const SweepResult& r) {
        std::string label = sweepRowScheme(r);
        for (const std::string& part : {sweepRowVariant(r), sweepModelName(r.layers, r.modelOptions, withDepth)})
            if (!part.empty())
                label += " " + part;
        TaskCurve curve;
        curve.label = label;
        curve.seed = r.seed;
        for (size_t i = 0; i < r.lengths.size(); ++i) {
            auto point = [&](double depth, double accuracy) {
                TaskAccuracyPoint p;
                p.length = r.lengths[i];
                p.depth = depth;
                p.supported = !std::isnan(accuracy);
                p.accuracy = p.supported ? accuracy : 0;
                curve.points.push_back(p);
            };
            if (r.depths.empty())
                point(-1, r.accuracy[i]);
            else
                for (size_t d = 0; d < r.depths.size(); ++d)
                    point(r.depths[d], r.depthAccuracy[i][d]);
        }
        curves.push_back(std::move(curve));
    };
    for (const SweepResult& r : results) {
        add(r);
        for (const SweepResult& e : r.evaluations)
            add(e);
    }
    return curves;
}

// ---- DroPE ----

void checkDropeRecipe(const DropeRecipe& recipe)
{
    TaskRunConfig rope = recipe.run;
    rope.model.scheme = "rope";
    checkTaskRunConfig(rope);
    if (!(recipe.fraction > 0 && recipe.fraction <= 1))
        throw InputError(
            "recalibration fraction = " + number(recipe.fraction) +
                " is out of range; allowed: (0, 1], a share of the rope run's steps (DroPE uses 0.005-0.125)",
            "fraction");
    if (recipe.seeds.empty())
        throw InputError("the DroPE recipe needs at least one seed", "seeds");
    for (size_t i = 0; i < recipe.seeds.size(); ++i)
        for (size_t j = i + 1; j < recipe.seeds.size(); ++j)
            if (recipe.seeds[i] == recipe.seeds[j])
                throw InputError("seed " + std::to_string(recipe.seeds[i]) + " is given twice; allowed: distinct seeds",
                                 "seeds");
    makeSchemeSpec("none", 1, false, {logitCSetting(recipe.logitC)}, recipe.run.model.context); // logit-c's range
    if (!(recipe.yarnFactor >= 0))
        throw InputError("YaRN factor = " + number(recipe.yarnFactor) +
                             " is out of range; allowed: 0 (from the longest scored length) or a factor > 0",
                         "factor");
}

int dropeRecalibrationSteps(const DropeRecipe& recipe)
{
    return recalibrationSteps(recipe.fraction, recipe.run.train.steps);
}

double dropeYarnFactor(const DropeRecipe& recipe)
{
    if (recipe.yarnFactor > 0)
        return recipe.yarnFactor;
    return zeroShotFactor(longestTaskSequence(recipe.run.task.kind, taskRunEvalLengths(recipe.run)),
                          recipe.run.model.context);
}

const std::vector<DropeStep>& dropeSteps()
{
    static const std::vector<DropeStep> steps{DropeStep::TrainRope, DropeStep::ScoreRope,   DropeStep::TrainNope,
                                              DropeStep::ScoreNope, DropeStep::Recalibrate, DropeStep::ScoreDrope};
    return steps;
}

const char* dropeStepName(DropeStep step)
{
    switch (step) {
    case DropeStep::TrainRope:
        return "train rope";
    case DropeStep::ScoreRope:
        return "score rope and rope+yarn zero-shot";
    case DropeStep::TrainNope:
        return "train NoPE from scratch";
    case DropeStep::ScoreNope:
        return "score NoPE";
    case DropeStep::Recalibrate:
        return "drop the positions and recalibrate";
    case DropeStep::ScoreDrope:
        return "score DroPE";
    }
    return "";
}

namespace {

// One seed of the DroPE recipe: the hooks bound to the seed and its current step, and the four runs in order.
class DropeSeedRun {
public:
    DropeSeedRun(const DropeRecipe& recipe, const DropeHooks& hooks, size_t seedIndex, DropeRecipeResult& result)
        : m_recipe(recipe), m_hooks(hooks), m_seedIndex(seedIndex), m_seed(recipe.seeds[seedIndex]), m_result(result)
    {
        m_training.reportEvery = hooks.reportEvery;
        m_training.shouldStop = hooks.shouldStop;
        m_training.progress = [this](const TrainingProgress& p) {
            if (m_hooks.trainingProgress)
                m_hooks.trainingProgress(m_seedIndex, m_current, p);
        };
        m_train = recipe.run.train;
        m_train.dataSeed = m_seed;
    }

    // rope, rope zero-shot under YaRN, NoPE from scratch, DroPE; false when stopped (the curves done are kept).
    bool run(const ModelConfig& rope, const ModelConfig& nope, double yarnFactor)
    {
        // 1. rope, trained and scored as any task run.
        if (!begin(DropeStep::TrainRope))
            return false;
        TrainingResult ropeRun = train(rope);
        if (ropeRun.stopped || !begin(DropeStep::ScoreRope) || !score(*ropeRun.model, kRopeLabel))
            return false;
        // 2. the same weights zero-shot under YaRN (the method, not training, stretches the rotations).
        std::ostringstream factorText;
        factorText << yarnFactor;
        ropeRun.model->setScaling("yarn", {"factor=" + factorText.str()});
        const bool yarnScored = score(*ropeRun.model, kRopeYarnLabel);
        ropeRun.model->setScaling("none", {});
        if (!yarnScored)
            return false;
        // 3. NoPE from scratch with rope's budget.
        if (!begin(DropeStep::TrainNope))
            return false;
        TrainingResult nopeRun = train(nope);
        if (nopeRun.stopped || !begin(DropeStep::ScoreNope) || !score(*nopeRun.model, kNopeLabel))
            return false;
        // 4. DroPE: the rope weights and AdamW state continued as NoPE (core's droppingPositions rule).
        if (!begin(DropeStep::Recalibrate))
            return false;
        Recalibration recalibration = droppedPositionsRun(std::move(ropeRun), m_train, m_recipe.fraction);
        TrainingResult dropeRun =
            trainModel(recalibration.model, recalibration.train,
                       taskTrainingBatches(m_recipe.run.task, recalibration.train.dataSeed), m_training,
                       &recalibration.init, "the rope model", "the DroPE recalibration");
        if (dropeRun.stopped || !begin(DropeStep::ScoreDrope))
            return false;
        if (m_recipe.logitC > 0) // DroPE's test-time logit scale (a modifier: the weights are not touched)
            dropeRun.model->setScaling("none", {logitCSetting(m_recipe.logitC)});
        return score(*dropeRun.model, kDropeLabel);
    }

private:
    bool stopRequested() const { return m_hooks.shouldStop && m_hooks.shouldStop(); }
    bool begin(DropeStep step)
    {
        m_current = step;
        if (m_hooks.stepStarted)
            m_hooks.stepStarted(m_seedIndex, step);
        return !stopRequested();
    }
    TrainingResult train(ModelConfig config)
    {
        config.seed = m_seed;
        return trainModel(config, m_train, taskTrainingBatches(m_recipe.run.task, m_seed), m_training);
    }
    // The model's task curve, handed to curveDone and kept; false when stopped while scoring.
    bool score(Model& model, const std::string& label)
    {
        const auto scoring = [this](double fraction) {
            if (m_hooks.scoringProgress)
                m_hooks.scoringProgress(m_seedIndex, m_current, fraction);
            return !stopRequested();
        };
        std::optional<TaskCurve> curve = scoreTaskCurve(model, m_recipe.run, label, m_seed, scoring);
        if (!curve)
            return false;
        if (m_hooks.curveDone)
            m_hooks.curveDone(*curve);
        m_result.curves.push_back(std::move(*curve));
        return true;
    }

    const DropeRecipe& m_recipe;
    const DropeHooks& m_hooks;
    size_t m_seedIndex;
    uint64_t m_seed;
    DropeRecipeResult& m_result;
    DropeStep m_current = DropeStep::TrainRope;
    TrainingHooks m_training;
    TrainConfig m_train;
};

} // namespace

DropeRecipeResult runDropeRecipe(const DropeRecipe& recipe, const DropeHooks& hooks)
{
    checkDropeRecipe(recipe);
    DropeRecipeResult result;
    ModelConfig rope = recipe.run.model;
    rope.scheme = "rope";
    rope.scaling = "none";
    rope.scalingSettings.clear();
    ModelConfig nope = rope;
    nope.scheme = "none";
    nope.schemeSettings.clear();
    const double factor = dropeYarnFactor(recipe);
    for (size_t s = 0; s < recipe.seeds.size(); ++s)
        if (!DropeSeedRun(recipe, hooks, s, result).run(rope, nope, factor)) {
            result.stopped = true;
            return result;
        }
    return result;
}

} // namespace plab
