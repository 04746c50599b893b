// SSMax and the sink logit (issue 20) against the committed NumPy reference
// (tests/reference/make_softmax_modifiers_reference.py): the fused kernel and its plain twin; the kernel's backward
// against the twin with several schemes beneath, the twin's gradients of s and z against finite differences; a model
// trained with both.
#include "attention/attention.h"
#include "attention/attention_reference.h"
#include "base/errors.h"
#include "base/random.h"
#include "cli_runner.h"
#include "model/checkpoint.h"
#include "model/model.h"
#include "schemes/position_bias.h"
#include "schemes/softmax_modifiers.h"
#include "test_main.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include "json_arrays.h"

#include <cmath>

using namespace plab;

namespace {

QJsonArray referenceCases()
{
    static const QJsonArray cases = readReferenceArray("softmax_modifiers_reference.json", "cases");
    return cases;
}

std::vector<float> randomFloats(size_t count, uint64_t seed)
{
    Rng rng(seed);
    std::vector<float> x(count);
    for (float& value : x)
        value = static_cast<float>(rng.normal());
    return x;
}

std::vector<double> randomValues(int count, double lo, double hi, uint64_t seed)
{
    Rng rng(seed);
    std::vector<double> x(count);
    for (double& value : x)
        value = lo + (hi - lo) * rng.uniform();
    return x;
}

} // namespace

class TestSoftmaxModifiers : public QObject {
    Q_OBJECT
private slots:
    void forwardMatchesNumpy_data();
    void forwardMatchesNumpy();
    void kernelBackwardMatchesReference_data();
    void kernelBackwardMatchesReference();
    void referenceGradientsMatchFiniteDifferences_data() { kernelBackwardMatchesReference_data(); }
    void referenceGradientsMatchFiniteDifferences();
    void priorsAndChecks();
    void cliTrainsAndEvaluates();
};

void TestSoftmaxModifiers::forwardMatchesNumpy_data()
{
    QTest::addColumn<int>("index");
    for (int i = 0; i < referenceCases().size(); ++i) {
        const QJsonObject c = referenceCases()[i].toObject();
        QTest::addRow("%s/H=%d/N=%d%s%s", qPrintable(c["scheme"].toString()), c["heads"].toInt(), c["length"].toInt(),
                      c.contains("ssmax_scales") ? "/ssmax" : "", c.contains("sink_logits") ? "/sink" : "")
            << i;
    }
}

void TestSoftmaxModifiers::forwardMatchesNumpy()
{
    QFETCH(int, index);
    const QJsonObject c = referenceCases()[index].toObject();
    const int H = c["heads"].toInt(), N = c["length"].toInt(), D = c["dim"].toInt();
    SchemeSpec spec = makeSchemeSpec(c["scheme"].toString().toStdString(), H, false);
    spec.ssmax = c.contains("ssmax_scales");
    spec.ssmaxScales = toVector(c["ssmax_scales"]);
    spec.sinkLogit = c.contains("sink_logits");
    spec.sinkLogits = toVector(c["sink_logits"]);
    const PositionBias bias(spec, N);
    const AttentionDims dims{1, H, N, D};
    const std::vector<float> q = toFloats(c["q"]), k = toFloats(c["k"]), v = toFloats(c["v"]);
    const std::vector<double> out = toVector(c["out"]), lse = toVector(c["lse"]);
    AttentionOptions options;
    options.wantProbabilities = true;
    const AttentionForward fused = attentionForward(bias, dims, q.data(), k.data(), v.data(), options);
    const AttentionReferenceForward twin = attentionForwardReference(bias, dims, q.data(), k.data(), v.data());
    for (size_t i = 0; i < out.size(); ++i) {
        QVERIFY2(std::abs(fused.out[i] - out[i]) < 2e-5 * (1 + std::abs(out[i])),
                 qPrintable(QString("out[%1]: kernel %2, NumPy %3").arg(i).arg(fused.out[i]).arg(out[i])));
        QVERIFY2(std::abs(twin.out[i] - out[i]) < 1e-6 * (1 + std::abs(out[i])),
                 qPrintable(QString("out[%1]: twin %2, NumPy %3").arg(i).arg(twin.out[i]).arg(out[i])));
    }
    for (size_t i = 0; i < lse.size(); ++i) {
        QVERIFY2(std::abs(fused.logSumExp[i] - lse[i]) < 2e-5 * (1 + std::abs(lse[i])),
                 qPrintable(QString("lse[%1]: kernel %2, NumPy %3").arg(i).arg(fused.logSumExp[i]).arg(lse[i])));
        QVERIFY(std::abs(twin.logSumExp[i] - lse[i]) < 1e-6 * (1 + std::abs(lse[i])));
    }
    // With a sink the visible probabilities sum to 1 - p_sink < 1; without one, to 1.
    for (int m = 0; m < N; ++m) {
        double sum = 0;
        for (int n = 0; n < N; ++n)
            sum += fused.probabilities[static_cast<size_t>(m) * N + n];
        QVERIFY(spec.sinkLogit ? sum < 1 - 1e-4 : std::abs(sum - 1) < 1e-5);
    }
}

void TestSoftmaxModifiers::kernelBackwardMatchesReference_data()
{
    // Schemes beneath (additive, rotary with ReRoPE's second pass, trainable, FIRE, windowed with sinks), both backward
    // strategies (head-parallel from 4 heads), several 64-row blocks.
    QTest::addColumn<QString>("scheme");
    QTest::addColumn<QStringList>("sets");
    QTest::addColumn<QString>("scaling");
    QTest::addColumn<int>("batch");
    QTest::addColumn<int>("heads");
    QTest::addColumn<int>("length");
    QTest::addColumn<bool>("ssmax");
    QTest::addColumn<bool>("sink");
    QTest::newRow("alibi/ssmax/two-pass") << "alibi" << QStringList{} << "none" << 1 << 2 << 150 << true << false;
    QTest::newRow("alibi/sink/head-parallel") << "alibi" << QStringList{} << "none" << 2 << 2 << 97 << false << true;
    QTest::newRow("rope+rerope/both") << "rope" << QStringList{"window=20"} << "rerope" << 1 << 3 << 90 << true << true;
    QTest::newRow("kerple-log/both/head-parallel")
        << "kerple-log" << QStringList{} << "none" << 1 << 4 << 70 << true << true;
    QTest::newRow("fire/ssmax") << "fire" << QStringList{"threshold=30"} << "none" << 1 << 2 << 80 << true << false;
    QTest::newRow("local+sinks/both") << "local" << QStringList{"window=16", "sinks=3"} << "none" << 1 << 2 << 75
                                      << true << true;
    QTest::newRow("none/both") << "none" << QStringList{} << "none" << 1 << 1 << 66 << true << true;
}

namespace {

// The row's spec with random learned modifiers.
SchemeSpec modifiedSpec(const QString& scheme, const QStringList& sets, const QString& scaling, int heads, int length,
                        bool ssmax, bool sink)
{
    std::vector<std::string> assignments;
    for (const QString& s : sets)
        assignments.push_back(s.toStdString());
    const bool rotary = schemeByName(scheme.toStdString()).rotary;
    SchemeSpec spec = rotary ? makeSchemeSpecForHeadDim(scheme.toStdString(), heads, false, assignments, 8, "head dim",
                                                        length, false, scaling.toStdString())
                             : makeSchemeSpec(scheme.toStdString(), heads, false, assignments);
    spec.ssmax = ssmax;
    spec.sinkLogit = sink;
    if (ssmax)
        spec.ssmaxScales = randomValues(heads, 0.15, 0.6, 21);
    if (sink)
        spec.sinkLogits = randomValues(heads, -1.0, 2.0, 22);
    return spec;
}

} // namespace

void TestSoftmaxModifiers::kernelBackwardMatchesReference()
{
    QFETCH(QString, scheme);
    QFETCH(QStringList, sets);
    QFETCH(QString, scaling);
    QFETCH(int, batch);
    QFETCH(int, heads);
    QFETCH(int, length);
    QFETCH(bool, ssmax);
    QFETCH(bool, sink);
    const SchemeSpec spec = modifiedSpec(scheme, sets, scaling, heads, length, ssmax, sink);
    const PositionBias bias(spec, length);
    const AttentionDims dims{batch, heads, length, 8};
    const std::vector<float> q = randomFloats(dims.elements(), 1), k = randomFloats(dims.elements(), 2),
                             v = randomFloats(dims.elements(), 3), dOut = randomFloats(dims.elements(), 4);
    const AttentionForward f = attentionForward(bias, dims, q.data(), k.data(), v.data());
    const AttentionReferenceForward rf = attentionForwardReference(bias, dims, q.data(), k.data(), v.data());
    for (size_t i = 0; i < f.out.size(); ++i)
        QVERIFY2(std::abs(f.out[i] - rf.out[i]) < 2e-5 * (1 + std::abs(rf.out[i])),
                 qPrintable(QString("out[%1]").arg(i)));
    const AttentionGradients g = attentionBackward(bias, dims, q.data(), k.data(), v.data(), f, dOut.data());
    const AttentionReferenceGradients ref =
        attentionBackwardReference(bias, dims, q.data(), k.data(), v.data(), dOut.data());
    for (size_t i = 0; i < dims.elements(); ++i) {
        QVERIFY2(std::abs(g.dq[i] - ref.dq[i]) < 2e-4 * (1 + std::abs(ref.dq[i])),
                 qPrintable(QString("dq[%1]").arg(i)));
        QVERIFY2(std::abs(g.dk[i] - ref.dk[i]) < 2e-4 * (1 + std::abs(ref.dk[i])),
                 qPrintable(QString("dk[%1]").arg(i)));
        QVERIFY2(std::abs(g.dv[i] - ref.dv[i]) < 2e-4 * (1 + std::abs(ref.dv[i])),
                 qPrintable(QString("dv[%1]").arg(i)));
    }
    QCOMPARE(g.dSsmaxScales.size(), size_t(ssmax ? heads : 0));
    QCOMPARE(g.dSinkLogits.size(), size_t(sink ? heads : 0));
    for (size_t h = 0; h < g.dSsmaxScales.size(); ++h)
        QVERIFY2(
            std::abs(g.dSsmaxScales[h] - ref.dSsmaxScales[h]) < 1e-3 * (1 + std::abs(ref.dSsmaxScales[h])),
            qPrintable(QString("ds[%1]: kernel %2, twin %3").arg(h).arg(g.dSsmaxScales[h]).arg(ref.dSsmaxScales[h])));
    for (size_t h = 0; h < g.dSinkLogits.size(); ++h)
        QVERIFY2(
            std::abs(g.dSinkLogits[h] - ref.dSinkLogits[h]) < 1e-4 * (1 + std::abs(ref.dSinkLogits[h])),
            qPrintable(QString("dz[%1]: kernel %2, twin %3").arg(h).arg(g.dSinkLogits[h]).arg(ref.dSinkLogits[h])));
}

void TestSoftmaxModifiers::referenceGradientsMatchFiniteDifferences()
{
    QFETCH(QString, scheme);
    QFETCH(QStringList, sets);
    QFETCH(QString, scaling);
    QFETCH(int, batch);
    QFETCH(int, heads);
    QFETCH(int, length);
    QFETCH(bool, ssmax);
    QFETCH(bool, sink);
    const int N = std::min(length, 36); // each difference runs the double twin twice
    const SchemeSpec spec = modifiedSpec(scheme, sets, scaling, heads, N, ssmax, sink);
    const AttentionDims dims{batch, heads, N, 8};
    const std::vector<float> q = randomFloats(dims.elements(), 5), k = randomFloats(dims.elements(), 6),
                             v = randomFloats(dims.elements(), 7), dOut = randomFloats(dims.elements(), 8);
    const AttentionReferenceGradients g =
        attentionBackwardReference(PositionBias(spec, N), dims, q.data(), k.data(), v.data(), dOut.data());
    auto loss = [&](const SchemeSpec& s) {
        const AttentionReferenceForward r =
            attentionForwardReference(PositionBias(s, N), dims, q.data(), k.data(), v.data());
        double sum = 0;
        for (size_t i = 0; i < r.out.size(); ++i)
            sum += dOut[i] * r.out[i];
        return sum;
    };
    const double eps = 1e-6;
    auto check = [&](const char* name, const std::vector<double>& analytic, std::vector<double> SchemeSpec::*field) {
        for (size_t h = 0; h < analytic.size(); ++h) {
            SchemeSpec up = spec, down = spec;
            (up.*field)[h] += eps;
            (down.*field)[h] -= eps;
            const double numeric = (loss(up) - loss(down)) / (2 * eps);
            QVERIFY2(
                std::abs(analytic[h] - numeric) < 2e-5 * (1 + std::abs(numeric)),
                qPrintable(QString("%1[%2]: analytic %3, numeric %4").arg(name).arg(h).arg(analytic[h]).arg(numeric)));
        }
    };
    check("ds", g.dSsmaxScales, &SchemeSpec::ssmaxScales);
    check("dz", g.dSinkLogits, &SchemeSpec::sinkLogits);
    QCOMPARE(g.dSsmaxScales.size(), size_t(ssmax ? heads : 0));
    QCOMPARE(g.dSinkLogits.size(), size_t(sink ? heads : 0));
}

void TestSoftmaxModifiers::priorsAndChecks()
{
    SchemeSpec spec = makeSchemeSpec("alibi", 2, false, {}, 64);
    spec.ssmax = true;
    // The prior makes a causal row's factor logn's ln(m + 1) / ln(L): 1 at the context.
    QVERIFY(std::abs(ssmaxFactor(spec, 1, 64) - 1.0) < 1e-12);
    QVERIFY(std::abs(ssmaxFactor(spec, 0, 128) - std::log(128.0) / std::log(64.0)) < 1e-12);
    QCOMPARE(sinkLogit(spec, 0), 0.0);
    spec.ssmaxScales = {0.5, 0.0};
    try {
        validateSchemeSpec(spec);
        QFAIL("s = 0 accepted");
    } catch (const InputError& e) {
        QVERIFY2(QString(e.what()).contains("ssmax scale of head 1 = 0 is out of range"), e.what());
    }
    spec.ssmaxScales = {0.5};
    QVERIFY_THROWS_EXCEPTION(InputError, validateSchemeSpec(spec));
    spec.ssmaxScales.clear();
    spec.sinkLogits = {1.0, 2.0}; // without the modifier
    QVERIFY_THROWS_EXCEPTION(InputError, validateSchemeSpec(spec));
}

void TestSoftmaxModifiers::cliTrainsAndEvaluates()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString corpus = test::writeStructuredCorpus(dir.path(), 6000);
    const QString model = dir.path() + "/mods.safetensors";
    const test::CliResult trained = test::runCli(
        {"train",     "--scheme", "alibi",   "--ssmax", "--sink-logit", "--corpus", corpus,      "--layers", "2",
         "--d-model", "16",       "--heads", "2",       "--d-ff",       "16",       "--context", "16",       "--steps",
         "4",         "--batch",  "2",       "--lr",    "0.01",         "--quiet",  "-o",        model});
    QVERIFY2(trained.exitCode == 0, trained.err.constData());
    const LoadedCheckpoint loaded = loadCheckpoint(model.toStdString());
    QVERIFY(loaded.model->config().ssmax && loaded.model->config().sinkLogit);
    const SchemeSpec spec = loaded.model->schemeSpec();
    QCOMPARE(spec.ssmaxScales.size(), size_t(2));
    QCOMPARE(spec.sinkLogits.size(), size_t(2));
    // Trained: both moved from their priors (1/ln 16 and 0).
    QVERIFY(std::abs(spec.ssmaxScales[0] - 1 / std::log(16.0)) > 1e-5);
    QVERIFY(std::abs(spec.sinkLogits[1]) > 1e-5);
    const test::CliResult evaluated =
        test::runCli({"eval", model, "--corpus", corpus, "--lengths", "16,64", "-o", dir.path() + "/eval.csv"});
    QVERIFY2(evaluated.exitCode == 0, evaluated.err.constData());
}

PLAB_QTEST_APPLESS_MAIN(TestSoftmaxModifiers)
#include "tst_softmax_modifiers.moc"
