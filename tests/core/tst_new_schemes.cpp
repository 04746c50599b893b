// The schemes of issue 20 against the committed NumPy reference (tests/reference/make_new_schemes_reference.py):
// rope's keep (p-RoPE) and rotary-fraction (GPT-NeoX) in the frequency table, the probe, the fused kernel and its twin,
// the `frequencies` verb and a model's checkpoint; NoPE layers (SmolLM3, Llama 4) and Llama 4's temperature.
#include "attention/attention.h"
#include "attention/attention_reference.h"
#include "base/errors.h"
#include "base/safetensors.h"
#include "cli_runner.h"
#include "compare.h"
#include "model/checkpoint.h"
#include "model/model.h"
#include "schemes/position_bias.h"
#include "schemes/rotary_scaling.h"
#include "test_main.h"

#include <nlohmann/json.hpp>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include "json_arrays.h"

#include <cmath>

using namespace plab;

namespace {

QJsonObject referenceData()
{
    static const QJsonObject data = [] {
        QFile f(QStringLiteral(POSITIONLAB_TEST_DATA "/new_schemes_reference.json"));
        if (!f.open(QIODevice::ReadOnly))
            qFatal("cannot open new_schemes_reference.json");
        return QJsonDocument::fromJson(f.readAll()).object();
    }();
    return data;
}

QJsonObject shapeCase(int index)
{
    return referenceData()["rope_shape"].toArray()[index].toObject();
}

// rope of the case's head dim, keep, rotary-fraction and method, as attention and entropy build it.
SchemeSpec shapeSpec(const QJsonObject& c)
{
    std::vector<std::string> sets = {"base=" + exactText(c["base"].toDouble()),
                                     "keep=" + exactText(c["keep"].toDouble()),
                                     "rotary-fraction=" + exactText(c["rotary_fraction"].toDouble())};
    const std::string method = c["method"].toString().toStdString();
    if (method != "none")
        sets.push_back("factor=" + exactText(c["factor"].toDouble()));
    return makeSchemeSpecForHeadDim("rope", c["heads"].toInt(), false, sets, c["dim"].toInt(), "head dim",
                                    c["context"].toInt(), false, method);
}

QString caseTag(const QJsonObject& c, int index)
{
    return QString("d=%1/keep=%2/f=%3/%4/%5")
        .arg(c["dim"].toInt())
        .arg(c["keep"].toDouble())
        .arg(c["rotary_fraction"].toDouble())
        .arg(c["method"].toString())
        .arg(index);
}

} // namespace

class TestNewSchemes : public QObject {
    Q_OBJECT
private slots:
    void shapeFrequencies_data();
    void shapeFrequencies();
    void shapeProbe_data() { shapeFrequencies_data(); }
    void shapeProbe();
    void shapeAttention_data() { shapeFrequencies_data(); }
    void shapeAttention();
    void shapeRefused_data();
    void shapeRefused();
    void shapeDefaultsArePlainRope();
    void frequenciesVerbShowsShape();
    void modelKeepsShape();
    void nopeLayers_data();
    void nopeLayers();
    void temperature_data();
    void temperature();
    void temperatureBackwardMatchesTwin_data() { temperature_data(); }
    void temperatureBackwardMatchesTwin();
    void modelNopeEvery();
    void trainAndEvalNopeEvery();
};

// Every reference case that rope accepts; the refused ones are shapeRefused's rows.
void TestNewSchemes::shapeFrequencies_data()
{
    QTest::addColumn<int>("index");
    const QJsonArray cases = referenceData()["rope_shape"].toArray();
    QVERIFY(cases.size() >= 8);
    for (int i = 0; i < cases.size(); ++i)
        if (!cases[i].toObject()["refused"].toBool())
            QTest::newRow(qPrintable(caseTag(cases[i].toObject(), i))) << i;
}

void TestNewSchemes::shapeFrequencies()
{
    QFETCH(int, index);
    const QJsonObject c = shapeCase(index);
    const RotaryScaling s = rotaryScaling(shapeSpec(c), c["length"].toInt());
    QCOMPARE(s.rotatedDims, c["rotated_dims"].toInt());
    QCOMPARE(s.keptPairs, c["kept_pairs"].toInt());
    const std::vector<double> theta = toVector(c["theta"]), scaled = toVector(c["theta_scaled"]);
    QCOMPARE(s.theta.size(), theta.size());
    for (size_t i = 0; i < theta.size(); ++i) {
        QVERIFY2(
            std::abs(s.theta[i] - theta[i]) <= 1e-13 * std::max(1.0, theta[i]),
            qPrintable(QString("theta[%1] %2 vs %3").arg(i).arg(s.theta[i], 0, 'g', 17).arg(theta[i], 0, 'g', 17)));
        QVERIFY2(std::abs(s.thetaScaled[i] - scaled[i]) <= 1e-13 * std::max(1.0, scaled[i]),
                 qPrintable(QString("theta_scaled[%1] %2 vs %3").arg(i).arg(s.thetaScaled[i]).arg(scaled[i])));
        QCOMPARE(s.theta[i] == 0, i >= size_t(s.keptPairs)); // the zeroed pairs are exactly the tail
    }
    QVERIFY(std::abs(s.attentionFactor - c["attention_factor"].toDouble()) < 1e-13);
}

void TestNewSchemes::shapeProbe()
{
    QFETCH(int, index);
    const QJsonObject c = shapeCase(index);
    const SchemeSpec spec = shapeSpec(c);
    const int length = c["length"].toInt();
    const std::vector<double> probe = toVector(c["probe"]);
    const PositionBias bias(spec, length);
    for (int r = 0; r < length; ++r) {
        const double got = bias.view(0, r, 0);
        QVERIFY2(std::abs(got - probe[r]) <= 1e-5 * c["dim"].toInt(),
                 qPrintable(QString("r = %1: %2 vs %3").arg(r).arg(got).arg(probe[r])));
    }
}

// The fused kernel and its double-precision twin both read the shaped frequency table.
void TestNewSchemes::shapeAttention()
{
    QFETCH(int, index);
    const QJsonObject c = shapeCase(index);
    const SchemeSpec spec = shapeSpec(c);
    AttentionDims dims;
    dims.heads = c["heads"].toInt();
    dims.length = c["length"].toInt();
    dims.headDim = c["dim"].toInt();
    const std::vector<float> q = toFloats(c["q"]), k = toFloats(c["k"]), v = toFloats(c["v"]);
    const std::vector<double> want = toVector(c["out"]);
    QCOMPARE(q.size(), dims.elements());
    QCOMPARE(want.size(), dims.elements());
    const PositionBias bias(spec, dims.length);
    const AttentionForward fused = attentionForward(bias, dims, q.data(), k.data(), v.data());
    const AttentionReferenceForward twin = attentionForwardReference(bias, dims, q.data(), k.data(), v.data());
    for (size_t i = 0; i < want.size(); ++i) {
        QVERIFY2(std::abs(fused.out[i] - want[i]) <= 2e-5,
                 qPrintable(QString("fused out[%1] %2 vs %3").arg(i).arg(fused.out[i]).arg(want[i])));
        QVERIFY2(std::abs(twin.out[i] - want[i]) <= 1e-6,
                 qPrintable(QString("twin out[%1] %2 vs %3").arg(i).arg(twin.out[i]).arg(want[i])));
    }
}

void TestNewSchemes::shapeRefused_data()
{
    QTest::addColumn<QStringList>("sets");
    QTest::addColumn<int>("dim");
    QTest::addColumn<QString>("message");
    // The reference's refused cases: ⌊f d⌋ odd.
    const QJsonArray cases = referenceData()["rope_shape"].toArray();
    for (int i = 0; i < cases.size(); ++i) {
        const QJsonObject c = cases[i].toObject();
        if (!c["refused"].toBool())
            continue;
        const QString f = QString::number(c["rotary_fraction"].toDouble());
        QTest::newRow(qPrintable(caseTag(c, i)))
            << QStringList{"rotary-fraction=" + f} << c["dim"].toInt()
            << QString("scheme rope: rotary-fraction = %1 rotates ⌊f × dim⌋ = ⌊%1 × %2⌋ = %3 dims; allowed: fractions "
                       "in (0, 1] that rotate an even number of dims >= 2")
                   .arg(f)
                   .arg(c["dim"].toInt())
                   .arg(c["rotated_dims"].toInt());
    }
    QTest::newRow("keep 0") << QStringList{"keep=0"} << 8 << "scheme rope: keep = 0 is out of range; allowed: (0, 1]";
    QTest::newRow("keep above 1") << QStringList{"keep=1.5"} << 8
                                  << "scheme rope: keep = 1.5 is out of range; allowed: (0, 1]";
    QTest::newRow("fraction negative") << QStringList{"rotary-fraction=-0.5"} << 8
                                       << "scheme rope: rotary-fraction = -0.5 is out of range; allowed: (0, 1]";
    QTest::newRow("fraction rotates nothing")
        << QStringList{"rotary-fraction=0.1"} << 8 << "rotary-fraction = 0.1 rotates ⌊f × dim⌋ = ⌊0.1 × 8⌋ = 0 dims";
    // NTK grows the base as s^(r/(r-2)): two rotated dims leave it undefined.
    QTest::newRow("ntk over 2 rotated dims")
        << QStringList{"rotary-fraction=0.25"} << 8 << "scaling ntk: rotated dims ⌊f d⌋ = 2 is not allowed";
}

void TestNewSchemes::shapeRefused()
{
    QFETCH(QStringList, sets);
    QFETCH(int, dim);
    QFETCH(QString, message);
    std::vector<std::string> assignments;
    for (const QString& s : sets)
        assignments.push_back(s.toStdString());
    const std::string method = message.startsWith("scaling ntk") ? "ntk" : "none";
    try {
        makeSchemeSpecForHeadDim("rope", 2, false, assignments, dim, "head dim", 16, false, method);
        QFAIL("no InputError");
    } catch (const InputError& e) {
        QVERIFY2(QString::fromUtf8(e.what()).contains(message), e.what());
    }
}

// keep = rotary-fraction = 1 is rope as it was: the same table as the plain ladder, bit for bit.
void TestNewSchemes::shapeDefaultsArePlainRope()
{
    const SchemeSpec spec = makeSchemeSpec("rope", 2, false, {"dim=18"});
    QCOMPARE(spec.param("keep"), 1.0);
    QCOMPARE(spec.param("rotary-fraction"), 1.0);
    QVERIFY(rotaryScaling(spec, 16).theta == rotaryFrequencies(18, 10000));
    const SchemeInfo& rope = schemeInfo(SchemeKind::Rope);
    for (const char* name : {"keep", "rotary-fraction"}) {
        const auto it =
            std::find_if(rope.params.begin(), rope.params.end(), [&](const ParamInfo& p) { return p.name == name; });
        QVERIFY(it != rope.params.end());
        QCOMPARE(it->rangeText(), std::string("(0, 1]"));
        QCOMPARE(it->defaultValue, 1.0);
    }
}

void TestNewSchemes::frequenciesVerbShowsShape()
{
    const test::CliResult r =
        test::runCli({"frequencies", "--dim", "20", "--set", "keep=0.5", "--set", "rotary-fraction=0.8", "--json"});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const nlohmann::json j = nlohmann::json::parse(r.out.toStdString());
    QCOMPARE(j["rotated_dims"].get<int>(), 16);
    QCOMPARE(j["kept_pairs"].get<int>(), 4);
    QCOMPARE(j["parameters"]["keep"].get<double>(), 0.5);
    const std::vector<double> theta = j["theta"].get<std::vector<double>>();
    QCOMPARE(theta.size(), size_t(10));
    for (int i = 0; i < 10; ++i)
        QCOMPARE(theta[i], i < 4 ? std::pow(10000.0, -2.0 * i / 16) : 0.0);
}

// A model trained with keep and rotary-fraction writes them into its checkpoint and reads them back; they reach the
// attention (the loss differs from plain rope's on the same weights).
void TestNewSchemes::modelKeepsShape()
{
    ModelConfig c;
    c.layers = 1;
    c.dModel = 16;
    c.heads = 2;
    c.dFf = 16;
    c.context = 16;
    c.scheme = "rope";
    c.schemeSettings = {"keep=0.5", "rotary-fraction=0.5"};
    Model model(c);
    QCOMPARE(model.schemeSpec().param("keep"), 0.5);
    const LoadedCheckpoint back =
        checkpointFromSafetensors(parseSafetensors(checkpointBytes(model, CheckpointInfo{}), "memory"), "memory");
    QVERIFY(back.model->schemeSpec().params == model.schemeSpec().params);
    ModelConfig plain = c;
    plain.schemeSettings.clear();
    Model plainModel(plain);
    plainModel.parameters() = model.parameters();
    std::vector<uint8_t> text(17);
    for (size_t i = 0; i < text.size(); ++i)
        text[i] = static_cast<uint8_t>("rotate half of it"[i]);
    const float shaped = model.forward(text.data(), text.data() + 1, 1, 16);
    const float again = back.model->forward(text.data(), text.data() + 1, 1, 16);
    const float whole = plainModel.forward(text.data(), text.data() + 1, 1, 16);
    QCOMPARE(again, shaped);
    QVERIFY2(shaped != whole, "keep and rotary-fraction do not reach the model's attention");
}

void TestNewSchemes::nopeLayers_data()
{
    QTest::addColumn<int>("index");
    const QJsonArray cases = referenceData()["nope_layers"].toArray();
    for (int i = 0; i < cases.size(); ++i) {
        const QJsonObject c = cases[i].toObject();
        QTest::newRow(qPrintable(QString("L=%1/K=%2").arg(c["layers"].toInt()).arg(c["interval"].toInt()))) << i;
    }
}

// SmolLM3's and Llama 4's convention: layer i is NoPE when (i + 1) % K == 0.
void TestNewSchemes::nopeLayers()
{
    QFETCH(int, index);
    const QJsonObject c = referenceData()["nope_layers"].toArray()[index].toObject();
    ModelConfig config;
    config.scheme = "rope";
    config.layers = c["layers"].toInt();
    config.nopeEvery = c["interval"].toInt();
    const QJsonArray want = c["no_rope_layers"].toArray();
    QCOMPARE(want.size(), config.layers);
    for (int l = 0; l < config.layers; ++l) {
        QCOMPARE(modelLayerUsesScheme(config, l), want[l].toInt() == 1);
        QCOMPARE(int(modelLayerSchemeSpec(config, l).kind),
                 int(want[l].toInt() == 1 ? SchemeKind::Rope : SchemeKind::None));
    }
}

namespace {

QJsonObject temperatureCase(int index)
{
    return referenceData()["llama4_temperature"].toArray()[index].toObject();
}

SchemeSpec temperatureSpec(const QJsonObject& c)
{
    const int context = c["context"].toInt();
    SchemeSpec spec = makeSchemeSpec("none", c["heads"].toInt(), false, {}, context, context > 0);
    spec.temperature.tuning = true;
    spec.temperature.floorScale = c["floor_scale"].toDouble();
    spec.temperature.attnScale = c["attn_scale"].toDouble();
    validateSchemeSpec(spec);
    return spec;
}

} // namespace

void TestNewSchemes::temperature_data()
{
    QTest::addColumn<int>("index");
    const QJsonArray cases = referenceData()["llama4_temperature"].toArray();
    for (int i = 0; i < cases.size(); ++i) {
        const QJsonObject c = cases[i].toObject();
        QTest::newRow(qPrintable(QString("F=%1/beta=%2/logn L=%3/%4")
                                     .arg(c["floor_scale"].toDouble())
                                     .arg(c["attn_scale"].toDouble())
                                     .arg(c["context"].toInt())
                                     .arg(i)))
            << i;
    }
}

// Llama 4's q · (1 + β ln(1 + ⌊(p + 1)/F⌋)) on a NoPE layer: the factor, the row scale beside logn, and the attention
// of the fused kernel and its twin.
void TestNewSchemes::temperature()
{
    QFETCH(int, index);
    const QJsonObject c = temperatureCase(index);
    const SchemeSpec spec = temperatureSpec(c);
    const std::vector<double> scales = toVector(c["attn_scales"]), rows = toVector(c["row_scale"]);
    const PositionBias bias(spec, c["length"].toInt());
    for (size_t m = 0; m < scales.size(); ++m) {
        QVERIFY(std::abs(spec.temperature.factor(int(m)) - scales[m]) <= 1e-14);
        QVERIFY2(std::abs(bias.rowScale(int(m), c["length"].toInt()) - rows[m]) <= 1e-6,
                 qPrintable(
                     QString("row %1: %2 vs %3").arg(m).arg(bias.rowScale(int(m), c["length"].toInt())).arg(rows[m])));
    }
    AttentionDims dims;
    dims.heads = c["heads"].toInt();
    dims.length = c["length"].toInt();
    dims.headDim = c["dim"].toInt();
    const std::vector<float> q = toFloats(c["q"]), k = toFloats(c["k"]), v = toFloats(c["v"]);
    const std::vector<double> want = toVector(c["out"]);
    const AttentionForward fused = attentionForward(bias, dims, q.data(), k.data(), v.data());
    const AttentionReferenceForward twin = attentionForwardReference(bias, dims, q.data(), k.data(), v.data());
    for (size_t i = 0; i < want.size(); ++i) {
        QVERIFY2(std::abs(fused.out[i] - want[i]) <= 2e-5,
                 qPrintable(QString("fused out[%1] %2 vs %3").arg(i).arg(fused.out[i]).arg(want[i])));
        QVERIFY2(std::abs(twin.out[i] - want[i]) <= 1e-6,
                 qPrintable(QString("twin out[%1] %2 vs %3").arg(i).arg(twin.out[i]).arg(want[i])));
    }
}

// The temperature is a row scale, so the kernel's backward handles it as logn's: against the double-precision twin.
void TestNewSchemes::temperatureBackwardMatchesTwin()
{
    QFETCH(int, index);
    const QJsonObject c = temperatureCase(index);
    const SchemeSpec spec = temperatureSpec(c);
    const PositionBias bias(spec, c["length"].toInt());
    AttentionDims dims;
    dims.heads = c["heads"].toInt();
    dims.length = c["length"].toInt();
    dims.headDim = c["dim"].toInt();
    const std::vector<float> q = toFloats(c["q"]), k = toFloats(c["k"]), v = toFloats(c["v"]);
    std::vector<float> dOut(dims.elements());
    for (size_t i = 0; i < dOut.size(); ++i)
        dOut[i] = static_cast<float>(std::sin(0.7 * double(i) + 0.3));
    const AttentionForward forward = attentionForward(bias, dims, q.data(), k.data(), v.data());
    const AttentionGradients fused = attentionBackward(bias, dims, q.data(), k.data(), v.data(), forward, dOut.data());
    const AttentionReferenceGradients twin =
        attentionBackwardReference(bias, dims, q.data(), k.data(), v.data(), dOut.data());
    for (const auto& [name, largest] :
         {std::pair{"dq", test::maxError(fused.dq, twin.dq)}, std::pair{"dk", test::maxError(fused.dk, twin.dk)},
          std::pair{"dv", test::maxError(fused.dv, twin.dv)}})
        QVERIFY2(largest.within(5e-5), qPrintable(largest.message(name)));
    // And the scale matters: without it dq differs.
    SchemeSpec plain = spec;
    plain.temperature = {};
    const PositionBias plainBias(plain, dims.length);
    const AttentionReferenceGradients untempered =
        attentionBackwardReference(plainBias, dims, q.data(), k.data(), v.data(), dOut.data());
    const bool stepsInside = c["floor_scale"].toDouble() < dims.length;
    QCOMPARE(untempered.dq != twin.dq, stepsInside);
}

namespace {

ModelConfig nopeModelConfig()
{
    ModelConfig c;
    c.layers = 4;
    c.dModel = 16;
    c.heads = 2;
    c.dFf = 16;
    c.context = 16;
    c.scheme = "rope";
    c.nopeEvery = 2;
    c.temperature.tuning = true;
    c.temperature.floorScale = 4;
    c.temperature.attnScale = 0.5;
    return c;
}

} // namespace

// A model with NoPE every 2 layers and the temperature: its layers' specs, its checkpoint, and that both reach the
// loss.
void TestNewSchemes::modelNopeEvery()
{
    const ModelConfig c = nopeModelConfig();
    Model model(c);
    QCOMPARE(int(model.layerSchemeSpec(0).kind), int(SchemeKind::Rope));
    QCOMPARE(int(model.layerSchemeSpec(1).kind), int(SchemeKind::None));
    QVERIFY(model.layerSchemeSpec(1).temperature == c.temperature);
    QVERIFY(!model.layerSchemeSpec(2).temperature.tuning); // the rope layers have none, as in Llama 4
    const LoadedCheckpoint back =
        checkpointFromSafetensors(parseSafetensors(checkpointBytes(model, CheckpointInfo{}), "memory"), "memory");
    QCOMPARE(back.model->config().nopeEvery, 2);
    QVERIFY(back.model->config().temperature == c.temperature);
    std::vector<uint8_t> text(17);
    for (size_t i = 0; i < text.size(); ++i)
        text[i] = static_cast<uint8_t>("NoPE every second"[i]);
    const float loss = model.forward(text.data(), text.data() + 1, 1, 16);
    QCOMPARE(back.model->forward(text.data(), text.data() + 1, 1, 16), loss);
    ModelConfig noTemperature = c;
    noTemperature.temperature = {};
    ModelConfig allRope = noTemperature;
    allRope.nopeEvery = 0;
    for (const ModelConfig& other : {noTemperature, allRope}) {
        Model m(other);
        m.parameters() = model.parameters();
        QVERIFY(m.forward(text.data(), text.data() + 1, 1, 16) != loss);
    }
}

void TestNewSchemes::trainAndEvalNopeEvery()
{
    QTemporaryDir dir;
    const QString corpus = test::writeStructuredCorpus(dir.path(), 6000);
    const QString model = dir.path() + "/nope.safetensors";
    const test::CliResult trained = test::runCli({"train",
                                                  "rope",
                                                  "--corpus",
                                                  corpus,
                                                  "--layers",
                                                  "4",
                                                  "--d-model",
                                                  "16",
                                                  "--heads",
                                                  "2",
                                                  "--d-ff",
                                                  "16",
                                                  "--context",
                                                  "16",
                                                  "--steps",
                                                  "3",
                                                  "--batch",
                                                  "2",
                                                  "--nope-every",
                                                  "4",
                                                  "--attn-temperature-tuning",
                                                  "--floor-scale",
                                                  "8",
                                                  "--quiet",
                                                  "-o",
                                                  model});
    QVERIFY2(trained.exitCode == 0, trained.err.constData());
    const LoadedCheckpoint loaded = loadCheckpoint(model.toStdString());
    QCOMPARE(loaded.model->config().nopeEvery, 4);
    QCOMPARE(loaded.model->config().temperature.floorScale, 8.0);
    QCOMPARE(int(loaded.model->layerSchemeSpec(3).kind), int(SchemeKind::None));
    const test::CliResult evaluated =
        test::runCli({"eval", model, "--corpus", corpus, "--lengths", "16,32", "-o", dir.path() + "/eval.csv"});
    QVERIFY2(evaluated.exitCode == 0, evaluated.err.constData());
}

PLAB_QTEST_APPLESS_MAIN(TestNewSchemes)
#include "tst_new_schemes.moc"
