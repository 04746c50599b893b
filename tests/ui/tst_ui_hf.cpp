// The "Your model" tab (offscreen): a tiny Hugging Face folder opened as a user opens it, its summary card, the layer x
// head grid, a click on it, every page's export, a folder the app refuses without stopping, the precision chooser
// (BF16 against float32) and the session's precision and zoom window.
#include "tabs/heatmap_widget.h"
#include "tabs/hf_model_view.h"
#include "tabs/retrieval_page.h"
#include "tabs/scaling_layers_combo.h"
#include "window/main_window.h"

#include "compare.h"
#include "test_main.h"
#include "test_settings.h"

#include "base/errors.h"
#include "hf/hf_attention.h"
#include "hf/hf_config.h"
#include "hf/hf_model.h"
#include "hf/hf_products.h"
#include "model/corpus.h"
#include "runs/retrieval_runs.h"
#include "schemes/rotary_scaling.h"

#include <QComboBox>
#include <QFile>
#include <QLabel>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QTemporaryDir>
#include <QtTest>

#include <sstream>

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

// Core's answer: does this CPU run `precision`'s products natively?
bool coreRuns(plab::HfPrecision precision)
{
    try {
        plab::checkHfPrecisionSupported(precision);
        return true;
    } catch (const plab::InputError&) {
        return false;
    }
}

// One of the tab's computed quantities, every value of it.
std::vector<double> quantity(const HfModelView* view, const QString& which)
{
    const plab::HfAttentionCapture& c = *view->attention().capture;
    if (which == QLatin1String("sinks"))
        return c.sinkMass;
    if (which == QLatin1String("entropy"))
        return plab::hfEntropyByPosition(c);
    std::vector<double> values; // every layer and head's exact map, the pairs a query sees
    for (int l = 0; l < c.layers; ++l)
        for (int h = 0; h < c.heads; ++h) {
            const plab::HfAttentionMap map = plab::hfAttentionMap(c, l, h, c.length);
            for (float v : map.values)
                if (std::isfinite(v))
                    values.push_back(v);
        }
    return values;
}

// The Your model tab of `window`, shown, opening the test folder `name` (in the background).
HfModelView* openInTab(MainWindow& window, const char* name)
{
    HfModelView* view = window.modelView();
    window.showView(view->viewId());
    view->openFolder(hfData(name));
    return view;
}

bool waitForModel(HfModelView* view, plab::HfPrecision precision)
{
    return QTest::qWaitFor(
        [&] {
            return view->model() && view->model()->model->precision() == precision && view->hasPicture() &&
                   !view->isBusy();
        },
        60000);
}

} // namespace

class TestUiHf : public QObject {
    Q_OBJECT

private slots:
    // The Retrieval page (issue 30): the estimate shows before a run; Run gives core's runRetrieval on the page's
    // options (the default corpus as haystack, the layer types the methods reach included), cell for cell; Cancel
    // stops a run and says so.
    void retrievalPageIsCoresRun()
    {
        MainWindow window;
        HfModelView* view = openInTab(window, "qwen2_text");
        QTRY_VERIFY_WITH_TIMEOUT(view->hasPicture() && !view->isBusy(), 60000);
        view->setPage(HfModelView::RetrievalTab);
        RetrievalPage* page = view->retrievalPage();
        page->setInputs(QStringLiteral("170,220"), QStringLiteral("0,1"));
        page->scalingLayers()->setLayers(plab::HfScalingLayers::All);
        const QString estimate = page->findChild<QLabel*>(QStringLiteral("retrievalEstimate"))->text();
        QVERIFY2(estimate.contains(QStringLiteral("Estimate: about")), qPrintable(estimate));
        const plab::RetrievalOptions options = page->options();
        QCOMPARE(options.scalingLayers, plab::HfScalingLayers::All);
        QCOMPARE(options.methods.size(), size_t(2)); // none and yarn, ticked by default
        page->run();
        QTRY_VERIFY_WITH_TIMEOUT(!page->isBusy(), 120000);
        QVERIFY2(page->hasResults(), qPrintable(page->status()->text()));
        std::ostringstream shown, core;
        page->writeData(shown, plab::DataFormat::Json, nlohmann::json::object());
        const plab::Corpus corpus = plab::loadDefaultCorpus();
        const plab::RetrievalGenerator generator(*view->model()->tokenizer, plab::retrievalHaystack(corpus),
                                                 corpus.source);
        const plab::RetrievalRun run = plab::runRetrieval(*view->model()->model, generator, options, {});
        QCOMPARE(run.cells.size(), size_t(2 * 2 * 2)); // methods x lengths x depths
        plab::writeRetrievalRun(core, plab::DataFormat::Json, run,
                                {{"task", plab::retrievalTaskInfo(options.kind).name}, {"examples", options.examples}});
        QCOMPARE(QString::fromStdString(shown.str()), QString::fromStdString(core.str()));
        // A longer run, canceled at once: the page is idle again and says how long it ran.
        page->setInputs(QStringLiteral("1000,1500,2000,2500"), QStringLiteral("0,0.2,0.4,0.6,0.8,1"));
        page->run();
        QVERIFY(page->isBusy());
        page->cancel();
        QTRY_VERIFY_WITH_TIMEOUT(!page->isBusy(), 60000);
        QVERIFY2(page->status()->text().startsWith(QStringLiteral("Canceled after ")),
                 qPrintable(page->status()->text()));
    }

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
        HfModelView* view = openInTab(window, "qwen2_text");
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
        QStringList every{QString()}; // the config's own, then every method of the catalogue
        for (const plab::RotaryMethodInfo& m : plab::rotaryMethodCatalog())
            every << QString::fromStdString(m.name);
        view->setMethodsChecked(every);
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

    // The page's defaults are core's (methodComparisonDefaults), the cost model's estimate shows before anything runs,
    // and each method's curve appears as soon as it is done, not all at the end.
    void methodsDefaultsAndCurvesAsTheyCome()
    {
        MainWindow window;
        HfModelView* view = openInTab(window, "qwen2_text");
        QTRY_VERIFY_WITH_TIMEOUT(view->hasPicture() && !view->isBusy(), 60000);
        const plab::MethodComparisonDefaults d = hfMethodsDefaults(view->model()->model->config());
        QStringList expected{QString()};
        for (const std::string& m : d.methods)
            expected << QString::fromStdString(m);
        QStringList checked = view->methodsChecked();
        checked.sort();
        expected.sort();
        QCOMPARE(checked, expected);
        const QString estimate = view->findChild<QLabel*>(QStringLiteral("methodsEstimate"))->text();
        QVERIFY2(estimate.startsWith(QStringLiteral("Estimate: about ")), qPrintable(estimate));
        view->setPage(HfModelView::MethodsPage);
        std::vector<size_t> shown; // the curves on the chart at each new picture
        connect(view, &ViewBase::pictureUpdated, this, [&] { shown.push_back(view->methodsCurvesShown().size()); });
        view->evaluateMethods();
        QTRY_VERIFY_WITH_TIMEOUT(!view->isBusy(), 120000);
        const HfMethodsResult& r = view->methodsResult();
        QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
        QCOMPARE(r.request.lengths, d.lengths);
        QCOMPARE(r.curves.size(), static_cast<size_t>(expected.size()));
        for (size_t k = 1; k <= r.curves.size(); ++k) // 1, 2, 3 curves, each shown when its method was done
            QVERIFY2(std::find(shown.begin(), shown.end(), k) != shown.end(), qPrintable(QString::number(k)));
    }

    // On the methods page, choosing BF16 evaluates again in it: every (method, length) loss moves, by less than the
    // README's 0.05 nats, and the export says bf16.
    void methodsFollowThePrecision_data()
    {
        QTest::addColumn<QString>("lengths");
        QTest::addRow("inside and past the context") << "16,64";
    }

    void methodsFollowThePrecision()
    {
        QFETCH(QString, lengths);
        if (!coreRuns(plab::HfPrecision::BFloat16))
            QSKIP("this CPU lacks avx512_bf16");
        MainWindow window;
        HfModelView* view = openInTab(window, "qwen2_text");
        QVERIFY(waitForModel(view, plab::HfPrecision::Float32));
        QTemporaryDir dir;
        const QString text = dir.filePath(QStringLiteral("text.txt"));
        QFile file(text);
        QVERIFY(file.open(QIODevice::WriteOnly));
        for (int i = 0; i < 40; ++i)
            file.write("The quick brown fox jumps over the lazy dog, and the dog sleeps on. ");
        file.close();
        view->setPage(HfModelView::MethodsPage);
        view->setMethodsTextFile(text);
        view->setMethodsLengths(lengths);
        view->evaluateMethods();
        QTRY_VERIFY_WITH_TIMEOUT(!view->isBusy(), 120000);
        QVERIFY2(!view->methodsResult().curves.empty(),
                 qPrintable(view->findChild<QLabel*>(QStringLiteral("methodsStatus"))->text()));
        const std::vector<plab::MethodCurve> f32 = view->methodsResult().curves;
        view->setPrecision(plab::HfPrecision::BFloat16);
        QTRY_VERIFY_WITH_TIMEOUT(!view->isBusy() && view->methodsResult().request.model &&
                                     view->methodsResult().request.model->model->precision() ==
                                         plab::HfPrecision::BFloat16,
                                 120000);
        const std::vector<plab::MethodCurve>& bf16 = view->methodsResult().curves;
        QCOMPARE(bf16.size(), f32.size());
        plab::test::ErrorMax largest;
        for (size_t c = 0; c < f32.size(); ++c) {
            QCOMPARE(bf16[c].points.size(), f32[c].points.size());
            for (size_t i = 0; i < f32[c].points.size(); ++i)
                largest.add(bf16[c].points[i].loss, f32[c].points[i].loss);
        }
        qInfo("max |loss bf16 - loss f32| over methods and lengths = %.4f nats", largest.value());
        QVERIFY2(largest.finite() && largest.value() > 0,
                 qPrintable(largest.message("identical losses (the BF16 products never ran) or non-finite")));
        QVERIFY2(largest.within(0.05), qPrintable(largest.message()));
        const QString csv = dir.filePath(QStringLiteral("methods.json"));
        QString error;
        QVERIFY2(window.exportCurrent(csv, {}, &error), qPrintable(error));
        QFile exported(csv);
        QVERIFY(exported.open(QIODevice::ReadOnly));
        QVERIFY(exported.readAll().contains("bf16"));
    }

    // The BF16 item is enabled exactly when core's CPU check passes, and says core's message when it does not.
    void precisionItemFollowsCore_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addRow("f32") << "f32";
        QTest::addRow("bf16") << "bf16";
    }

    void precisionItemFollowsCore()
    {
        QFETCH(QString, name);
        MainWindow window;
        const QComboBox* choice = window.modelView()->precisionChoice();
        const int index = choice->findData(name);
        QVERIFY(index >= 0);
        const QStandardItem* item = qobject_cast<const QStandardItemModel*>(choice->model())->item(index);
        const plab::HfPrecision precision = plab::hfPrecisionFromName(name.toStdString());
        QCOMPARE(item->isEnabled(), coreRuns(precision));
        QCOMPARE(choice->currentIndex() == index, precision == plab::HfPrecision::Float32); // float32 by default
        if (!coreRuns(precision)) {
            QVERIFY(item->toolTip().contains(QStringLiteral("avx512_bf16")));
            QVERIFY_THROWS_EXCEPTION(plab::InputError, window.modelView()->setPrecision(precision));
        }
    }

    // Choosing BF16 reloads the model and recomputes the page: every quantity moves, by a small nonzero amount within
    // the README's BF16 tolerance (3 % of the float32 values' largest magnitude), the head and zoom window stay, and
    // the card and the exports say which precision computed them.
    void bf16ChangesTheTabSlightly_data()
    {
        QTest::addColumn<QString>("which");
        QTest::addRow("attention maps") << "attention";
        QTest::addRow("sinks") << "sinks";
        QTest::addRow("entropy") << "entropy";
    }

    void bf16ChangesTheTabSlightly()
    {
        QFETCH(QString, which);
        if (!coreRuns(plab::HfPrecision::BFloat16))
            QSKIP("this CPU lacks avx512_bf16 (precisionItemFollowsCore checks the item)");
        MainWindow window;
        HfModelView* view = openInTab(window, "qwen2_text");
        QVERIFY(waitForModel(view, plab::HfPrecision::Float32));
        QCOMPARE(cardValue(view, QStringLiteral("Precision")), QStringLiteral("Float32"));
        const double f32Weights = view->model()->model->weightBytes();
        const std::vector<double> f32 = quantity(view, which);
        view->setLayerHead(1, 2);
        QTRY_VERIFY(view->map().request.head == 2 && !view->isBusy());
        view->heatmap()->setTokenWindow(QRectF(4, 6, 10, 10));

        view->precisionChoice()->setCurrentIndex(view->precisionChoice()->findData(QStringLiteral("bf16")));
        QCOMPARE(view->precision(), plab::HfPrecision::BFloat16);
        QVERIFY(waitForModel(view, plab::HfPrecision::BFloat16));
        const std::vector<double> bf16 = quantity(view, which);
        QCOMPARE(bf16.size(), f32.size());
        double largest = 0;
        for (double x : f32)
            largest = std::max(largest, std::abs(x));
        const plab::test::ErrorMax difference = plab::test::maxError(bf16, f32);
        qInfo("%s: max |bf16 - f32| = %.3g, %.3f %% of max |f32| %.3g", qPrintable(which), difference.value(),
              100 * difference.value() / largest, largest);
        QVERIFY2(difference.value() > 0,
                 qPrintable(difference.message("identical values (the BF16 products never ran)")));
        QVERIFY2(difference.within(0.03 * largest),
                 qPrintable(difference.message() + QString(" of max |f32| %1").arg(largest)));

        QCOMPARE(view->map().request.layer, 1);
        QCOMPARE(view->map().request.head, 2);
        QCOMPARE(view->heatmap()->tokenWindow(), QRectF(4, 6, 10, 10));
        QCOMPARE(cardValue(view, QStringLiteral("Precision")), QStringLiteral("BFloat16 products"));
        QCOMPARE(view->model()->model->weightBytes(), f32Weights / 2);
        QVERIFY(cardValue(view, QStringLiteral("Memory")).contains(QStringLiteral("BF16 weights")));
        QVERIFY(view->heatmap()->heatmap().figure().panels.front().subtitle.contains(QStringLiteral("BF16")));
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("map.json"));
        QString error;
        QVERIFY2(window.exportCurrent(path, {}, &error), qPrintable(error));
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const nlohmann::json exported = nlohmann::json::parse(file.readAll().toStdString());
        QCOMPARE(exported.value("precision", std::string()), std::string("bf16"));
    }

    // The precision and the zoom window go into the session and come back in a fresh window, which opens the folder
    // afterwards (the session's window waits for the text's tokens).
    void sessionKeepsPrecisionAndZoom_data()
    {
        QTest::addColumn<QString>("precision");
        QTest::addColumn<QRectF>("zoom"); // empty: every token shown, no window saved
        QTest::addRow("f32, zoomed") << "f32" << QRectF(4, 6, 12, 12);
        QTest::addRow("bf16, zoomed and panned") << "bf16" << QRectF(20.5, 3.25, 9.5, 9.5);
        QTest::addRow("bf16, every token") << "bf16" << QRectF();
    }

    void sessionKeepsPrecisionAndZoom()
    {
        QFETCH(QString, precision);
        QFETCH(QRectF, zoom);
        const plab::HfPrecision p = plab::hfPrecisionFromName(precision.toStdString());
        if (!coreRuns(p))
            QSKIP("this CPU lacks avx512_bf16");
        nlohmann::json session;
        int T = 0;
        {
            MainWindow window;
            HfModelView* view = window.modelView();
            window.showView(view->viewId());
            view->setText(QStringLiteral("The quick brown fox jumps over the lazy dog."));
            view->setPrecision(p);
            view->openFolder(hfData("qwen2_text"));
            QVERIFY(waitForModel(view, p));
            view->setRepeatTo(48);
            QVERIFY(QTest::qWaitFor([&] { return view->attention().capture->length == 48 && !view->isBusy(); }));
            T = view->attention().capture->length;
            if (!zoom.isEmpty())
                view->heatmap()->setTokenWindow(zoom);
            session = window.sessionState();
            const nlohmann::json& state = session["views"]["model"];
            QCOMPARE(QString::fromStdString(state["precision"].get<std::string>()), precision);
            QCOMPARE(state.contains("token_window"), !zoom.isEmpty());
        }
        MainWindow window;
        HfModelView* view = window.modelView();
        window.applySession(session);
        QCOMPARE(view->precision(), p);
        window.showView(view->viewId());
        view->openFolder(hfData("qwen2_text"));
        QVERIFY(waitForModel(view, p));
        QCOMPARE(view->attention().capture->length, T);
        QCOMPARE(view->heatmap()->tokenWindow(), zoom.isEmpty() ? QRectF(0, 0, T, T) : zoom);
        QVERIFY2(view->note().isEmpty(), qPrintable(view->note()));
    }

    // A saved window the text does not reach is clipped or dropped, with a note; never a crash.
    void savedWindowPastTheText_data()
    {
        QTest::addColumn<QRectF>("saved"); // x keys, y queries, in tokens; the text has 48
        QTest::addColumn<QRectF>("shown");
        QTest::addColumn<QString>("note");
        QTest::addRow("inside") << QRectF(8, 8, 16, 16) << QRectF(8, 8, 16, 16) << "";
        QTest::addRow("reaches past the end") << QRectF(40, 40, 30, 30) << QRectF(40, 40, 8, 8) << "clipped";
        QTest::addRow("beyond the end") << QRectF(100, 100, 20, 20) << QRectF(0, 0, 48, 48) << "lies past";
        QTest::addRow("queries beyond the end") << QRectF(10, 60, 10, 10) << QRectF(0, 0, 48, 48) << "lies past";
    }

    void savedWindowPastTheText()
    {
        QFETCH(QRectF, saved);
        QFETCH(QRectF, shown);
        QFETCH(QString, note);
        MainWindow window;
        HfModelView* view = window.modelView();
        nlohmann::json state = view->saveState();
        state["text"] = "The quick brown fox jumps over the lazy dog.";
        state["repeat_to"] = 48;
        state["token_window"] = {{"keys", {saved.left(), saved.right()}}, {"queries", {saved.top(), saved.bottom()}}};
        view->restoreState(state);
        window.showView(view->viewId());
        view->openFolder(hfData("qwen2_text"));
        QVERIFY(waitForModel(view, plab::HfPrecision::Float32));
        QCOMPARE(view->attention().capture->length, 48);
        QCOMPARE(view->heatmap()->tokenWindow(), shown);
        if (note.isEmpty())
            QVERIFY2(view->note().isEmpty(), qPrintable(view->note()));
        else
            QVERIFY2(view->note().contains(note), qPrintable(view->note()));
        QVERIFY(view->findChild<QLabel*>(QStringLiteral("hfNote"))->isVisibleTo(view) == !note.isEmpty());
    }

    // Positions chosen in the tab reach the capture of the attention, entropy and sinks pages: core's capture of the
    // same ids under hfPositionSpec(config, method, settings), row for row, and not the config's own.
    void positionsUnderAMethod_data()
    {
        QTest::addColumn<QString>("method");
        QTest::addColumn<QStringList>("settings");
        QTest::addColumn<bool>("moves"); // qwen2_text's own scaling is none: naming none changes nothing
        QTest::addRow("yarn factor 4 past the context") << "yarn" << QStringList{"factor=4"} << true;
        QTest::addRow("pi factor 2") << "pi" << QStringList{"factor=2"} << true;
        QTest::addRow("ntk factor 8") << "ntk" << QStringList{"factor=8"} << true;
        QTest::addRow("llama3, defaults") << "llama3" << QStringList{} << true;
        QTest::addRow("none, the config's own") << "none" << QStringList{} << false;
    }

    void positionsUnderAMethod()
    {
        QFETCH(QString, method);
        QFETCH(QStringList, settings);
        QFETCH(bool, moves);
        MainWindow window;
        HfModelView* view = openInTab(window, "qwen2_text");
        QTRY_VERIFY_WITH_TIMEOUT(view->hasPicture() && !view->isBusy(), 60000);
        QVERIFY(view->positionsBox()->isEnabled());
        const int context = view->model()->model->config().context;
        view->setText(QStringLiteral("The quick brown fox jumps over the lazy dog."));
        view->findChild<QSpinBox*>()->setValue(3 * context); // Repeat to: past the context
        QTRY_VERIFY_WITH_TIMEOUT(
            !view->isBusy() && view->attention().capture && view->attention().capture->length == 3 * context, 60000);
        const std::vector<double> own = view->attention().capture->sinkMass;
        view->setPositions(method, settings);
        QTRY_VERIFY_WITH_TIMEOUT(!view->isBusy() && view->attention().request.positions.has_value(), 60000);
        QCOMPARE(view->positionsMethod(), method);
        std::vector<std::string> given;
        for (const QString& s : settings)
            given.push_back(s.toStdString());
        const plab::HfModel& model = *view->model()->model;
        const plab::SchemeSpec expected = plab::hfPositionSpec(model.config(), method.toStdString(), given);
        const plab::HfAttentionCapture reference =
            plab::captureHfAttention(model, view->attention().ids, expected, false);
        const plab::HfAttentionCapture& shown = *view->attention().capture;
        QCOMPARE(shown.sinkMass.size(), reference.sinkMass.size());
        for (size_t i = 0; i < shown.sinkMass.size(); ++i)
            QVERIFY2(
                std::abs(shown.sinkMass[i] - reference.sinkMass[i]) <= 1e-9,
                qPrintable(
                    QStringLiteral("sink %1: %2 against %3").arg(i).arg(shown.sinkMass[i]).arg(reference.sinkMass[i])));
        for (int l = 0; l < shown.layers; ++l)
            QCOMPARE(shown.rowEntropy[l], reference.rowEntropy[l]);
        const plab::test::ErrorMax moved = plab::test::maxError(own, shown.sinkMass);
        QVERIFY2(moved.finite() && (moved.value() > 1e-6) == moves, qPrintable(moved.message("the sinks moved")));
        // The picture names the positions; the exported data says them as core writes them.
        QVERIFY(view->heatmap()->heatmap().figure().panels.front().subtitle.contains(
            QString::fromStdString(plab::hfPositionText(expected))));
        QTemporaryDir dir;
        QString error;
        QVERIFY2(window.exportCurrent(dir.filePath(QStringLiteral("map.json")), {}, &error), qPrintable(error));
        QFile file(dir.filePath(QStringLiteral("map.json")));
        QVERIFY(file.open(QIODevice::ReadOnly));
        QVERIFY(file.readAll().contains(QByteArray::fromStdString(plab::hfPositionText(expected))));
        // The session keeps the method and its shown parameters; a fresh window restores them.
        const nlohmann::json state = view->saveState();
        MainWindow other;
        other.modelView()->restoreState(state);
        QCOMPARE(other.modelView()->positionsMethod(), method);
        QCOMPARE(other.modelView()->positionsSettings(), view->positionsSettings());
    }

    void positionsRefused_data()
    {
        QTest::addColumn<QString>("method");
        QTest::addColumn<QStringList>("settings");
        QTest::addColumn<QString>("expected");
        QTest::addRow("unknown method") << "magic" << QStringList{}
                                        << "views.model.positions: scaling = 'magic' is not a known method";
        QTest::addRow("a setting yarn lacks") << "yarn" << QStringList{"window=4"} << "views.model.positions: ";
        QTest::addRow("out of range") << "pi" << QStringList{"factor=0.5"} << "views.model.positions: ";
        QTest::addRow("settings without a method") << "" << QStringList{"factor=2"} << "settings need a method";
        QTest::addRow("a remapping method") << "self-extend" << QStringList{} << "the attention maps cannot draw";
    }

    // A session's bad positions are refused by core's checks, naming the key, and leave the tab as it was.
    void positionsRefused()
    {
        QFETCH(QString, method);
        QFETCH(QStringList, settings);
        QFETCH(QString, expected);
        MainWindow window;
        HfModelView* view = window.modelView();
        nlohmann::json state = view->saveState();
        std::vector<std::string> list;
        for (const QString& s : settings)
            list.push_back(s.toStdString());
        state["positions"] = {{"method", method.toStdString()}, {"settings", list}};
        try {
            view->restoreState(state);
            QFAIL("restored bad positions");
        } catch (const plab::InputError& e) {
            QVERIFY2(QString::fromStdString(e.what()).contains(expected), e.what());
        }
        QCOMPARE(view->positionsMethod(), QString());
    }

    // A model without rotary positions offers no method, and says why in core's words.
    void positionsNeedRope()
    {
        MainWindow window;
        HfModelView* view = openInTab(window, "gpt2");
        QTRY_VERIFY_WITH_TIMEOUT(view->model() && !view->isBusy(), 60000);
        QVERIFY(!view->positionsBox()->isEnabled());
        QVERIFY2(view->positionsBox()->toolTip().contains(QStringLiteral("rotary methods apply to rope models only")),
                 qPrintable(view->positionsBox()->toolTip()));
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
