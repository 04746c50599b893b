// The "Your model" tab (offscreen): a tiny Hugging Face folder opened as a user opens it, its summary card, the layer x
// head grid, a click on it, every page's export, and a folder the app refuses without stopping.
#include "tabs/heatmap_widget.h"
#include "tabs/hf_model_view.h"
#include "window/main_window.h"

#include "test_main.h"
#include "test_settings.h"

#include <QFile>
#include <QLabel>
#include <QTemporaryDir>
#include <QtTest>

using namespace plab::ui;

namespace {

QString hfData(const char* name)
{
    return QStringLiteral(POSITIONLAB_TEST_DATA "/hf/") + QString::fromLatin1(name);
}

QString cardValue(const HfModelView* view, const QString& label)
{
    for (const auto& [l, value] : view->summaryRows())
        if (l == label)
            return value;
    return QStringLiteral("(no row %1)").arg(label);
}

} // namespace

class TestUiHf : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() { plab::test::isolateSettings(QStringLiteral("tst_ui_hf")); }

    void opensAFolder_data()
    {
        QTest::addColumn<QString>("folder");
        QTest::addColumn<QString>("family");
        QTest::addColumn<int>("layers");
        QTest::addColumn<QString>("heads");
        QTest::addColumn<QString>("headDim");
        QTest::addColumn<QString>("context");
        QTest::addColumn<QString>("positions");
        QTest::addRow("qwen2, GQA 4/2, BF16") << "qwen2_text"
                                              << "qwen2" << 2 << "4 query, 2 key/value"
                                              << "8"
                                              << "32 tokens"
                                              << "rope";
    }

    void opensAFolder()
    {
        QFETCH(QString, folder);
        QFETCH(QString, family);
        QFETCH(int, layers);
        QFETCH(QString, heads);
        QFETCH(QString, headDim);
        QFETCH(QString, context);
        QFETCH(QString, positions);
        MainWindow window;
        window.resize(1400, 900);
        window.show();
        HfModelView* view = window.modelView();
        window.showView(view->viewId());
        QCOMPARE(window.currentView(), view);
        QVERIFY(!view->hasPicture()); // nothing before a folder is open, and the pages say what to do
        QVERIFY(view->heatmap()->isShowingHint());
        view->openFolder(hfData(folder.toUtf8().constData()));
        QTRY_VERIFY_WITH_TIMEOUT(view->hasPicture() && !view->isBusy(), 60000);

        QCOMPARE(cardValue(view, QStringLiteral("Family")), family);
        QCOMPARE(cardValue(view, QStringLiteral("Layers")), QString::number(layers));
        QCOMPARE(cardValue(view, QStringLiteral("Heads")), heads);
        QCOMPARE(cardValue(view, QStringLiteral("Head dim")), headDim);
        QCOMPARE(cardValue(view, QStringLiteral("Context")), context);
        QCOMPARE(cardValue(view, QStringLiteral("Positions")), positions);
        QVERIFY(cardValue(view, QStringLiteral("Parameters")).endsWith(QStringLiteral(" M")));
        QVERIFY(cardValue(view, QStringLiteral("Memory")).contains(QStringLiteral("MiB")));

        // One small map per layer and head; a click opens it.
        const int headCount = view->attention().capture->heads;
        QCOMPARE(view->grid()->layers(), layers);
        QCOMPARE(view->grid()->cellCount(), layers * headCount);
        QTest::mouseClick(view->grid(), Qt::LeftButton, {}, view->grid()->cellRect(layers - 1, headCount - 1).center());
        QTRY_VERIFY(view->map().request.layer == layers - 1 && view->map().request.head == headCount - 1 &&
                    !view->isBusy());
        // Tokens as decoded strings on both axes, one per cell, once they have room (the first 16 tokens; a long text
        // in a small plot shows positions).
        const int length = view->attention().capture->length;
        view->heatmap()->setTokenWindow(QRectF(0, 0, std::min(16, length), std::min(16, length)));
        const HeatmapFigure& figure = view->heatmap()->heatmap().figure();
        QCOMPARE(static_cast<int>(figure.tickLabels.size()), std::min(16, length));
        QCOMPARE(figure.tickLabels.front(), QStringLiteral("The"));
        // The sink column is out of the scale by default: it runs from 0 to the peak past the first token.
        QCOMPARE(figure.fixedLo, 0.0);
        QCOMPARE(figure.fixedHi, double(view->map().map->peakPastFirstKey));
        view->setSinkInScale(true);
        QCOMPARE(view->heatmap()->heatmap().figure().fixedHi, double(view->map().map->peak));
        // Zoomed in on the last 8 tokens: one cell per token, from a finer map of the window, tokens on the axes.
        const int T = view->attention().capture->length;
        view->heatmap()->setTokenWindow(QRectF(T - 8, T - 8, 8, 8));
        const plab::HfAttentionMap& shown = view->heatmap()->composedGeometry();
        QVERIFY(shown.perToken() && shown.colBegin == T - 8 && shown.colEnd == T);
        QCOMPARE(view->heatmap()->heatmap().figure().tickLabels.size(), size_t(8));
        view->resetZoom();
        QCOMPARE(view->heatmap()->tokenWindow(), QRectF(0, 0, T, T));

        // Every page exports its picture and its data.
        QTemporaryDir dir;
        for (HfModelView::Page page : {HfModelView::AttentionPage, HfModelView::EntropyPage, HfModelView::SinksPage}) {
            view->setPage(page);
            QVERIFY(view->hasPicture());
            for (const char* ext : {"png", "csv", "json"}) {
                const QString path = dir.filePath(QStringLiteral("page%1.%2").arg(int(page)).arg(ext));
                QString error;
                QVERIFY2(window.exportCurrent(path, {}, &error), qPrintable(error));
                QVERIFY(QFile(path).size() > 0);
            }
        }
    }

    // Evaluate under methods on a text file: one curve per method, or core's message (never a crash).
    void evaluatesUnderMethods()
    {
        MainWindow window;
        HfModelView* view = window.modelView();
        window.showView(view->viewId());
        view->openFolder(hfData("qwen2_text"));
        QTRY_VERIFY_WITH_TIMEOUT(view->hasPicture() && !view->isBusy(), 60000);
        QTemporaryDir dir;
        const QString text = dir.filePath(QStringLiteral("text.txt"));
        QFile file(text);
        QVERIFY(file.open(QIODevice::WriteOnly));
        for (int i = 0; i < 40; ++i)
            file.write("The quick brown fox jumps over the lazy dog, and the dog sleeps on. ");
        file.close();
        view->setPage(HfModelView::MethodsPage);
        view->setMethodsTextFile(text);
        view->setMethodsLengths(QStringLiteral("16,32,64"));
        view->evaluateMethods();
        QTRY_VERIFY_WITH_TIMEOUT(!view->isBusy(), 120000);
        const HfMethodsResult& r = view->methodsResult();
        QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
        // the config's own (none here), pi, ntk, dynamic-ntk, yarn, llama3, and rerope, leaky-rerope unless core
        // refuses them for real models (then left out with its message)
        QVERIFY2(r.curves.size() + r.leftOut.size() >= 8,
                 qPrintable(QStringLiteral("%1 curves; %2")
                                .arg(r.curves.size())
                                .arg(view->findChild<QLabel*>(QStringLiteral("methodsStatus"))->text())));
        QVERIFY(r.curves.size() >= 6);
        for (const plab::MethodCurve& c : r.curves)
            QCOMPARE(c.points.size(), size_t(3));
        for (const QString& message : r.leftOut)
            QVERIFY2(message.contains(QStringLiteral("rerope")), qPrintable(message));
        QVERIFY(view->hasPicture());
        QString error;
        QVERIFY2(window.exportCurrent(dir.filePath(QStringLiteral("methods.csv")), {}, &error), qPrintable(error));
        QVERIFY2(window.exportCurrent(dir.filePath(QStringLiteral("methods.svg")), {}, &error), qPrintable(error));
    }

    void refusedFolderKeepsTheAppRunning_data()
    {
        QTest::addColumn<QString>("folder");
        QTest::addColumn<QString>("expected");
        QTest::addRow("no tokenizer.json") << hfData("qwen3") << "tokenizer.json";
        QTest::addRow("no config.json") << QStringLiteral(POSITIONLAB_TEST_DATA "/tokenizers/gpt2") << "config.json";
    }

    void refusedFolderKeepsTheAppRunning()
    {
        QFETCH(QString, folder);
        QFETCH(QString, expected);
        MainWindow window;
        HfModelView* view = window.modelView();
        window.showView(view->viewId());
        view->openFolder(folder);
        QTRY_VERIFY_WITH_TIMEOUT(!view->isBusy(), 60000);
        QVERIFY(!view->model());
        QVERIFY(view->summaryRows().empty());
        const QString shown = view->summaryCard()->findChild<QLabel*>()->text();
        QVERIFY2(shown.contains(expected), qPrintable(shown));
    }
};

PLAB_QTEST_MAIN(TestUiHf)
#include "tst_ui_hf.moc"
