// Every Cancel of the app (issue 27): clicked while the work runs, it leaves "Canceled after N s." in its status line
// at once (no stale "Evaluating… 1% · about 4206 s left"), the worker stops, and nothing later overwrites the line.
#include "tabs/entropy_view.h"
#include "tabs/hf_model_view.h"
#include "tabs/methods_panel.h"
#include "tabs/train_view.h"
#include "tabs/view_base.h"
#include "window/main_window.h"
#include "workers/task_run.h"

#include "model_configs.h"
#include "test_main.h"
#include "test_settings.h"

#include "runs/training.h"

#include <QFile>
#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QtTest>

#include <functional>
#include <memory>

using namespace plab;
using namespace plab::ui;

namespace {

QString hfData(const char* name)
{
    return QStringLiteral(POSITIONLAB_TEST_DATA "/hf/") + QString::fromLatin1(name);
}

QString writeCorpus(const QTemporaryDir& dir)
{
    QString text;
    for (int i = 0; i < 400; ++i)
        text += QStringLiteral("The cat sat on the mat number %1, and the dog watched it. ").arg(i % 13);
    const QString corpus = dir.filePath(QStringLiteral("corpus.txt"));
    QFile f(corpus);
    if (f.open(QIODevice::WriteOnly))
        f.write(text.toUtf8());
    return corpus;
}

// A training run that would take long: a small model, many steps.
TrainRequest longTraining(const QString& corpus)
{
    TrainRequest request;
    request.schemes = {"alibi", "rope"};
    request.preset = QStringLiteral("test");
    request.model = smallModelConfig("alibi", 1);
    request.train.steps = 200000;
    request.train.batch = 2;
    request.train.warmup = 1;
    request.evalMultipliers = {1, 2};
    request.evalBytes = 256;
    request.reportEvery = 1;
    request.corpusPath = corpus;
    return request;
}

TaskRequest longTask()
{
    TaskRequest r;
    r.run.task = {TaskKind::Copy, 3};
    r.run.model = smallModelConfig("rope", 1, 16, 2, 32, 32);
    r.run.train.batch = 2;
    setTrainingSteps(r.run.train, 200000);
    r.run.examples = 2;
    r.schemes = {"none", "alibi"};
    r.drope = true;
    r.fraction = 0.25;
    r.reportEvery = 1;
    return r;
}

// One Cancel as the test drives it: what starts the work, waits until it runs, clicks Cancel, reads the status line
// and says whether the work is still in flight.
struct Scenario {
    std::function<void()> startAndWait;
    std::function<void()> click;
    std::function<QString()> status;
    std::function<bool()> busy;
};

bool startsCanceled(const QString& text)
{
    return text.startsWith(QStringLiteral("Canceled after ")) && text.endsWith(QStringLiteral(" s."));
}

} // namespace

class TestUiCancel : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        plab::test::isolateSettings(QStringLiteral("tst_ui_cancel"));
        QVERIFY(m_dir.isValid());
        m_corpus = writeCorpus(m_dir);
    }

    void cancelLeavesCanceled_data()
    {
        QTest::addColumn<QString>("which");
        QTest::newRow("Train tab: training, its Cancel") << QStringLiteral("training");
        QTest::newRow("Train tab: task run, its Cancel") << QStringLiteral("task");
        QTest::newRow("Train tab: evaluate under methods, its Cancel") << QStringLiteral("train methods");
        QTest::newRow("Your model: evaluate under methods, its Cancel") << QStringLiteral("model methods");
        QTest::newRow("status bar (Esc): training") << QStringLiteral("bar training");
        QTest::newRow("status bar (Esc): your model's methods") << QStringLiteral("bar model methods");
        QTest::newRow("status bar (Esc): entropy") << QStringLiteral("bar entropy");
    }

    void cancelLeavesCanceled()
    {
        QFETCH(QString, which);
        std::unique_ptr<MainWindow> window;
        std::unique_ptr<TrainView> train;
        Scenario s;
        const bool bar = which.startsWith(QStringLiteral("bar "));
        if (bar) {
            window = std::make_unique<MainWindow>();
            window->resize(1366, 768);
        }
        if (which == QLatin1String("training") || which == QLatin1String("task") ||
            which == QLatin1String("train methods") || which == QLatin1String("bar training")) {
            TrainView* view = nullptr;
            if (bar) {
                view = static_cast<TrainView*>(window->view(QStringLiteral("train")));
                window->showView(QStringLiteral("train"));
            } else {
                train = std::make_unique<TrainView>();
                view = train.get();
            }
            s.busy = [view] { return view->isBusy(); };
            s.status = [view] { return view->statusText(); };
            s.click = [view] { view->stopButton()->click(); };
            if (which == QLatin1String("task")) {
                s.startAndWait = [view] {
                    view->startTask(longTask());
                    QTRY_VERIFY_WITH_TIMEOUT(view->statusText().contains(QStringLiteral("step")), 60000);
                };
            } else if (which == QLatin1String("train methods")) {
                MethodsPanel* panel = view->methodsPanel();
                auto config = smallModelConfig("rope", 2, 32, 2, 64, 32);
                view->addModel(makeSharedModel(QStringLiteral("rope"), std::make_unique<Model>(config), {}, {}));
                panel->setEvaluation(0, EvalMode::Sliding, m_corpus);
                s.status = [panel] { return panel->statusLabel()->text(); };
                s.click = [panel] { panel->cancelButton()->click(); };
                s.startAndWait = [panel] {
                    QSignalSpy progress(panel, &MethodsPanel::progress);
                    panel->evaluate();
                    QVERIFY(progress.wait(60000));
                };
            } else {
                s.startAndWait = [this, view] {
                    view->start(longTraining(m_corpus));
                    QTRY_VERIFY_WITH_TIMEOUT(view->statusText().contains(QStringLiteral("step")), 60000);
                };
            }
        } else if (which.endsWith(QLatin1String("model methods"))) {
            if (!window)
                window = std::make_unique<MainWindow>();
            HfModelView* view = window->modelView();
            window->showView(view->viewId());
            view->openFolder(hfData("qwen2_text"));
            QTRY_VERIFY_WITH_TIMEOUT(view->model() != nullptr, 60000);
            view->setPage(HfModelView::MethodsPage);
            view->setMethodsLengths(QStringLiteral("16,32,64"));
            view->setMethodsTokensPerLength(0); // all the default corpus' tokens: long
            view->setMethodsChecked({QString(), QStringLiteral("pi"), QStringLiteral("ntk"), QStringLiteral("yarn")});
            s.busy = [view] { return view->isBusy(); };
            s.status = [view] { return view->methodsStatus()->text(); };
            s.click = [view] { view->findChild<QPushButton*>(QStringLiteral("cancelMethods"))->click(); };
            s.startAndWait = [view] {
                QSignalSpy progress(view, &ViewBase::progress);
                view->evaluateMethods();
                QVERIFY(progress.wait(60000));
                // The line the issue saw: the estimate of the time left, replaced by the Cancel below.
                QTRY_VERIFY_WITH_TIMEOUT(view->methodsStatus()->text().contains(QStringLiteral("left")), 60000);
            };
        } else if (which == QLatin1String("bar entropy")) {
            auto* view = static_cast<EntropyView*>(window->view(QStringLiteral("entropy")));
            window->showView(QStringLiteral("entropy"));
            s.busy = [view] { return view->isBusy(); };
            s.startAndWait = [view] {
                // Three schemes to 8192 positions: seconds of work at least.
                view->setSchemes({QStringLiteral("alibi"), QStringLiteral("kerple-log"), QStringLiteral("t5")});
                view->setMaxLength(8192);
                view->refreshIfDirty();
                QVERIFY(view->isBusy());
            };
        }
        if (bar) {
            MainWindow* w = window.get();
            s.click = [w] { w->cancelButton()->click(); };
            const std::function<QString()> own = s.status;
            s.status = [w, own] {
                // The status bar says it, and the view's own line too where it has one.
                const QString message = w->statusBar()->currentMessage();
                return own && !startsCanceled(own()) ? own() : message;
            };
        }
        QVERIFY(s.startAndWait && s.click && s.status && s.busy);
        s.startAndWait();
        if (QTest::currentTestFailed())
            return;
        QVERIFY2(s.busy(), "the work ended before Cancel could be clicked");
        s.click();
        // At once (no event processed since the click): "Canceled" and the time spent.
        QVERIFY2(startsCanceled(s.status()), qPrintable(s.status()));
        if (bar)
            QVERIFY2(startsCanceled(window->statusBar()->currentMessage()),
                     qPrintable(window->statusBar()->currentMessage()));
        const QString said = s.status();
        // The worker stops, and what it still reports on its way out leaves the line as it is.
        QTRY_VERIFY_WITH_TIMEOUT(!s.busy(), 120000);
        QTest::qWait(50);
        QCOMPARE(s.status(), said);
    }

private:
    QTemporaryDir m_dir;
    QString m_corpus;
};

PLAB_QTEST_MAIN(TestUiCancel)
#include "tst_ui_cancel.moc"
