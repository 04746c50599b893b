// FIRE (issue 20) against the committed NumPy reference (tests/reference/make_fire_reference.py): the bias, the fused
// kernel's forward and its plain twin; the kernel's backward against the twin, the twin's MLP, c and threshold
// gradients against finite differences; the prior, a model's tensors and a trained checkpoint.
#include "attention/attention.h"
#include "attention/attention_reference.h"
#include "base/errors.h"
#include "base/random.h"
#include "cli_runner.h"
#include "compare.h"
#include "model/checkpoint.h"
#include "model/model.h"
#include "schemes/position_bias.h"
#include "test_main.h"
#include "views/fire_curves.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include "json_arrays.h"

#include <omp.h>

#include <cmath>

using namespace plab;

namespace {

QJsonArray referenceCases()
{
    static const QJsonArray cases = readReferenceArray("fire_reference.json", "fire");
    return cases;
}

// The case's scheme: fire with its init_L as the threshold parameter and its learned values.
SchemeSpec caseSpec(const QJsonObject& c)
{
    SchemeSpec spec =
        makeSchemeSpec("fire", c["heads"].toInt(), false,
                       {"c=" + exactText(c["c"].toDouble()), "threshold=" + exactText(c["init_L"].toDouble())});
    spec.fire.w1 = toVector(c["w1"]);
    spec.fire.b1 = toVector(c["b1"]);
    spec.fire.w2 = toVector(c["w2"]);
    spec.fire.b2 = toVector(c["b2"]);
    spec.fire.c = c["c"].toDouble();
    spec.fire.lMultiplier = c["l_multiplier"].toDouble();
    return spec;
}

std::vector<float> randomFloats(size_t count, uint64_t seed)
{
    Rng rng(seed);
    std::vector<float> x(count);
    for (float& value : x)
        value = static_cast<float>(rng.normal());
    return x;
}

// Every field of a FIRE gradient, flattened in a fixed order (w1, b1, w2, b2, c, lMultiplier).
std::vector<double> flatten(const FireParams& p)
{
    std::vector<double> out;
    for (const std::vector<double>* v : {&p.w1, &p.b1, &p.w2, &p.b2})
        out.insert(out.end(), v->begin(), v->end());
    out.push_back(p.c);
    out.push_back(p.lMultiplier);
    return out;
}

// The parameter at flat index i of flatten().
double& fieldAt(FireParams& p, size_t i)
{
    for (std::vector<double>* v : {&p.w1, &p.b1, &p.w2, &p.b2}) {
        if (i < v->size())
            return (*v)[i];
        i -= v->size();
    }
    return i == 0 ? p.c : p.lMultiplier;
}

} // namespace

class TestFire : public QObject {
    Q_OBJECT
private slots:
    void biasMatchesNumpy_data();
    void biasMatchesNumpy();
    void forwardMatchesNumpy_data() { biasMatchesNumpy_data(); }
    void forwardMatchesNumpy();
    void kernelBackwardMatchesReference_data();
    void kernelBackwardMatchesReference();
    void referenceGradientsMatchFiniteDifferences_data() { kernelBackwardMatchesReference_data(); }
    void referenceGradientsMatchFiniteDifferences();
    void identicalForOneAndTwoThreads();
    void priorFollowsReferenceInitialisation();
    void refusesBadInput_data();
    void refusesBadInput();
    void modelCarriesTheFunction();
    void cliTrainsAndEvaluates();
};

void TestFire::biasMatchesNumpy_data()
{
    QTest::addColumn<int>("index");
    for (int i = 0; i < referenceCases().size(); ++i) {
        const QJsonObject c = referenceCases()[i].toObject();
        QTest::addRow("H=%d/N=%d/c=%g/T=%g", c["heads"].toInt(), c["length"].toInt(), c["c"].toDouble(),
                      std::abs(c["init_L"].toDouble() * c["l_multiplier"].toDouble()))
            << i;
    }
}

void TestFire::biasMatchesNumpy()
{
    QFETCH(int, index);
    const QJsonObject c = referenceCases()[index].toObject();
    const SchemeSpec spec = caseSpec(c);
    const int N = c["length"].toInt();
    const PositionBias bias(spec, N);
    QVERIFY(bias.fire() != nullptr);
    const QJsonArray heads = c["bias"].toArray();
    for (int h = 0; h < spec.heads; ++h)
        for (int m = 0; m < N; ++m) {
            const std::vector<double> row = toVector(heads[h].toArray()[m]);
            QCOMPARE(int(row.size()), m + 1);
            for (int n = 0; n <= m; ++n) {
                const double exact = bias.fire()->bias(h, m, n);
                QVERIFY2(
                    std::abs(exact - row[n]) < 1e-7 * (1 + std::abs(row[n])),
                    qPrintable(QString("h %1 (%2, %3): %4 vs NumPy %5").arg(h).arg(m).arg(n).arg(exact).arg(row[n])));
                QVERIFY(std::abs(bias.additive(h, m, n) - row[n]) < 1e-5 * (1 + std::abs(row[n])));
            }
            QVERIFY(!bias.visible(m, m + 1, N) || m + 1 >= N);
        }
}

void TestFire::forwardMatchesNumpy()
{
    QFETCH(int, index);
    const QJsonObject c = referenceCases()[index].toObject();
    const SchemeSpec spec = caseSpec(c);
    const int N = c["length"].toInt(), D = c["dim"].toInt();
    const PositionBias bias(spec, N);
    const AttentionDims dims{1, spec.heads, N, D};
    const std::vector<float> q = toFloats(c["q"]), k = toFloats(c["k"]), v = toFloats(c["v"]);
    const std::vector<double> expected = toVector(c["out"]);
    const AttentionForward fused = attentionForward(bias, dims, q.data(), k.data(), v.data());
    const AttentionReferenceForward twin = attentionForwardReference(bias, dims, q.data(), k.data(), v.data());
    QCOMPARE(fused.out.size(), expected.size());
    for (size_t i = 0; i < expected.size(); ++i) {
        QVERIFY2(std::abs(fused.out[i] - expected[i]) < 2e-5 * (1 + std::abs(expected[i])),
                 qPrintable(QString("out[%1]: kernel %2, NumPy %3").arg(i).arg(fused.out[i]).arg(expected[i])));
        QVERIFY2(std::abs(twin.out[i] - expected[i]) < 1e-5 * (1 + std::abs(expected[i])),
                 qPrintable(QString("out[%1]: twin %2, NumPy %3").arg(i).arg(twin.out[i]).arg(expected[i])));
    }
}

void TestFire::kernelBackwardMatchesReference_data()
{
    // Both backward strategies (head-parallel from 4 heads on, two-pass below), several 64-row blocks, and thresholds
    // below the first row block, inside the sequence and past it (only distance-only rows).
    QTest::addColumn<int>("batch");
    QTest::addColumn<int>("heads");
    QTest::addColumn<int>("length");
    QTest::addColumn<int>("dim");
    QTest::addColumn<double>("threshold");
    QTest::addColumn<double>("multiplier");
    QTest::newRow("two-pass/T inside") << 1 << 2 << 150 << 8 << 40.0 << 1.35;
    QTest::newRow("two-pass/T past N") << 1 << 3 << 97 << 6 << 512.0 << 1.0;
    QTest::newRow("head-parallel/T inside") << 2 << 3 << 131 << 4 << 100.0 << -0.7;
    QTest::newRow("head-parallel/T small") << 1 << 4 << 70 << 10 << 3.0 << 1.1;
}

void TestFire::kernelBackwardMatchesReference()
{
    QFETCH(int, batch);
    QFETCH(int, heads);
    QFETCH(int, length);
    QFETCH(int, dim);
    QFETCH(double, threshold);
    QFETCH(double, multiplier);
    SchemeSpec spec = makeSchemeSpec("fire", heads, false, {"c=0.3", "threshold=" + exactText(threshold)});
    spec.fire = fireInitialParams(heads, 0.3);
    spec.fire.lMultiplier = multiplier;
    const PositionBias bias(spec, length);
    const AttentionDims dims{batch, heads, length, dim};
    const std::vector<float> q = randomFloats(dims.elements(), 1), k = randomFloats(dims.elements(), 2),
                             v = randomFloats(dims.elements(), 3), dOut = randomFloats(dims.elements(), 4);
    const AttentionForward f = attentionForward(bias, dims, q.data(), k.data(), v.data());
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
    const std::vector<double> fused = flatten(g.dFire), twin = flatten(ref.dFire);
    QCOMPARE(fused.size(), twin.size());
    QCOMPARE(fused.size(), size_t(2 * kFireWidth + heads * kFireWidth + heads + 2));
    double scale = 0;
    for (double x : twin)
        scale = std::max(scale, std::abs(x));
    QVERIFY(scale > 0);
    for (size_t i = 0; i < fused.size(); ++i)
        QVERIFY2(std::abs(fused[i] - twin[i]) < 1e-4 * (scale + std::abs(twin[i])),
                 qPrintable(QString("dFire[%1]: kernel %2, twin %3").arg(i).arg(fused[i]).arg(twin[i])));
    // The threshold multiplier moves the normaliser only of rows below T: a gradient exactly when such rows exist.
    QVERIFY(twin.back() != 0.0);
}

void TestFire::referenceGradientsMatchFiniteDifferences()
{
    QFETCH(int, batch);
    QFETCH(int, heads);
    QFETCH(int, length);
    QFETCH(int, dim);
    QFETCH(double, threshold);
    QFETCH(double, multiplier);
    // Shorter sequences: every finite difference runs the double reference twice.
    const int N = std::min(length, 40);
    SchemeSpec spec = makeSchemeSpec("fire", heads, false, {"c=0.3", "threshold=" + exactText(threshold / 4)});
    spec.fire = fireInitialParams(heads, 0.3);
    spec.fire.lMultiplier = multiplier;
    const AttentionDims dims{batch, heads, N, dim};
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
    // The twin evaluates FIRE in double: small steps, which rarely move a hidden unit across its ReLU kink.
    const std::vector<double> analytic = flatten(g.dFire);
    const double eps = 1e-6;
    for (size_t i = 0; i < analytic.size(); ++i) {
        SchemeSpec up = spec, down = spec;
        fieldAt(up.fire, i) += eps;
        fieldAt(down.fire, i) -= eps;
        const double numeric = (loss(up) - loss(down)) / (2 * eps);
        QVERIFY2(std::abs(analytic[i] - numeric) < 2e-5 * (1 + std::abs(numeric)),
                 qPrintable(QString("dFire[%1]: analytic %2, numeric %3").arg(i).arg(analytic[i]).arg(numeric)));
    }
}

void TestFire::identicalForOneAndTwoThreads()
{
    SchemeSpec spec = makeSchemeSpec("fire", 2, false, {"threshold=30"});
    const AttentionDims dims{1, 2, 200, 8};
    const PositionBias bias(spec, dims.length);
    const std::vector<float> q = randomFloats(dims.elements(), 11), k = randomFloats(dims.elements(), 12),
                             v = randomFloats(dims.elements(), 13), dOut = randomFloats(dims.elements(), 14);
    auto run = [&](int threads) {
        const int saved = omp_get_max_threads();
        omp_set_num_threads(threads);
        const AttentionForward f = attentionForward(bias, dims, q.data(), k.data(), v.data());
        AttentionGradients g = attentionBackward(bias, dims, q.data(), k.data(), v.data(), f, dOut.data());
        omp_set_num_threads(saved);
        return std::pair{f.out, flatten(g.dFire)};
    };
    const auto one = run(1), two = run(2);
    QVERIFY(one.first == two.first);
    QVERIFY(one.second == two.second);
}

void TestFire::priorFollowsReferenceInitialisation()
{
    // PyTorch's nn.Linear default: U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for weights and biases; c = 0.1 and
    // L_multiplier = 1 with init_L = 512 in the reference code, the catalogue's defaults.
    const SchemeSpec spec = makeSchemeSpec("fire", 6, false);
    QCOMPARE(spec.param("c"), 0.1);
    QCOMPARE(spec.param("threshold"), 512.0);
    const FireParams p = fireInitialParams(6, spec.param("c"));
    QCOMPARE(int(p.w1.size()), kFireWidth);
    QCOMPARE(int(p.w2.size()), 6 * kFireWidth);
    double largest = 0;
    for (double w : p.w1)
        largest = std::max(largest, std::abs(w));
    QVERIFY(largest <= 1.0 && largest > 0.5);
    const double bound = 1.0 / std::sqrt(32.0);
    for (double w : p.w2)
        QVERIFY(std::abs(w) <= bound);
    for (double b : p.b2)
        QVERIFY(std::abs(b) <= bound);
    QCOMPARE(p.c, 0.1);
    QCOMPARE(p.lMultiplier, 1.0);
    QVERIFY(fireInitialParams(6, 0.1) == p); // one fixed stream: every untrained FIRE of 6 heads is this one
    // The untrained bias view is this prior.
    const PositionBias bias(spec, 64);
    const FireFunction f(p, 512);
    QCOMPARE(double(bias.view(3, 40, 7)), double(static_cast<float>(f.bias(3, 40, 7))));
}

void TestFire::refusesBadInput_data()
{
    QTest::addColumn<QString>("setting");
    QTest::addColumn<QString>("message");
    QTest::newRow("c = 0") << "c=0"
                           << "c = 0 is out of range; allowed: (0, 1000]";
    QTest::newRow("threshold < 0") << "threshold=-3"
                                   << "threshold = -3 is out of range; allowed: (0, 10000000]";
}

void TestFire::refusesBadInput()
{
    QFETCH(QString, setting);
    QFETCH(QString, message);
    try {
        makeSchemeSpec("fire", 2, false, {setting.toStdString()});
        QFAIL("accepted");
    } catch (const InputError& e) {
        QVERIFY2(QString(e.what()).contains(message), e.what());
    }
    try {
        makeSchemeSpec("fire", 2, true);
        QFAIL("bidirectional fire accepted");
    } catch (const InputError& e) {
        QVERIFY2(QString(e.what()).contains("bidirectional"), e.what());
    }
    SchemeSpec spec = makeSchemeSpec("fire", 2, false);
    spec.fire = fireInitialParams(3, 0.1); // learned for 3 heads, used with 2
    QVERIFY_THROWS_EXCEPTION(InputError, validateSchemeSpec(spec));
}

void TestFire::modelCarriesTheFunction()
{
    ModelConfig config;
    config.scheme = "fire";
    config.layers = 1;
    config.dModel = 16;
    config.heads = 2;
    config.dFf = 32;
    config.context = 16;
    Model model(config);
    // The model's float tensors hold the prior the untrained view shows.
    const std::vector<double> held = flatten(model.schemeSpec().fire), prior = flatten(fireInitialParams(2, 0.1));
    QCOMPARE(held.size(), prior.size());
    for (size_t i = 0; i < held.size(); ++i)
        QCOMPARE(held[i], double(static_cast<float>(prior[i])));
    for (const char* name : {"scheme.fire_w1", "scheme.fire_b1", "scheme.fire_w2", "scheme.fire_b2", "scheme.fire_c",
                             "scheme.fire_l_multiplier"})
        QVERIFY(!model.tensor(name).decay);
}

void TestFire::cliTrainsAndEvaluates()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString corpus = test::writeStructuredCorpus(dir.path(), 6000);
    const QString model = dir.path() + "/fire.safetensors";
    const test::CliResult trained =
        test::runCli({"train", "--scheme", "fire", "--corpus", corpus, "--layers",  "1",  "--d-model",
                      "16",    "--heads",  "2",    "--d-ff",   "16",   "--context", "16", "--steps",
                      "4",     "--batch",  "2",    "--lr",     "0.01", "--quiet",   "-o", model});
    QVERIFY2(trained.exitCode == 0, trained.err.constData());
    const LoadedCheckpoint loaded = loadCheckpoint(model.toStdString());
    const SchemeSpec spec = loaded.model->schemeSpec();
    QCOMPARE(int(spec.kind), int(SchemeKind::Fire));
    // Trained: the MLP moved away from the prior, and the checkpoint holds it.
    const std::vector<double> trainedValues = flatten(spec.fire), prior = flatten(fireInitialParams(2, 0.1));
    const test::ErrorMax moved = test::maxError(trainedValues, prior);
    QVERIFY2(moved.value() > 1e-4, qPrintable(moved.message("largest change")));
    const test::CliResult evaluated =
        test::runCli({"eval", model, "--corpus", corpus, "--lengths", "16,64", "-o", dir.path() + "/eval.csv"});
    QVERIFY2(evaluated.exitCode == 0, evaluated.err.constData());

    // The bias view's curves: the learned function at row 40 beside the prior, per head and distance 0..40.
    const QString curveFile = dir.path() + "/curve.json";
    const test::CliResult curve = test::runCli({"fire-curve", model, "--row", "40", "-o", curveFile});
    QVERIFY2(curve.exitCode == 0, curve.err.constData());
    QFile f(curveFile);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QJsonObject json = QJsonDocument::fromJson(f.readAll()).object();
    const QJsonArray rows = json["rows"].toArray();
    QCOMPARE(rows.size(), 2 * 41);
    const FireFunction priorFunction(fireInitialParams(2, 0.1), 512), learnedFunction(spec.fire, 512);
    test::ErrorMax apart;
    for (const QJsonValue& value : rows) {
        const QJsonObject r = value.toObject();
        const int h = r["head"].toInt(), distance = r["distance"].toInt();
        const double untrained = priorFunction.bias(h, 40, 40 - distance);
        const double learned = learnedFunction.bias(h, 40, 40 - distance);
        QVERIFY(std::abs(r["untrained"].toDouble() - untrained) < 1e-6 * (1 + std::abs(untrained)));
        QVERIFY(std::abs(r["learned"].toDouble() - learned) < 1e-6 * (1 + std::abs(learned)));
        apart.add(r["learned"].toDouble(), r["untrained"].toDouble());
    }
    QVERIFY2(apart.value() > 1e-4, qPrintable(apart.message("learned against untrained")));
    const test::CliResult missing = test::runCli({"fire-curve", dir.path() + "/none.safetensors"});
    QCOMPARE(missing.exitCode, 2);
    try {
        fireCurves(makeSchemeSpec("alibi", 2, false), 5);
        QFAIL("alibi accepted");
    } catch (const InputError& e) {
        QVERIFY2(QString(e.what()).contains("the FIRE curves need scheme fire"), e.what());
    }
}

PLAB_QTEST_APPLESS_MAIN(TestFire)
#include "tst_fire.moc"
