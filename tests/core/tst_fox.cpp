// FoX (issue 20) against the committed NumPy reference (tests/reference/make_fox_reference.py): the gates' F, the
// bias, the fused kernel's forward and its plain twin; the kernel's backward against the twin over (B, H, T, D);
// a long strongly forgetting sequence against a double-precision row oracle; finite differences through a whole
// model's loss (gate weights and biases, q, k, v); the per-input bias; the entropy curve of a model on a text; a
// trained checkpoint; bad input.
#include "attention/attention.h"
#include "attention/attention_reference.h"
#include "base/errors.h"
#include "base/random.h"
#include "cli_runner.h"
#include "compare.h"
#include "base/npy.h"
#include "model/checkpoint.h"
#include "model/corpus.h"
#include "model/fox_bias.h"
#include "model/model.h"
#include "model/positions_on_text.h"
#include "schemes/fox.h"
#include "schemes/position_bias.h"
#include "views/entropy.h"
#include "test_main.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include "json_arrays.h"

#include <omp.h>

#include <cmath>
#include <numeric>

using namespace plab;

namespace {

QJsonArray referenceCases()
{
    static const QJsonArray cases = readReferenceArray("fox_reference.json", "fox");
    return cases;
}

std::vector<float> randomFloats(size_t count, uint64_t seed, double mean = 0, double spread = 1)
{
    Rng rng(seed);
    std::vector<float> x(count);
    for (float& value : x)
        value = static_cast<float>(mean + spread * rng.normal());
    return x;
}

// F (slices, N) of gate logits z (slices, N), one slice after another, by the lab's own function.
std::vector<double> logForgetOf(const std::vector<float>& z, int slices, int N)
{
    std::vector<double> F(z.size());
    for (int s = 0; s < slices; ++s)
        foxCumulativeLogGates(z.data() + static_cast<size_t>(s) * N, N, 1, F.data() + static_cast<size_t>(s) * N);
    return F;
}

ModelConfig tinyFox()
{
    ModelConfig c;
    c.scheme = "fox";
    c.layers = 2;
    c.dModel = 16;
    c.heads = 2;
    c.dFf = 32;
    c.context = 12;
    c.seed = 5;
    return c;
}

// tinyFox with gates that differ strongly from token to token (weights N(0, 0.5), biases 1.5), so a curve scored
// against the untrained gate's line would be visibly off.
Model strongGateFox()
{
    Model model(tinyFox());
    for (int layer = 0; layer < 2; ++layer) {
        const std::string prefix = "layers." + std::to_string(layer) + ".attn.forget.";
        const ParameterTensor& weight = model.tensor(prefix + "weight");
        const std::vector<float> values = randomFloats(weight.size, 77 + layer, 0.0, 0.5);
        std::copy(values.begin(), values.end(), model.parameters().begin() + weight.offset);
        const ParameterTensor& bias = model.tensor(prefix + "bias");
        std::fill_n(model.parameters().begin() + bias.offset, bias.size, 1.5f);
    }
    model.parametersChanged();
    return model;
}

// -sum p ln p of each row of (H, N, N) probabilities p, in double: (H, N).
template <typename T>
std::vector<double> rowEntropiesOf(const std::vector<T>& probabilities, int heads, int N)
{
    std::vector<double> entropy(static_cast<size_t>(heads) * N, 0.0);
    for (size_t row = 0; row < entropy.size(); ++row)
        for (int n = 0; n < N; ++n) {
            const double p = probabilities[row * N + n];
            if (p > 0)
                entropy[row] -= p * std::log(p);
        }
    return entropy;
}

} // namespace

class TestFox : public QObject {
    Q_OBJECT
private slots:
    void gatesAndBiasMatchNumpy_data();
    void gatesAndBiasMatchNumpy();
    void forwardMatchesNumpy_data() { gatesAndBiasMatchNumpy_data(); }
    void forwardMatchesNumpy();
    void backwardMatchesNumpyDifferences_data() { gatesAndBiasMatchNumpy_data(); }
    void backwardMatchesNumpyDifferences();
    void kernelMatchesReference_data();
    void kernelMatchesReference();
    void longStronglyForgettingRows_data();
    void longStronglyForgettingRows();
    void identicalForOneAndTwoThreads();
    void modelGradientsMatchFiniteDifferences_data();
    void modelGradientsMatchFiniteDifferences();
    void untrainedGateIsAnAlibiLine();
    void biasOnText();
    void entropyCurveUsesTheTextsGates_data();
    void entropyCurveUsesTheTextsGates();
    void refusesBadInput_data();
    void refusesBadInput();
    void cliTrainsAndRoundTrips();
};

void TestFox::gatesAndBiasMatchNumpy_data()
{
    QTest::addColumn<int>("index");
    for (int i = 0; i < referenceCases().size(); ++i) {
        const QJsonObject c = referenceCases()[i].toObject();
        QTest::addRow("H=%d/N=%d/D=%d/gate mean %g", c["heads"].toInt(), c["length"].toInt(), c["dim"].toInt(),
                      c["gate_mean"].toDouble())
            << i;
    }
}

void TestFox::gatesAndBiasMatchNumpy()
{
    QFETCH(int, index);
    const QJsonObject c = referenceCases()[index].toObject();
    const int H = c["heads"].toInt(), N = c["length"].toInt();
    const std::vector<double> F = logForgetOf(toFloats(c["z"]), H, N), expected = toVector(c["F"]);
    QCOMPARE(F.size(), expected.size());
    for (size_t i = 0; i < F.size(); ++i)
        QVERIFY2(std::abs(F[i] - expected[i]) < 1e-9 * (1 + std::abs(expected[i])),
                 qPrintable(QString("F[%1]: %2 vs NumPy %3").arg(i).arg(F[i]).arg(expected[i])));
    const QJsonArray rows = c["bias_rows"].toArray(), heads = c["bias"].toArray();
    for (int h = 0; h < H; ++h)
        for (int r = 0; r < rows.size(); ++r) {
            const int m = rows[r].toInt();
            const std::vector<double> row = toVector(heads[h].toArray()[r]);
            QCOMPARE(int(row.size()), m + 1);
            for (int n = 0; n <= m; ++n)
                QVERIFY(std::abs((F[h * N + m] - F[h * N + n]) - row[n]) < 1e-9 * (1 + std::abs(row[n])));
        }
}

void TestFox::forwardMatchesNumpy()
{
    QFETCH(int, index);
    const QJsonObject c = referenceCases()[index].toObject();
    const int H = c["heads"].toInt(), N = c["length"].toInt(), D = c["dim"].toInt();
    const std::vector<double> F = logForgetOf(toFloats(c["z"]), H, N);
    const PositionBias bias(makeSchemeSpec("fox", H, false), N);
    AttentionDims dims{1, H, N, D};
    dims.logForget = F.data();
    const std::vector<float> q = toFloats(c["q"]), k = toFloats(c["k"]), v = toFloats(c["v"]);
    const std::vector<double> expected = toVector(c["out"]);
    const AttentionForward fused = attentionForward(bias, dims, q.data(), k.data(), v.data());
    const AttentionReferenceForward twin = attentionForwardReference(bias, dims, q.data(), k.data(), v.data());
    QCOMPARE(fused.out.size(), expected.size());
    for (size_t i = 0; i < expected.size(); ++i) {
        QVERIFY2(std::abs(fused.out[i] - expected[i]) < 2e-5 * (1 + std::abs(expected[i])),
                 qPrintable(QString("out[%1]: kernel %2, NumPy %3").arg(i).arg(fused.out[i]).arg(expected[i])));
        QVERIFY2(std::abs(twin.out[i] - expected[i]) < 1e-6 * (1 + std::abs(expected[i])),
                 qPrintable(QString("out[%1]: twin %2, NumPy %3").arg(i).arg(twin.out[i]).arg(expected[i])));
    }
    // Without this input's gates the scheme is its untrained line, which these gates are not.
    AttentionDims plain = dims;
    plain.logForget = nullptr;
    const AttentionForward line = attentionForward(bias, plain, q.data(), k.data(), v.data());
    const test::ErrorMax apart = test::maxError(line.out, expected);
    QVERIFY2(apart.value() > 1e-3, qPrintable(apart.message("the untrained line")));
}

// The kernel's and the twin's dq, dk, dv and dF against make_fox_reference.py's float64 central differences of
// loss = sum(dOut * out): a check of the backward that shares no formula with it (the twin is the project's own).
void TestFox::backwardMatchesNumpyDifferences()
{
    QFETCH(int, index);
    const QJsonObject c = referenceCases()[index].toObject();
    const int H = c["heads"].toInt(), N = c["length"].toInt(), D = c["dim"].toInt();
    const std::vector<double> F = logForgetOf(toFloats(c["z"]), H, N);
    const PositionBias bias(makeSchemeSpec("fox", H, false), N);
    AttentionDims dims{1, H, N, D};
    dims.logForget = F.data();
    const std::vector<float> q = toFloats(c["q"]), k = toFloats(c["k"]), v = toFloats(c["v"]),
                             dOut = toFloats(c["dOut"]);
    QCOMPARE(dOut.size(), dims.elements());
    const AttentionForward fwd = attentionForward(bias, dims, q.data(), k.data(), v.data());
    const AttentionGradients g = attentionBackward(bias, dims, q.data(), k.data(), v.data(), fwd, dOut.data());
    const AttentionReferenceGradients twin =
        attentionBackwardReference(bias, dims, q.data(), k.data(), v.data(), dOut.data());
    const std::vector<double> dq = toVector(c["dq"]), dk = toVector(c["dk"]), dv = toVector(c["dv"]),
                              dF = toVector(c["dF"]);
    QCOMPARE(dF.size(), F.size());
    for (const auto& [name, error, tolerance] :
         {std::tuple{"kernel dq", test::maxRelativeError(g.dq, dq), 5e-5},
          std::tuple{"kernel dk", test::maxRelativeError(g.dk, dk), 5e-5},
          std::tuple{"kernel dv", test::maxRelativeError(g.dv, dv), 5e-5},
          std::tuple{"kernel dF", test::maxRelativeError(g.dLogForget, dF), 1e-4},
          std::tuple{"twin dq", test::maxRelativeError(twin.dq, dq), 1e-6},
          std::tuple{"twin dk", test::maxRelativeError(twin.dk, dk), 1e-6},
          std::tuple{"twin dv", test::maxRelativeError(twin.dv, dv), 1e-6},
          std::tuple{"twin dF", test::maxRelativeError(twin.dLogForget, dF), 1e-6}})
        QVERIFY2(error.within(tolerance), qPrintable(error.message(name)));
}

void TestFox::kernelMatchesReference_data()
{
    // Both backward strategies (head-parallel from 4 (batch, head) slices on, two-pass below), several 64-row blocks
    // and 320-key tiles, odd head dims, gates from nearly 1 to strongly forgetting.
    QTest::addColumn<int>("batch");
    QTest::addColumn<int>("heads");
    QTest::addColumn<int>("length");
    QTest::addColumn<int>("dim");
    QTest::addColumn<double>("gateMean");
    QTest::newRow("two-pass/B1 H2 T150 D8/f~1/2") << 1 << 2 << 150 << 8 << 0.0;
    QTest::newRow("two-pass/B1 H3 T97 D6/forgetting") << 1 << 3 << 97 << 6 << -2.5;
    QTest::newRow("head-parallel/B2 H3 T131 D5/keeping") << 2 << 3 << 131 << 5 << 3.0;
    QTest::newRow("head-parallel/B1 H4 T70 D16/f~1/2") << 1 << 4 << 70 << 16 << 0.5;
    QTest::newRow("two-pass/B1 H1 T400 D12/mixed") << 1 << 1 << 400 << 12 << 1.0;
}

void TestFox::kernelMatchesReference()
{
    QFETCH(int, batch);
    QFETCH(int, heads);
    QFETCH(int, length);
    QFETCH(int, dim);
    QFETCH(double, gateMean);
    const PositionBias bias(makeSchemeSpec("fox", heads, false), length);
    AttentionDims dims{batch, heads, length, dim};
    const std::vector<double> F =
        logForgetOf(randomFloats(size_t(batch) * heads * length, 9, gateMean, 2.0), batch * heads, length);
    dims.logForget = F.data();
    const std::vector<float> q = randomFloats(dims.elements(), 1), k = randomFloats(dims.elements(), 2),
                             v = randomFloats(dims.elements(), 3), dOut = randomFloats(dims.elements(), 4);
    const AttentionForward f = attentionForward(bias, dims, q.data(), k.data(), v.data());
    const AttentionReferenceForward rf = attentionForwardReference(bias, dims, q.data(), k.data(), v.data());
    for (size_t i = 0; i < dims.elements(); ++i)
        QVERIFY2(std::abs(f.out[i] - rf.out[i]) < 2e-5 * (1 + std::abs(rf.out[i])),
                 qPrintable(QString("out[%1]: kernel %2, twin %3").arg(i).arg(f.out[i]).arg(rf.out[i])));
    for (size_t i = 0; i < rf.logSumExp.size(); ++i) // the true row log-sum-exp: F_m - F_n, not a rebased row
        QVERIFY2(std::abs(f.logSumExp[i] - rf.logSumExp[i]) < 1e-4 * (1 + std::abs(rf.logSumExp[i])),
                 qPrintable(QString("lse[%1]: %2 vs %3").arg(i).arg(f.logSumExp[i]).arg(rf.logSumExp[i])));
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
    // The kernel keeps the column term only; the twin sums both, so they agree exactly when the row term is 0.
    QCOMPARE(g.dLogForget.size(), ref.dLogForget.size());
    QCOMPARE(g.dLogForget.size(), size_t(batch) * heads * length);
    double scale = 0;
    for (double x : ref.dLogForget)
        scale = std::max(scale, std::abs(x));
    QVERIFY(scale > 0);
    for (size_t i = 0; i < g.dLogForget.size(); ++i)
        QVERIFY2(std::abs(g.dLogForget[i] - ref.dLogForget[i]) < 1e-4 * (scale + std::abs(ref.dLogForget[i])),
                 qPrintable(QString("dF[%1]: kernel %2, twin %3").arg(i).arg(g.dLogForget[i]).arg(ref.dLogForget[i])));
    // Each slice's dF sums to 0: shifting every F of a slice by one constant changes no score.
    for (int s = 0; s < batch * heads; ++s) {
        double sum = 0;
        for (int n = 0; n < length; ++n)
            sum += g.dLogForget[size_t(s) * length + n];
        QVERIFY2(std::abs(sum) < 1e-4 * scale, qPrintable(QString("slice %1: sum %2").arg(s).arg(sum)));
    }
}

void TestFox::longStronglyForgettingRows_data()
{
    // T = 4096: F reaches about -T ln(1 + e^-z); strongly forgetting gates put |F| past 10^4, where float keeps steps
    // of 10^-3 and subtracting two floats would lose the scores. Rows in the first, a middle and the last block.
    QTest::addColumn<double>("gateMean");
    QTest::addColumn<int>("dim");
    QTest::newRow("forgetting/D64") << -3.0 << 64;
    QTest::newRow("mixed/D24") << 0.0 << 24;
    QTest::newRow("keeping/D8") << 5.0 << 8;
}

void TestFox::longStronglyForgettingRows()
{
    QFETCH(double, gateMean);
    QFETCH(int, dim);
    const int N = 4096, H = 1;
    const PositionBias bias(makeSchemeSpec("fox", H, false), N);
    AttentionDims dims{1, H, N, dim};
    const std::vector<float> z = randomFloats(N, 21, gateMean, 1.5);
    const std::vector<double> F = logForgetOf(z, 1, N);
    if (gateMean < 0)
        QVERIFY(F.back() < -1e4);
    dims.logForget = F.data();
    const std::vector<float> q = randomFloats(dims.elements(), 22), k = randomFloats(dims.elements(), 23),
                             v = randomFloats(dims.elements(), 24);
    const AttentionForward f = attentionForward(bias, dims, q.data(), k.data(), v.data());
    for (int m : {0, 63, 64, 2047, 3000, N - 1}) {
        // The row in double, straight from the definition.
        std::vector<double> s(m + 1);
        double best = -INFINITY;
        for (int n = 0; n <= m; ++n) {
            double dot = 0;
            for (int d = 0; d < dim; ++d)
                dot += double(q[size_t(m) * dim + d]) * k[size_t(n) * dim + d];
            s[n] = dot / std::sqrt(double(dim)) + F[m] - F[n];
            best = std::max(best, s[n]);
        }
        double sum = 0;
        std::vector<double> out(dim, 0.0);
        for (int n = 0; n <= m; ++n) {
            const double p = std::exp(s[n] - best);
            sum += p;
            for (int d = 0; d < dim; ++d)
                out[d] += p * v[size_t(n) * dim + d];
        }
        for (int d = 0; d < dim; ++d) {
            const double expected = out[d] / sum;
            QVERIFY2(std::abs(f.out[size_t(m) * dim + d] - expected) < 2e-5 * (1 + std::abs(expected)),
                     qPrintable(QString("row %1 dim %2: kernel %3, double %4")
                                    .arg(m)
                                    .arg(d)
                                    .arg(f.out[size_t(m) * dim + d])
                                    .arg(expected)));
        }
        QVERIFY2(std::abs(f.logSumExp[m] - (best + std::log(sum))) < 1e-4 * (1 + std::abs(best)),
                 qPrintable(QString("row %1: lse %2 vs %3").arg(m).arg(f.logSumExp[m]).arg(best + std::log(sum))));
    }
}

void TestFox::identicalForOneAndTwoThreads()
{
    const AttentionDims shape{1, 2, 300, 8};
    const PositionBias bias(makeSchemeSpec("fox", 2, false), shape.length);
    const std::vector<double> F = logForgetOf(randomFloats(2 * 300, 31, -1.0, 2.0), 2, 300);
    AttentionDims dims = shape;
    dims.logForget = F.data();
    const std::vector<float> q = randomFloats(dims.elements(), 11), k = randomFloats(dims.elements(), 12),
                             v = randomFloats(dims.elements(), 13), dOut = randomFloats(dims.elements(), 14);
    auto run = [&](int threads) {
        const int saved = omp_get_max_threads();
        omp_set_num_threads(threads);
        const AttentionForward f = attentionForward(bias, dims, q.data(), k.data(), v.data());
        AttentionGradients g = attentionBackward(bias, dims, q.data(), k.data(), v.data(), f, dOut.data());
        omp_set_num_threads(saved);
        return std::pair{f.out, g.dLogForget};
    };
    const auto one = run(1), two = run(2);
    QVERIFY(one.first == two.first);
    QVERIFY(one.second == two.second);
}

void TestFox::modelGradientsMatchFiniteDifferences_data()
{
    QTest::addColumn<QString>("tensor");
    QTest::addColumn<int>("first"); // first element checked, then every `step`-th
    QTest::addColumn<int>("step");
    // The gate's weight and bias in both layers; q, k and v through rows of the qkv weight (rows [0, C) make q,
    // [C, 2C) k, [2C, 3C) v).
    QTest::newRow("layer 0 gate weight") << "layers.0.attn.forget.weight" << 0 << 3;
    QTest::newRow("layer 1 gate weight") << "layers.1.attn.forget.weight" << 1 << 3;
    QTest::newRow("layer 0 gate bias") << "layers.0.attn.forget.bias" << 0 << 1;
    QTest::newRow("layer 1 gate bias") << "layers.1.attn.forget.bias" << 0 << 1;
    QTest::newRow("layer 0 q") << "layers.0.attn.qkv.weight" << 0 << 23;
    QTest::newRow("layer 1 k") << "layers.1.attn.qkv.weight" << 16 * 16 << 19;
    QTest::newRow("layer 0 v") << "layers.0.attn.qkv.weight" << 32 * 16 << 17;
}

void TestFox::modelGradientsMatchFiniteDifferences()
{
    QFETCH(QString, tensor);
    QFETCH(int, first);
    QFETCH(int, step);
    const int saved = omp_get_max_threads();
    omp_set_num_threads(1);
    Model model(tinyFox());
    // Larger weights than the init, and gates spread across (0, 1), so every path carries gradient.
    layers::FloatBuffer& p = model.parameters();
    Rng rng(3);
    for (const ParameterTensor& t : model.tensors())
        if (t.shape.size() == 2)
            for (size_t i = 0; i < t.size; ++i)
                p[t.offset + i] = static_cast<float>(0.3 * rng.normal());
    for (const char* name : {"layers.0.attn.forget.bias", "layers.1.attn.forget.bias"})
        for (size_t i = 0; i < model.tensor(name).size; ++i)
            p[model.tensor(name).offset + i] = static_cast<float>(0.5 - 1.5 * i);
    model.parametersChanged();
    const int B = 2, T = 11;
    std::vector<uint8_t> inputs(B * T), targets(B * T);
    for (int i = 0; i < B * T; ++i) {
        inputs[i] = static_cast<uint8_t>("the cat sat on the mat and ran"[i % 30]);
        targets[i] = static_cast<uint8_t>("he cat sat on the mat and ran."[i % 30]);
    }
    model.forward(inputs.data(), targets.data(), B, T);
    model.zeroGradients();
    model.backward();
    const layers::FloatBuffer analytic = model.gradients();
    const ParameterTensor& t = model.tensor(tensor.toStdString());
    double scale = 1e-3;
    for (size_t i = 0; i < t.size; ++i)
        scale = std::max(scale, double(std::abs(analytic[t.offset + i])));
    const double h = 2e-3;
    int checked = 0;
    for (size_t i = first; i < t.size && checked < 12; i += step, ++checked) {
        const size_t at = t.offset + i;
        const float keep = p[at];
        p[at] = keep + float(h);
        model.parametersChanged();
        const double up = model.forward(inputs.data(), targets.data(), B, T);
        p[at] = keep - float(h);
        model.parametersChanged();
        const double down = model.forward(inputs.data(), targets.data(), B, T);
        p[at] = keep;
        const double numeric = (up - down) / (2 * h);
        QVERIFY2(std::abs(numeric - analytic[at]) < 0.03 * scale,
                 qPrintable(QString("%1[%2]: analytic %3, numeric %4 (scale %5)")
                                .arg(tensor)
                                .arg(i)
                                .arg(analytic[at])
                                .arg(numeric)
                                .arg(scale)));
    }
    QVERIFY(checked > 0);
    omp_set_num_threads(saved);
}

void TestFox::untrainedGateIsAnAlibiLine()
{
    // w = 0: every gate is σ(b), F_n = (n + 1) ln σ(b), F_m - F_n = -(m - n) ln(1 + e^-b): the scheme's table.
    for (double b : {0.0, -2.0, 3.5}) {
        const PositionBias bias(makeSchemeSpec("fox", 3, false, {"gate-bias=" + exactText(b)}), 50);
        const double slope = std::log1p(std::exp(-b));
        for (int m : {0, 7, 49})
            for (int n = 0; n <= m; ++n)
                QVERIFY(std::abs(bias.additive(1, m, n) + slope * (m - n)) < 1e-5 * (1 + slope * (m - n)));
        const std::vector<float> z(50, static_cast<float>(b));
        const std::vector<double> F = logForgetOf(z, 1, 50);
        QVERIFY(std::abs((F[40] - F[9]) - bias.additive(0, 40, 9)) < 1e-4);
    }
    // The model starts its gate bias at gate-bias (the reference code: 0) and its weights at N(0, 0.02).
    ModelConfig config = tinyFox();
    config.schemeSettings = {"gate-bias=2.5"};
    const Model model(config);
    const ParameterTensor& bias = model.tensor("layers.1.attn.forget.bias");
    QCOMPARE(bias.size, size_t(2));
    QVERIFY(!bias.decay);
    QCOMPARE(model.parameters()[bias.offset + 1], 2.5f);
    const ParameterTensor& weight = model.tensor("layers.0.attn.forget.weight");
    QCOMPARE(weight.shape, (std::vector<int64_t>{2, 16}));
    double square = 0;
    for (size_t i = 0; i < weight.size; ++i)
        square += std::pow(model.parameters()[weight.offset + i], 2);
    QVERIFY(std::sqrt(square / weight.size) < 0.05);
}

void TestFox::biasOnText()
{
    Model model(tinyFox());
    const std::vector<uint8_t> text = {'a', 'b', 'c', ' ', 'a', 'b', 'c', '.'};
    const Eigen::MatrixXf bias = foxBiasOnText(model, text, 1, 1);
    QCOMPARE(bias.rows(), 8);
    QCOMPARE(bias.cols(), 8);
    QVERIFY(bias.allFinite());
    // The same forward by hand: F of the model's own gates on this text.
    model.forward(text.data(), nullptr, 1, 8);
    const std::vector<double>& F = model.layerLogForget(1); // (1, H, T)
    for (int m = 0; m < 8; ++m)
        for (int n = 0; n < 8; ++n) {
            const double expected = n <= m ? F[8 + m] - F[8 + n] : 0.0;
            QVERIFY(std::abs(bias(m, n) - expected) < 1e-6);
            QVERIFY(n > m || bias(m, n) <= 0);
        }
    QVERIFY(bias(7, 0) < bias(7, 6)); // more gates between: more forgotten
    // The Show chooser's "positional bias" (positionsOnText) is the same matrix, masked above the diagonal.
    const TextPositions shown = positionsOnText(model, text, 1, 1);
    QVERIFY(shown.positions.size() == 0);
    for (int m = 0; m < 8; ++m)
        for (int n = 0; n < 8; ++n)
            QVERIFY(n > m ? std::isinf(shown.bias(m, n)) : shown.bias(m, n) == bias(m, n));
    // The entropy curve scores this text's gates too: its sample carries the same forward's F (entropy rows below).
    const QkSample sample = modelQkProvider(model, text, 1)(8);
    QVERIFY(sample.logForget == model.layerLogForget(1));
    QVERIFY_THROWS_EXCEPTION(InputError, foxBiasOnText(model, {}, 0, 0));
    QVERIFY_THROWS_EXCEPTION(InputError, foxBiasOnText(model, text, 2, 0));
    QVERIFY_THROWS_EXCEPTION(InputError, foxBiasOnText(model, text, 0, 2));
    ModelConfig alibi = tinyFox();
    alibi.scheme = "alibi";
    QVERIFY_THROWS_EXCEPTION(InputError, foxBiasOnText(Model(alibi), text, 0, 0));
}

void TestFox::entropyCurveUsesTheTextsGates_data()
{
    QTest::addColumn<int>("layer");
    QTest::addColumn<int>("length"); // 700: enough work for the kernel to share its query blocks among threads
    QTest::newRow("layer 1, one row") << 1 << 1;
    QTest::newRow("layer 0, 7 rows") << 0 << 7;
    QTest::newRow("layer 1, one query block") << 1 << 64;
    QTest::newRow("layer 1, 333 rows past a key tile") << 1 << 333;
    QTest::newRow("layer 0, 700 rows on two threads") << 0 << 700;
}

// The curve's entropies of a fox model equal -sum p ln p of the model's own attention on the same forward: the plain
// twin's probabilities (double) and the fused kernel's (attentionForward with the text's F), head by head.
void TestFox::entropyCurveUsesTheTextsGates()
{
    QFETCH(int, layer);
    QFETCH(int, length);
    Model model = strongGateFox();
    const std::string phrase = "the cat sat on the mat; the dog ate the log. ";
    const std::vector<uint8_t> text(phrase.begin(), phrase.end());
    const SchemeSpec spec = model.layerSchemeSpec(layer);
    const int H = spec.heads;
    auto curve = [&](int threads) {
        const int saved = omp_get_max_threads();
        omp_set_num_threads(threads);
        const std::vector<EntropyPoint> points = entropyCurve(spec, {length}, modelQkProvider(model, text, layer));
        omp_set_num_threads(saved);
        return points;
    };
    const std::vector<EntropyPoint> one = curve(1), two = curve(2);
    QCOMPARE(int(one.size()), H);
    for (int h = 0; h < H; ++h) { // bit for bit
        QCOMPARE(two[h].entropyLast, one[h].entropyLast);
        QCOMPARE(two[h].entropyMean, one[h].entropyMean);
    }

    // The same forward by hand: q, k and F of the layer on the text repeated to `length` bytes.
    const std::vector<uint8_t> tokens = repeatedText(text, length);
    model.forward(tokens.data(), nullptr, 1, length);
    const layers::FloatBuffer q = model.layerQueries(layer), k = model.layerKeys(layer);
    const std::vector<double> F = model.layerLogForget(layer);
    QCOMPARE(F.size(), size_t(H) * length);
    const PositionBias bias(spec, length);
    AttentionDims dims{1, H, length, model.config().headDim()};
    dims.logForget = F.data();
    const AttentionReferenceForward twin = attentionForwardReference(bias, dims, q.data(), k.data(), k.data());
    AttentionOptions options;
    options.wantProbabilities = true;
    const AttentionForward fused = attentionForward(bias, dims, q.data(), k.data(), k.data(), options);
    const std::vector<double> fromTwin = rowEntropiesOf(twin.probabilities, H, length);
    const std::vector<double> fromFused = rowEntropiesOf(fused.probabilities, H, length);
    for (int h = 0; h < H; ++h) {
        const auto rows = fromTwin.begin() + static_cast<size_t>(h) * length;
        const double last = rows[length - 1], mean = std::accumulate(rows, rows + length, 0.0) / length;
        const double fusedLast = fromFused[static_cast<size_t>(h) * length + length - 1];
        QVERIFY2(std::abs(one[h].entropyLast - last) < 1e-5,
                 qPrintable(QString("head %1 last row: curve %2, twin %3").arg(h).arg(one[h].entropyLast).arg(last)));
        QVERIFY2(std::abs(one[h].entropyMean - mean) < 1e-5,
                 qPrintable(QString("head %1 mean: curve %2, twin %3").arg(h).arg(one[h].entropyMean).arg(mean)));
        QVERIFY2(std::abs(one[h].entropyLast - fusedLast) < 1e-5,
                 qPrintable(QString("head %1 last row: curve %2, kernel probabilities %3")
                                .arg(h)
                                .arg(one[h].entropyLast)
                                .arg(fusedLast)));
    }

    // Without the text's gates (the scheme's table: the untrained gate's line) the curve is another one.
    if (length > 1) {
        const QkProvider withGates = modelQkProvider(model, text, layer);
        const QkProvider tableOnly = [&](int n) {
            QkSample sample = withGates(n);
            sample.logForget.clear();
            return sample;
        };
        const std::vector<EntropyPoint> line = entropyCurve(spec, {length}, tableOnly);
        test::ErrorMax apart;
        for (int h = 0; h < H; ++h)
            apart.add(line[h].entropyMean, one[h].entropyMean);
        QVERIFY2(apart.value() > 1e-3, qPrintable(apart.message("the gates move the mean entropy by only")));
    }
    // Gates handed to a scheme that has none are refused, not ignored.
    const std::vector<float> x(static_cast<size_t>(length) * 8, 0.5f);
    QVERIFY_THROWS_EXCEPTION(InputError, attentionRowEntropies(PositionBias(makeSchemeSpec("alibi", H, false), length),
                                                               0, length, x.data(), x.data(), 8, F.data()));
}

void TestFox::refusesBadInput_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("message");
    QTest::newRow("gate-bias too low") << QStringList{"bias",          "--scheme", "fox", "--set",
                                                      "gate-bias=-25", "--length", "8"}
                                       << "gate-bias = -25 is out of range; allowed: [-20, 20]";
    QTest::newRow("gate-bias not a number") << QStringList{"bias", "fox", "--set", "gate-bias=open"} << "gate-bias";
    QTest::newRow("bidirectional") << QStringList{"bias", "--scheme", "fox", "--bidirectional", "--length", "8"}
                                   << "bidirectional";
}

void TestFox::refusesBadInput()
{
    QFETCH(QStringList, args);
    QFETCH(QString, message);
    const test::CliResult r = test::runCli(args);
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(QString(r.err).contains(message), r.err.constData());
    try {
        makeSchemeSpec("fox", 2, false, {"gate-bias=21"});
        QFAIL("accepted");
    } catch (const InputError& e) {
        QVERIFY2(QString(e.what()).contains("gate-bias = 21 is out of range; allowed: [-20, 20]"), e.what());
    }
    // Per-input gates belong to fox alone.
    const std::vector<double> F(8, -1.0);
    AttentionDims dims{1, 1, 8, 4};
    dims.logForget = F.data();
    const std::vector<float> x(32, 0.5f);
    QVERIFY_THROWS_EXCEPTION(InputError, attentionForward(PositionBias(makeSchemeSpec("alibi", 1, false), 8), dims,
                                                          x.data(), x.data(), x.data()));
}

void TestFox::cliTrainsAndRoundTrips()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString corpus = test::writeStructuredCorpus(dir.path(), 6000);
    const QString path = dir.path() + "/fox.safetensors";
    const test::CliResult trained =
        test::runCli({"train", "--scheme", "fox", "--corpus", corpus, "--layers",  "2",  "--d-model",
                      "16",    "--heads",  "2",   "--d-ff",   "16",   "--context", "16", "--steps",
                      "6",     "--batch",  "2",   "--lr",     "0.01", "--quiet",   "-o", path});
    QVERIFY2(trained.exitCode == 0, trained.err.constData());
    const LoadedCheckpoint loaded = loadCheckpoint(path.toStdString());
    QCOMPARE(loaded.model->config().scheme, std::string("fox"));
    // Trained: the gate bias moved from its start (0), and the checkpoint holds it.
    const ParameterTensor& gate = loaded.model->tensor("layers.1.attn.forget.bias");
    test::ErrorMax moved; // from 0
    for (size_t i = 0; i < gate.size; ++i)
        moved.add(loaded.model->parameters()[gate.offset + i], 0.0);
    QVERIFY2(moved.value() > 1e-4, qPrintable(moved.message("largest gate bias")));
    // Save and load again: the same tensors, the same per-input bias.
    const QString again = dir.path() + "/again.safetensors";
    saveCheckpoint(*loaded.model, loaded.info, again.toStdString());
    const LoadedCheckpoint reloaded = loadCheckpoint(again.toStdString());
    QVERIFY(reloaded.model->parameters() == loaded.model->parameters());
    const std::vector<uint8_t> text = {'t', 'h', 'e', ' ', 'c', 'a', 't', ' ', 's', 'a', 't'};
    QVERIFY(foxBiasOnText(*reloaded.model, text, 0, 1) == foxBiasOnText(*loaded.model, text, 0, 1));
    const test::CliResult evaluated =
        test::runCli({"eval", path, "--corpus", corpus, "--lengths", "16,64", "-o", dir.path() + "/eval.csv"});
    QVERIFY2(evaluated.exitCode == 0, evaluated.err.constData());
    // attention --checkpoint --fox-bias: the per-input bias of every head, as foxBiasOnText gives it.
    const QString biasFile = dir.path() + "/bias.npy";
    const test::CliResult shown =
        test::runCli({"attention", "fox", "--checkpoint", path, "--corpus", corpus, "--layer", "1", "--length", "12",
                      "-o", dir.path() + "/out.npy", "--fox-bias", biasFile});
    QVERIFY2(shown.exitCode == 0, shown.err.constData());
    const NpyArray written = readNpy(biasFile.toStdString());
    QCOMPARE(written.shape, (std::vector<int64_t>{2, 12, 12}));
    const Corpus held = loadCorpusFile(corpus.toStdString());
    const std::vector<uint8_t> first(held.validation.begin(), held.validation.begin() + 12);
    const Eigen::MatrixXf head1 = foxBiasOnText(*loaded.model, first, 1, 1);
    for (int m = 0; m < 12; ++m)
        for (int n = 0; n < 12; ++n)
            QCOMPARE(written.data[144 + m * 12 + n], head1(m, n));
    // entropy --checkpoint: the curve of the text's gates, as core's entropyCurve draws it (no longer a refusal).
    const test::CliResult entropy = test::runCli(
        {"entropy", "fox", "--checkpoint", path, "--corpus", corpus, "--layer", "1", "--lengths", "16,40", "--json"});
    QVERIFY2(entropy.exitCode == 0, entropy.err.constData());
    const std::vector<EntropyPoint> expected =
        entropyCurve(loaded.model->layerSchemeSpec(1), {16, 40}, modelQkProvider(*loaded.model, held.validation, 1));
    const QJsonArray rows = QJsonDocument::fromJson(entropy.out).object().value("rows").toArray();
    QCOMPARE(rows.size(), int(expected.size()));
    for (int i = 0; i < rows.size(); ++i) {
        const QJsonObject row = rows[i].toObject();
        QCOMPARE(row.value("length").toInt(), expected[i].length);
        QCOMPARE(row.value("head").toInt(), expected[i].head);
        QVERIFY(std::abs(row.value("entropy_last").toDouble() - expected[i].entropyLast) < 1e-9);
        QVERIFY(std::abs(row.value("entropy_mean").toDouble() - expected[i].entropyMean) < 1e-9);
    }
}

PLAB_QTEST_APPLESS_MAIN(TestFox)
#include "tst_fox.moc"
