// A task run in the background (the Train tab with a task chosen): the ticked schemes trained on a task and scored
// against length (core's trainTaskRun), or the DroPE recipe (core's runDropeRecipe); its figures.
#pragma once

#include "painting/figures.h"
#include "workers/model_compute.h"

#include "runs/task_runs.h"

#include <QFutureWatcher>
#include <QObject>
#include <QPromise>
#include <QString>

#include <string>
#include <vector>

namespace plab::ui {

struct TaskRequest {
    TaskRunConfig run;
    std::vector<std::string> schemes; // the scheme runs (not read by the recipe)
    std::vector<ModelConfig> models;  // per scheme its model (a method too: "rope+yarn"); empty: run.model with it
    ModelConfig schemeModel(size_t s) const;
    // InputError naming the problem (core's checkDropeRecipe or checkTaskRunConfig of every scheme) before any work.
    void check() const;
    int seeds = 1;                        // seeds run.model.seed, run.model.seed + 1, ...
    bool drope = false;                   // the DroPE recipe instead of the schemes
    double fraction = 0.125;              // the recipe's recalibration share
    double logitC = DropeRecipe{}.logitC; // DroPE's test-time logit scale
    int reportEvery = 5;
    // The curves in the order the plots and the table list them: the schemes, or the recipe's four.
    std::vector<std::string> labels() const;
    DropeRecipe recipe() const; // the recipe this request runs (drope)
};
// The task run a text request describes (the Train tab's fields, render train's options): its model, schedule, schemes,
// seeds and report interval, on `task`; the DroPE recipe with `fraction` when `drope`.
TaskRequest taskRequestFor(const TrainRequest& text, const TaskSpec& task, bool drope, double fraction,
                           double logitC = DropeRecipe{}.logitC);
// One streamed update of a task run.
struct TaskSnapshot {
    std::string label; // the curve the update is about
    int seed = 0;      // index 0..seeds-1
    int step = 0;      // training: steps done of `steps`
    int steps = 0;
    double loss = 0;
    QString stage;       // what runs now, e.g. "seed 1 of 3: train rope"; empty for a loss update
    bool scored = false; // `curve` holds a scored curve
    TaskCurve curve;
    QString error;
    bool canceled = false;
};
// Runs the request, adding snapshots to `promise` (progress in thousandths of the whole run).
void runTaskRequest(const TaskRequest& request, QPromise<TaskSnapshot>& promise);

// How the plots, the table and the legend name a curve: a scheme as it is; the recipe's as "rope + YaRN (zero-shot)",
// "NoPE", "DroPE (12.5% recalibration)".
QString taskCurveName(const std::string& label, double fraction, double logitC = 0);
// The recipe's step as the status line says it, translated.
QString dropeStepText(DropeStep step);

// Accuracy against length, mean ± sd over seeds (summarizeTaskAccuracy over depths): one curve per label.
CurveFigure taskAccuracyFigure(const std::vector<TaskAccuracyRow>& rows, const TaskRequest& request);
// Passkey: accuracy per needle depth (rows) and length (columns), mean over seeds, one panel per label (at most four,
// the first ones), as RULER and needle-in-a-haystack plots draw it.
HeatmapFigure passkeyHeatmapFigure(const std::vector<TaskAccuracyRow>& grid, const TaskRequest& request);

class TaskRunner : public QObject {
    Q_OBJECT
public:
    explicit TaskRunner(QObject* parent = nullptr);
    ~TaskRunner() override;                 // cancels and waits
    bool start(const TaskRequest& request); // false while a run is in flight
    void cancel();
    bool isRunning() const { return m_inFlight; }

Q_SIGNALS:
    void snapshot(const plab::ui::TaskSnapshot& snapshot);
    void progress(int done, int total);
    void finished(const QString& error, bool canceled);

private:
    void onResult(int index);
    void onFinished();
    QFutureWatcher<TaskSnapshot>* m_watcher;
    QString m_error;
    bool m_inFlight = false;
};

} // namespace plab::ui
