// Task runs over seeds (core/runs/task_runs): accuracy summaries against hand-computed means and sds, the depth x
// length grid, the scored lengths, the DroPE recipe's checks, its steps in order and its curves.
#include "base/errors.h"
#include "runs/task_runs.h"
#include "test_main.h"

#include <QtTest>

#include <cmath>
#include <string>

using namespace plab;

namespace {

TaskAccuracyPoint point(int length, double depth, int correct, int examples, bool supported = true)
{
    TaskAccuracyPoint p;
    p.length = length;
    p.depth = depth;
    p.examples = examples;
    p.correct = correct;
    p.accuracy = double(correct) / examples;
    p.supported = supported;
    return p;
}

// A model small enough that the whole recipe runs in seconds.
DropeRecipe tinyRecipe()
{
    DropeRecipe recipe;
    recipe.run.task = {TaskKind::Copy, 3};
    recipe.run.model.layers = 1;
    recipe.run.model.dModel = 16;
    recipe.run.model.heads = 2;
    recipe.run.model.dFf = 32;
    recipe.run.model.context = 8;
    recipe.run.train.batch = 4;
    setTrainingSteps(recipe.run.train, 8);
    recipe.run.examples = 3;
    recipe.fraction = 0.25;
    recipe.seeds = {1, 2};
    return recipe;
}

} // namespace

class TestTaskRuns : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void runLengths_data()
    {
        QTest::addColumn<int>("trainLength");
        QTest::addColumn<QList<int>>("expected");
        QTest::newRow("L=10: L, 1.5L, 2L, 3L, 4L") << 10 << QList<int>{10, 15, 20, 30, 40};
        QTest::newRow("L=3: halves round down") << 3 << QList<int>{3, 4, 6, 9, 12};
        QTest::newRow("L=1: no repeats") << 1 << QList<int>{1, 2, 3, 4};
    }
    void runLengths()
    {
        QFETCH(int, trainLength);
        QFETCH(QList<int>, expected);
        const std::vector<int> lengths = taskRunLengths(trainLength);
        QCOMPARE(QList<int>(lengths.begin(), lengths.end()), expected);
    }

    // Two seeds of two labels, hand-counted: mean and sample sd per cell, an unsupported cell left out.
    void summaryOverSeeds_data()
    {
        QTest::addColumn<bool>("overDepths");
        QTest::addColumn<int>("row");
        QTest::addColumn<QString>("label");
        QTest::addColumn<int>("length");
        QTest::addColumn<double>("depth");
        QTest::addColumn<int>("n");
        QTest::addColumn<double>("mean");
        QTest::addColumn<double>("sd");
        // seed 1: length 4 depths 0 / 1: 2/4, 4/4; length 8: 1/4, 0/4. seed 2: 4/4, 4/4; 3/4, unsupported.
        QTest::newRow("grid: (4, 0)") << false << 0 << "rope" << 4 << 0.0 << 2 << 0.75 << std::sqrt(0.125);
        QTest::newRow("grid: (4, 1)") << false << 1 << "rope" << 4 << 1.0 << 2 << 1.0 << 0.0;
        QTest::newRow("grid: (8, 0)") << false << 2 << "rope" << 8 << 0.0 << 2 << 0.5 << std::sqrt(0.125);
        QTest::newRow("grid: (8, 1) one seed") << false << 3 << "rope" << 8 << 1.0 << 1 << 0.0 << 0.0;
        QTest::newRow("grid: other label after") << false << 4 << "none" << 4 << 0.0 << 1 << 1.0 << 0.0;
        // over depths: seed 1 length 4 = 0.75, seed 2 = 1 -> 0.875, sd sqrt(0.03125); length 8: seed 1 0.125,
        // seed 2 has an unsupported depth -> left out.
        QTest::newRow("length: 4") << true << 0 << "rope" << 4 << -1.0 << 2 << 0.875 << std::sqrt(0.03125);
        QTest::newRow("length: 8") << true << 1 << "rope" << 8 << -1.0 << 1 << 0.125 << 0.0;
        QTest::newRow("length: none 4") << true << 2 << "none" << 4 << -1.0 << 1 << 0.5 << 0.0;
    }
    void summaryOverSeeds()
    {
        QFETCH(bool, overDepths);
        QFETCH(int, row);
        QFETCH(QString, label);
        QFETCH(int, length);
        QFETCH(double, depth);
        QFETCH(int, n);
        QFETCH(double, mean);
        QFETCH(double, sd);
        std::vector<TaskCurve> curves(3);
        curves[0] = {"rope", 1, {point(4, 0, 2, 4), point(4, 1, 4, 4), point(8, 0, 1, 4), point(8, 1, 0, 4)}};
        curves[1] = {"rope", 2, {point(4, 0, 4, 4), point(4, 1, 4, 4), point(8, 0, 3, 4), point(8, 1, 0, 4, false)}};
        curves[2] = {"none", 1, {point(4, 0, 4, 4), point(4, 1, 0, 4)}};
        const std::vector<TaskAccuracyRow> rows = summarizeTaskAccuracy(curves, overDepths);
        QCOMPARE(rows.size(), size_t(overDepths ? 3 : 6));
        const TaskAccuracyRow& r = rows[row];
        QCOMPARE(QString::fromStdString(r.label), label);
        QCOMPARE(r.length, length);
        QCOMPARE(r.depth, depth);
        QCOMPARE(r.accuracy.n, n);
        QVERIFY(std::abs(r.accuracy.mean - mean) < 1e-12);
        QVERIFY(std::abs(r.accuracy.sd - sd) < 1e-12);
    }

    void exports()
    {
        const std::vector<TaskCurve> curves{{"drope", 1, {point(4, 0.5, 3, 4), point(8, 0.5, 0, 4, false)}}};
        const std::vector<TaskAccuracyRow> rows = summarizeTaskAccuracy(curves, false);
        const std::string csv = taskAccuracyCsv(rows);
        QCOMPARE(csv, std::string("label,length,depth,n,accuracy_mean,accuracy_sd,accuracy_min,accuracy_max\n"
                                  "drope,4,0.5,1,0.75,0,0.75,0.75\n"
                                  "drope,8,0.5,0,nan,nan,nan,nan\n"));
        const nlohmann::json j = taskAccuracyJson(rows, {TaskKind::Passkey, 4});
        QCOMPARE(j["task"].get<std::string>(), std::string("passkey"));
        QCOMPARE(j["rows"][0]["accuracy"].get<double>(), 0.75);
        QCOMPARE(j["rows"][0]["depth"].get<double>(), 0.5);
        QVERIFY(j["rows"][1]["accuracy"].is_null());
    }

    void recipeChecks_data()
    {
        QTest::addColumn<double>("fraction");
        QTest::addColumn<QList<int>>("seeds");
        QTest::addColumn<int>("taskLength");
        QTest::addColumn<QString>("message");
        QTest::newRow("fraction 0") << 0.0 << QList<int>{1} << 3 << "recalibration fraction = 0 is out of range";
        QTest::newRow("fraction 1.5") << 1.5 << QList<int>{1} << 3 << "recalibration fraction = 1.5 is out of range";
        QTest::newRow("no seeds") << 0.1 << QList<int>{} << 3 << "at least one seed";
        QTest::newRow("repeated seed") << 0.1 << QList<int>{2, 2} << 3 << "seed 2 is given twice";
        QTest::newRow("task longer than the context") << 0.1 << QList<int>{1} << 9 << "task copy: length = 9";
    }
    void recipeChecks()
    {
        QFETCH(double, fraction);
        QFETCH(QList<int>, seeds);
        QFETCH(int, taskLength);
        QFETCH(QString, message);
        DropeRecipe recipe = tinyRecipe();
        recipe.fraction = fraction;
        recipe.seeds.assign(seeds.begin(), seeds.end());
        recipe.run.task.trainLength = taskLength;
        try {
            checkDropeRecipe(recipe);
            QFAIL("no InputError");
        } catch (const InputError& e) {
            QVERIFY2(QString::fromStdString(e.what()).contains(message), e.what());
        }
    }

    void recalibrationSteps_data()
    {
        QTest::addColumn<int>("steps");
        QTest::addColumn<double>("fraction");
        QTest::addColumn<int>("expected");
        QTest::newRow("12.5% of 400") << 400 << 0.125 << 50;
        QTest::newRow("0.5% of 100 rounds to 1") << 100 << 0.005 << 1;
        QTest::newRow("all of 30") << 30 << 1.0 << 30;
    }
    void recalibrationSteps()
    {
        QFETCH(int, steps);
        QFETCH(double, fraction);
        QFETCH(int, expected);
        DropeRecipe recipe = tinyRecipe();
        recipe.run.train.steps = steps;
        recipe.fraction = fraction;
        QCOMPARE(dropeRecalibrationSteps(recipe), expected);
    }

    // The whole recipe on a tiny model: every step of every seed in order, the recalibration's step count, and the
    // four curves per seed scored at the same lengths.
    void recipeRuns()
    {
        const DropeRecipe recipe = tinyRecipe();
        std::vector<std::pair<size_t, DropeStep>> started;
        std::vector<int> recalibrationStepsSeen;
        DropeHooks hooks;
        hooks.reportEvery = 1;
        hooks.stepStarted = [&](size_t seed, DropeStep step) { started.emplace_back(seed, step); };
        hooks.trainingProgress = [&](size_t, DropeStep step, const TrainingProgress& p) {
            if (step == DropeStep::Recalibrate)
                recalibrationStepsSeen.push_back(p.steps);
        };
        const DropeRecipeResult result = runDropeRecipe(recipe, hooks);
        QVERIFY(!result.stopped);
        QCOMPARE(started.size(), 2 * dropeSteps().size());
        for (size_t i = 0; i < started.size(); ++i) {
            QCOMPARE(started[i].first, i / dropeSteps().size());
            QCOMPARE(started[i].second, dropeSteps()[i % dropeSteps().size()]);
        }
        QVERIFY(!recalibrationStepsSeen.empty());
        QCOMPARE(recalibrationStepsSeen.front(), 2); // 25% of 8
        const std::vector<std::string> labels{kRopeLabel, kRopeYarnLabel, kNopeLabel, kDropeLabel};
        QCOMPARE(result.curves.size(), size_t(8));
        for (size_t i = 0; i < result.curves.size(); ++i) {
            QCOMPARE(result.curves[i].label, labels[i % 4]);
            QCOMPARE(result.curves[i].seed, recipe.seeds[i / 4]);
            QCOMPARE(result.curves[i].points.size(), taskRunLengths(3).size());
            for (const TaskAccuracyPoint& p : result.curves[i].points)
                QVERIFY(p.accuracy >= 0 && p.accuracy <= 1);
        }
        // Stopping at once leaves no curve.
        DropeHooks stopNow;
        stopNow.shouldStop = [] { return true; };
        const DropeRecipeResult stopped = runDropeRecipe(recipe, stopNow);
        QVERIFY(stopped.stopped);
        QVERIFY(stopped.curves.empty());
    }
};

PLAB_QTEST_APPLESS_MAIN(TestTaskRuns)
#include "tst_task_runs.moc"
