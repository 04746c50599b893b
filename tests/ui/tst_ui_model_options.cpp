// The Train tab's model options (NoPE schedule, Llama 4 temperature, SSMax, sink logit) and the Bias tab's FIRE curve.
#include "charts/curve_chart.h"
#include "tabs/bias_view.h"
#include "tabs/train_view.h"
#include "window/lessons_panel.h"
#include "window/main_window.h"
#include "workers/model_compute.h"
#include "tabs/scheme_panel.h"

#include "base/errors.h"
#include "model/model.h"
#include "model_configs.h"
#include "test_main.h"
#include "test_settings.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QLineEdit>
#include <QSpinBox>
#include <QTableWidget>
#include <QtTest>

#include <sstream>

using namespace plab;
using namespace plab::ui;

namespace {

// A fire model whose learned curve differs from its prior by a known shift: b2 of every head raised by `shift`.
SharedModel shiftedFireModel(double shift)
{
    auto model = std::make_unique<Model>(smallModelConfig("fire", 1, 16, 2, 32, 16));
    const ParameterTensor& b2 = model->tensor("scheme.fire_b2");
    for (size_t i = 0; i < b2.size; ++i)
        model->parameters()[b2.offset + i] += static_cast<float>(shift);
    model->parametersChanged();
    return makeSharedModel(QStringLiteral("fire (test)"), std::move(model), {});
}

} // namespace

class TestUiModelOptions : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { plab::test::isolateSettings(QStringLiteral("tst_ui_model_options")); }

    void requestCarriesTheOptions()
    {
        TrainView view;
        // Core's defaults in the fields, every option off.
        const AttentionTemperature defaults;
        QCOMPARE(view.floorScaleBox()->value(), defaults.floorScale);
        QCOMPARE(view.attnScaleBox()->value(), defaults.attnScale);
        QCOMPARE(view.nopeEveryBox()->value(), view.nopeEveryBox()->minimum()); // "off"
        QVERIFY(!view.floorScaleBox()->isEnabled());
        TrainRequest plain = view.request();
        QCOMPARE(plain.model.nopeEvery, 0);
        QVERIFY(!plain.model.temperature.tuning && !plain.model.ssmax && !plain.model.sinkLogit);

        view.nopeEveryBox()->setValue(2);
        view.temperatureBox()->setChecked(true);
        QVERIFY(view.floorScaleBox()->isEnabled());
        view.floorScaleBox()->setValue(32);
        view.attnScaleBox()->setValue(0.25);
        view.ssmaxBox()->setChecked(true);
        view.sinkLogitBox()->setChecked(true);
        QCOMPARE(view.preset(), QStringLiteral("custom")); // a hand edit
        const TrainRequest r = view.request();
        QCOMPARE(r.model.nopeEvery, 2);
        QVERIFY(r.model.temperature.tuning);
        QCOMPARE(r.model.temperature.floorScale, 32.0);
        QCOMPARE(r.model.temperature.attnScale, 0.25);
        QVERIFY(r.model.ssmax && r.model.sinkLogit);

        // A session brings them back; a bad value is refused naming it.
        TrainView restored;
        restored.restoreState(view.saveState());
        QCOMPARE(restored.request().model.nopeEvery, 2);
        QCOMPARE(restored.request().model.temperature, r.model.temperature);
        QVERIFY(restored.request().model.ssmax && restored.request().model.sinkLogit);
        nlohmann::json bad = view.saveState();
        bad["floor_scale"] = 0.5;
        QVERIFY_THROWS_EXCEPTION(InputError, restored.restoreState(bad));
        bad = view.saveState();
        bad["nope_every"] = 1;
        QVERIFY_THROWS_EXCEPTION(InputError, restored.restoreState(bad));

        view.setPreset(QStringLiteral("demo")); // a preset is a plain model again
        QCOMPARE(view.request().model.nopeEvery, 0);
        QVERIFY(!view.ssmaxBox()->isChecked() && !view.temperatureBox()->isChecked());
    }

    void scheduleNoteSaysWhatTheScheduleDoes_data()
    {
        QTest::addColumn<int>("layers");
        QTest::addColumn<int>("every");
        QTest::addColumn<QString>("expected");
        QTest::newRow("off") << 4 << 1 << "Every layer uses the ticked scheme";
        QTest::newRow("every 2 of 4") << 4 << 2 << "NoPE layers: 2, 4 of 4";
        QTest::newRow("every 4 of 8") << 8 << 4 << "NoPE layers: 4, 8 of 8";
        QTest::newRow("fewer layers than K") << 2 << 4 << "fewer than K = 4: no layer would be NoPE";
    }
    void scheduleNoteSaysWhatTheScheduleDoes()
    {
        QFETCH(int, layers);
        QFETCH(int, every);
        QFETCH(QString, expected);
        TrainView view;
        view.findChild<QSpinBox*>(QStringLiteral("layers"))->setValue(layers);
        view.nopeEveryBox()->setValue(every);
        QVERIFY2(view.scheduleNote()->text().contains(expected), qPrintable(view.scheduleNote()->text()));
    }

    void badCombinationIsRefusedWithCoresMessage()
    {
        TrainView view;
        TrainRequest r = view.request();
        r.schemes = {"rope"};
        r.model.layers = 2;
        r.model.nopeEvery = 4; // more than the layers: core refuses it, naming the field and what is allowed
        view.start(r);
        QVERIFY(!view.isBusy());
        QVERIFY2(view.statusText().contains("nope-every = 4 is out of range; allowed: 0 (off) or integers in [2, 2]"),
                 qPrintable(view.statusText()));
        r.model.nopeEvery = 2;
        r.schemes = {"rope", "alibi"}; // the schedule needs a rotary scheme on the other layers
        view.start(r);
        QVERIFY(!view.isBusy());
        QVERIFY2(view.statusText().startsWith("alibi cannot train: nope-every = 2 needs a rotary scheme"),
                 qPrintable(view.statusText()));
    }

    void rowsNameTheModelOptions()
    {
        TrainView view;
        TrainRequest r = view.request();
        r.schemes = {"rope"};
        r.model.nopeEvery = 2;
        r.model.ssmax = true;
        r.train.steps = 2;
        view.start(r);
        QVERIFY(view.isBusy());
        // Before any result the table shows the run's row, named with its options.
        QCOMPARE(view.table()->item(0, 0)->text(), QStringLiteral("rope nope_every=2 ssmax"));
        QCOMPARE(view.runLabel("rope"), QStringLiteral("rope nope_every=2 ssmax"));
        ModelConfig all;
        all.nopeEvery = 4;
        all.temperature.tuning = true;
        all.ssmax = all.sinkLogit = true;
        QCOMPARE(QString::fromStdString(modelOptionsLabel(all)),
                 QStringLiteral("nope_every=4 temperature(F=8192, β=0.1) ssmax sink_logit"));
        QCOMPARE(modelOptionsLabel(ModelConfig{}), std::string());
        view.cancelJob();
        QTRY_VERIFY_WITH_TIMEOUT(!view.isBusy(), 60000);
    }

    // Seeds > 1: the summary rows carry the run's depth and options (its cells' results, as collect's rows do), and the
    // mean curve names the options once.
    void seedsSummaryNamesTheModelOptions()
    {
        TrainView view;
        TrainRequest r = view.request();
        r.schemes = {"rope"};
        r.model.layers = 2;
        r.model.dModel = 16;
        r.model.heads = 2;
        r.model.dFf = 32;
        r.model.context = 8;
        r.model.nopeEvery = 2;
        r.train.steps = 2;
        r.train.batch = 2;
        r.evalBytes = 256;
        r.evalMultipliers = {1, 2};
        r.seeds = 2;
        view.start(r);
        QTRY_VERIFY_WITH_TIMEOUT(!view.isBusy(), 120000);
        QCOMPARE(view.summary().size(), size_t(2)); // one model at two lengths
        for (const SweepSummaryRow& row : view.summary()) {
            QCOMPARE(row.layers, 2);
            QCOMPARE(row.modelOptions, std::string("nope_every=2"));
            QCOMPARE(row.perplexity.n, 2);
        }
        QCOMPARE(view.perplexityPlot()->figure().curves.size(), size_t(1));
        QCOMPARE(view.perplexityPlot()->figure().curves[0].name, QStringLiteral("rope nope_every=2 (n = 2)"));
        QCOMPARE(view.table()->item(0, 0)->text(), QStringLiteral("rope nope_every=2"));
    }

    // The Entropy tab's curve of a model's layer reads the layer's own scheme: on a NoPE layer of the schedule q and k
    // are not rotated (the model does not rotate them), as the CLI's entropy --checkpoint does (core's one
    // modelEntropyCurve); on a rope layer they are.
    void entropyOfALayerUsesItsOwnScheme_data()
    {
        QTest::addColumn<int>("layer");
        QTest::addColumn<QString>("expected");
        QTest::addRow("layer 0, rope") << 0 << "rope";
        QTest::addRow("layer 1, NoPE of the schedule") << 1 << "none";
    }

    void entropyOfALayerUsesItsOwnScheme()
    {
        QFETCH(int, layer);
        QFETCH(QString, expected);
        ModelConfig config = smallModelConfig("rope", 2);
        config.nopeEvery = 2; // layers 1, 3, ...: NoPE
        std::vector<uint8_t> text;
        for (const char c : std::string("The quick brown fox jumps over the lazy dog. "))
            text.push_back(static_cast<uint8_t>(c));
        const SharedModel shared = makeSharedModel(QStringLiteral("rope, NoPE every 2"),
                                                   std::make_unique<Model>(config), text);
        const std::vector<int> lengths = {4, 8, 16};
        const EntropyResult r = computeModelEntropy(shared, lengths, layer);
        QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
        QCOMPARE(QString::fromStdString(r.series.front().spec.name()), expected);
        Model reference(config);
        const ModelEntropyCurve core = modelEntropyCurve(reference, text, layer, lengths);
        QCOMPARE(r.series.front().points.size(), core.points.size());
        for (size_t i = 0; i < core.points.size(); ++i)
            QCOMPARE(r.series.front().points[i].entropyMean, core.points[i].entropyMean);
    }

    void fireCurveOfAModelBesideTheUntrainedOne()
    {
        MainWindow window;
        window.panel()->setScheme(QStringLiteral("fire"));
        window.panel()->setHeads(2);
        window.panel()->setLength(16);
        auto* bias = static_cast<BiasView*>(window.view(QStringLiteral("bias")));
        window.showView(QStringLiteral("bias"));
        QVERIFY(bias->curveBox()->isEnabled());
        bias->setCurveShown(true);
        QVERIFY(bias->isCurveShown());
        // No fire model yet: the untrained curve alone.
        QTRY_VERIFY(bias->hasPicture());
        QCOMPARE(bias->curvePlot()->figure().curves.size(), size_t(1));
        const double shift = 0.75;
        bias->addModel(shiftedFireModel(shift));
        bias->addModel(makeSharedModel(QStringLiteral("alibi"), std::make_unique<Model>(smallModelConfig("alibi", 1)),
                                       {})); // not a fire model: not offered
        QCOMPARE(bias->modelBox()->count(), 2);
        const CurveFigure& figure = bias->curvePlot()->figure();
        QCOMPARE(figure.curves.size(), size_t(2));       // learned, then untrained
        QCOMPARE(figure.curves[0].x.size(), size_t(16)); // distances 0..15 of row 15
        for (size_t i = 0; i < figure.curves[0].y.size(); ++i)
            QVERIFY(std::abs(figure.curves[0].y[i] - figure.curves[1].y[i] - shift) < 1e-5);
        // Exported as the fire-curve table: every head's distances.
        std::ostringstream csv;
        bias->writeData(csv, DataFormat::Csv);
        const std::string table = csv.str();
        QVERIFY(table.rfind("distance,head,learned,untrained\n", 0) == 0);
        QCOMPARE(std::count(table.begin(), table.end(), '\n'), std::ptrdiff_t(1 + 2 * 16));
        const nlohmann::json state = bias->saveState();
        QCOMPARE(state.at("fire_curve").get<bool>(), true);
        // Another scheme has no curve: the matrix again.
        window.panel()->setScheme(QStringLiteral("alibi"));
        QTRY_VERIFY(!bias->isCurveShown());
    }

    void layerTypeFieldsCarryTheHybridModel()
    {
        TrainView view;
        auto* types = view.findChild<QLineEdit*>(QStringLiteral("layer_types"));
        auto* window = view.findChild<QSpinBox*>(QStringLiteral("sliding_window"));
        auto* full = view.findChild<QComboBox*>(QStringLiteral("full_scheme"));
        auto* fullSettings = view.findChild<QLineEdit*>(QStringLiteral("full_settings"));
        QVERIFY(types && window && full && fullSettings);
        QVERIFY(view.request().model.layerTypes.empty()); // off by default
        types->setText(QStringLiteral("sliding, sliding,full"));
        window->setValue(8);
        full->setCurrentIndex(full->findData(QStringLiteral("none")));
        fullSettings->setText(QStringLiteral("logit-c=0.5"));
        const TrainRequest r = view.request();
        QCOMPARE(r.model.layerTypes, (std::vector<std::string>{"sliding", "sliding", "full"}));
        QCOMPARE(r.model.window, 8);
        QCOMPARE(r.model.fullScheme, std::string("none"));
        QCOMPARE(r.model.fullSettings, std::vector<std::string>{"logit-c=0.5"});
        // A session brings them back; a full scheme the full layers cannot have is refused naming it.
        TrainView restored;
        restored.restoreState(view.saveState());
        QCOMPARE(restored.request().model.layerTypes, r.model.layerTypes);
        QCOMPARE(restored.request().model.fullScheme, std::string("none"));
        nlohmann::json bad = view.saveState();
        bad["full_scheme"] = "t5";
        QVERIFY_THROWS_EXCEPTION(InputError, restored.restoreState(bad));
        // Core refuses a window without a sliding layer at Train, naming the field.
        TrainRequest wrong = r;
        wrong.schemes = {"rope"};
        wrong.model.layers = 2;
        wrong.model.layerTypes = {"full"};
        wrong.model.fullScheme.clear();
        wrong.model.fullSettings.clear();
        view.start(wrong);
        QVERIFY(!view.isBusy());
        QVERIFY2(view.statusText().contains("window = 8 applies to sliding layers and the model has none"),
                 qPrintable(view.statusText()));
        view.setPreset(QStringLiteral("demo")); // a preset is a plain model again
        QVERIFY(view.request().model.layerTypes.empty());
    }

    void lessonSixteenTrainsAHybridModel()
    {
        MainWindow window;
        LessonsPanel* lessons = window.lessonsPanel();
        lessons->setLanguage(QStringLiteral("en"));
        const Lesson* lesson = nullptr;
        for (const Lesson& l : lessons->lessons().lessons)
            if (l.number == 16)
                lesson = &l;
        QVERIFY(lesson);
        QCOMPARE(lesson->states.size(), size_t(5));
        QVERIFY(window.applyLessonState(lesson->states.at(4)));
        auto* train = static_cast<TrainView*>(window.view(QStringLiteral("train")));
        QCOMPARE(window.currentView(), train);
        const ModelConfig model = train->request().model;
        QCOMPARE(model.layerTypes, (std::vector<std::string>{"sliding", "full"}));
        QCOMPARE(model.window, 8);
        QCOMPARE(model.fullScheme, std::string("none"));
    }

    void lessonStatesOfTheNewViews()
    {
        MainWindow window;
        LessonsPanel* lessons = window.lessonsPanel();
        lessons->setLanguage(QStringLiteral("en"));
        const Lesson* nope = nullptr;
        const Lesson* fire = nullptr;
        for (const Lesson& l : lessons->lessons().lessons) {
            if (l.number == 14)
                nope = &l;
            if (l.number == 15)
                fire = &l;
        }
        QVERIFY(nope && fire);
        QVERIFY(window.applyLessonState(nope->states.at(3))); // keep = 0.25 (after the compare and two train states)
        QCOMPARE(window.currentView()->viewId(), QStringLiteral("frequencies"));
        QCOMPARE(window.panel()->state().spec.name(), std::string("rope"));
        QCOMPARE(window.panel()->state().spec.param("keep"), 0.25);
        QCOMPARE(window.panel()->state().spec.param("dim"), 64.0);
        QVERIFY(window.applyLessonState(fire->states.at(1))); // the learned curve
        auto* bias = static_cast<BiasView*>(window.view(QStringLiteral("bias")));
        QCOMPARE(window.currentView(), bias);
        QVERIFY(bias->isCurveShown());
    }
};

PLAB_QTEST_MAIN(TestUiModelOptions)
#include "tst_ui_model_options.moc"
