// Session files, recent files, corpus drops and palettes of the main window (offscreen): round trips restore
// every setting; bad files give a clear one-line message and leave the window as it was.
#include "tabs/heatmap_widget.h"
#include "workers/kept_models.h"
#include "window/main_window.h"
#include "tabs/methods_panel.h"
#include "tabs/scheme_panel.h"
#include "settings/session.h"
#include "tabs/attention_view.h"
#include "tabs/bias_view.h"
#include "tabs/compare_view.h"
#include "tabs/entropy_view.h"
#include "tabs/train_view.h"

#include "base/errors.h"
#include "model/model.h"
#include "workers/model_compute.h"
#include "model_configs.h"
#include "model/presets.h"
#include "test_main.h"
#include "test_settings.h"

#include <QAbstractSpinBox>
#include <QStatusBar>
#include <QDir>
#include <QFile>
#include <QLabel>
#include <QMimeData>
#include <QSemaphore>
#include <QSettings>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QThreadPool>
#include <QtTest>

using namespace plab;
using namespace plab::ui;

namespace {

QString writeFile(const QTemporaryDir& dir, const QString& name, const QByteArray& bytes)
{
    const QString path = dir.filePath(name);
    QFile f(path);
    f.open(QIODevice::WriteOnly);
    f.write(bytes);
    return path;
}

// Holds every thread of the global pool (the views' workers) until release(), so a test can decide when a job
// runs relative to the GUI thread's events instead of racing it.
class PoolBlocker {
public:
    PoolBlocker()
    {
        for (int i = 0; i < QThreadPool::globalInstance()->maxThreadCount(); ++i)
            QThreadPool::globalInstance()->start([this] { m_gate.acquire(); });
    }
    ~PoolBlocker() { release(); }
    // Lets the held threads go and waits (without processing events) until every queued job has run.
    void release()
    {
        if (m_released)
            return;
        m_released = true;
        m_gate.release(QThreadPool::globalInstance()->maxThreadCount());
        QThreadPool::globalInstance()->waitForDone();
    }

private:
    QSemaphore m_gate;
    bool m_released = false;
};

} // namespace

class TestUiSession : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        plab::test::isolateSettings(QStringLiteral("tst_ui_session"));
        QVERIFY(m_dir.isValid());
    }
    // A window loads the kept models at start: none here, so model counts are the sessions' own.
    void init() { QVERIFY(QDir(keptModelsFolder()).removeRecursively()); }

    void roundTrip()
    {
        const QString path = m_dir.filePath(QStringLiteral("s.json"));
        {
            MainWindow window;
            window.panel()->setScheme(QStringLiteral("kerple-log"));
            window.panel()->setHeads(4);
            window.panel()->setHead(2);
            window.panel()->setLength(100);
            window.panel()->setParameter(QStringLiteral("r1"), 0.25);
            window.panel()->setColorMap(QStringLiteral("magma"));
            window.panel()->setLogn(true, 32);
            auto* compare = static_cast<CompareView*>(window.view(QStringLiteral("compare")));
            compare->setSchemes({QStringLiteral("t5"), QStringLiteral("bca"), QStringLiteral("rope")});
            compare->setDifference(false, 2, 0);
            static_cast<EntropyView*>(window.view(QStringLiteral("entropy")))->setSchemes({QStringLiteral("sandwich")});
            window.showView(QStringLiteral("dot"));
            QString error;
            QVERIFY2(window.saveSession(path, &error), qPrintable(error));
        }
        MainWindow window;
        QString error;
        QVERIFY2(window.openSession(path, &error), qPrintable(error));
        const PanelState& s = window.panel()->state();
        QCOMPARE(QString::fromStdString(s.spec.name()), QStringLiteral("kerple-log"));
        QCOMPARE(s.spec.heads, 4);
        QCOMPARE(s.head, 2);
        QCOMPARE(s.length, 100);
        QCOMPARE(s.spec.param("r1"), 0.25);
        QCOMPARE(s.colorMap, QStringLiteral("magma"));
        QVERIFY(s.spec.logn);
        QCOMPARE(s.spec.context, 32);
        auto* compare = static_cast<CompareView*>(window.view(QStringLiteral("compare")));
        QCOMPARE(compare->schemes(),
                 QStringList({QStringLiteral("t5"), QStringLiteral("bca"), QStringLiteral("rope")}));
        QVERIFY(!compare->differenceShown());
        QCOMPARE(compare->differencePair(), std::make_pair(2, 0));
        QCOMPARE(static_cast<EntropyView*>(window.view(QStringLiteral("entropy")))->schemes(),
                 QStringList({QStringLiteral("sandwich")}));
        QCOMPARE(window.currentView()->viewId(), QStringLiteral("dot"));
        QVERIFY(window.recentSessions().contains(QFileInfo(path).absoluteFilePath()));
    }

    // Opening a session, then setting the panel (as --screenshots does): the Bias view ends on the panel's head.
    // The pool is held so the window's first job is still queued when the session's job is requested (it waits,
    // the first is canceled) and has finished, its "finished" not yet delivered, when the panel's job is requested:
    // the newest request must be the one shown, not the session's that was waiting.
    void sessionThenPanelShowsPanelHead_data()
    {
        QTest::addColumn<QByteArray>("panel");
        QTest::addColumn<QString>("tab");
        QTest::addColumn<int>("heads");
        QTest::addColumn<int>("head");
        QTest::addColumn<int>("length");
        QTest::newRow("default state, then head 2")
            << QByteArray(R"({"heads": 8, "head": 0, "length": 64})") << "bias" << 8 << 1 << 64;
        QTest::newRow("head 4 of 4, then head 2 of 8")
            << QByteArray(R"({"heads": 4, "head": 3, "length": 100})") << "bias" << 8 << 1 << 64;
        QTest::newRow("one head, then head 3 of 8")
            << QByteArray(R"({"heads": 1, "head": 0})") << "bias" << 8 << 2 << 64;
        QTest::newRow("head 2, then head 1 and N = 32")
            << QByteArray(R"({"heads": 2, "head": 1, "length": 32})") << "bias" << 2 << 0 << 32;
        QTest::newRow("compare tab, then head 2")
            << QByteArray(R"({"heads": 8, "head": 0, "length": 256})") << "compare" << 8 << 1 << 64;
        QTest::newRow("kerple-log dot tab, then head 5")
            << QByteArray(R"({"scheme": "kerple-log", "heads": 16, "head": 0, "length": 128})") << "dot" << 8 << 4
            << 48;
    }
    void sessionThenPanelShowsPanelHead()
    {
        QFETCH(QByteArray, panel);
        QFETCH(QString, tab);
        QFETCH(int, heads);
        QFETCH(int, head);
        QFETCH(int, length);
        const QString path = writeFile(m_dir, QStringLiteral("heads.json"),
                                       R"({"format": "positionlab-session", "version": 1, "tab": ")" + tab.toUtf8() +
                                           R"(", "panel": )" + panel + "}");
        PoolBlocker pool;
        MainWindow window; // the Bias tab is current: its first job is queued behind the held pool
        QString error;
        QVERIFY2(window.openSession(path, &error), qPrintable(error));
        pool.release(); // the canceled first job has run; its "finished" waits in the event queue
        window.panel()->setScheme(QStringLiteral("alibi"));
        window.panel()->setHeads(heads);
        window.panel()->setLength(length);
        window.panel()->setHead(head);
        auto* bias = static_cast<BiasView*>(window.view(QStringLiteral("bias")));
        window.showView(QStringLiteral("bias"));
        QTRY_VERIFY_WITH_TIMEOUT(bias->hasPicture() && !bias->isBusy(), 30000);
        const PanelState& state = window.panel()->state();
        QCOMPARE(state.head, head);
        QCOMPARE(bias->result().request.head, head);
        QCOMPARE(bias->result().request.spec.heads, heads);
        QCOMPARE(bias->result().request.length, length);
        QCOMPARE(QString::fromStdString(bias->result().request.spec.name()), QStringLiteral("alibi"));
        QCOMPARE(bias->thumbnails()->current(), head);
        QCOMPARE(bias->thumbnails()->count(), heads);
    }

    // Switching schemes (a session's, then the panel's) leaves exactly the new scheme's parameter rows.
    void schemeSwitchParameterRows_data()
    {
        QTest::addColumn<QString>("sessionScheme");
        QTest::addColumn<QString>("scheme");
        QTest::addColumn<int>("placeholders"); // "(no parameters)" labels
        QTest::addColumn<int>("spinBoxes");    // parameter boxes
        QTest::newRow("kerple-log then alibi") << "kerple-log"
                                               << "alibi" << 1 << 0;
        QTest::newRow("alibi then kerple-log") << "alibi"
                                               << "kerple-log" << 0 << 2;
        QTest::newRow("none then alibi") << "none"
                                         << "alibi" << 1 << 0;
        QTest::newRow("t5 then local") << "t5"
                                       << "local" << 0 << 2; // window and sinks
    }
    void schemeSwitchParameterRows()
    {
        QFETCH(QString, sessionScheme);
        QFETCH(QString, scheme);
        QFETCH(int, placeholders);
        QFETCH(int, spinBoxes);
        MainWindow window; // starts on alibi
        window.panel()->restoreState({{"scheme", sessionScheme.toStdString()}});
        window.panel()->setScheme(scheme);
        int shownPlaceholders = 0, boxes = 0;
        for (const QLabel* label : window.panel()->findChildren<QLabel*>())
            shownPlaceholders += label->text() == QLatin1String("(no parameters)");
        for (const QAbstractSpinBox* box : window.panel()->findChildren<QAbstractSpinBox*>())
            boxes += box->objectName().startsWith(QLatin1String("spin_"));
        QCOMPARE(shownPlaceholders, placeholders);
        QCOMPARE(boxes, spinBoxes);
    }

    // Bad files: a message naming the problem, and the window unchanged.
    void badSessions_data()
    {
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<QString>("message");
        const QByteArray head = R"({"format": "positionlab-session", "version": 1, )";
        QTest::newRow("empty") << QByteArray() << "not a valid JSON";
        QTest::newRow("binary") << QByteArray("\x00\xff\x13garbage", 10) << "not a valid JSON";
        QTest::newRow("truncated") << QByteArray(head + R"("panel": {"scheme": "alibi")") << "not a valid JSON";
        QTest::newRow("array") << QByteArray("[1, 2, 3]") << "not a PositionLab session";
        QTest::newRow("other format") << QByteArray(R"({"format": "x", "version": 1})") << "not a PositionLab session";
        QTest::newRow("future version") << QByteArray(R"({"format": "positionlab-session", "version": 9})")
                                        << "version 9";
        QTest::newRow("unknown scheme") << QByteArray(head + R"("panel": {"scheme": "bogus"}})")
                                        << "unknown scheme 'bogus'";
        QTest::newRow("heads string") << QByteArray(head + R"("panel": {"heads": "eight"}})") << "panel.heads";
        QTest::newRow("heads range") << QByteArray(head + R"("panel": {"heads": 0}})") << "panel.heads = 0";
        QTest::newRow("bad parameter") << QByteArray(head +
                                                     R"("panel": {"scheme": "kerple-power", "parameters": {"r2": 3}}})")
                                       << "r2 = 3";
        QTest::newRow("unknown parameter")
            << QByteArray(head + R"("panel": {"scheme": "alibi", "parameters": {"slope": 1}}})")
            << "no parameter 'slope'";
        QTest::newRow("panel not object") << QByteArray(head + R"("panel": 5})") << "panel must be an object";
        QTest::newRow("bad tab") << QByteArray(head + R"("tab": "histogram"})") << "tab = 'histogram'";
        QTest::newRow("compare one scheme")
            << QByteArray(head + R"("views": {"compare": {"schemes": ["alibi"]}}})") << "views.compare.schemes";
        QTest::newRow("compare difference of one scheme")
            << QByteArray(head + R"("views": {"compare": {"difference_a": 1, "difference_b": 1}}})")
            << "difference_a and difference_b";
        QTest::newRow("compare difference index")
            << QByteArray(head + R"("views": {"compare": {"schemes": ["alibi", "local"], "difference_a": 2}}})")
            << "views.compare.difference_a = 2";
        QTest::newRow("dot odd dim") << QByteArray(head + R"("views": {"dot": {"curves": [[7, 100]]}}})") << "dim = 7";
        QTest::newRow("entropy qk") << QByteArray(head + R"("views": {"entropy": {"qk": "model"}}})")
                                    << "views.entropy.qk";
        QTest::newRow("colormap") << QByteArray(head + R"("panel": {"colormap": "jet"}})") << "colormap = 'jet'";
        QTest::newRow("train preset") << QByteArray(head + R"("views": {"train": {"preset": "huge"}}})")
                                      << "views.train.preset: preset 'huge' is unknown; allowed: demo";
        QTest::newRow("train heads range")
            << QByteArray(head + R"("views": {"train": {"heads": 0}}})") << "views.train.heads = 0";
        QTest::newRow("train learning rate")
            << QByteArray(head + R"("views": {"train": {"learning_rate": 99}}})") << "views.train.learning_rate";
        QTest::newRow("train page") << QByteArray(head + R"("views": {"train": {"page": "charts"}}})")
                                    << "views.train.page = 'charts' is not a page; allowed: runs, methods";
        QTest::newRow("methods unknown ticked method")
            << QByteArray(head + R"("views": {"train": {"methods": {"checked": ["pi", "warp"]}}}})")
            << "views.train.methods.checked: scaling = 'warp' is not a known method; known methods: none, pi";
        QTest::newRow("methods unknown method's settings")
            << QByteArray(head + R"("views": {"train": {"methods": {"settings": {"warp": ["factor=2"]}}}}})")
            << "views.train.methods.settings.warp: scaling = 'warp' is not a known method";
        QTest::newRow("methods unknown parameter")
            << QByteArray(head + R"("views": {"train": {"methods": {"settings": {"pi": ["window=3"]}}}}})")
            << "views.train.methods.settings.pi: method pi has no parameter 'window' (window=3); its parameters: "
               "factor";
        QTest::newRow("methods value out of range")
            << QByteArray(head + R"("views": {"train": {"methods": {"settings": {"yarn": ["factor=0.5"]}}}}})")
            << "views.train.methods.settings.yarn: scaling yarn: factor = 0.5 is out of range; allowed: ";
        QTest::newRow("methods second value out of range")
            << QByteArray(head +
                          R"("views": {"train": {"methods": {"settings": {"yarn": ["factor=8", "beta-slow=-1"]}}}}})")
            << "scaling yarn: beta-slow = -1 is out of range";
        QTest::newRow("methods value not a number")
            << QByteArray(head + R"("views": {"train": {"methods": {"settings": {"pi": ["factor=big"]}}}}})")
            << "views.train.methods.settings.pi: scaling pi: factor = 'big' is not a number; allowed: ";
        QTest::newRow("methods setting not NAME=VALUE")
            << QByteArray(head + R"("views": {"train": {"methods": {"settings": {"pi": ["factor"]}}}}})")
            << "method pi: setting 'factor' is not NAME=VALUE";
        QTest::newRow("methods settings not a list")
            << QByteArray(head + R"("views": {"train": {"methods": {"settings": {"pi": "factor=2"}}}}})")
            << "views.train.methods.settings.pi must be a list of strings";
        QTest::newRow("methods not an object") << QByteArray(head + R"("views": {"train": {"methods": ["pi"]}}})")
                                               << "views.train.methods must be an object";
        QTest::newRow("checkpoints not a list")
            << QByteArray(head + R"("views": {"attention": {"checkpoints": "a.safetensors"}}})")
            << "views.attention.checkpoints must be a list of strings";
        QTest::newRow("checkpoint not a string")
            << QByteArray(head + R"("views": {"attention": {"checkpoints": [3]}}})")
            << "views.attention.checkpoints holds a non-string 3";
        QTest::newRow("model precision unknown")
            << QByteArray(head + R"("views": {"model": {"precision": "f16"}}})")
            << "views.model.precision: precision 'f16' is not allowed; allowed: f32";
        QTest::newRow("model precision not a string")
            << QByteArray(head + R"("views": {"model": {"precision": 16}}})") << "views.model.precision = 16";
        QTest::newRow("model zoom window reversed")
            << QByteArray(head + R"("views": {"model": {"token_window": {"keys": [20, 4], "queries": [4, 20]}}}})")
            << "views.model.token_window.keys = [20,4] is not allowed; allowed: [from, to]";
        QTest::newRow("model zoom window negative")
            << QByteArray(head + R"("views": {"model": {"token_window": {"keys": [0, 8], "queries": [-2, 6]}}}})")
            << "views.model.token_window.queries = [-2,6] is not allowed";
        QTest::newRow("model zoom window not numbers")
            << QByteArray(head + R"("views": {"model": {"token_window": {"keys": ["a", 8], "queries": [0, 8]}}}})")
            << "views.model.token_window.keys = [\"a\",8] is not two numbers";
        QTest::newRow("model zoom window without queries")
            << QByteArray(head + R"("views": {"model": {"token_window": {"keys": [0, 8]}}}})")
            << "views.model.token_window.queries is missing";
        QTest::newRow("model zoom window not an object")
            << QByteArray(head + R"("views": {"model": {"token_window": [0, 8]}}})")
            << "views.model.token_window must be an object";
    }
    void badSessions()
    {
        QFETCH(QByteArray, bytes);
        QFETCH(QString, message);
        MainWindow window;
        window.panel()->setScheme(QStringLiteral("sandwich"));
        window.panel()->setLength(77);
        const nlohmann::json before = window.sessionState();
        const QString path = writeFile(m_dir, QStringLiteral("bad.json"), bytes);
        QString error;
        QVERIFY(!window.openSession(path, &error));
        QVERIFY2(error.contains(message), qPrintable(error));
        QVERIFY(!error.contains(QLatin1Char('\n')));
        QCOMPARE(window.sessionState().dump(), before.dump());
    }

    // Checkpoints by path: a saved model comes back with the session; a missing or corrupt file is reported in the
    // status bar and the rest of the session applies.
    void checkpointsInSession_data()
    {
        QTest::addColumn<QString>("checkpoint"); // how the file is when the session opens: saved, missing, corrupt
        QTest::addColumn<int>("models");         // in the attention view afterwards
        QTest::newRow("saved model comes back") << "saved" << 1;
        QTest::newRow("missing file reported") << "missing" << 0;
        QTest::newRow("corrupt file reported") << "corrupt" << 0;
    }
    void checkpointsInSession()
    {
        QFETCH(QString, checkpoint);
        QFETCH(int, models);
        const ModelConfig config = smallModelConfig("t5", 2);
        const QString file = QFileInfo(m_dir.filePath(checkpoint + QStringLiteral(".safetensors"))).absoluteFilePath();
        const QString sessionPath = m_dir.filePath(QStringLiteral("models-%1.json").arg(checkpoint));
        QString error;
        {
            MainWindow window;
            auto* attention = static_cast<AttentionView*>(window.view(QStringLiteral("attention")));
            attention->addModel(makeSharedModel(QStringLiteral("t5 (made here)"), std::make_unique<Model>(config), {}));
            attention->setText(QStringLiteral("text of the session"));
            attention->setLayer(1);
            QVERIFY2(window.saveSession(sessionPath, &error), qPrintable(error));
            QVERIFY(
                window.statusBar()->currentMessage().contains(QStringLiteral("1 model(s) trained here are not in it")));
            QCOMPARE(window.sessionState()["views"]["attention"]["checkpoints"].size(), size_t(0));
            QVERIFY2(attention->saveModel(0, file, &error), qPrintable(error));
            QCOMPARE(attention->unsavedModelCount(), 0);
            window.statusBar()->clearMessage();
            QVERIFY2(window.saveSession(sessionPath, &error), qPrintable(error));
            QCOMPARE(window.statusBar()->currentMessage(), QString());
            const nlohmann::json state = window.sessionState()["views"]["attention"];
            QCOMPARE(state["checkpoints"], nlohmann::json::array({file.toStdString()}));
            QCOMPARE(state["model"].get<std::string>(), file.toStdString());
        }
        if (checkpoint == QLatin1String("missing"))
            QVERIFY(QFile::remove(file));
        if (checkpoint == QLatin1String("corrupt"))
            writeFile(m_dir, QFileInfo(file).fileName(), "not a checkpoint");

        MainWindow window;
        auto* attention = static_cast<AttentionView*>(window.view(QStringLiteral("attention")));
        QVERIFY2(window.openSession(sessionPath, &error), qPrintable(error));
        QCOMPARE(attention->modelCount(), models);
        const nlohmann::json state = attention->saveState();
        QCOMPARE(state["text"].get<std::string>(), std::string("text of the session")); // the rest applies
        if (models == 0) {
            const QString status = window.statusBar()->currentMessage();
            QVERIFY2(status.contains(QFileInfo(file).fileName()), qPrintable(status));
            return;
        }
        QCOMPARE(state["model"].get<std::string>(), file.toStdString());
        QCOMPARE(state["layer"].get<int>(), 1);
        // Opening the session again does not load the checkpoint twice.
        QVERIFY2(window.openSession(sessionPath, &error), qPrintable(error));
        QCOMPARE(attention->modelCount(), 1);
    }

    // Two checkpoints, the chosen one first: the session's choice and its layer survive the later load of the
    // other (which selects itself and narrows the layer range); relative names come from the session's folder.
    void sessionChoosesAmongCheckpoints_data()
    {
        QTest::addColumn<bool>("relative"); // the session names the files relative to itself, as written by hand
        QTest::newRow("absolute paths, as saved") << false;
        QTest::newRow("relative names") << true;
    }
    void sessionChoosesAmongCheckpoints()
    {
        QFETCH(bool, relative);
        QTemporaryDir folder(m_dir.filePath(QStringLiteral("choice-XXXXXX")));
        QVERIFY(folder.isValid());
        QString error;
        QStringList files;
        {
            AttentionView view;
            for (int layers : {2, 1}) {
                view.addModel(makeSharedModel(QStringLiteral("alibi %1").arg(layers),
                                              std::make_unique<Model>(smallModelConfig("alibi", layers)), {}));
                files << folder.filePath(QStringLiteral("layers%1.safetensors").arg(layers));
                QVERIFY2(view.saveModel(view.modelCount() - 1, files.back(), &error), qPrintable(error));
            }
        }
        const QStringList names =
            relative ? QStringList{QStringLiteral("layers2.safetensors"), QStringLiteral("layers1.safetensors")}
                     : files;
        nlohmann::json attention{{"checkpoints", {names[0].toStdString(), names[1].toStdString()}},
                                 {"model", names[0].toStdString()},
                                 {"layer", 1},
                                 {"text", "abc"}};
        nlohmann::json session{
            {"format", "positionlab-session"}, {"version", 1}, {"views", {{"attention", attention}}}};
        const QString path = writeFile(folder, QStringLiteral("s.json"), QByteArray::fromStdString(session.dump()));
        const QString cwd = QDir::currentPath();
        QVERIFY(QDir::setCurrent(QDir::tempPath())); // not the session's folder
        MainWindow window;
        const bool opened = window.openSession(path, &error);
        QDir::setCurrent(cwd);
        QVERIFY2(opened, qPrintable(error));
        auto* view = static_cast<AttentionView*>(window.view(QStringLiteral("attention")));
        QCOMPARE(view->modelCount(), 2);
        const nlohmann::json state = view->saveState();
        QCOMPARE(state["model"].get<std::string>(), QFileInfo(files[0]).absoluteFilePath().toStdString());
        QCOMPARE(state["layer"].get<int>(), 1);
        QCOMPARE(window.statusBar()->currentMessage(), QString());

        // A session refused after the attention view's part loads nothing.
        session["views"]["train"] = {{"steps", "many"}};
        const QString bad = writeFile(folder, QStringLiteral("bad.json"), QByteArray::fromStdString(session.dump()));
        MainWindow other;
        QVERIFY(!other.openSession(bad, &error));
        QCOMPARE(static_cast<AttentionView*>(other.view(QStringLiteral("attention")))->modelCount(), 0);

        // Saving another model over a checkpoint: the model that came from it is memory-only again.
        QCOMPARE(view->unsavedModelCount(), 0);
        QVERIFY2(view->saveModel(1, files[0], &error), qPrintable(error));
        QCOMPARE(view->unsavedModelCount(), 1);
        QCOMPARE(view->saveState()["checkpoints"],
                 nlohmann::json::array({QFileInfo(files[0]).absoluteFilePath().toStdString()}));
    }

    // The Train tab's preset and fields in a session: a preset's values, then the session's own; a value that differs
    // from the preset makes the run custom.
    void trainSession_data()
    {
        QTest::addColumn<QString>("state");  // views.train
        QTest::addColumn<QString>("preset"); // the tab's preset after opening
        QTest::addColumn<int>("steps");      // -1: the preset's
        QTest::addColumn<int>("layers");     // -1: the preset's
        QTest::addColumn<QString>("base");   // the preset the other values come from
        QTest::newRow("a preset") << R"({"preset": "quick"})"
                                  << "quick" << -1 << -1 << "quick";
        QTest::newRow("a preset with its own values") << R"({"preset": "tiny", "steps": 1500})"
                                                      << "tiny" << -1 << -1 << "tiny";
        QTest::newRow("a preset and an edit") << R"({"preset": "tiny", "steps": 40})"
                                              << "custom" << 40 << -1 << "tiny";
        QTest::newRow("custom") << R"({"preset": "custom", "steps": 30, "layers": 3})"
                                << "custom" << 30 << 3 << "demo";
        QTest::newRow("none: the demo") << R"({})"
                                        << "demo" << -1 << -1 << "demo";
    }
    void trainSession()
    {
        QFETCH(QString, state);
        QFETCH(QString, preset);
        QFETCH(int, steps);
        QFETCH(int, layers);
        QFETCH(QString, base);
        const nlohmann::json session{{"format", "positionlab-session"},
                                     {"version", 1},
                                     {"views", {{"train", nlohmann::json::parse(state.toStdString())}}}};
        const QString path = writeFile(m_dir, QStringLiteral("train.json"), QByteArray::fromStdString(session.dump()));
        MainWindow window;
        QString error;
        QVERIFY2(window.openSession(path, &error), qPrintable(error));
        auto* train = static_cast<TrainView*>(window.view(QStringLiteral("train")));
        QCOMPARE(train->preset(), preset);
        const Preset& p = presetByName(base.toStdString());
        const TrainRequest r = train->request();
        QCOMPARE(r.preset, preset);
        QCOMPARE(r.train.steps, steps < 0 ? p.steps : steps);
        QCOMPARE(r.model.layers, layers < 0 ? p.layers : layers);
        QCOMPARE(r.model.dModel, p.dModel);
        // And back out: the same state again.
        const nlohmann::json saved = train->saveState();
        QCOMPARE(QString::fromStdString(saved["preset"].get<std::string>()), preset);
        QCOMPARE(saved["steps"].get<int>(), r.train.steps);
        QCOMPARE(saved["layers"].get<int>(), r.model.layers);
    }

    // The "Evaluate under methods" page in a session: the ticked methods, every method's values and the page shown
    // come back in a fresh window. The restored values win over a model's defaults, whether the model was there
    // before the session opened or is the session's own checkpoint (loaded after the views are restored).
    void methodsSession_data()
    {
        QTest::addColumn<QStringList>("checked");
        QTest::addColumn<QStringList>("edits"); // METHOD:NAME=VALUE typed into the tree
        QTest::addColumn<bool>("methodsPage");
        QTest::addColumn<QString>("model"); // in the fresh window: none, before (offered first), checkpoint
        QTest::newRow("two methods, edited, methods page")
            << QStringList{QStringLiteral("none"), QStringLiteral("yarn")}
            << QStringList{QStringLiteral("yarn:factor=8"), QStringLiteral("yarn:beta-fast=16")} << true << "none";
        QTest::newRow("one method, runs page") << QStringList{QStringLiteral("rerope")}
                                               << QStringList{QStringLiteral("rerope:window=5")} << false << "none";
        QTest::newRow("nothing ticked, an unticked method edited")
            << QStringList{} << QStringList{QStringLiteral("pi:factor=3")} << true << "none";
        QTest::newRow("a rope model there before") << QStringList{QStringLiteral("pi"), QStringLiteral("ntk")}
                                                   << QStringList{QStringLiteral("pi:factor=2.5")} << true << "before";
        QTest::newRow("a refused value is left out") // the session still opens; factor comes back at its default
            << QStringList{QStringLiteral("pi")} << QStringList{QStringLiteral("pi:factor=0.5")} << true << "none";
        QTest::newRow("the session's rope checkpoint")
            << QStringList{QStringLiteral("yarn")} << QStringList{QStringLiteral("yarn:factor=6")} << true
            << "checkpoint";
    }
    void methodsSession()
    {
        QFETCH(QStringList, checked);
        QFETCH(QStringList, edits);
        QFETCH(bool, methodsPage);
        QFETCH(QString, model);
        const ModelConfig config = smallModelConfig("rope", 1);
        const QString sessionPath = m_dir.filePath(QStringLiteral("methods.json"));
        const QString file = QFileInfo(m_dir.filePath(QStringLiteral("methods-rope.safetensors"))).absoluteFilePath();
        QString error;
        nlohmann::json saved;
        {
            MainWindow window;
            if (model == QLatin1String("checkpoint")) {
                auto* attention = static_cast<AttentionView*>(window.view(QStringLiteral("attention")));
                attention->addModel(makeSharedModel(QStringLiteral("rope"), std::make_unique<Model>(config), {}));
                QVERIFY2(attention->saveModel(0, file, &error), qPrintable(error));
            }
            auto* train = static_cast<TrainView*>(window.view(QStringLiteral("train")));
            MethodsPanel* panel = train->methodsPanel();
            panel->setCheckedMethods(checked);
            for (const QString& edit : edits) {
                const QString method = edit.section(QLatin1Char(':'), 0, 0);
                const QString setting = edit.section(QLatin1Char(':'), 1);
                QVERIFY(panel->setParameterText(method, setting.section(QLatin1Char('='), 0, 0),
                                                setting.section(QLatin1Char('='), 1)));
            }
            train->showMethodsPage(methodsPage);
            saved = train->saveState();
            QVERIFY2(window.saveSession(sessionPath, &error), qPrintable(error));
        }
        QCOMPARE(saved["page"].get<std::string>(), std::string(methodsPage ? "methods" : "runs"));
        for (const QString& edit : edits) { // as NAME=VALUE strings per method; core's refused ones left out
            const std::string method = edit.section(QLatin1Char(':'), 0, 0).toStdString();
            const std::string setting = edit.section(QLatin1Char(':'), 1).toStdString();
            bool accepted = true;
            try {
                checkMethodChoice({method, {setting}});
            } catch (const InputError&) {
                accepted = false;
            }
            const nlohmann::json& settings = saved["methods"]["settings"][method];
            QVERIFY2((std::find(settings.begin(), settings.end(), setting) != settings.end()) == accepted,
                     settings.dump().c_str());
        }

        MainWindow window;
        auto* train = static_cast<TrainView*>(window.view(QStringLiteral("train")));
        MethodsPanel* panel = train->methodsPanel();
        if (model == QLatin1String("before"))
            train->addModel(makeSharedModel(QStringLiteral("rope"), std::make_unique<Model>(config), {}));
        const nlohmann::json defaults = panel->sessionState();
        QVERIFY2(window.openSession(sessionPath, &error), qPrintable(error));
        if (model != QLatin1String("none")) {
            QCOMPARE(panel->modelCount(), 1);
            QVERIFY(panel->currentModel().isValid());
        }
        // Every saved value comes back; one left out comes back at its default (without a model, the catalogue's).
        nlohmann::json expected = saved["methods"];
        for (const RotaryMethodInfo& method : rotaryMethodCatalog())
            if (expected["settings"][method.name].size() < method.params.size() && model == QLatin1String("none"))
                expected["settings"][method.name] = methodDefaultSettings(method, 0, 0);
        QCOMPARE(train->saveState()["methods"].dump(), expected.dump());
        QCOMPARE(train->saveState()["page"], saved["page"]);
        QStringList ticked;
        for (const MethodChoice& choice : panel->checkedMethods())
            ticked << QString::fromStdString(choice.method);
        QCOMPARE(ticked, checked);
        QCOMPARE(window.currentView()->viewId(), QStringLiteral("bias")); // the session's tab; the page is the view's
        // A model's defaults differ from the catalogue's: the restored values did win.
        if (model == QLatin1String("before"))
            QVERIFY(defaults["settings"] != saved["methods"]["settings"]);
    }

    // Sessions from before the methods page (no "methods", no "page") still open: every method ticked, the
    // defaults in every parameter, the training runs shown; whatever the window showed before is replaced.
    void methodsSessionDefaults_data()
    {
        QTest::addColumn<QString>("state");       // views.train
        QTest::addColumn<QStringList>("checked"); // empty: all
        QTest::addColumn<QString>("factor");      // pi's factor afterwards
        QTest::addColumn<bool>("methodsPage");
        QTest::newRow("no methods key") << R"({"preset": "quick"})" << QStringList{} << "4" << false;
        QTest::newRow("empty methods") << R"({"methods": {}, "page": "methods"})" << QStringList{} << "4" << true;
        QTest::newRow("ticks only") << R"({"methods": {"checked": ["ntk"]}})" << QStringList{QStringLiteral("ntk")}
                                    << "4" << false;
        QTest::newRow("one value only") << R"({"methods": {"settings": {"pi": ["factor=7"]}}})" << QStringList{} << "7"
                                        << false;
    }
    void methodsSessionDefaults()
    {
        QFETCH(QString, state);
        QFETCH(QStringList, checked);
        QFETCH(QString, factor);
        QFETCH(bool, methodsPage);
        const nlohmann::json session{{"format", "positionlab-session"},
                                     {"version", 1},
                                     {"views", {{"train", nlohmann::json::parse(state.toStdString())}}}};
        const QString path = writeFile(m_dir, QStringLiteral("old.json"), QByteArray::fromStdString(session.dump()));
        MainWindow window;
        auto* train = static_cast<TrainView*>(window.view(QStringLiteral("train")));
        MethodsPanel* panel = train->methodsPanel();
        panel->setCheckedMethods({QStringLiteral("rerope")});
        QVERIFY(panel->setParameterText(QStringLiteral("pi"), QStringLiteral("factor"), QStringLiteral("9")));
        train->showMethodsPage(!methodsPage);
        QString error;
        QVERIFY2(window.openSession(path, &error), qPrintable(error));
        QStringList all;
        for (const RotaryMethodInfo& method : rotaryMethodCatalog())
            all << QString::fromStdString(method.name);
        QStringList ticked;
        for (const MethodChoice& choice : panel->checkedMethods())
            ticked << QString::fromStdString(choice.method);
        QCOMPARE(ticked, checked.isEmpty() ? all : checked);
        const nlohmann::json saved = train->saveState();
        QCOMPARE(saved["methods"]["settings"]["pi"], nlohmann::json::array({"factor=" + factor.toStdString()}));
        QCOMPARE(saved["page"].get<std::string>(), std::string(methodsPage ? "methods" : "runs"));
    }

    void missingFile()
    {
        MainWindow window;
        QString error;
        QVERIFY(!window.openSession(m_dir.filePath(QStringLiteral("nope.json")), &error));
        QVERIFY(error.contains(QStringLiteral("cannot open")));
    }

    void corpus()
    {
        MainWindow window;
        QString error;
        const QString text = writeFile(m_dir, QStringLiteral("corpus.txt"), "To be, or not to be.\nÜber alles.\n");
        QVERIFY2(window.setCorpus(text, &error), qPrintable(error));
        QCOMPARE(window.corpus(), QFileInfo(text).absoluteFilePath());
        const QString binary = writeFile(m_dir, QStringLiteral("bin.dat"), QByteArray("\xff\xfe\x00\x81\xc3", 5));
        QVERIFY(!window.setCorpus(binary, &error));
        QVERIFY(error.contains(QStringLiteral("UTF-8")));
        QCOMPARE(window.corpus(), QFileInfo(text).absoluteFilePath());
        const QString empty = writeFile(m_dir, QStringLiteral("empty.txt"), QByteArray());
        QVERIFY(!window.setCorpus(empty, &error));
        // Dropping a text file makes it the corpus.
        const QString other = writeFile(m_dir, QStringLiteral("other.txt"), "hello\n");
        QVERIFY(window.acceptDrops());
        QVERIFY2(window.openDroppedFile(other, &error), qPrintable(error));
        QCOMPARE(window.corpus(), QFileInfo(other).absoluteFilePath());
    }

    void palettes()
    {
        MainWindow window;
        window.setDark(true);
        QVERIFY(QApplication::palette().color(QPalette::Window).lightness() < 100);
        QVERIFY(QApplication::palette().color(QPalette::WindowText).lightness() > 180);
        QCOMPARE(window.sessionState()["dark"].get<bool>(), true);
        window.setDark(false);
        QVERIFY(QApplication::palette().color(QPalette::Window).lightness() > 150);
    }

private:
    QTemporaryDir m_dir;
};

PLAB_QTEST_MAIN(TestUiSession)
#include "tst_ui_session.moc"
