// CoPE (issue 20) against the committed NumPy reference (tests/reference/make_cope_reference.py): positions, bias,
// the attention forward and every gradient; the gradients against finite differences away from integer positions;
// thread counts; the model, its checkpoint round trip, the per-input view, the train verb and bad input.
#include "attention/attention.h"
#include "attention/cope_attention.h"
#include "base/errors.h"
#include "base/random.h"
#include "cli_runner.h"
#include "compare.h"
#include "model/checkpoint.h"
#include "model/model.h"
#include "model/positions_on_text.h"
#include "schemes/cope.h"
#include "schemes/position_bias.h"
#include "test_main.h"
#include "views/bias_views.h"

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
    static const QJsonArray cases = readReferenceArray("cope_reference.json", "cases");
    return cases;
}

// A case's slices as the heads of one batch, E as the spec's learned embeddings.
SchemeSpec caseSpec(int heads, int npos, const std::vector<double>& embeddings)
{
    SchemeSpec spec = makeSchemeSpec("cope", heads, false, {"npos-max=" + std::to_string(npos)});
    spec.copeEmbeddings = embeddings;
    validateSchemeSpec(spec);
    return spec;
}

void compareClose(const std::vector<float>& got, const std::vector<double>& want, double tolerance, const char* what)
{
    QCOMPARE(got.size(), want.size());
    const plab::test::ErrorMax worst = plab::test::maxRelativeError(got, want);
    QVERIFY2(worst.value() < tolerance, qPrintable(worst.message(what)));
}

std::vector<float> randomFloats(size_t count, double spread, uint64_t seed)
{
    Rng rng(seed);
    std::vector<float> x(count);
    for (float& value : x)
        value = static_cast<float>(spread * rng.normal());
    return x;
}

// sum(dOut · out) in double through copeRow, the loss the finite differences difference.
double copeLoss(const CopeDims& dims, const std::vector<float>& q, const std::vector<float>& k,
                const std::vector<float>& v, const std::vector<float>& e, const std::vector<float>& dOut)
{
    const int T = dims.length, D = dims.headDim;
    double loss = 0;
    CopeRow row;
    for (int s = 0; s < dims.slices; ++s)
        for (int i = 0; i < T; ++i) {
            const size_t base = static_cast<size_t>(s) * T * D;
            copeRow(dims, q.data() + base + static_cast<size_t>(i) * D, k.data() + base, e.data(), i, row);
            double top = -1e300, total = 0;
            for (double x : row.scores)
                top = std::max(top, x);
            for (double x : row.scores)
                total += std::exp(x - top);
            for (int j = 0; j <= i; ++j) {
                const double p = std::exp(row.scores[j] - top) / total;
                for (int d = 0; d < D; ++d)
                    loss += p * v[base + static_cast<size_t>(j) * D + d] * dOut[base + static_cast<size_t>(i) * D + d];
            }
        }
    return loss;
}

// ⌊p⌋ of every causal position: a finite difference is taken only where these stay put.
std::vector<int> positionFloors(const CopeDims& dims, const std::vector<float>& q, const std::vector<float>& k,
                                const std::vector<float>& e)
{
    std::vector<int> floors;
    CopeRow row;
    const int T = dims.length, D = dims.headDim;
    for (int s = 0; s < dims.slices; ++s)
        for (int i = 0; i < T; ++i) {
            const size_t base = static_cast<size_t>(s) * T * D;
            copeRow(dims, q.data() + base + static_cast<size_t>(i) * D, k.data() + base, e.data(), i, row);
            for (double p : row.positions)
                floors.push_back(static_cast<int>(std::floor(p)));
        }
    return floors;
}

ModelConfig tinyCopeConfig()
{
    ModelConfig config;
    config.scheme = "cope";
    config.layers = 2;
    config.dModel = 16;
    config.heads = 2;
    config.dFf = 32;
    config.context = 16;
    return config;
}

} // namespace

class TestCope : public QObject {
    Q_OBJECT
private slots:
    void forwardMatchesNumpy_data();
    void forwardMatchesNumpy();
    void backwardMatchesNumpy_data() { forwardMatchesNumpy_data(); }
    void backwardMatchesNumpy();
    void gradientsMatchFiniteDifferences_data();
    void gradientsMatchFiniteDifferences();
    void blockedMatchesDoubleTwin_data();
    void blockedMatchesDoubleTwin();
    void identicalForOneAndTwoThreads_data();
    void identicalForOneAndTwoThreads();
    void refusesBadInput_data();
    void refusesBadInput();
    void modelCheckpointRoundTrip();
    void positionsOnTextView();
    void cliTrainsAndRefuses();
};

void TestCope::forwardMatchesNumpy_data()
{
    QTest::addColumn<int>("index");
    for (int i = 0; i < referenceCases().size(); ++i) {
        const QJsonObject c = referenceCases()[i].toObject();
        QTest::newRow(qPrintable(QString("S=%1 N=%2 D=%3 npos=%4")
                                     .arg(c["slices"].toInt())
                                     .arg(c["length"].toInt())
                                     .arg(c["head_dim"].toInt())
                                     .arg(c["npos_max"].toInt())))
            << i;
    }
}

void TestCope::forwardMatchesNumpy()
{
    QFETCH(int, index);
    const QJsonObject c = referenceCases()[index].toObject();
    const int S = c["slices"].toInt(), N = c["length"].toInt(), D = c["head_dim"].toInt(), P = c["npos_max"].toInt();
    const std::vector<float> q = toFloats(c["q"]), k = toFloats(c["k"]), v = toFloats(c["v"]),
                             e = toFloats(c["pos_emb"]);
    // Positions and bias, row by row.
    std::vector<float> positions(static_cast<size_t>(S) * N * N, 0.0f), biases(positions.size(), 0.0f);
    CopeRow row;
    const CopeDims dims{S, N, D, P};
    for (int s = 0; s < S; ++s)
        for (int i = 0; i < N; ++i) {
            copeRow(dims, q.data() + (static_cast<size_t>(s) * N + i) * D, k.data() + static_cast<size_t>(s) * N * D,
                    e.data(), i, row);
            for (int j = 0; j <= i; ++j) {
                positions[(static_cast<size_t>(s) * N + i) * N + j] = static_cast<float>(row.positions[j]);
                biases[(static_cast<size_t>(s) * N + i) * N + j] = static_cast<float>(row.bias[j]);
            }
        }
    compareClose(positions, toVector(c["positions"]), 1e-5, "positions");
    compareClose(biases, toVector(c["bias"]), 1e-5, "bias");
    // The attention call, the slices as heads.
    const PositionBias bias(caseSpec(S, P, toVector(c["pos_emb"])), N);
    const AttentionForward f = attentionForward(bias, {1, S, N, D}, q.data(), k.data(), v.data());
    compareClose(f.out, toVector(c["out"]), 1e-5, "out");
    compareClose(f.logSumExp, toVector(c["lse"]), 1e-5, "lse");
}

void TestCope::backwardMatchesNumpy()
{
    QFETCH(int, index);
    const QJsonObject c = referenceCases()[index].toObject();
    const int S = c["slices"].toInt(), N = c["length"].toInt(), D = c["head_dim"].toInt(), P = c["npos_max"].toInt();
    const std::vector<float> q = toFloats(c["q"]), k = toFloats(c["k"]), v = toFloats(c["v"]);
    const std::vector<float> dOut = toFloats(c["dout"]);
    const PositionBias bias(caseSpec(S, P, toVector(c["pos_emb"])), N);
    const AttentionDims dims{1, S, N, D};
    const AttentionForward f = attentionForward(bias, dims, q.data(), k.data(), v.data());
    const AttentionGradients g = attentionBackward(bias, dims, q.data(), k.data(), v.data(), f, dOut.data());
    compareClose(g.dq, toVector(c["dq"]), 2e-5, "dq");
    compareClose(g.dk, toVector(c["dk"]), 2e-5, "dk");
    compareClose(g.dv, toVector(c["dv"]), 2e-5, "dv");
    const std::vector<float> dE(g.dCopeEmbeddings.begin(), g.dCopeEmbeddings.end());
    compareClose(dE, toVector(c["dpos_emb"]), 2e-5, "dpos_emb");
}

void TestCope::gradientsMatchFiniteDifferences_data()
{
    QTest::addColumn<int>("slices");
    QTest::addColumn<int>("length");
    QTest::addColumn<int>("headDim");
    QTest::addColumn<int>("npos");
    QTest::addColumn<double>("spread");
    QTest::addColumn<bool>("blocked"); // the fast blocked path (cope_attention.h) instead of the double twin
    QTest::newRow("clamped positions") << 2 << 19 << 8 << 6 << 1.0 << false;
    QTest::newRow("unclamped, sharp gates") << 1 << 26 << 5 << 40 << 1.8 << false;
    QTest::newRow("zero embeddings row") << 3 << 11 << 4 << 11 << 0.7 << false;
    QTest::newRow("blocked: clamped positions") << 2 << 19 << 8 << 6 << 1.0 << true;
    QTest::newRow("blocked: unclamped, sharp gates") << 1 << 26 << 5 << 40 << 1.8 << true;
    QTest::newRow("blocked: zero embeddings row") << 3 << 11 << 4 << 11 << 0.7 << true;
    QTest::newRow("blocked: two row blocks, D = 20") << 1 << 45 << 20 << 30 << 0.8 << true;
}

void TestCope::gradientsMatchFiniteDifferences()
{
    QFETCH(int, slices);
    QFETCH(int, length);
    QFETCH(int, headDim);
    QFETCH(int, npos);
    QFETCH(double, spread);
    QFETCH(bool, blocked);
    const CopeDims dims{slices, length, headDim, npos};
    const size_t n = static_cast<size_t>(slices) * length * headDim;
    std::vector<float> q = randomFloats(n, spread, 11), k = randomFloats(n, spread, 12), v = randomFloats(n, 1, 13);
    std::vector<float> e = randomFloats(static_cast<size_t>(headDim) * npos, 0.5, 14);
    const std::vector<float> dOut = randomFloats(n, 1, 15);
    std::vector<float> out(n), lse(n / headDim), dq(n), dk(n), dv(n);
    std::vector<double> dE(e.size());
    if (blocked) {
        copeBlockedForward(dims, q.data(), k.data(), v.data(), e.data(), out.data(), lse.data());
        copeBlockedBackward(dims, q.data(), k.data(), v.data(), e.data(), out.data(), lse.data(), dOut.data(),
                            dq.data(), dk.data(), dv.data(), dE.data());
    } else {
        copeAttentionForward(dims, q.data(), k.data(), v.data(), e.data(), out.data(), lse.data());
        copeAttentionBackward(dims, q.data(), k.data(), v.data(), e.data(), out.data(), lse.data(), dOut.data(),
                              dq.data(), dk.data(), dv.data(), dE.data());
    }
    // Every learned input, at elements spread over it; the loss in double (copeRow), a step of 1e-3.
    const std::vector<int> floors = positionFloors(dims, q, k, e);
    std::vector<double> dEFloat(dE.begin(), dE.end());
    struct Input {
        const char* name;
        std::vector<float>* values;
        std::vector<double> gradient;
    };
    std::vector<Input> inputs = {{"q", &q, std::vector<double>(dq.begin(), dq.end())},
                                 {"k", &k, std::vector<double>(dk.begin(), dk.end())},
                                 {"v", &v, std::vector<double>(dv.begin(), dv.end())},
                                 {"E", &e, dEFloat}};
    int skipped = 0;
    for (Input& input : inputs) {
        int checked = 0;
        for (size_t at = 0; at < input.values->size(); at += 1 + input.values->size() / 23) {
            float& x = (*input.values)[at];
            const float old = x, h = 1e-3f;
            x = old + h;
            const double up = copeLoss(dims, q, k, v, e, dOut);
            const bool upSame = positionFloors(dims, q, k, e) == floors;
            x = old - h;
            const double down = copeLoss(dims, q, k, v, e, dOut);
            const bool downSame = positionFloors(dims, q, k, e) == floors;
            x = old;
            if (!upSame || !downSame) { // the step crossed an integer position: the kink, not the derivative
                ++skipped;
                continue;
            }
            const double numeric = (up - down) / (2.0 * h);
            const double analytic = input.gradient[at];
            QVERIFY2(
                std::abs(numeric - analytic) < 2e-4 + 2e-3 * std::abs(numeric),
                qPrintable(
                    QString("%1[%2]: numeric %3, analytic %4").arg(input.name).arg(at).arg(numeric).arg(analytic)));
            ++checked;
        }
        QVERIFY2(checked >= 15, qPrintable(QString("%1: only %2 elements checked").arg(input.name).arg(checked)));
    }
    // Unclamped positions are fractional almost everywhere: the interpolation's slope in p was exercised, not only z.
    int fractional = 0, unclamped = 0;
    CopeRow row;
    for (int i = 0; i < length; ++i) {
        copeRow(dims, q.data() + static_cast<size_t>(i) * headDim, k.data(), e.data(), i, row);
        for (double p : row.positions) {
            unclamped += p < npos - 1;
            fractional += p < npos - 1 && std::abs(p - std::round(p)) > 0.05;
        }
    }
    QVERIFY2(unclamped >= 20 && fractional > unclamped / 2,
             qPrintable(QString("%1 of %2 unclamped positions fractional").arg(fractional).arg(unclamped)));
    qInfo("%d of the differences skipped (a step crossed an integer position)", skipped);
}

void TestCope::blockedMatchesDoubleTwin_data()
{
    QTest::addColumn<int>("slices");
    QTest::addColumn<int>("length");
    QTest::addColumn<int>("headDim");
    QTest::addColumn<int>("npos");
    QTest::addColumn<bool>("embeddings");
    QTest::addColumn<double>("forwardTolerance");
    QTest::addColumn<double>("backwardTolerance");
    QTest::newRow("N=300 D=64 npos=64: clamped") << 2 << 300 << 64 << 64 << true << 5e-5 << 3e-4;
    QTest::newRow("N=257 D=24 npos=400: unclamped, D not a multiple of 16")
        << 1 << 257 << 24 << 400 << true << 5e-5 << 3e-4;
    QTest::newRow("N=1100 D=32 npos=1100: long rows") << 1 << 1100 << 32 << 1100 << true << 2e-4 << 1e-3;
    QTest::newRow("N=97 D=8 npos=20: E = 0") << 2 << 97 << 8 << 20 << false << 5e-5 << 3e-4;
    QTest::newRow("N=40 D=8 npos=1: every position clamps to 0") << 1 << 40 << 8 << 1 << true << 5e-5 << 3e-4;
    QTest::newRow("N=64 D=16 npos=5000: E far past the rows' reach") << 2 << 64 << 16 << 5000 << true << 5e-5 << 3e-4;
}

// The blocked path against the double twin at lengths past the NumPy cases', over several row blocks and long running
// sums: out, lse, probabilities, entropies and every gradient. The tolerances are wider than the NumPy cases' and grow
// with N: the blocked path's q·k are float products (about 1e-7 relative each), and a position sums N of their gates,
// so its error grows with the row and reaches the scores times z's steps (|q E| of several units here); the gradients
// add the gate's slope and cancellation within dq and dk. Measured worst: 1.4e-5 / 9.9e-5 at N = 300, 6.0e-5 / 2.8e-4
// at N = 1100 (relative, |got - want| / (1 + |want|)); the rows allow 3-4x that.
void TestCope::blockedMatchesDoubleTwin()
{
    QFETCH(int, slices);
    QFETCH(int, length);
    QFETCH(int, headDim);
    QFETCH(int, npos);
    QFETCH(bool, embeddings);
    QFETCH(double, forwardTolerance);
    QFETCH(double, backwardTolerance);
    const CopeDims dims{slices, length, headDim, npos};
    const size_t n = static_cast<size_t>(slices) * length * headDim, rows = n / headDim;
    const double spread = 1.3; // q·k/√D of standard deviation 1.3² = 1.7: gates across (0, 1)
    const std::vector<float> q = randomFloats(n, spread, 21), k = randomFloats(n, spread, 22),
                             v = randomFloats(n, 1, 23), dOut = randomFloats(n, 1, 24);
    const std::vector<float> e = randomFloats(static_cast<size_t>(headDim) * npos, 0.5, 25);
    const float* table = embeddings ? e.data() : nullptr;
    struct Result {
        std::vector<float> out, lse, probabilities, entropy, dq, dk, dv;
        std::vector<double> dE;
    };
    auto run = [&](bool blocked) {
        Result r{std::vector<float>(n),    std::vector<float>(rows),     std::vector<float>(rows * length),
                 std::vector<float>(rows), std::vector<float>(n),        std::vector<float>(n),
                 std::vector<float>(n),    std::vector<double>(e.size())};
        auto forward = blocked ? copeBlockedForward : copeAttentionForward;
        auto backward = blocked ? copeBlockedBackward : copeAttentionBackward;
        forward(dims, q.data(), k.data(), v.data(), table, r.out.data(), r.lse.data(), r.probabilities.data(),
                r.entropy.data());
        backward(dims, q.data(), k.data(), v.data(), table, r.out.data(), r.lse.data(), dOut.data(), r.dq.data(),
                 r.dk.data(), r.dv.data(), r.dE.data());
        return r;
    };
    const Result fast = run(true), twin = run(false);
    auto asDouble = [](const std::vector<float>& x) { return std::vector<double>(x.begin(), x.end()); };
    compareClose(fast.out, asDouble(twin.out), forwardTolerance, "out");
    compareClose(fast.lse, asDouble(twin.lse), forwardTolerance, "lse");
    compareClose(fast.probabilities, asDouble(twin.probabilities), forwardTolerance, "probabilities");
    compareClose(fast.entropy, asDouble(twin.entropy), forwardTolerance, "entropy");
    compareClose(fast.dq, asDouble(twin.dq), backwardTolerance, "dq");
    compareClose(fast.dk, asDouble(twin.dk), backwardTolerance, "dk");
    compareClose(fast.dv, asDouble(twin.dv), backwardTolerance, "dv");
    compareClose(std::vector<float>(fast.dE.begin(), fast.dE.end()), twin.dE, backwardTolerance, "dE");
    // The case exercised what it names: positions past npos-max - 1 clamp, or stay below it.
    CopeRow row;
    copeRow(dims, q.data() + static_cast<size_t>(length - 1) * headDim, k.data(), table, length - 1, row);
    QCOMPARE(row.positions[0] == npos - 1, npos < length / 3);
}

void TestCope::identicalForOneAndTwoThreads_data()
{
    QTest::addColumn<int>("slices");
    QTest::addColumn<int>("length");
    QTest::newRow("S=6 N=33") << 6 << 33;
    QTest::newRow("S=3 N=200: row blocks shared among threads") << 3 << 200;
}

void TestCope::identicalForOneAndTwoThreads()
{
    QFETCH(int, slices);
    QFETCH(int, length);
    const int S = slices, N = length, D = 8, P = 20;
    const size_t n = static_cast<size_t>(S) * N * D;
    const std::vector<float> q = randomFloats(n, 1, 1), k = randomFloats(n, 1, 2), v = randomFloats(n, 1, 3),
                             dOut = randomFloats(n, 1, 4);
    const std::vector<float> e = randomFloats(static_cast<size_t>(D) * P, 0.5, 5);
    const PositionBias bias(caseSpec(S, P, std::vector<double>(e.begin(), e.end())), N);
    auto run = [&](int threads) {
        const int saved = omp_get_max_threads();
        omp_set_num_threads(threads);
        const AttentionForward f = attentionForward(bias, {1, S, N, D}, q.data(), k.data(), v.data());
        AttentionGradients g = attentionBackward(bias, {1, S, N, D}, q.data(), k.data(), v.data(), f, dOut.data());
        omp_set_num_threads(saved);
        return std::pair{f, g};
    };
    const auto [f1, g1] = run(1);
    const auto [f2, g2] = run(2);
    QVERIFY(f1.out == f2.out);
    QVERIFY(g1.dq == g2.dq && g1.dk == g2.dk && g1.dv == g2.dv);
    QVERIFY(g1.dCopeEmbeddings == g2.dCopeEmbeddings);
}

void TestCope::refusesBadInput_data()
{
    QTest::addColumn<QStringList>("settings");
    QTest::addColumn<bool>("bidirectional");
    QTest::addColumn<bool>("logn");
    QTest::addColumn<QString>("message");
    QTest::newRow("npos-max = 0") << QStringList{"npos-max=0"} << false << false
                                  << "scheme cope: npos-max = 0 is out of range; allowed: integers in [1, 1000000]";
    QTest::newRow("npos-max fractional") << QStringList{"npos-max=2.5"} << false << false
                                         << "npos-max = 2.5 is out of range; allowed: integers in [1, 1000000]";
    QTest::newRow("bidirectional") << QStringList{} << true << false << "bidirectional";
    QTest::newRow("logn") << QStringList{} << false << true << "scheme cope does not combine with logn";
}

void TestCope::refusesBadInput()
{
    QFETCH(QStringList, settings);
    QFETCH(bool, bidirectional);
    QFETCH(bool, logn);
    QFETCH(QString, message);
    std::vector<std::string> assignments;
    for (const QString& s : settings)
        assignments.push_back(s.toStdString());
    try {
        makeSchemeSpec("cope", 2, bidirectional, assignments, 16, logn);
        QFAIL("accepted");
    } catch (const InputError& e) {
        QVERIFY2(QString(e.what()).contains(message), e.what());
    }
    // Learned embeddings of the wrong shape are refused by the attention call, naming the shapes.
    SchemeSpec spec = makeSchemeSpec("cope", 1, false, {"npos-max=4"});
    spec.copeEmbeddings.assign(12, 0.0); // 3 x 4, used with head dim 2
    const PositionBias bias(spec, 8);
    const std::vector<float> x(16, 0.0f);
    try {
        attentionForward(bias, {1, 1, 8, 2}, x.data(), x.data(), x.data());
        QFAIL("wrong embeddings accepted");
    } catch (const InputError& e) {
        QVERIFY2(QString(e.what()).contains("expected head dim x npos-max = 2 x 4"), e.what());
    }
}

void TestCope::modelCheckpointRoundTrip()
{
    const ModelConfig config = tinyCopeConfig();
    Model model(config);
    // The reference's initialisation: E = 0, one (D, npos-max = context) slab per layer, never decayed.
    const ParameterTensor& t = model.tensor("scheme.cope_pos_emb");
    QCOMPARE(t.size, size_t(2 * 8 * 16));
    QVERIFY(!t.decay);
    for (int l = 0; l < 2; ++l) { // one spec: begin() and end() of two returned copies would span two buffers
        const std::vector<double> embeddings = model.layerSchemeSpec(l).copeEmbeddings;
        QVERIFY(std::all_of(embeddings.begin(), embeddings.end(), [](double x) { return x == 0; }));
    }
    // A step moves E (its gradient flows even at E = 0, through z = q · E).
    std::vector<uint8_t> text(2 * 16);
    for (size_t i = 0; i < text.size(); ++i)
        text[i] = static_cast<uint8_t>("the cat sat on a mat. "[i % 22]);
    model.zeroGradients();
    model.forward(text.data(), text.data() + 1, 1, 16);
    model.backward();
    plab::test::ErrorMax gradient; // its largest |entry|, NaN (failing) on a non-finite one
    for (size_t i = 0; i < t.size; ++i)
        gradient.add(model.gradients()[t.offset + i], 0.0);
    QVERIFY2(gradient.value() > 0, qPrintable(gradient.message("E's gradient")));
    Rng rng(7);
    for (size_t i = 0; i < t.size; ++i) // learned-looking values, different per layer
        model.parameters()[t.offset + i] = static_cast<float>(0.3 * rng.normal());
    model.parametersChanged();
    const float before = model.forward(text.data(), text.data() + 1, 1, 16);
    QTemporaryDir dir;
    const std::string path = (dir.path() + "/cope.safetensors").toStdString();
    saveCheckpoint(model, {}, path);
    const LoadedCheckpoint loaded = loadCheckpoint(path);
    QCOMPARE(int(loaded.model->schemeSpec().kind), int(SchemeKind::Cope));
    for (int l = 0; l < 2; ++l)
        QVERIFY(loaded.model->layerSchemeSpec(l).copeEmbeddings == model.layerSchemeSpec(l).copeEmbeddings);
    QVERIFY(model.layerSchemeSpec(0).copeEmbeddings != model.layerSchemeSpec(1).copeEmbeddings);
    QCOMPARE(loaded.model->forward(text.data(), text.data() + 1, 1, 16), before);
}

void TestCope::positionsOnTextView()
{
    Model model(tinyCopeConfig());
    const ParameterTensor& t = model.tensor("scheme.cope_pos_emb");
    Rng rng(3);
    for (size_t i = 0; i < t.size; ++i)
        model.parameters()[t.offset + i] = static_cast<float>(0.5 * rng.normal());
    model.parametersChanged();
    const std::string s = "count the words, not the bytes";
    const std::vector<uint8_t> text(s.begin(), s.end());
    const int T = static_cast<int>(text.size());
    QVERIFY(T > 16); // past the context: positions clamp at npos-max - 1, the view still draws
    const TextPositions view = positionsOnText(model, text, 1, 1);
    QCOMPARE(int(view.positions.rows()), T);
    QCOMPARE(int(view.bias.cols()), T);
    // Against copeRow on the model's own q and k.
    const SchemeSpec spec = model.layerSchemeSpec(1);
    const std::vector<float> e(spec.copeEmbeddings.begin(), spec.copeEmbeddings.end());
    const int D = model.config().headDim();
    const float* q = model.layerQueries(1).data() + static_cast<size_t>(T) * D;
    const float* k = model.layerKeys(1).data() + static_cast<size_t>(T) * D;
    CopeRow row;
    for (int m = 0; m < T; m += 5) {
        copeRow({1, T, D, 16}, q + static_cast<size_t>(m) * D, k, e.data(), m, row);
        for (int n = 0; n < T; ++n) {
            if (n > m) {
                QCOMPARE(view.positions(m, n), PositionBias::kMasked);
                continue;
            }
            QCOMPARE(view.positions(m, n), static_cast<float>(row.positions[n]));
            QCOMPARE(view.bias(m, n), static_cast<float>(row.bias[n]));
            QVERIFY(view.positions(m, n) <= 15.0f && view.positions(m, n) > 0.0f);
            QVERIFY(n == 0 || view.positions(m, n) <= view.positions(m, n - 1)); // counts shrink toward the query
        }
    }
    QVERIFY(hasContextualPositions(spec.kind));
    QVERIFY(!hasContextualPositions(SchemeKind::Alibi));
    // A static scheme: its ordinary bias, no positions.
    ModelConfig alibi = tinyCopeConfig();
    alibi.scheme = "alibi";
    Model other(alibi);
    const TextPositions staticView = positionsOnText(other, text, 0, 1);
    QCOMPARE(staticView.positions.size(), Eigen::Index(0));
    const PositionBias bias(other.layerSchemeSpec(0), T);
    QCOMPARE(staticView.bias(20, 3), bias.view(1, 20, 3));
    QCOMPARE(staticView.bias(3, 20), PositionBias::kMasked);
    QVERIFY_THROWS_EXCEPTION(InputError, positionsOnText(model, text, 2, 0));
    QVERIFY_THROWS_EXCEPTION(InputError, positionsOnText(model, {}, 0, 0));
}

void TestCope::cliTrainsAndRefuses()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString corpus = test::writeStructuredCorpus(dir.path(), 6000);
    const QString model = dir.path() + "/cope.safetensors";
    const test::CliResult trained =
        test::runCli({"train", "--scheme", "cope", "--corpus", corpus, "--layers",  "1",  "--d-model",
                      "16",    "--heads",  "2",    "--d-ff",   "16",   "--context", "16", "--steps",
                      "4",     "--batch",  "2",    "--lr",     "0.01", "--quiet",   "-o", model});
    QVERIFY2(trained.exitCode == 0, trained.err.constData());
    const LoadedCheckpoint loaded = loadCheckpoint(model.toStdString());
    const std::vector<double> e = loaded.model->layerSchemeSpec(0).copeEmbeddings;
    QCOMPARE(e.size(), size_t(8 * 16));
    QVERIFY(std::any_of(e.begin(), e.end(), [](double x) { return std::abs(x) > 1e-5; })); // trained away from 0
    const test::CliResult evaluated =
        test::runCli({"eval", model, "--corpus", corpus, "--lengths", "16,64", "-o", dir.path() + "/eval.csv"});
    QVERIFY2(evaluated.exitCode == 0, evaluated.err.constData());
    const test::CliResult bad = test::runCli({"train", "--scheme", "cope", "--set", "npos-max=0", "--corpus", corpus,
                                              "--steps", "1", "--quiet", "-o", dir.path() + "/bad.safetensors"});
    QCOMPARE(bad.exitCode, 2);
    QVERIFY2(bad.err.contains("npos-max = 0 is out of range; allowed: integers in [1, 1000000]"), bad.err.constData());
    // The static bias view says the bias depends on the input instead of drawing zeros.
    const test::CliResult staticView = test::runCli({"bias", "cope", "--length", "8"});
    QCOMPARE(staticView.exitCode, 2);
    QVERIFY2(staticView.err.contains("depends on the input (data-dependent): it has no static bias view"),
             staticView.err.constData());
    QVERIFY(staticView.out.isEmpty());
    QVERIFY_THROWS_EXCEPTION(InputError, biasViewMatrix(PositionBias(makeSchemeSpec("cope", 2, false), 8), 0, 8));
}

PLAB_QTEST_APPLESS_MAIN(TestCope)
#include "tst_cope.moc"
