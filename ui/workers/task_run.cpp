// Runs core's task runs and DroPE recipe on the thread pool, hands their updates to the GUI thread, and builds the
// accuracy figures.
#include "workers/task_run.h"

#include "base/errors.h"

#include <QtConcurrent>

#include <algorithm>
#include <cmath>

namespace plab::ui {

namespace {

// The translation context of the task worker's texts.
struct TaskText {
    Q_DECLARE_TR_FUNCTIONS(TaskText)
};

constexpr int kScoreUnits = 100; // progress units of one scoring

} // namespace

std::vector<std::string> TaskRequest::labels() const
{
    if (drope)
        return {kRopeLabel, kRopeYarnLabel, kNopeLabel, kDropeLabel};
    return schemes;
}

ModelConfig TaskRequest::schemeModel(size_t s) const
{
    if (s < models.size())
        return models[s];
    ModelConfig model = run.model;
    model.scheme = schemes.at(s);
    return model;
}

void TaskRequest::check() const
{
    if (drope) {
        checkDropeRecipe(recipe());
        return;
    }
    for (size_t s = 0; s < schemes.size(); ++s) {
        TaskRunConfig config = run;
        config.model = schemeModel(s);
        checkTaskRunConfig(config);
    }
}

DropeRecipe TaskRequest::recipe() const
{
    DropeRecipe r;
    r.run = run;
    r.fraction = fraction;
    r.logitC = logitC;
    r.seeds.clear();
    for (int s = 0; s < seeds; ++s)
        r.seeds.push_back(run.model.seed + static_cast<uint64_t>(s));
    return r;
}

TaskRequest taskRequestFor(const TrainRequest& text, const TaskSpec& task, bool drope, double fraction, double logitC)
{
    TaskRequest r;
    r.run.task = task;
    r.run.model = text.model;
    r.run.train = text.train;
    r.schemes = text.schemes;
    for (size_t s = 0; s < text.schemes.size(); ++s)
        r.models.push_back(schemeModelConfig(text, s));
    r.seeds = text.seeds;
    r.drope = drope;
    r.fraction = fraction;
    r.logitC = logitC;
    r.reportEvery = text.reportEvery;
    return r;
}

QString dropeStepText(DropeStep step)
{
    switch (step) {
    case DropeStep::TrainRope:
        return TaskText::tr("train rope");
    case DropeStep::ScoreRope:
        return TaskText::tr("score rope and rope + YaRN zero-shot");
    case DropeStep::TrainNope:
        return TaskText::tr("train NoPE from scratch");
    case DropeStep::ScoreNope:
        return TaskText::tr("score NoPE");
    case DropeStep::Recalibrate:
        return TaskText::tr("drop the positions and recalibrate");
    case DropeStep::ScoreDrope:
        return TaskText::tr("score DroPE");
    }
    return {};
}

QString taskCurveName(const std::string& label, double fraction, double logitC)
{
    if (label == kRopeYarnLabel)
        return TaskText::tr("rope + YaRN (zero-shot)");
    if (label == kNopeLabel)
        return TaskText::tr("NoPE");
    if (label == kDropeLabel)
        return logitC > 0 ? TaskText::tr("DroPE (%1% recalibration, logit-c %2)")
                                .arg(fraction * 100, 0, 'g', 3)
                                .arg(logitC, 0, 'g', 3)
                          : TaskText::tr("DroPE (%1% recalibration)").arg(fraction * 100, 0, 'g', 3);
    return QString::fromStdString(label);
}

namespace {

// A task run's updates to the GUI thread: stages, losses, scored curves and the progress (which never goes back).
struct TaskUpdates {
    QPromise<TaskSnapshot>& promise;
    int seeds = 1;
    void stage(const std::string& label, int seed, const QString& what) const
    {
        TaskSnapshot s;
        s.label = label;
        s.seed = seed;
        s.stage = seeds > 1 ? TaskText::tr("seed %1 of %2: %3").arg(seed + 1).arg(seeds).arg(what) : what;
        promise.addResult(s);
    }
    void loss(const std::string& label, int seed, const TrainingProgress& p) const
    {
        TaskSnapshot s;
        s.label = label;
        s.seed = seed;
        s.step = p.step;
        s.steps = p.steps;
        s.loss = p.loss;
        promise.addResult(s);
    }
    void scored(const TaskCurve& curve, int seed) const
    {
        TaskSnapshot s;
        s.label = curve.label;
        s.seed = seed;
        s.scored = true;
        s.curve = curve;
        promise.addResult(s);
    }
    void report(int value) const
    {
        promise.setProgressValue(std::max(promise.future().progressValue(), value));
    }
};

// Where each step of the DroPE recipe starts, in progress units of one seed.
int dropeStepOffset(DropeStep step, int steps, int recalibration)
{
    switch (step) {
    case DropeStep::TrainRope:
        return 0;
    case DropeStep::ScoreRope:
        return steps;
    case DropeStep::TrainNope:
        return steps + 2 * kScoreUnits;
    case DropeStep::ScoreNope:
        return 2 * steps + 2 * kScoreUnits;
    case DropeStep::Recalibrate:
        return 2 * steps + 3 * kScoreUnits;
    case DropeStep::ScoreDrope:
        return 2 * steps + 3 * kScoreUnits + recalibration;
    }
    return 0;
}

// The DroPE recipe (core's runDropeRecipe) over the request's seeds.
void runDropeTask(const TaskRequest& request, const TaskUpdates& updates)
{
    QPromise<TaskSnapshot>& promise = updates.promise;
    const int steps = request.run.train.steps;
    const DropeRecipe recipe = request.recipe();
    checkDropeRecipe(recipe);
    const int recalibration = dropeRecalibrationSteps(recipe);
    // Units per seed: both trainings, the recalibration, four scorings.
    const int perSeed = 2 * steps + recalibration + 4 * kScoreUnits;
    promise.setProgressRange(0, updates.seeds * perSeed);
    auto offset = [&](DropeStep step) { return dropeStepOffset(step, steps, recalibration); };
    auto trainedLabel = [](DropeStep step) -> std::string {
        return step == DropeStep::TrainRope   ? kRopeLabel
               : step == DropeStep::TrainNope ? kNopeLabel
                                              : kDropeLabel;
    };
    DropeHooks hooks;
    hooks.reportEvery = std::max(1, request.reportEvery);
    hooks.shouldStop = [&promise] { return promise.isCanceled(); };
    hooks.stepStarted = [&](size_t seed, DropeStep step) {
        updates.report(static_cast<int>(seed) * perSeed + offset(step));
        updates.stage(trainedLabel(step), static_cast<int>(seed), dropeStepText(step));
    };
    hooks.trainingProgress = [&](size_t seed, DropeStep step, const TrainingProgress& p) {
        updates.report(static_cast<int>(seed) * perSeed + offset(step) + p.step);
        updates.loss(trainedLabel(step), static_cast<int>(seed), p);
    };
    hooks.scoringProgress = [&](size_t seed, DropeStep step, double fraction) {
        updates.report(static_cast<int>(seed) * perSeed + offset(step) + static_cast<int>(fraction * kScoreUnits));
    };
    hooks.curveDone = [&](const TaskCurve& curve) {
        const auto at = std::find(recipe.seeds.begin(), recipe.seeds.end(), curve.seed);
        updates.scored(curve, static_cast<int>(at - recipe.seeds.begin()));
    };
    runDropeRecipe(recipe, hooks);
}

// Each ticked scheme trained on the task and scored (core's trainTaskRun), seeds varying slowest.
void runSchemeTasks(const TaskRequest& request, const TaskUpdates& updates)
{
    QPromise<TaskSnapshot>& promise = updates.promise;
    const int seeds = updates.seeds;
    const int steps = request.run.train.steps;
    int done = 0; // progress units of the finished parts
    const int schemes = static_cast<int>(request.schemes.size());
    const int perRun = steps + kScoreUnits;
    promise.setProgressRange(0, std::max(1, seeds * schemes * perRun));
    for (int run = 0; run < seeds * schemes; ++run) {
        const int s = run % schemes, seed = run / schemes; // seeds vary slowest, as the Train tab's text runs
        const std::string& label = request.schemes[s];
        const ModelConfig model = request.schemeModel(static_cast<size_t>(s));
        updates.stage(label, seed, TaskText::tr("train %1").arg(QString::fromStdString(label)));
        TrainingHooks hooks;
        hooks.reportEvery = std::max(1, request.reportEvery);
        hooks.shouldStop = [&promise] { return promise.isCanceled(); };
        hooks.progress = [&](const TrainingProgress& p) {
            updates.report(done + p.step);
            updates.loss(label, seed, p);
        };
        auto scoring = [&](double fraction) {
            updates.report(done + steps + static_cast<int>(fraction * kScoreUnits));
            return !promise.isCanceled();
        };
        const std::optional<TaskRun> result =
            trainTaskRun(request.run, model, request.run.model.seed + seed, label, hooks, scoring);
        if (!result)
            return;
        updates.scored(result->curve, seed);
        done += perRun;
    }
}

} // namespace

void runTaskRequest(const TaskRequest& request, QPromise<TaskSnapshot>& promise)
{
    promise.start();
    const TaskUpdates updates{promise, std::max(1, request.seeds)};
    TaskSnapshot failure;
    runGuardedCancelable(failure, [&promise] { return promise.isCanceled(); }, [&] {
        if (request.drope)
            runDropeTask(request, updates);
        else
            runSchemeTasks(request, updates);
    });
    if (!failure.error.isEmpty()) // a canceled run's is not shown
        promise.addResult(failure);
}

CurveFigure taskAccuracyFigure(const std::vector<TaskAccuracyRow>& rows, const TaskRequest& request)
{
    CurveFigure figure;
    int seeds = 0;
    for (const TaskAccuracyRow& r : rows)
        seeds = std::max(seeds, r.accuracy.n);
    const QString task = QString::fromStdString(taskInfo(request.run.task.kind).name);
    figure.title = seeds > 1 ? FigureText::tr("Accuracy vs length, mean ± sd over %1 seeds (task %2, trained at 1..%3)")
                                   .arg(seeds)
                                   .arg(task)
                                   .arg(request.run.task.trainLength)
                             : FigureText::tr("Accuracy vs length (task %1, trained at 1..%2)")
                                   .arg(task)
                                   .arg(request.run.task.trainLength);
    figure.xLabel =
        FigureText::tr("task length (%1)").arg(QString::fromStdString(taskInfo(request.run.task.kind).length));
    figure.yFloor = 0; // accuracy
    figure.yCeil = 1;
    figure.yLabel = request.run.task.kind == TaskKind::Passkey ? FigureText::tr("exact-match accuracy (all depths)")
                                                               : FigureText::tr("exact-match accuracy");
    for (const std::string& label : request.labels()) {
        Curve c;
        c.name = taskCurveName(label, request.fraction, request.logitC);
        bool band = false;
        for (const TaskAccuracyRow& r : rows) {
            if (r.label != label || r.accuracy.n == 0)
                continue;
            c.x.push_back(r.length);
            c.y.push_back(r.accuracy.mean);
            c.lower.push_back(std::max(0.0, r.accuracy.mean - r.accuracy.sd));
            c.upper.push_back(std::min(1.0, r.accuracy.mean + r.accuracy.sd));
            band = band || r.accuracy.n > 1;
        }
        if (!band) {
            c.lower.clear();
            c.upper.clear();
        }
        if (!c.x.empty())
            figure.curves.push_back(std::move(c));
    }
    return figure;
}

HeatmapFigure passkeyHeatmapFigure(const std::vector<TaskAccuracyRow>& grid, const TaskRequest& request)
{
    HeatmapFigure figure;
    figure.title = FigureText::tr("Passkey retrieval: accuracy by needle depth and length (trained at 1..%1)")
                       .arg(request.run.task.trainLength);
    figure.xLabel = FigureText::tr("length n (filler)");
    figure.yLabel = FigureText::tr("needle depth");
    figure.colorMap = QStringLiteral("viridis");
    figure.fixedLo = 0; // accuracy: the same colours for every run
    figure.fixedHi = 1;
    const std::vector<int> lengths = taskRunEvalLengths(request.run);
    const std::vector<double>& depths = defaultPasskeyDepths();
    for (int length : lengths)
        figure.tickLabels.push_back(QString::number(length));
    for (double depth : depths)
        figure.rowTickLabels.push_back(QStringLiteral("%1%").arg(depth * 100));
    for (const std::string& label : request.labels()) {
        if (figure.panels.size() == 4)
            break;
        auto matrix = std::make_shared<Matrix>();
        matrix->rows = static_cast<int>(depths.size());
        matrix->cols = static_cast<int>(lengths.size());
        matrix->values.assign(static_cast<size_t>(matrix->rows) * matrix->cols,
                              -std::numeric_limits<float>::infinity());
        int seeds = 0;
        bool any = false;
        for (const TaskAccuracyRow& r : grid) {
            if (r.label != label || r.accuracy.n == 0)
                continue;
            const auto col = std::find(lengths.begin(), lengths.end(), r.length);
            const auto row = std::find(depths.begin(), depths.end(), r.depth);
            if (col == lengths.end() || row == depths.end())
                continue;
            matrix->values[static_cast<size_t>(row - depths.begin()) * matrix->cols + (col - lengths.begin())] =
                static_cast<float>(r.accuracy.mean);
            seeds = std::max(seeds, r.accuracy.n);
            any = true;
        }
        if (!any)
            continue;
        HeatmapPanel panel;
        panel.title = taskCurveName(label, request.fraction, request.logitC);
        panel.subtitle = FigureText::tr("mean over %n seed(s)", nullptr, seeds);
        panel.valueLabel = FigureText::tr("accuracy");
        panel.matrix = std::move(matrix);
        figure.panels.push_back(std::move(panel));
    }
    return figure;
}

// ---- TaskRunner ----

TaskRunner::TaskRunner(QObject* parent) : QObject(parent), m_watcher(new QFutureWatcher<TaskSnapshot>(this))
{
    connect(m_watcher, &QFutureWatcherBase::resultReadyAt, this, &TaskRunner::onResult);
    connect(m_watcher, &QFutureWatcherBase::finished, this, &TaskRunner::onFinished);
    connect(m_watcher, &QFutureWatcherBase::progressValueChanged, this,
            [this](int v) { Q_EMIT progress(v, m_watcher->progressMaximum()); });
}

TaskRunner::~TaskRunner()
{
    m_watcher->cancel();
    m_watcher->waitForFinished();
}

bool TaskRunner::start(const TaskRequest& request)
{
    if (m_inFlight)
        return false;
    m_error.clear();
    m_inFlight = true;
    m_watcher->setFuture(
        QtConcurrent::run([request](QPromise<TaskSnapshot>& promise) { runTaskRequest(request, promise); }));
    return true;
}

void TaskRunner::cancel()
{
    m_watcher->cancel();
}

void TaskRunner::onResult(int index)
{
    const TaskSnapshot s = m_watcher->future().resultAt(index);
    if (!s.error.isEmpty()) {
        m_error = s.error;
        return;
    }
    Q_EMIT snapshot(s);
}

void TaskRunner::onFinished()
{
    m_inFlight = false;
    Q_EMIT finished(m_error, m_watcher->future().isCanceled());
}

} // namespace plab::ui
