// The Train tab's tasks: the task chooser (its entries, the task length's range, the recipe button) and the DroPE
// recipe run in its worker (its steps in order, the four curves, the passkey heatmap, the exports, Cancel).
#include "tabs/heatmap_widget.h"
#include "tabs/train_view.h"
#include "workers/task_run.h"

#include "model_configs.h"
#include "test_main.h"
#include "test_settings.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTableWidget>
#include <QtTest>

#include <sstream>

using namespace plab;
using namespace plab::ui;

namespace {

// The recipe on a model small enough to run in seconds.
TaskRequest tinyTaskRequest(TaskKind kind, int trainLength, bool drope)
{
    TaskRequest r;
    r.run.task = {kind, trainLength};
    r.run.model = smallModelConfig("rope", 1, 16, 2, 32, 32);
    r.run.train.batch = 2;
    setTrainingSteps(r.run.train, 4);
    r.run.examples = 2;
    r.schemes = {"none", "alibi"};
    r.drope = drope;
    r.fraction = 0.25;
    r.reportEvery = 1;
    return r;
}

} // namespace

class TestUiTasks : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { plab::test::isolateSettings(QStringLiteral("tst_ui_tasks")); }

    // Every entry of the chooser: text first, then core's tasks; the length's range is what the context holds.
    void taskChooser_data()
    {
        QTest::addColumn<QString>("task");
        QTest::addColumn<int>("context");
        QTest::addColumn<int>("longest"); // 0: text, no task length
        QTest::newRow("text") << "text" << 32 << 0;
        QTest::newRow("copy at 32: 2n + 2 <= 33") << "copy" << 32 << 15;
        QTest::newRow("reverse at 64") << "reverse" << 64 << 31;
        QTest::newRow("addition at 32: 3n + 4 <= 33") << "addition" << 32 << 9;
        QTest::newRow("passkey at 32: n + 21 <= 33") << "passkey" << 32 << 12;
        QTest::newRow("passkey at 64") << "passkey" << 64 << 44;
    }
    void taskChooser()
    {
        QFETCH(QString, task);
        QFETCH(int, context);
        QFETCH(int, longest);
        TrainView view;
        QCOMPARE(view.taskBox()->count(), 1 + static_cast<int>(taskTable().size()));
        QCOMPARE(view.taskBox()->itemData(0).toString(), QStringLiteral("text"));
        view.findChild<QSpinBox*>(QStringLiteral("context"))->setValue(context);
        const int index = view.taskBox()->findData(task);
        QVERIFY(index >= 0);
        view.taskBox()->setCurrentIndex(index);
        const bool text = longest == 0;
        QCOMPARE(view.dropeButton()->isEnabled(), !text);
        QCOMPARE(view.taskLengthBox()->isEnabled(), !text);
        if (text) {
            QVERIFY_THROWS_EXCEPTION(InputError, view.taskRequest(true));
            return;
        }
        QCOMPARE(view.taskLengthBox()->maximum(), longest);
        QCOMPARE(view.taskLengthBox()->value(), longest); // starts at the longest
        const TaskRequest request = view.taskRequest(true);
        QCOMPARE(QString::fromStdString(taskInfo(request.run.task.kind).name), task);
        QCOMPARE(request.run.task.trainLength, longest);
        QCOMPARE(request.run.model.context, context);
        QCOMPARE(request.fraction, view.fractionBox()->value() / 100);
        request.check(); // the chooser's request passes core's checks
    }

    // The recipe's steps in order for every seed, its four curves, and what the results show and export.
    void recipeSteps_data()
    {
        QTest::addColumn<int>("kind");
        QTest::addColumn<int>("seeds");
        QTest::newRow("copy, one seed") << int(TaskKind::Copy) << 1;
        QTest::newRow("passkey, two seeds") << int(TaskKind::Passkey) << 2;
    }
    void recipeSteps()
    {
        QFETCH(int, kind);
        QFETCH(int, seeds);
        const TaskKind task = static_cast<TaskKind>(kind);
        TrainView view;
        TaskRequest request = tinyTaskRequest(task, task == TaskKind::Passkey ? 4 : 3, true);
        request.seeds = seeds;
        QSignalSpy finished(&view, &TrainView::trainingFinished);
        view.startTask(request);
        QVERIFY(view.isBusy());
        QVERIFY(!view.dropeButton()->isEnabled());
        QVERIFY(finished.wait(120000));
        QCOMPARE(finished.last().at(0).toString(), QString());
        QVERIFY(!view.isBusy());

        QStringList expected;
        for (int s = 0; s < seeds; ++s)
            for (DropeStep step : dropeSteps())
                expected << (seeds > 1
                                 ? QStringLiteral("seed %1 of %2: %3").arg(s + 1).arg(seeds).arg(dropeStepText(step))
                                 : dropeStepText(step));
        QCOMPARE(view.taskStages(), expected);
        const std::vector<std::string> labels{kRopeLabel, kRopeYarnLabel, kNopeLabel, kDropeLabel};
        QCOMPARE(view.taskCurves().size(), size_t(4 * seeds));
        for (size_t i = 0; i < view.taskCurves().size(); ++i)
            QCOMPARE(view.taskCurves()[i].label, labels[i % 4]);
        QVERIFY(view.taskShown());
        QVERIFY(view.hasPicture());
        QCOMPARE(view.table()->rowCount(), 4);
        QCOMPARE(view.table()->item(3, 0)->text(), taskCurveName(kDropeLabel, 0.25, request.logitC));
        const bool passkey = task == TaskKind::Passkey;
        QCOMPARE(view.passkeyHeatmap()->isVisibleTo(&view), passkey);
        if (passkey) {
            const HeatmapFigure& f = view.passkeyHeatmap()->heatmap().figure();
            QCOMPARE(f.panels.size(), size_t(4));
            QCOMPARE(f.panels[0].matrix->rows, static_cast<int>(defaultPasskeyDepths().size()));
            QCOMPARE(f.panels[0].matrix->cols, static_cast<int>(taskRunLengths(4).size()));
            QCOMPARE(f.rowTickLabels.front(), QStringLiteral("0%"));
        }
        std::ostringstream csv;
        view.writeData(csv, DataFormat::Csv);
        const std::string csvText = csv.str();
        QVERIFY(csvText.rfind("label,length,depth,n,accuracy_mean", 0) == 0);
        // passkey exports per (length, depth), the others per length: 4 labels x lengths (x depths) rows
        const size_t rows = 4 * taskRunLengths(passkey ? 4 : 3).size() * (passkey ? defaultPasskeyDepths().size() : 1);
        QCOMPARE(static_cast<size_t>(std::count(csvText.begin(), csvText.end(), '\n')), rows + 1);
        std::ostringstream npy;
        view.writeData(npy, DataFormat::Npy);
        QVERIFY(npy.str().rfind("\x93NUMPY", 0) == 0);
    }

    // Cancel ends the recipe early: no error, the button back.
    void recipeCancels()
    {
        TrainView view;
        TaskRequest request = tinyTaskRequest(TaskKind::Copy, 3, true);
        setTrainingSteps(request.run.train, 100000);
        QSignalSpy finished(&view, &TrainView::trainingFinished);
        view.startTask(request);
        QTRY_VERIFY(!view.taskStages().isEmpty());
        view.cancelJob();
        QVERIFY(finished.wait(60000));
        QVERIFY(!view.isBusy());
        QVERIFY(view.taskCurves().empty());
    }

    // Bad input is refused before any work, with core's message.
    void badRecipe()
    {
        TrainView view;
        TaskRequest request = tinyTaskRequest(TaskKind::Copy, 40, true); // copy 40 needs 81 bytes; the context is 32
        view.startTask(request);
        QVERIFY(!view.isBusy());
        QVERIFY2(view.statusText().contains(QStringLiteral("task copy: length = 40")), qPrintable(view.statusText()));
    }
};

PLAB_QTEST_MAIN(TestUiTasks)
#include "tst_ui_tasks.moc"
