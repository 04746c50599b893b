// Rotary length extension: frequencies, logit scales and probe scores against the committed NumPy reference
// (tests/reference/make_rotary_reference.py), attention sinks in the bias view, and the `frequencies` verb.
#include "views/bias_views.h"
#include "model/checkpoint.h"
#include "cli_runner.h"
#include "base/errors.h"
#include "model_configs.h"
#include "schemes/position_bias.h"
#include "schemes/rotary_scaling.h"
#include "base/safetensors.h"
#include "test_main.h"
#include "runs/training.h"
#include "attention/plan.h"

#include <nlohmann/json.hpp>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include "json_arrays.h"

#include <cmath>
#include <omp.h>

using namespace plab;

namespace {

QJsonArray referenceCases()
{
    static const QJsonArray cases = [] {
        QFile f(QStringLiteral(POSITIONLAB_TEST_DATA "/rotary_reference.json"));
        if (!f.open(QIODevice::ReadOnly))
            qFatal("cannot open rotary_reference.json");
        return QJsonDocument::fromJson(f.readAll()).object().value("cases").toArray();
    }();
    return cases;
}

bool close(double got, double want, double tol)
{
    return std::abs(got - want) <= tol * std::max(1.0, std::abs(want));
}

// The spec of a reference case: rope of its dim and base under its method, every parameter set explicitly.
SchemeSpec caseSpec(const QJsonObject& c)
{
    std::vector<std::string> sets = {"dim=" + std::to_string(c["dim"].toInt()),
                                     "base=" + exactText(c["base"].toDouble())};
    const QJsonObject params = c["parameters"].toObject();
    for (auto it = params.begin(); it != params.end(); ++it)
        sets.push_back(it.key().toStdString() + "=" + exactText(it.value().toDouble()));
    return makeSchemeSpec("rope", 1, false, sets, c["context"].toInt(), false, c["method"].toString().toStdString());
}

} // namespace

class TestRotary : public QObject {
    Q_OBJECT
private slots:
    void frequenciesMatchReference_data();
    void frequenciesMatchReference();
    void probeMatchesReference_data();
    void probeMatchesReference();
    void selfExtendViewIsExact_data();
    void selfExtendViewIsExact();
    void sinksInBiasView_data();
    void sinksInBiasView();
    void frequenciesVerb_data();
    void frequenciesVerb();
    void catalogueDefaults();
    void checkpointKeepsScalingAndOptimizer_data();
    void checkpointKeepsScalingAndOptimizer();
    void initKeepsOriginalContext_data();
    void initKeepsOriginalContext();
    void methodRules_data();
    void methodRules();
    void scalingSettingsAreTheMethods_data();
    void scalingSettingsAreTheMethods();
    void longropeClosedForm_data();
    void longropeClosedForm();
    void kernelTableIsEachCellsRotation_data();
    void kernelTableIsEachCellsRotation();
};

void TestRotary::frequenciesMatchReference_data()
{
    QTest::addColumn<int>("index");
    const QJsonArray cases = referenceCases();
    for (int i = 0; i < cases.size(); ++i) {
        const QJsonObject c = cases[i].toObject();
        const QString tag = QString("%1/d=%2/L=%3/n=%4/%5")
                                .arg(c["method"].toString())
                                .arg(c["dim"].toInt())
                                .arg(c["context"].toInt())
                                .arg(c["length"].toInt())
                                .arg(i);
        QTest::newRow(qPrintable(tag)) << i;
    }
}

void TestRotary::frequenciesMatchReference()
{
    QFETCH(int, index);
    const QJsonObject c = referenceCases()[index].toObject();
    const RotaryScaling s = rotaryScaling(caseSpec(c), c["length"].toInt());
    const std::vector<double> theta = toVector(c["theta"]), scaled = toVector(c["theta_scaled"]);
    QCOMPARE(s.theta.size(), theta.size());
    QCOMPARE(s.thetaScaled.size(), scaled.size());
    for (size_t i = 0; i < theta.size(); ++i) {
        QVERIFY2(close(s.theta[i], theta[i], 1e-12),
                 qPrintable(QString("theta[%1] %2 vs %3").arg(i).arg(s.theta[i]).arg(theta[i])));
        QVERIFY2(close(s.thetaScaled[i], scaled[i], 1e-12), qPrintable(QString("theta_scaled[%1] %2 vs %3")
                                                                           .arg(i)
                                                                           .arg(s.thetaScaled[i], 0, 'g', 17)
                                                                           .arg(scaled[i], 0, 'g', 17)));
    }
    QVERIFY(close(s.attentionFactor, c["attention_factor"].toDouble(), 1e-12));
    QVERIFY(close(s.logitScale, c["logit_scale"].toDouble(), 1e-12));
}

void TestRotary::probeMatchesReference_data()
{
    frequenciesMatchReference_data();
}

void TestRotary::probeMatchesReference()
{
    QFETCH(int, index);
    const QJsonObject c = referenceCases()[index].toObject();
    const SchemeSpec spec = caseSpec(c);
    const int length = c["length"].toInt();
    const std::vector<double> probe = toVector(c["probe"]);
    // The bias view (float tables) at query m = r, key 0; the double-precision core function at every r.
    const PositionBias bias(spec, length);
    const RotaryScaling s = rotaryScaling(spec, length);
    for (size_t r = 0; r < probe.size(); ++r) {
        const double tol = 1e-5 * c["dim"].toInt();
        QVERIFY2(std::abs(bias.view(0, int(r), 0) - probe[r]) <= tol,
                 qPrintable(QString("view r=%1: %2 vs %3").arg(r).arg(bias.view(0, int(r), 0)).arg(probe[r])));
        QVERIFY2(std::abs(rotaryProbe(s, double(r)) - probe[r]) <= 1e-9 * c["dim"].toInt(),
                 qPrintable(QString("probe r=%1: %2 vs %3").arg(r).arg(rotaryProbe(s, double(r))).arg(probe[r])));
    }
}

// Self-Extend's bias view is the probe at the exact P(m, n) = ⌊m/G⌋ - ⌊n/G⌋ + w - ⌊w/G⌋ past the window (m - n
// inside it), as the kernel's grouped pass rotates q and k: a closed form written out here, sum_i 2 cos(P θ_i) with
// θ_i = base^(-2i/d). The view once drew the mean over the query's phase (off by up to 1.94 at G = 3, w = 7, N = 48).
void TestRotary::selfExtendViewIsExact_data()
{
    QTest::addColumn<int>("group");
    QTest::addColumn<int>("window");
    QTest::addColumn<int>("length");
    QTest::addColumn<int>("dim");
    QTest::newRow("G=3 W=7 N=48 (the issue's case)") << 3 << 7 << 48 << 16;
    QTest::newRow("G=4 W=16 N=100") << 4 << 16 << 100 << 32;
    QTest::newRow("G=2 W=5 N=33, d=8") << 2 << 5 << 33 << 8;
    QTest::newRow("G=1: plain positions") << 1 << 6 << 20 << 16;
}

void TestRotary::selfExtendViewIsExact()
{
    QFETCH(int, group);
    QFETCH(int, window);
    QFETCH(int, length);
    QFETCH(int, dim);
    const double base = 10000;
    const SchemeSpec spec = makeSchemeSpec(
        "rope", 1, false,
        {"dim=" + std::to_string(dim), "group=" + std::to_string(group), "window=" + std::to_string(window)}, length,
        false, "self-extend");
    const PositionBias bias(spec, length);
    const std::vector<float> view = biasViewMatrix(bias, 0, length);
    double worst = 0;
    int staircase = 0; // pairs at one distance whose exact P differs from that of (m - n, 0): the mean would hide it
    for (int m = 0; m < length; ++m)
        for (int n = 0; n <= m; ++n) {
            const int r = m - n;
            const int P = r < window ? r : m / group - n / group + window - window / group;
            double want = 0;
            for (int i = 0; i < dim / 2; ++i)
                want += 2 * std::cos(P * std::pow(base, -2.0 * i / dim));
            const double got = view[static_cast<size_t>(m) * length + n];
            const double diff = std::abs(got - want);
            QVERIFY2(
                diff <= 1e-5 * dim,
                qPrintable(
                    QString("(m %1, n %2): view %3, closed form %4 (P = %5)").arg(m).arg(n).arg(got).arg(want).arg(P)));
            worst = std::max(worst, diff);
            staircase += r >= window && P != r / group + window - window / group;
        }
    QVERIFY(std::isfinite(worst));
    if (group > 1)
        QVERIFY2(staircase > 0, "no pair tells the exact P from the mean's"); // the rows can fail the old view
}

void TestRotary::sinksInBiasView_data()
{
    QTest::addColumn<QString>("scheme");
    QTest::addColumn<bool>("bidirectional");
    QTest::addColumn<int>("window");
    QTest::addColumn<int>("sinks");
    QTest::addColumn<int>("length");
    QTest::newRow("local W=5 S=2") << "local" << false << 5 << 2 << 23;
    QTest::newRow("local W=3 S=7 (sinks wider than the window)") << "local" << false << 3 << 7 << 19;
    QTest::newRow("local bidir W=4 S=3") << "local" << true << 4 << 3 << 17;
    QTest::newRow("bca W=6 S=1") << "bca" << false << 6 << 1 << 29;
    QTest::newRow("bca W=8 S=5") << "bca" << false << 8 << 5 << 31;
    QTest::newRow("local S=0") << "local" << false << 5 << 0 << 12;
}

void TestRotary::sinksInBiasView()
{
    QFETCH(QString, scheme);
    QFETCH(bool, bidirectional);
    QFETCH(int, window);
    QFETCH(int, sinks);
    QFETCH(int, length);
    const SchemeSpec spec = makeSchemeSpec(scheme.toStdString(), 2, bidirectional,
                                           {"window=" + std::to_string(window), "sinks=" + std::to_string(sinks)});
    const PositionBias bias(spec, length);
    const std::vector<float> view = biasViewMatrix(bias, 1, length);
    double visibleCount = 0;
    for (int m = 0; m < length; ++m)
        for (int n = 0; n < length; ++n) {
            // design.md: the window (or blocks), plus keys n < S seen by every query m >= n (any m when bidirectional).
            bool inWindow = false;
            if (scheme == "local")
                inWindow = bidirectional ? std::abs(m - n) < window : (m - n >= 0 && m - n < window);
            else
                inWindow = n <= m && n / (window / 2) >= m / (window / 2) - 1;
            const bool sink = n < sinks && (bidirectional || n <= m);
            const bool visible = inWindow || sink;
            visibleCount += visible;
            const float got = view[size_t(m) * length + n];
            QVERIFY2(
                visible ? got == 0.0f : std::isinf(got) && got < 0,
                qPrintable(QString("m=%1 n=%2: %3, expected %4").arg(m).arg(n).arg(got).arg(visible ? "0" : "-inf")));
            QCOMPARE(bias.visible(m, n, length), visible);
        }
    QCOMPARE(visiblePairs(spec, length), visibleCount);
}

void TestRotary::frequenciesVerb_data()
{
    QTest::addColumn<int>("index");
    const QJsonArray cases = referenceCases();
    // A few reference cases through the real CLI: yarn (lo = hi), llama3, dynamic-ntk past L, leaky-rerope.
    for (int i : {5, 11, 15, 19})
        QTest::newRow(qPrintable(referenceCases()[i].toObject()["method"].toString() + "/" + QString::number(i))) << i;
}

void TestRotary::frequenciesVerb()
{
    QFETCH(int, index);
    const QJsonObject c = referenceCases()[index].toObject();
    QStringList args = {"frequencies",
                        "--dim",
                        QString::number(c["dim"].toInt()),
                        "--base",
                        QString::number(c["base"].toDouble(), 'g', 17),
                        "--scaling",
                        c["method"].toString(),
                        "--context",
                        QString::number(c["context"].toInt()),
                        "--length",
                        QString::number(c["length"].toInt())};
    const QJsonObject params = c["parameters"].toObject();
    for (auto it = params.begin(); it != params.end(); ++it)
        args << "--set" << it.key() + "=" + QString::number(it.value().toDouble(), 'g', 17);
    const test::CliResult json = test::runCli(args + QStringList{"--json"});
    QVERIFY2(json.exitCode == 0, json.err.constData());
    const QJsonObject j = QJsonDocument::fromJson(json.out).object();
    for (const char* key :
         {"theta", "theta_scaled", "wavelength", "wavelength_scaled", "attention_factor", "logit_scale"})
        QVERIFY2(j.contains(key), key);
    const std::vector<double> scaled = toVector(c["theta_scaled"]), got = toVector(j["theta_scaled"]);
    QCOMPARE(got.size(), scaled.size());
    for (size_t i = 0; i < got.size(); ++i) {
        QVERIFY(close(got[i], scaled[i], 1e-12));
        QVERIFY(close(j["wavelength_scaled"].toArray()[int(i)].toDouble(), 2 * M_PI / scaled[i], 1e-12));
    }
    QVERIFY(close(j["logit_scale"].toDouble(), c["logit_scale"].toDouble(), 1e-12));
    // CSV: the header the design fixes, one line per pair.
    const test::CliResult csv = test::runCli(args);
    QVERIFY2(csv.exitCode == 0, csv.err.constData());
    const QList<QByteArray> lines = csv.out.trimmed().split('\n');
    QCOMPARE(lines.first(), QByteArray("pair,theta,theta_scaled,wavelength,wavelength_scaled"));
    QCOMPARE(lines.size(), int(scaled.size()) + 1);
    QVERIFY(close(lines.last().split(',')[2].toDouble(), scaled.back(), 1e-8));
}

void TestRotary::catalogueDefaults()
{
    // design.md's defaults.
    const SchemeSpec yarn = makeSchemeSpec("rope", 1, false, {}, 64, false, "yarn");
    QCOMPARE(yarn.scalingParams.at("beta-fast"), 32.0);
    QCOMPARE(yarn.scalingParams.at("beta-slow"), 1.0);
    const SchemeSpec llama = makeSchemeSpec("xpos", 1, false, {}, 64, false, "llama3");
    QCOMPARE(llama.scalingParams.at("low-freq-factor"), 1.0);
    QCOMPARE(llama.scalingParams.at("high-freq-factor"), 4.0);
    const SchemeSpec leaky = makeSchemeSpec("rope", 1, false, {}, 64, false, "leaky-rerope");
    QCOMPARE(leaky.scalingParams.at("leak"), 16.0);
    QCOMPARE(rotaryScaling(leaky, 64).window, 32); // window 0: L/2
    QCOMPARE(makeSchemeSpec("local", 1, false).intParam("sinks"), 0);
    // Scaling survives into the JSON metadata every output carries.
    const auto meta = schemeSpecJson(yarn);
    QCOMPARE(QString::fromStdString(meta["scaling"].get<std::string>()), QString("yarn"));
}

void TestRotary::checkpointKeepsScalingAndOptimizer_data()
{
    QTest::addColumn<QString>("scheme");
    QTest::addColumn<QString>("scaling");
    QTest::addColumn<QStringList>("sets");
    QTest::newRow("rope+yarn") << "rope"
                               << "yarn" << QStringList{"factor=2.5", "beta-fast=16"};
    QTest::newRow("xpos+leaky-rerope") << "xpos"
                                       << "leaky-rerope" << QStringList{"window=3", "leak=2.5"};
    QTest::newRow("local+sinks, no method") << "local"
                                            << "none" << QStringList{};
}

void TestRotary::checkpointKeepsScalingAndOptimizer()
{
    QFETCH(QString, scheme);
    QFETCH(QString, scaling);
    QFETCH(QStringList, sets);
    ModelConfig c;
    c.layers = 1;
    c.dModel = 8;
    c.heads = 2;
    c.dFf = 8;
    c.context = 8;
    c.scheme = scheme.toStdString();
    c.scaling = scaling.toStdString();
    for (const QString& a : sets)
        c.scalingSettings.push_back(a.toStdString());
    if (scheme == "local")
        c.schemeSettings = {"sinks=2"};
    Model model(c);
    // An optimiser state that is not all zeros: one update from a made-up gradient.
    for (size_t i = 0; i < model.gradients().size(); ++i)
        model.gradients()[i] = 0.01f * float(i % 7) - 0.02f;
    auto adam = std::make_shared<AdamW>(model.parameterCount());
    adam->update(model, TrainConfig{}, 1e-3);
    CheckpointInfo info;
    info.step = 3;
    info.optimizer = adam;
    const LoadedCheckpoint back =
        checkpointFromSafetensors(parseSafetensors(checkpointBytes(model, info), "memory"), "memory");
    QCOMPARE(back.model->config().scaling, c.scaling);
    const SchemeSpec a = model.schemeSpec(), b = back.model->schemeSpec();
    QVERIFY(a.scaling == b.scaling && a.scalingParams == b.scalingParams && a.params == b.params);
    QVERIFY(back.optimizer);
    QCOMPARE(back.optimizer->updates(), 1);
    QVERIFY(back.optimizer->firstMoment() == adam->firstMoment());
    QVERIFY(back.optimizer->secondMoment() == adam->secondMoment());
    QVERIFY(back.model->parameters() == model.parameters());
    // Zero-shot under another method and back: the spec follows, the weights do not move.
    if (scheme == "rope") {
        back.model->setScaling("rerope", {"window=4"});
        QCOMPARE(int(back.model->schemeSpec().scaling), int(RotaryMethod::Rerope));
        QVERIFY(back.model->parameters() == model.parameters());
        try {
            back.model->setScaling("yarn", {"leak=2"});
            QFAIL("no InputError");
        } catch (const InputError& e) {
            QVERIFY2(QString(e.what()).contains("method yarn has no parameter 'leak' (leak=2); its parameters: factor"),
                     e.what());
        }
        QCOMPARE(int(back.model->schemeSpec().scaling), int(RotaryMethod::Rerope)); // unchanged by the refusal
    }
}

void TestRotary::initKeepsOriginalContext_data()
{
    QTest::addColumn<int>("initContext");
    QTest::addColumn<QStringList>("initSettings"); // the checkpoint's own scaling settings (method yarn when given)
    QTest::addColumn<int>("newContext");
    QTest::addColumn<QString>("scaling");
    QTest::addColumn<QStringList>("settings"); // the run's settings carried over (the checkpoint's, when continued)
    QTest::addColumn<QStringList>("given");    // the run's own (the user's --set), added to the settings
    QTest::addColumn<int>("kept");             // what keepOriginalContext returns
    QTest::addColumn<int>("effectiveL");       // scalingContext of the resulting spec; 0: the spec is refused
    QTest::newRow("yarn, 64 -> 256") << 64 << QStringList{} << 256 << "yarn" << QStringList{}
                                     << QStringList{"factor=16"} << 64 << 64;
    QTest::newRow("llama3, 32 -> 128") << 32 << QStringList{} << 128 << "llama3" << QStringList{} << QStringList{} << 32
                                       << 32;
    QTest::newRow("rerope, 64 -> 256") << 64 << QStringList{} << 256 << "rerope" << QStringList{}
                                       << QStringList{"window=16"} << 64 << 64;
    QTest::newRow("same context: nothing to keep")
        << 64 << QStringList{} << 64 << "yarn" << QStringList{} << QStringList{} << 0 << 64;
    QTest::newRow("pi reads no L") << 64 << QStringList{} << 256 << "pi" << QStringList{} << QStringList{"factor=4"}
                                   << 0 << 256;
    QTest::newRow("no method") << 64 << QStringList{} << 256 << "none" << QStringList{} << QStringList{} << 0 << 256;
    QTest::newRow("explicit setting wins")
        << 64 << QStringList{} << 256 << "yarn" << QStringList{} << QStringList{"original-context=100"} << 0 << 100;
    QTest::newRow("twice fine-tuned keeps the first L")
        << 256 << QStringList{"original-context=64"} << 512 << "yarn" << QStringList{} << QStringList{} << 64 << 64;
    // Continued without --scaling: the checkpoint's own settings carry original-context=0, which means "the
    // context" and must not hide the first L.
    QTest::newRow("checkpoint's original-context=0 is unset")
        << 32 << QStringList{"factor=4", "original-context=0"} << 64 << "yarn"
        << QStringList{"factor=4", "original-context=0"} << QStringList{} << 32 << 32;
    // The user's original-context is theirs, whatever its value: 0 means this run's context (not replaced by the
    // checkpoint's), and a value out of range is refused (it was silently replaced by the checkpoint's context).
    QTest::newRow("user's original-context=0 is this run's context")
        << 32 << QStringList{} << 64 << "yarn" << QStringList{} << QStringList{"original-context=0"} << 0 << 64;
    QTest::newRow("user's original-context=0 over the checkpoint's 0")
        << 32 << QStringList{"factor=4", "original-context=0"} << 64 << "yarn"
        << QStringList{"factor=4", "original-context=0"} << QStringList{"original-context=0"} << 0 << 64;
    QTest::newRow("user's negative original-context is refused, not replaced")
        << 32 << QStringList{} << 64 << "yarn" << QStringList{} << QStringList{"original-context=-5"} << 0 << 0;
    // original-context may not exceed the context: a shorter run keeps nothing (L is its own context).
    QTest::newRow("shorter context keeps nothing")
        << 64 << QStringList{} << 32 << "yarn" << QStringList{} << QStringList{} << 0 << 32;
}

void TestRotary::initKeepsOriginalContext()
{
    QFETCH(int, initContext);
    QFETCH(QStringList, initSettings);
    QFETCH(int, newContext);
    QFETCH(QString, scaling);
    QFETCH(QStringList, settings);
    QFETCH(QStringList, given);
    QFETCH(int, kept);
    QFETCH(int, effectiveL);
    ModelConfig was;
    was.scheme = "rope";
    was.context = initContext;
    if (!initSettings.isEmpty())
        was.scaling = "yarn";
    for (const QString& a : initSettings)
        was.scalingSettings.push_back(a.toStdString());
    ModelConfig next = was;
    next.context = newContext;
    next.scaling = scaling.toStdString();
    next.scalingSettings.clear();
    for (const QString& a : settings)
        next.scalingSettings.push_back(a.toStdString());
    std::vector<std::string> own;
    for (const QString& a : given) { // as train --set does: the user's replace the carried ones by name
        const std::string name = a.left(a.indexOf('=')).toStdString();
        std::erase_if(next.scalingSettings, [&](const std::string& s) { return s.substr(0, s.find('=')) == name; });
        next.scalingSettings.push_back(a.toStdString());
        own.push_back(a.toStdString());
    }
    QCOMPARE(keepOriginalContext(next, was, own), kept);
    if (effectiveL == 0) { // the user's value, named, never replaced
        try {
            (void)modelSchemeSpec(next);
            QFAIL("no InputError");
        } catch (const InputError& e) {
            QVERIFY2(QString(e.what()).contains("original-context = " + given.first().mid(17) + " is out of range"),
                     e.what());
        }
        return;
    }
    QCOMPARE(scalingContext(modelSchemeSpec(next)), effectiveL); // modelSchemeSpec validates the method too
}

// validateRotaryScaling's cross-parameter rules, through makeSchemeSpec as every surface builds a spec.
void TestRotary::methodRules_data()
{
    QTest::addColumn<QString>("method");
    QTest::addColumn<QStringList>("sets");
    QTest::addColumn<int>("context");   // 0: no model
    QTest::addColumn<QString>("error"); // empty: accepted
    QTest::newRow("yarn beta-fast = beta-slow") << "yarn" << QStringList{"beta-fast=4", "beta-slow=4"} << 64 << "";
    QTest::newRow("yarn beta-fast < beta-slow")
        << "yarn" << QStringList{"beta-fast=3", "beta-slow=4"} << 64
        << "scaling yarn: beta-fast = 3 must be at least beta-slow = 4; allowed: beta-fast >= beta-slow";
    QTest::newRow("original-context = context") << "yarn" << QStringList{"original-context=64"} << 64 << "";
    QTest::newRow("original-context past the context")
        << "llama3" << QStringList{"original-context=65"} << 64
        << "scaling llama3: original-context = 65 must not exceed the context 64; allowed: integers in [0, 64] (0: "
           "the context)";
    QTest::newRow("rerope window under an original-context past the context")
        << "rerope" << QStringList{"window=40", "original-context=64"} << 32
        << "scaling rerope: original-context = 64 must not exceed the context 32";
    QTest::newRow("original-context without a model") << "rerope" << QStringList{"original-context=64"} << 0 << "";
    QTest::newRow("ntk dim 2") << "ntk" << QStringList{"dim=2"} << 0
                               << "scaling ntk: dim = 2 is not allowed; allowed: even dims >= 4";
    QTest::newRow("dynamic-ntk dim 2") << "dynamic-ntk" << QStringList{"dim=2"} << 64
                                       << "scaling dynamic-ntk: dim = 2 is not allowed";
    QTest::newRow("ntk dim 4") << "ntk" << QStringList{"dim=4"} << 0 << "";
    QTest::newRow("pi dim 2") << "pi" << QStringList{"dim=2"} << 0 << "";
}

void TestRotary::methodRules()
{
    QFETCH(QString, method);
    QFETCH(QStringList, sets);
    QFETCH(int, context);
    QFETCH(QString, error);
    std::vector<std::string> assignments;
    for (const QString& a : sets)
        assignments.push_back(a.toStdString());
    try {
        const SchemeSpec spec = makeSchemeSpec("rope", 1, false, assignments, context, false, method.toStdString());
        QVERIFY2(error.isEmpty(), "accepted");
        QVERIFY(std::isfinite(rotaryScaling(spec, 256).scaledBase)); // a method it takes has numbers
    } catch (const InputError& e) {
        QVERIFY2(!error.isEmpty() && QString(e.what()).contains(error), e.what());
    }
}

// A model's scaling settings set the method's parameters only (eval --set, a checkpoint's scaling_params): a scheme
// parameter among them is refused, not silently applied to the scheme.
void TestRotary::scalingSettingsAreTheMethods_data()
{
    QTest::addColumn<QString>("scheme");
    QTest::addColumn<QString>("method");
    QTest::addColumn<QString>("setting");
    QTest::addColumn<QString>("error"); // empty: accepted
    QTest::newRow("yarn factor") << "rope"
                                 << "yarn"
                                 << "factor=2"
                                 << "";
    QTest::newRow("rerope window") << "rope"
                                   << "rerope"
                                   << "window=3"
                                   << "";
    QTest::newRow("yarn base") << "rope"
                               << "yarn"
                               << "base=500"
                               << "method yarn has no parameter 'base' (base=500); its parameters: factor, beta-fast";
    QTest::newRow("no method, dim") << "rope"
                                    << "none"
                                    << "dim=8"
                                    << "method none has no parameter 'dim' (dim=8); its parameters: none";
    QTest::newRow("no method, local window") << "local"
                                             << "none"
                                             << "window=4"
                                             << "method none has no parameter 'window' (window=4)";
    QTest::newRow("malformed") << "rope"
                               << "pi"
                               << "factor"
                               << "method pi: setting 'factor' is not NAME=VALUE";
}

void TestRotary::scalingSettingsAreTheMethods()
{
    QFETCH(QString, scheme);
    QFETCH(QString, method);
    QFETCH(QString, setting);
    QFETCH(QString, error);
    ModelConfig c = smallModelConfig(scheme.toStdString(), 1, 8, 2, 8, 8);
    c.scaling = method.toStdString();
    c.scalingSettings = {setting.toStdString()};
    try {
        const SchemeSpec spec = modelSchemeSpec(c);
        QVERIFY2(error.isEmpty(), "accepted");
        const std::string name = setting.section('=', 0, 0).toStdString();
        QCOMPARE(spec.scalingParams.at(name), setting.section('=', 1).toDouble());
    } catch (const InputError& e) {
        QVERIFY2(!error.isEmpty() && QString(e.what()).contains(error), e.what());
    }
}

void TestRotary::longropeClosedForm_data()
{
    QTest::addColumn<int>("length");
    QTest::addColumn<double>("factor");
    QTest::addColumn<double>("attentionFactor"); // the parameter; 0 = the default
    QTest::addColumn<bool>("lists");
    QTest::addRow("within L: short factors") << 16 << 4.0 << 0.0 << true;
    QTest::addRow("past L: long factors") << 17 << 4.0 << 0.0 << true;
    QTest::addRow("attention factor given") << 40 << 4.0 << 1.5 << true;
    QTest::addRow("s = 1: attention factor 1") << 40 << 1.0 << 0.0 << true;
    QTest::addRow("no lists: every factor 1") << 40 << 8.0 << 0.0 << false;
}

// θ'_i = θ_i / f_i with f the long list once n > L, the short list otherwise; attention factor √(1 + ln s / ln L)
// (1 when s <= 1) unless given: written out here from _compute_longrope_parameters, not from the method's code.
void TestRotary::longropeClosedForm()
{
    QFETCH(int, length);
    QFETCH(double, factor);
    QFETCH(double, attentionFactor);
    QFETCH(bool, lists);
    const int dim = 8, L = 16;
    const double base = 10000;
    const std::vector<double> shortFactors{1.0, 1.25, 1.5, 2.0}, longFactors{1.0, 2.5, 4.0, 8.0};
    SchemeSpec spec = makeSchemeSpec("rope", 4, false,
                                     {"dim=8", "base=10000", "factor=" + std::to_string(factor),
                                      "attention-factor=" + std::to_string(attentionFactor), "original-context=16"},
                                     64, false, "longrope");
    if (lists) {
        spec.shortFactors = shortFactors;
        spec.longFactors = longFactors;
    }
    validateRotaryScaling(spec);
    const RotaryScaling s = rotaryScaling(spec, length);
    for (int i = 0; i < dim / 2; ++i) {
        const double f = !lists ? 1.0 : length > L ? longFactors[i] : shortFactors[i];
        const double expected = 1.0 / (f * std::pow(base, 2.0 * i / dim));
        QVERIFY2(close(s.thetaScaled[i], expected, 1e-12), qPrintable(QString("pair %1").arg(i)));
    }
    const double af = attentionFactor > 0 ? attentionFactor
                      : factor <= 1       ? 1.0
                                          : std::sqrt(1 + std::log(factor) / std::log(L));
    QVERIFY(close(s.attentionFactor, af, 1e-12));
    QVERIFY(close(s.logitScale, af * af, 1e-12));
    // A list of the wrong length, a factor that is not positive, lists under another method: refused by name.
    SchemeSpec wrong = spec;
    wrong.shortFactors = {1.0, 2.0};
    QVERIFY_THROWS_EXCEPTION(InputError, validateRotaryScaling(wrong));
    wrong.shortFactors = {1.0, 0.0, 1.0, 1.0};
    QVERIFY_THROWS_EXCEPTION(InputError, validateRotaryScaling(wrong));
    SchemeSpec other = makeSchemeSpec("rope", 4, false, {"dim=8"}, 64, false, "pi");
    other.longFactors = longFactors;
    QVERIFY_THROWS_EXCEPTION(InputError, validateRotaryScaling(other));
}


// The kernel's cos/sin table (kernel::RotaryTable) against each cell's own rotation in double, rounded to float: the
// table steps from row to row by one complex multiply between libm anchors, which may move a cell by one float ulp at
// most, on every pass of the method (rerope's second pass has its own slope and offset), on 1, 2 and 3 threads (each
// thread's rows start on an anchor).
void TestRotary::kernelTableIsEachCellsRotation_data()
{
    QTest::addColumn<QString>("method");
    QTest::addColumn<QStringList>("sets");
    QTest::addColumn<int>("length");
    QTest::addColumn<int>("threads");
    const QStringList none;
    QTest::newRow("rope 1 thread") << "none" << none << 1000 << 1;
    QTest::newRow("rope 2 threads") << "none" << none << 3001 << 2;
    QTest::newRow("rope 3 threads, past 4096 rows") << "none" << none << 5003 << 3;
    QTest::newRow("rope base 1e6") << "none" << QStringList{"base=1000000"} << 2049 << 2;
    QTest::newRow("yarn x4 (attention factor)") << "yarn" << QStringList{"factor=4"} << 4099 << 2;
    QTest::newRow("pi x8") << "pi" << QStringList{"factor=8"} << 1537 << 3;
    QTest::newRow("dynamic-ntk past the context") << "dynamic-ntk" << QStringList{"factor=2"} << 3000 << 2;
    QTest::newRow("rerope: two passes") << "rerope" << QStringList{"window=100"} << 1200 << 2;
    QTest::newRow("leaky-rerope: a slope below 1") << "leaky-rerope" << QStringList{"window=64", "leak=16"} << 1200
                                                   << 3;
    QTest::newRow("self-extend: listed positions") << "self-extend" << QStringList{"window=64", "group=4"} << 900 << 2;
}

void TestRotary::kernelTableIsEachCellsRotation()
{
    QFETCH(QString, method);
    QFETCH(QStringList, sets);
    QFETCH(int, length);
    QFETCH(int, threads);
    constexpr int D = 64, context = 512;
    std::vector<std::string> assignments = {"dim=" + std::to_string(D)};
    for (const QString& a : sets)
        assignments.push_back(a.toStdString());
    const SchemeSpec spec = makeSchemeSpec("rope", 1, false, assignments, context, false, method.toStdString());
    const PositionBias bias(spec, length);
    AttentionDims dims;
    dims.length = length;
    dims.headDim = D;
    const detail::RotaryFrequencies frequencies = detail::rotaryFrequencies(spec, D, length);
    QVERIFY(frequencies.active());
    const std::vector<kernel::Pass> passes = kernel::passesOf(bias, length);
    // The table is built on `threads` threads; the guard gives the process its own count back on every way out.
    struct ThreadsFor {
        int saved = omp_get_max_threads();
        explicit ThreadsFor(int n) { omp_set_num_threads(n); }
        ~ThreadsFor() { omp_set_num_threads(saved); }
    };
    for (size_t p = 0; p < passes.size(); ++p) {
        const kernel::RotaryTable table = [&] {
            const ThreadsFor team(threads);
            return kernel::RotaryTable(frequencies, dims, passes[p]);
        }();
        const int pairs = frequencies.pairs();
        QCOMPARE(table.pairs, pairs);
        // The float ulps between the table and the cell's own rotation, and where the worst one is (the message is
        // built once, after the walk: per cell it cost most of the test's time under ASan).
        int worst = 0, worstRow = 0, worstPair = 0;
        bool worstIsKey = false;
        float worstGot = 0, worstWant = 0;
        for (int m = 0; m < length; ++m)
            for (int i = 0; i < pairs; ++i) {
                const size_t at = static_cast<size_t>(m) * pairs + i;
                for (const bool isKey : {false, true}) {
                    double c, s;
                    frequencies.rotation(isKey ? passes[p].keyPosition(m) : passes[p].queryPosition(m), i, isKey, c, s);
                    const float gotC = isKey ? table.cosK[at] : table.cosQ[at];
                    const float gotS = isKey ? table.sinK[at] : table.sinQ[at];
                    for (const auto& [got, want] : {std::pair{gotC, static_cast<float>(c)},
                                                    std::pair{gotS, static_cast<float>(s)}}) {
                        int ulps = 0;
                        for (float f = std::min(got, want); f < std::max(got, want) && ulps < 1000; ++ulps)
                            f = std::nextafter(f, std::max(got, want));
                        if (ulps > worst) {
                            worst = ulps;
                            worstRow = m;
                            worstPair = i;
                            worstIsKey = isKey;
                            worstGot = got;
                            worstWant = want;
                        }
                    }
                }
            }
        QVERIFY2(worst <= 1, qPrintable(QString("pass %1 row %2 pair %3 %4: %5 against %6 (%7 ulps, at most 1000 "
                                                "counted)")
                                            .arg(p)
                                            .arg(worstRow)
                                            .arg(worstPair)
                                            .arg(worstIsKey ? "key" : "query")
                                            .arg(double(worstGot), 0, 'g', 9)
                                            .arg(double(worstWant), 0, 'g', 9)
                                            .arg(worst)));
    }
}

PLAB_QTEST_APPLESS_MAIN(TestRotary)
#include "tst_rotary.moc"
