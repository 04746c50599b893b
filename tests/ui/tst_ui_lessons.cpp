// The Lessons panel in the main window (offscreen): every shipped state applies to its view, Show me sets the panel
// and the view as the state says, Back/Next walk through the figures, a broken file is listed with its error.
#include "window/lessons_panel.h"
#include "window/main_window.h"
#include "tabs/scheme_panel.h"
#include "tabs/compare_view.h"
#include "tabs/train_view.h"

#include "lessons/lessons.h"
#include "test_main.h"
#include "test_settings.h"

#include <QComboBox>
#include <QFile>
#include <QSettings>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

using namespace plab;
using namespace plab::ui;

namespace {

void writeFile(const QString& path, const QByteArray& text)
{
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(text);
}

const QByteArray kLesson = R"(# Two figures

First.

```json
{"view": "bias", "scheme": "kerple-power", "params": {"r1": 0.5, "r2": 1.5}, "heads": 4, "head": 3, "length": 48}
```

Second.

```json
{"view": "compare", "schemes": ["local", "alibi"], "difference": true, "context": 16, "length": 40}
```
)";

} // namespace

class TestUiLessons : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { plab::test::isolateSettings(QStringLiteral("tst_ui_lessons")); }

    // Every state of every shipped lesson, in both languages, passes the session checks of its view.
    void everyShippedStateApplies_data()
    {
        QTest::addColumn<QString>("language");
        QTest::newRow("English") << "en";
        QTest::newRow("Chinese") << "zh_CN";
    }
    void everyShippedStateApplies()
    {
        QFETCH(QString, language);
        MainWindow window;
        LessonsPanel* lessons = window.lessonsPanel();
        lessons->setLanguage(language);
        QVERIFY(lessons->lessons().errors.empty());
        QVERIFY(lessons->lessons().lessons.size() >= 10);
        for (const Lesson& lesson : lessons->lessons().lessons)
            for (const LessonState& state : lesson.states) {
                if (state.view == LessonView::Train)
                    continue; // starts a run of minutes; its state is checked by lessonStateSession below
                QVERIFY2(window.applyLessonState(state),
                         qPrintable(QString::fromStdString(lesson.file + ":" + std::to_string(state.line))));
                QCOMPARE(window.currentView()->viewId(), QString::fromStdString(lessonViewName(state.view)));
            }
    }

    void showMeSetsPanelAndView()
    {
        QTemporaryDir dir;
        writeFile(dir.filePath(QStringLiteral("01-two.md")), kLesson);
        MainWindow window;
        LessonsPanel* lessons = window.lessonsPanel();
        QString error;
        QVERIFY2(lessons->openFolder(dir.path(), &error), qPrintable(error));
        QCOMPARE(lessons->lessons().lessons.size(), size_t(1));
        lessons->showState(0);
        QCOMPARE(window.currentView()->viewId(), QStringLiteral("bias"));
        const PanelState& panel = window.panel()->state();
        QCOMPARE(panel.spec.name(), std::string("kerple-power"));
        QCOMPARE(panel.spec.heads, 4);
        QCOMPARE(panel.head, 3);
        QCOMPARE(panel.length, 48);
        QCOMPARE(panel.spec.param("r1"), 0.5);
        QCOMPARE(panel.spec.param("r2"), 1.5);

        lessons->next();
        QCOMPARE(lessons->currentState(), 1);
        auto* compare = static_cast<CompareView*>(window.view(QStringLiteral("compare")));
        QCOMPARE(window.currentView(), compare);
        QCOMPARE(compare->schemes(), (QStringList{QStringLiteral("local"), QStringLiteral("alibi")}));
        QVERIFY(compare->differenceShown());
        QCOMPARE(window.panel()->state().spec.name(), std::string("local"));
        QCOMPARE(window.panel()->state().spec.param("window"), 16.0); // the window follows the context
        QCOMPARE(window.panel()->state().length, 40);

        lessons->next(); // past the last figure of the only lesson: nothing changes
        QCOMPARE(lessons->currentState(), 1);
        lessons->back();
        QCOMPARE(lessons->currentState(), 0);
        QCOMPARE(window.currentView()->viewId(), QStringLiteral("bias"));
    }

    void nextCrossesIntoTheNextLesson()
    {
        MainWindow window;
        LessonsPanel* lessons = window.lessonsPanel();
        lessons->showLesson(0);
        const int states = static_cast<int>(lessons->lessons().lessons[0].states.size());
        for (int i = 0; i < states; ++i) // a fresh lesson shows no figure yet: Next shows figure 1, then the others
            lessons->next();
        QCOMPARE(lessons->currentLesson(), 0);
        QCOMPARE(lessons->currentState(), states - 1);
        lessons->next();
        QCOMPARE(lessons->currentLesson(), 1);
        QCOMPARE(lessons->currentState(), 0);
        lessons->back();
        QCOMPARE(lessons->currentLesson(), 0);
        QCOMPARE(lessons->currentState(), states - 1);
    }

    void brokenFileIsListedOthersLoad()
    {
        QTemporaryDir dir;
        writeFile(dir.filePath(QStringLiteral("01-two.md")), kLesson);
        writeFile(dir.filePath(QStringLiteral("02-broken.md")),
                  "# Broken\n\n```json\n{\"view\": \"bias\", \"scheme\": \"rop\"}\n```\n");
        MainWindow window;
        LessonsPanel* lessons = window.lessonsPanel();
        QVERIFY(lessons->openFolder(dir.path()));
        QCOMPARE(lessons->lessons().lessons.size(), size_t(1));
        QCOMPARE(lessons->lessons().errors.size(), size_t(1));
        auto* choice = lessons->findChild<QComboBox*>(QStringLiteral("lessonChoice"));
        QVERIFY(choice);
        QCOMPARE(choice->count(), 2);
        QVERIFY(choice->itemText(1).contains(QStringLiteral("02-broken.md")));
        QVERIFY(choice->itemData(1, Qt::ToolTipRole)
                    .toString()
                    .contains(QStringLiteral("02-broken.md:4: unknown scheme 'rop'")));
        // A folder that cannot be read leaves the lessons as they were.
        QString error;
        QVERIFY(!lessons->openFolder(dir.filePath(QStringLiteral("missing")), &error));
        QVERIFY(error.contains(QStringLiteral("not a folder")));
        QCOMPARE(lessons->lessons().lessons.size(), size_t(1));
    }

    void trainStateSetsTheTrainTab()
    {
        const Lesson lesson = parseLesson(
            {"04-t.md", "# T\n\n```json\n{\"view\": \"train\", \"schemes\": [\"alibi\", \"local\"]}\n```\n"});
        const LessonStateSession session = lessonStateSession(lesson.states[0]);
        QCOMPARE(session.view, QStringLiteral("train"));
        MainWindow window;
        auto* train = static_cast<TrainView*>(window.view(QStringLiteral("train")));
        train->restoreState(session.viewState); // the same checks a session gets, without starting the run
        QCOMPARE(train->request().schemes, (std::vector<std::string>{"alibi", "local"}));
    }

    // A train state's model options reach the Train tab's fields (its request), and a later state without them turns
    // them off again rather than inheriting them.
    void trainStateSetsModelOptions_data()
    {
        QTest::addColumn<QString>("state");
        QTest::addColumn<int>("nopeEvery");
        QTest::addColumn<bool>("tuning");
        QTest::addColumn<double>("floorScale");
        QTest::addColumn<bool>("ssmax");
        QTest::addColumn<bool>("sinkLogit");
        QTest::newRow("NoPE every 2, temperature at F = 32")
            << R"({"view": "train", "schemes": ["rope"], "nope_every": 2, "attn_temperature_tuning": true,
                  "floor_scale": 32})"
            << 2 << true << 32.0 << false << false;
        QTest::newRow("ssmax and sink logit")
            << R"({"view": "train", "schemes": ["alibi"], "preset": "tiny", "ssmax": true, "sink_logit": true})" << 0
            << false << 8192.0 << true << true;
    }

    void trainStateSetsModelOptions()
    {
        QFETCH(QString, state);
        QFETCH(int, nopeEvery);
        QFETCH(bool, tuning);
        QFETCH(double, floorScale);
        QFETCH(bool, ssmax);
        QFETCH(bool, sinkLogit);
        const Lesson lesson =
            parseLesson({"14-t.md", "# T\n\n```json\n" + state.toStdString() +
                                        "\n```\n\n```json\n{\"view\": \"train\", \"schemes\": [\"rope\"]}\n```\n"});
        MainWindow window;
        auto* train = static_cast<TrainView*>(window.view(QStringLiteral("train")));
        train->restoreState(lessonStateSession(lesson.states[0]).viewState);
        const ModelConfig model = train->request().model;
        QCOMPARE(model.nopeEvery, nopeEvery);
        QCOMPARE(model.temperature.tuning, tuning);
        QCOMPARE(model.temperature.floorScale, floorScale);
        QCOMPARE(model.ssmax, ssmax);
        QCOMPARE(model.sinkLogit, sinkLogit);
        // The run the tab would start is the model the lesson checked: core's validation passes.
        for (size_t s = 0; s < train->request().schemes.size(); ++s)
            validateModelConfig(schemeModelConfig(train->request(), s));
        if (qEnvironmentVariableIsSet("PLAB_KEEP_PICTURES")) { // to look at the fields the state set
            window.resize(1400, 900);
            window.showView(QStringLiteral("train"));
            window.grab().save(qEnvironmentVariable("PLAB_KEEP_PICTURES") + "/lesson-train-options-" +
                               QString::fromLatin1(QTest::currentDataTag()).left(5) + ".png");
        }
        train->restoreState(lessonStateSession(lesson.states[1]).viewState);
        const ModelConfig plain = train->request().model;
        QCOMPARE(plain.nopeEvery, 0);
        QVERIFY(!plain.temperature.tuning && !plain.ssmax && !plain.sinkLogit);
    }
};

PLAB_QTEST_MAIN(TestUiLessons)
#include "tst_ui_lessons.moc"
