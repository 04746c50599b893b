// Attention engine tests: the fused kernel against core's plain twin (attention_reference.h), forward and backward;
// the twin against this file's own formulas from design.md and its backward against finite differences (incl.
// T5/KERPLE parameters); probabilities/entropy, thread-count independence, errors.
#include "attention/attention.h"
#include "attention/attention_reference.h"
#include "base/limits.h"
#include "cli_runner.h"
#include "compare.h"
#include "views/entropy.h"
#include "base/errors.h"
#include "model/model.h"
#include "base/npy.h"
#include "base/random.h"
#include "test_main.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include <omp.h>

#if defined(__SSE__)
#include <xmmintrin.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <tuple>

using namespace plab;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// ---- an independent reference: straight from design.md's formulas (not PositionBias), full N x N, double ----

std::vector<double> referenceSlopes(int heads)
{
    auto pow2 = [](int n) {
        std::vector<double> s(n);
        for (int h = 0; h < n; ++h)
            s[h] = std::pow(2.0, -8.0 * (h + 1) / n);
        return s;
    };
    int p = 1;
    while (2 * p <= heads)
        p *= 2;
    std::vector<double> s = pow2(p);
    const std::vector<double> twice = pow2(2 * p);
    for (int i = 0; s.size() < size_t(heads); i += 2)
        s.push_back(twice[i]);
    return s;
}

// Bias of head h at (m, n) with the mask (-inf), before the logn row factor.
double referenceBias(const SchemeSpec& spec, int h, int m, int n)
{
    const int r = m - n;
    const int H = spec.heads;
    // Attention sinks (design.md): keys n < S stay visible to every query m >= n (any m when bidirectional).
    const bool sink = (spec.kind == SchemeKind::Local || spec.kind == SchemeKind::Bca) && n < spec.intParam("sinks") &&
                      (spec.bidirectional || n <= m);
    if (spec.kind == SchemeKind::Local) {
        const int w = spec.intParam("window");
        const bool visible = spec.bidirectional ? std::abs(r) < w : (r >= 0 && r < w);
        return visible || sink ? 0.0 : -kInf;
    }
    if (spec.kind == SchemeKind::Bca) {
        const int block = spec.intParam("window") / 2;
        return (n <= m && n / block >= m / block - 1) || sink ? 0.0 : -kInf;
    }
    if (!spec.bidirectional && n > m)
        return -kInf;
    switch (spec.kind) {
    case SchemeKind::T5: {
        const int b = t5Bucket(n - m, spec.bidirectional, spec.intParam("num-buckets"), spec.intParam("max-distance"));
        return spec.t5Values[size_t(b) * H + h];
    }
    case SchemeKind::Alibi:
        return -referenceSlopes(H)[h] * (spec.bidirectional ? std::abs(r) : r);
    case SchemeKind::KerplePower:
        return -spec.kerpleR1[h] * std::pow(std::abs(r), spec.kerpleR2[h]);
    case SchemeKind::KerpleLog:
        return -spec.kerpleR1[h] * std::log(1.0 + spec.kerpleR2[h] * std::abs(r));
    case SchemeKind::Sandwich: {
        const int d = spec.intParam("dim");
        static std::map<std::tuple<int, double, int>, double> cache; // (dim, base, |r|) -> sum_i cos(r w_i)
        auto [it, fresh] = cache.try_emplace({d, spec.param("base"), std::abs(r)}, 0.0);
        if (fresh)
            for (int i = 0; i < d / 2; ++i)
                it->second += std::cos(r * std::pow(spec.param("base"), -2.0 * i / d));
        return (it->second - d / 2.0) * H / (8.0 * (h + 1));
    }
    default:
        return 0.0;
    }
}

// Rotates (H*B, N, D) rows of x in place as rope/xpos prescribe (design.md), in double.
void referenceRotate(const SchemeSpec& spec, std::vector<double>& x, int heads, int N, int D, bool isKey)
{
    if (spec.kind != SchemeKind::Rope && spec.kind != SchemeKind::Xpos)
        return;
    const double base = spec.param("base");
    for (int bh = 0; bh < heads; ++bh)
        for (int m = 0; m < N; ++m)
            for (int i = 0; i < D / 2; ++i) {
                const double angle = m * std::pow(base, -2.0 * i / D);
                double scale = 1.0;
                if (spec.kind == SchemeKind::Xpos) {
                    const double g = spec.param("gamma");
                    const double zeta = (2.0 * i + g * D) / ((1.0 + g) * D);
                    scale = std::pow(zeta, (isKey ? -m : m) / spec.param("scale-base"));
                }
                double* p = &x[(size_t(bh) * N + m) * D + 2 * i];
                const double x0 = p[0], x1 = p[1];
                p[0] = scale * (x0 * std::cos(angle) - x1 * std::sin(angle));
                p[1] = scale * (x0 * std::sin(angle) + x1 * std::cos(angle));
            }
}

struct Reference {
    std::vector<double> out;     // (B, H, N, D)
    std::vector<double> probs;   // (B, H, N, N)
    std::vector<double> entropy; // (B, H, N)
};

Reference referenceAttention(const SchemeSpec& spec, const AttentionDims& dims, std::vector<double> q,
                             std::vector<double> k, const std::vector<double>& v)
{
    const int N = dims.length, D = dims.headDim, H = dims.heads, BH = dims.batch * dims.heads;
    // A length-extension method: the score of each pair straight from design.md's P(m, n) and θ'_i (the frequencies
    // themselves are checked against the NumPy reference in tst_rotary), q^T R(-P θ') k per pair times logit_scale
    // (and XPOS's ζ_i^(P/s)), instead of rotating q and k.
    const bool scaled =
        (spec.kind == SchemeKind::Rope || spec.kind == SchemeKind::Xpos) && spec.scaling != RotaryMethod::None;
    RotaryScaling scaling;
    if (scaled) // the head dim D decides the pairs, as in the kernel
        scaling = rotaryScaling(D, spec.param("base"), rotaryShape(spec), spec.scaling, spec.scalingParams,
                                scalingContext(spec), N);
    auto scaledDot = [&](const double* qm, const double* kn, int m, int n) {
        const double r = m - n;
        double p = r;
        if (scaling.window > 0 && r >= scaling.window)
            p = std::isfinite(scaling.leak) ? scaling.window + (r - scaling.window) / scaling.leak : scaling.window;
        if (scaling.group > 0 && r >= scaling.window) // Self-Extend (issue 20): grouped positions past the window
            p = std::floor(double(m) / scaling.group) - std::floor(double(n) / scaling.group) + scaling.window -
                std::floor(double(scaling.window) / scaling.group);
        double dot = 0;
        for (int i = 0; i < D / 2; ++i) {
            const double angle = p * scaling.thetaScaled[i];
            double term = std::cos(angle) * (qm[2 * i] * kn[2 * i] + qm[2 * i + 1] * kn[2 * i + 1]) +
                          std::sin(angle) * (qm[2 * i] * kn[2 * i + 1] - qm[2 * i + 1] * kn[2 * i]);
            if (spec.kind == SchemeKind::Xpos) {
                const double g = spec.param("gamma");
                term *= std::pow((2.0 * i + g * D) / ((1.0 + g) * D), p / spec.param("scale-base"));
            }
            dot += term;
        }
        return dot * scaling.logitScale;
    };
    if (!scaled) {
        referenceRotate(spec, q, BH, N, D, false);
        referenceRotate(spec, k, BH, N, D, true);
    }
    Reference ref;
    ref.out.assign(dims.elements(), 0.0);
    ref.probs.assign(size_t(BH) * N * N, 0.0);
    ref.entropy.assign(size_t(BH) * N, 0.0);
    std::vector<double> s(N);
    std::vector<double> bias(size_t(H) * N * N); // (H, N, N)
    for (int h = 0; h < H; ++h)
        for (int m = 0; m < N; ++m)
            for (int n = 0; n < N; ++n)
                bias[(size_t(h) * N + m) * N + n] = referenceBias(spec, h, m, n);
    for (int bh = 0; bh < BH; ++bh)
        for (int m = 0; m < N; ++m) {
            const double scale =
                (spec.logn && m + 1 > spec.context) ? std::log(m + 1.0) / std::log(double(spec.context)) : 1.0;
            double mx = -kInf;
            for (int n = 0; n < N; ++n) {
                double dot = 0;
                if (scaled && !std::isinf(bias[(size_t(bh % H) * N + m) * N + n]))
                    dot = scaledDot(&q[(size_t(bh) * N + m) * D], &k[(size_t(bh) * N + n) * D], m, n);
                for (int d = 0; !scaled && d < D; ++d)
                    dot += q[(size_t(bh) * N + m) * D + d] * k[(size_t(bh) * N + n) * D + d];
                s[n] = (dot / std::sqrt(double(D)) + bias[(size_t(bh % H) * N + m) * N + n]) * scale;
                mx = std::max(mx, s[n]);
            }
            double z = 0;
            for (int n = 0; n < N; ++n)
                z += std::exp(s[n] - mx);
            double ent = 0;
            for (int n = 0; n < N; ++n) {
                const double p = std::exp(s[n] - mx) / z;
                ref.probs[(size_t(bh) * N + m) * N + n] = p;
                if (p > 0)
                    ent -= p * std::log(p);
                for (int d = 0; d < D; ++d)
                    ref.out[(size_t(bh) * N + m) * D + d] += p * v[(size_t(bh) * N + n) * D + d];
            }
            ref.entropy[size_t(bh) * N + m] = ent;
        }
    return ref;
}

// ---- helpers ----

std::vector<float> randomTensor(size_t count, uint64_t seed, double scale = 1.0)
{
    Rng rng(seed);
    std::vector<float> x(count);
    for (float& e : x)
        e = float(scale * rng.normal());
    return x;
}

std::vector<double> toDouble(const std::vector<float>& x)
{
    return {x.begin(), x.end()};
}

std::vector<std::string> toStd(const QStringList& list)
{
    std::vector<std::string> out;
    for (const QString& s : list)
        out.push_back(s.toStdString());
    return out;
}

// A spec with random (but valid) trainable values, so parameter gradients and per-head tables are exercised.
// A set "scaling=METHOD" picks the rotary length-extension method.
SchemeSpec makeSpec(const QString& name, int heads, bool bidirectional, const QStringList& sets, int context = 0,
                    bool logn = false)
{
    QStringList own;
    std::string scaling = "none";
    for (const QString& a : sets)
        if (a.startsWith("scaling="))
            scaling = a.mid(8).toStdString();
        else
            own << a;
    SchemeSpec spec = makeSchemeSpec(name.toStdString(), heads, bidirectional, toStd(own), context, logn, scaling);
    Rng rng(77);
    if (spec.kind == SchemeKind::T5) {
        spec.t5Values.resize(size_t(spec.intParam("num-buckets")) * heads);
        for (double& t : spec.t5Values)
            t = rng.normal();
    }
    if (spec.kind == SchemeKind::KerplePower || spec.kind == SchemeKind::KerpleLog) {
        spec.kerpleR1.resize(heads);
        spec.kerpleR2.resize(heads);
        for (int h = 0; h < heads; ++h) {
            spec.kerpleR1[h] = 0.2 + 0.8 * rng.uniform();
            spec.kerpleR2[h] = 0.3 + (spec.kind == SchemeKind::KerplePower ? 1.2 : 2.0) * rng.uniform();
        }
    }
    return spec;
}

using plab::test::CliResult;
using plab::test::runCli;

const QStringList kSchemes = {"none",  "sinusoidal",   "learned",    "rope",     "xpos",  "t5",
                              "alibi", "kerple-power", "kerple-log", "sandwich", "local", "bca"};

} // namespace

class TestAttention : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void forwardMatchesReference_data();
    void forwardMatchesReference();
    void referenceMatchesFormulas_data();
    void referenceMatchesFormulas();
    void backwardMatchesReference_data();
    void backwardMatchesReference();
    void referenceBackwardMatchesFiniteDifferences_data();
    void referenceBackwardMatchesFiniteDifferences();
    void identicalForOneAndTwoThreads_data();
    void identicalForOneAndTwoThreads();
    void reusedBuffersMatchFreshResult_data();
    void reusedBuffersMatchFreshResult();
    void identicalWhereverBuffersStart_data();
    void identicalWhereverBuffersStart();
    void floatingPointModeRestored();
    void rowEntropiesMatchReference_data();
    void rowEntropiesMatchReference();
    void rejectsBadDimensions();
    void cliAttentionMatchesCore();
    void cliAttentionRejectsBadInput_data();
    void cliAttentionRejectsBadInput();
    void cliBenchJson_data();
    void cliBenchJson();
    void cliBenchPeak();
    void selfExtendMatchesNumpy_data();
    void selfExtendMatchesNumpy();
    void rotaryLayoutMatchesReference_data();
    void rotaryLayoutMatchesReference();
    void rotaryDimRule_data();
    void rotaryDimRule();
    void cliRotaryDimOneRule_data();
    void cliRotaryDimOneRule();
    void visiblePairsMatchDefinition_data();
    void visiblePairsMatchDefinition();
    void workEstimateBound_data();
    void workEstimateBound();
};

void TestAttention::forwardMatchesReference_data()
{
    QTest::addColumn<QString>("scheme");
    QTest::addColumn<bool>("bidirectional");
    QTest::addColumn<QStringList>("sets");
    QTest::addColumn<int>("batch");
    QTest::addColumn<int>("heads");
    QTest::addColumn<int>("length");
    QTest::addColumn<int>("dim");
    QTest::addColumn<int>("context"); // > 0: logn with this context
    for (const QString& scheme : kSchemes)
        for (bool bidir : {false, true}) {
            if (bidir && !schemeByName(scheme.toStdString()).bidirectionalAllowed)
                continue;
            QStringList sets;
            if (scheme == "local")
                sets << "window=7";
            if (scheme == "bca")
                sets << "window=8";
            for (int n : {1, 2, 3, 63, 65, 1000})
                for (int d : {8, 64, 80}) {
                    const QString tag =
                        QString("%1/%2/N=%3/D=%4").arg(scheme, bidir ? "bidir" : "causal").arg(n).arg(d);
                    QTest::newRow(qPrintable(tag)) << scheme << bidir << sets << (n < 100 ? 2 : 1) << 2 << n << d << 0;
                }
        }
    // Windows spanning many tiles, odd heads, and the logn modifier.
    QTest::newRow("local/causal/W=256") << "local" << false << QStringList{"window=256"} << 1 << 3 << 1000 << 64 << 0;
    QTest::newRow("local/bidir/W=100") << "local" << true << QStringList{"window=100"} << 1 << 2 << 1000 << 64 << 0;
    QTest::newRow("local/causal/W=1") << "local" << false << QStringList{"window=1"} << 1 << 2 << 300 << 16 << 0;
    QTest::newRow("bca/causal/W=128") << "bca" << false << QStringList{"window=128"} << 1 << 2 << 1000 << 64 << 0;
    QTest::newRow("bca/causal/W=2") << "bca" << false << QStringList{"window=2"} << 1 << 2 << 130 << 8 << 0;
    // B*H >= 4: the head-parallel path, whose K^T is packed just ahead of each query block.
    QTest::newRow("local/causal/W=256/4 heads")
        << "local" << false << QStringList{"window=256"} << 1 << 4 << 1000 << 64 << 0;
    QTest::newRow("local/bidir/W=300/4 heads")
        << "local" << true << QStringList{"window=300"} << 2 << 2 << 700 << 80 << 0;
    QTest::newRow("bca/causal/W=100/4 heads")
        << "bca" << false << QStringList{"window=100"} << 1 << 4 << 1000 << 8 << 0;
    // Windows far shorter than N: the head-parallel forward keeps K^T in a sliding window that slides many times,
    // with odd lengths (tiles past N read the window's zeroed padding), packed values (D = 24) and, for W = 512, a
    // block span of two key tiles, so tiles start past the window's base.
    QTest::newRow("local/causal/W=16/4 heads/slides")
        << "local" << false << QStringList{"window=16"} << 1 << 4 << 1999 << 80 << 0;
    QTest::newRow("local/bidir/W=40/4 heads/slides")
        << "local" << true << QStringList{"window=40"} << 2 << 2 << 1501 << 24 << 0;
    QTest::newRow("local/causal/W=512/4 heads/slides")
        << "local" << false << QStringList{"window=512"} << 1 << 4 << 1700 << 16 << 0;
    QTest::newRow("bca/causal/W=34/4 heads/slides")
        << "bca" << false << QStringList{"window=34"} << 1 << 4 << 1601 << 64 << 0;
    QTest::newRow("xpos/causal/4 heads") << "xpos" << false << QStringList{} << 1 << 4 << 333 << 64 << 0;
    QTest::newRow("alibi/5 heads") << "alibi" << false << QStringList{} << 2 << 5 << 70 << 32 << 0;
    QTest::newRow("alibi/logn") << "alibi" << false << QStringList{} << 1 << 2 << 1000 << 64 << 64;
    QTest::newRow("rope/logn/bidir") << "rope" << true << QStringList{} << 1 << 2 << 300 << 64 << 16;
    QTest::newRow("none/logn") << "none" << false << QStringList{} << 2 << 2 << 65 << 8 << 5;
    QTest::newRow("t5/logn") << "t5" << true << QStringList{} << 1 << 2 << 200 << 16 << 50;
    // Rotary length extension (issue 13): odd pair counts, non-integer factors, both kernel paths (B*H < 4 and >= 4),
    // ReRoPE's second pass across block edges, sinks.
    QTest::newRow("rope+pi/D=22") << "rope" << false << QStringList{"scaling=pi", "factor=2.5"} << 1 << 2 << 150 << 22
                                  << 32;
    QTest::newRow("rope+yarn/D=30/bidir")
        << "rope" << true << QStringList{"scaling=yarn", "factor=3.7"} << 1 << 2 << 130 << 30 << 40;
    QTest::newRow("rope+yarn/4 heads") << "rope" << false << QStringList{"scaling=yarn", "factor=16"} << 1 << 4 << 300
                                       << 64 << 64;
    QTest::newRow("xpos+llama3") << "xpos" << false << QStringList{"scaling=llama3", "factor=5.5"} << 1 << 2 << 140
                                 << 30 << 48;
    QTest::newRow("rope+dynamic-ntk") << "rope" << false << QStringList{"scaling=dynamic-ntk"} << 1 << 2 << 200 << 22
                                      << 32;
    QTest::newRow("rope+rerope/W=7") << "rope" << false << QStringList{"scaling=rerope", "window=7"} << 1 << 2 << 300
                                     << 22 << 32;
    QTest::newRow("rope+rerope/4 heads") << "rope" << false << QStringList{"scaling=rerope", "window=70"} << 2 << 2
                                         << 333 << 64 << 100;
    QTest::newRow("rope+leaky-rerope") << "rope" << false << QStringList{"scaling=leaky-rerope", "window=9", "leak=2.5"}
                                       << 1 << 2 << 270 << 30 << 32;
    QTest::newRow("xpos+leaky-rerope/4 heads")
        << "xpos" << false << QStringList{"scaling=leaky-rerope", "window=5"} << 1 << 4 << 200 << 16 << 24;
    QTest::newRow("rope+rerope+logn") << "rope" << false << QStringList{"scaling=rerope", "window=10"} << 1 << 2 << 150
                                      << 16 << 20;
    // Self-Extend (issue 20): its grouped far pass across block edges, G larger than w, both kernel paths, xpos.
    QTest::newRow("rope+self-extend/G=3/W=7")
        << "rope" << false << QStringList{"scaling=self-extend", "window=7", "group=3"} << 1 << 2 << 300 << 22 << 32;
    QTest::newRow("rope+self-extend/4 heads")
        << "rope" << false << QStringList{"scaling=self-extend", "window=70", "group=8"} << 2 << 2 << 333 << 64 << 100;
    QTest::newRow("rope+self-extend/G>W")
        << "rope" << false << QStringList{"scaling=self-extend", "window=5", "group=9"} << 1 << 3 << 211 << 18 << 30;
    QTest::newRow("xpos+self-extend/4 heads")
        << "xpos" << false << QStringList{"scaling=self-extend", "window=6", "group=2"} << 1 << 4 << 200 << 16 << 24;
    QTest::newRow("local+sinks") << "local" << false << QStringList{"window=50", "sinks=4"} << 1 << 2 << 300 << 16 << 0;
    QTest::newRow("local+sinks/4 heads/slides")
        << "local" << false << QStringList{"window=40", "sinks=70"} << 1 << 4 << 1100 << 32 << 0;
    QTest::newRow("local+sinks/bidir") << "local" << true << QStringList{"window=20", "sinks=3"} << 1 << 2 << 200 << 16
                                       << 0;
    QTest::newRow("bca+sinks") << "bca" << false << QStringList{"window=34", "sinks=5"} << 2 << 2 << 400 << 24 << 0;
}

// One row of the forward and backward tests as they start from it: the spec, its bias (over the length plus
// `biasExtra`), the sizes, and q, k, v and the output gradient dOut seeded from `seed`, seed + 1, ...
struct AttentionCase {
    SchemeSpec spec;
    PositionBias bias;
    AttentionDims dims;
    std::vector<float> q, k, v, dOut;
};

static AttentionCase fetchAttentionCase(int biasExtra, uint64_t seed)
{
    QFETCH(QString, scheme);
    QFETCH(bool, bidirectional);
    QFETCH(QStringList, sets);
    QFETCH(int, batch);
    QFETCH(int, heads);
    QFETCH(int, length);
    QFETCH(int, dim);
    QFETCH(int, context);
    const SchemeSpec spec = makeSpec(scheme, heads, bidirectional, sets, context, context > 0);
    const AttentionDims dims{batch, heads, length, dim};
    return {spec,
            PositionBias(spec, length + biasExtra),
            dims,
            randomTensor(dims.elements(), seed),
            randomTensor(dims.elements(), seed + 1),
            randomTensor(dims.elements(), seed + 2),
            randomTensor(dims.elements(), seed + 3)};
}

void TestAttention::forwardMatchesReference()
{
    const AttentionCase c = fetchAttentionCase(5, 1); // a bias table longer than the sequence
    const SchemeSpec& spec = c.spec;
    const PositionBias& bias = c.bias;
    const AttentionDims& dims = c.dims;
    const int heads = dims.heads, length = dims.length, dim = dims.headDim;
    const std::vector<float>&q = c.q, &k = c.k, &v = c.v;
    const AttentionReferenceForward ref = attentionForwardReference(bias, dims, q.data(), k.data(), v.data());

    AttentionOptions plain;
    const AttentionForward fast = attentionForward(bias, dims, q.data(), k.data(), v.data(), plain);
    QCOMPARE(fast.out.size(), dims.elements());
    QVERIFY(fast.probabilities.empty() && fast.rowEntropy.empty());
    const test::ErrorMax worst = test::maxError(fast.out, ref.out);
    QVERIFY2(worst.value() < 2e-5 * std::sqrt(double(dim)), qPrintable(worst.message("out")));
    const test::ErrorMax worstLse = test::maxRelativeError(fast.logSumExp, ref.logSumExp);
    QVERIFY2(worstLse.value() < 2e-6, qPrintable(worstLse.message("lse")));

    AttentionOptions all;
    all.wantProbabilities = true;
    all.wantRowEntropy = true;
    const AttentionForward full = attentionForward(bias, dims, q.data(), k.data(), v.data(), all);
    // The same code path: requesting probabilities does not change the output.
    QVERIFY(std::memcmp(full.out.data(), fast.out.data(), fast.out.size() * sizeof(float)) == 0);
    QCOMPARE(full.probabilities.size(), ref.probabilities.size());
    test::ErrorMax worstP, worstSum, worstH;
    const size_t rows = size_t(dims.batch) * heads * length;
    for (size_t row = 0; row < rows; ++row) {
        double sum = 0;
        for (int n = 0; n < length; ++n) {
            const size_t at = row * length + n;
            sum += full.probabilities[at];
            worstP.addAt(std::ptrdiff_t(at), full.probabilities[at], ref.probabilities[at]);
            if (ref.probabilities[at] == 0.0 &&
                std::isinf(referenceBias(spec, int(row / length) % heads, int(row % length), n)))
                QCOMPARE(full.probabilities[at], 0.0f); // masked cells are exactly 0
        }
        worstSum.addAt(std::ptrdiff_t(row), sum, 1.0);
        worstH.addAt(std::ptrdiff_t(row), full.rowEntropy[row], ref.rowEntropy[row]);
    }
    QVERIFY2(worstP.value() < 2e-6, qPrintable(worstP.message("P")));
    QVERIFY2(worstSum.value() < 1e-5, qPrintable(worstSum.message("row sum")));
    QVERIFY2(worstH.value() < 1e-4, qPrintable(worstH.message("entropy")));
}

// Core's plain twin against this file's formulas (design.md's tables, not PositionBias): biases, masks, rotations
// and the logn factor, for every scheme, causal and bidirectional, with odd lengths.
void TestAttention::referenceMatchesFormulas_data()
{
    QTest::addColumn<QString>("scheme");
    QTest::addColumn<bool>("bidirectional");
    QTest::addColumn<QStringList>("sets");
    QTest::addColumn<int>("length");
    QTest::addColumn<int>("context"); // > 0: logn with this context
    for (const QString& scheme : kSchemes)
        for (bool bidir : {false, true}) {
            if (bidir && !schemeByName(scheme.toStdString()).bidirectionalAllowed)
                continue;
            const QStringList sets = scheme == "local" ? QStringList{"window=7"}
                                     : scheme == "bca" ? QStringList{"window=6"}
                                                       : QStringList{};
            for (int n : {1, 2, 37, 150})
                for (int context : {0, 20}) {
                    const QString tag = QString("%1/%2/N=%3%4")
                                            .arg(scheme, bidir ? "bidir" : "causal")
                                            .arg(n)
                                            .arg(context ? "/logn" : "");
                    QTest::newRow(qPrintable(tag)) << scheme << bidir << sets << n << context;
                }
        }
}

void TestAttention::referenceMatchesFormulas()
{
    QFETCH(QString, scheme);
    QFETCH(bool, bidirectional);
    QFETCH(QStringList, sets);
    QFETCH(int, length);
    QFETCH(int, context);
    const SchemeSpec spec = makeSpec(scheme, 3, bidirectional, sets, context, context > 0);
    const PositionBias bias(spec, length);
    const AttentionDims dims{2, 3, length, 16};
    const std::vector<float> q = randomTensor(dims.elements(), 91), k = randomTensor(dims.elements(), 92),
                             v = randomTensor(dims.elements(), 93);
    const Reference formulas = referenceAttention(spec, dims, toDouble(q), toDouble(k), toDouble(v));
    const AttentionReferenceForward twin = attentionForwardReference(bias, dims, q.data(), k.data(), v.data());
    // The twin reads the bias from PositionBias's float tables: agreement to float rounding of the scores.
    for (const auto& [name, error] : {std::pair{"out", test::maxError(twin.out, formulas.out)},
                                      std::pair{"probabilities", test::maxError(twin.probabilities, formulas.probs)},
                                      std::pair{"entropy", test::maxError(twin.rowEntropy, formulas.entropy)}})
        QVERIFY2(error.value() < 1e-5, qPrintable(error.message(name)));
    for (size_t i = 0; i < twin.probabilities.size(); ++i) // masked cells exactly 0, as in the formulas
        if (formulas.probs[i] == 0.0)
            QVERIFY2(twin.probabilities[i] == 0.0,
                     qPrintable(QString("cell %1: %2").arg(i).arg(twin.probabilities[i])));
}

// Rows shared by the backward tests: every scheme, causal and bidirectional, lengths around the 16-lane tiles and the
// 64-row blocks, B*H = 4 (one thread per head, single pass) and B*H = 3 (two passes), and windows over many blocks.
static void addBackwardRows(bool manyLengths)
{
    QTest::addColumn<QString>("scheme");
    QTest::addColumn<bool>("bidirectional");
    QTest::addColumn<QStringList>("sets");
    QTest::addColumn<int>("batch");
    QTest::addColumn<int>("heads");
    QTest::addColumn<int>("length");
    QTest::addColumn<int>("dim");
    QTest::addColumn<int>("context");
    for (const QString& scheme : kSchemes)
        for (bool bidir : {false, true}) {
            if (bidir && !schemeByName(scheme.toStdString()).bidirectionalAllowed)
                continue;
            QStringList sets;
            if (scheme == "local")
                sets << "window=5";
            if (scheme == "bca")
                sets << "window=6";
            // B*H = 4 takes the one-thread-per-head backward, B*H = 3 the two-pass one.
            const std::vector<int> lengths4 =
                manyLengths ? std::vector<int>{1, 3, 17, 64, 70, 129, 333} : std::vector<int>{1, 3, 70};
            const std::vector<int> lengths3 = manyLengths ? std::vector<int>{2, 65, 70, 200} : std::vector<int>{2, 70};
            for (int n : lengths4) {
                const int d = manyLengths && n > 100 ? 24 : 8;
                const QString tag =
                    QString("%1/%2/N=%3/D=%4/B*H=4").arg(scheme, bidir ? "bidir" : "causal").arg(n).arg(d);
                QTest::newRow(qPrintable(tag)) << scheme << bidir << sets << 2 << 2 << n << d << 0;
            }
            for (int n : lengths3) {
                const int d = manyLengths && n > 100 ? 64 : 8;
                const QString tag =
                    QString("%1/%2/N=%3/D=%4/B*H=3").arg(scheme, bidir ? "bidir" : "causal").arg(n).arg(d);
                QTest::newRow(qPrintable(tag)) << scheme << bidir << sets << 1 << 3 << n << d << 0;
            }
        }
    QTest::newRow("kerple-log/logn/N=150") << "kerple-log" << false << QStringList{} << 1 << 3 << 150 << 16 << 40;
    QTest::newRow("t5/logn/N=150") << "t5" << true << QStringList{} << 1 << 2 << 150 << 16 << 40;
    QTest::newRow("rope/N=200/D=64") << "rope" << false << QStringList{} << 1 << 2 << 200 << 64 << 0;
    QTest::newRow("local/N=400/W=100") << "local" << false << QStringList{"window=100"} << 1 << 1 << 400 << 16 << 0;
    // One thread per head over several key and query blocks, whose banded tiles cut the window's both edges.
    QTest::newRow("local/N=260/W=70/B*H=4") << "local" << false << QStringList{"window=70"} << 1 << 4 << 260 << 16 << 0;
    QTest::newRow("bca/N=300/W=64/B*H=4") << "bca" << false << QStringList{"window=64"} << 2 << 2 << 300 << 16 << 0;
    QTest::newRow("t5/bidir/N=130/B*H=4") << "t5" << true << QStringList{} << 1 << 4 << 130 << 16 << 0;
    QTest::newRow("alibi/N=300/B*H=8") << "alibi" << false << QStringList{} << 2 << 4 << 300 << 24 << 0;
    QTest::newRow("rope+yarn/N=150") << "rope" << false << QStringList{"scaling=yarn", "factor=3.7"} << 1 << 2 << 150
                                     << 22 << 32;
    QTest::newRow("xpos+pi/B*H=4") << "xpos" << false << QStringList{"scaling=pi", "factor=2.5"} << 1 << 4 << 100 << 16
                                   << 0;
    QTest::newRow("rope+rerope/N=200") << "rope" << false << QStringList{"scaling=rerope", "window=9"} << 1 << 2 << 200
                                       << 22 << 32;
    QTest::newRow("rope+leaky-rerope/B*H=4")
        << "rope" << false << QStringList{"scaling=leaky-rerope", "window=70", "leak=3"} << 2 << 2 << 150 << 16 << 100;
    QTest::newRow("rope+self-extend/N=200")
        << "rope" << false << QStringList{"scaling=self-extend", "window=9", "group=4"} << 1 << 2 << 200 << 22 << 32;
    QTest::newRow("rope+self-extend/B*H=4")
        << "rope" << false << QStringList{"scaling=self-extend", "window=70", "group=5"} << 2 << 2 << 150 << 16 << 100;
    QTest::newRow("local+sinks/N=200") << "local" << false << QStringList{"window=30", "sinks=3"} << 1 << 2 << 200 << 16
                                       << 0;
    QTest::newRow("bca+sinks/B*H=4") << "bca" << false << QStringList{"window=20", "sinks=7"} << 1 << 4 << 130 << 8
                                     << 0;
}

void TestAttention::backwardMatchesReference_data()
{
    addBackwardRows(true);
}

// The fused backward against its plain twin, every element of dq, dk, dv and the bias parameter gradients.
void TestAttention::backwardMatchesReference()
{
    const AttentionCase c = fetchAttentionCase(0, 11);
    const PositionBias& bias = c.bias;
    const AttentionDims& dims = c.dims;
    const std::vector<float>&q = c.q, &k = c.k, &v = c.v, &dOut = c.dOut;
    const AttentionForward fwd = attentionForward(bias, dims, q.data(), k.data(), v.data());
    const AttentionGradients g = attentionBackward(bias, dims, q.data(), k.data(), v.data(), fwd, dOut.data());
    const AttentionReferenceGradients ref =
        attentionBackwardReference(bias, dims, q.data(), k.data(), v.data(), dOut.data());
    // Worst |fused - twin| / (1 + |twin|); NaN (failing) on a non-finite value or when the sizes differ.
    const auto worst = [](const auto& fused, const std::vector<double>& twin) {
        return test::maxRelativeError(fused, twin);
    };
    const double tolerance = 5e-5;
    for (const auto& [name, error] : {std::pair{"dq", worst(g.dq, ref.dq)}, std::pair{"dk", worst(g.dk, ref.dk)},
                                      std::pair{"dv", worst(g.dv, ref.dv)}})
        QVERIFY2(error.value() < tolerance, qPrintable(error.message(name)));
    // Parameter gradients sum over every pair: relative to their largest entry.
    for (const auto& [name, fused, twin] :
         {std::tuple{"dT5Values", &g.dT5Values, &ref.dT5Values}, std::tuple{"dKerpleR1", &g.dKerpleR1, &ref.dKerpleR1},
          std::tuple{"dKerpleR2", &g.dKerpleR2, &ref.dKerpleR2}}) {
        QCOMPARE(fused->size(), twin->size());
        double scale = 1;
        for (double x : *twin)
            scale = std::max(scale, std::abs(x));
        for (size_t i = 0; i < twin->size(); ++i)
            QVERIFY2(std::abs((*fused)[i] - (*twin)[i]) < tolerance * scale,
                     qPrintable(QString("%1[%2]: %3 vs %4").arg(name).arg(i).arg((*fused)[i]).arg((*twin)[i])));
    }
}

void TestAttention::referenceBackwardMatchesFiniteDifferences_data()
{
    addBackwardRows(false);
}

// The twin's backward against central differences of this file's own forward (loss = sum(dOut * out)).
void TestAttention::referenceBackwardMatchesFiniteDifferences()
{
    const AttentionCase c = fetchAttentionCase(0, 11);
    const SchemeSpec& spec = c.spec;
    const PositionBias& bias = c.bias;
    const AttentionDims& dims = c.dims;
    const int length = dims.length, dim = dims.headDim;
    const std::vector<float>&q = c.q, &k = c.k, &v = c.v, &dOut = c.dOut;
    const AttentionReferenceGradients g =
        attentionBackwardReference(bias, dims, q.data(), k.data(), v.data(), dOut.data());
    QCOMPARE(g.dq.size(), dims.elements());

    // loss = sum(dOut * out) of the double reference; central differences.
    auto loss = [&](const SchemeSpec& s, const std::vector<double>& qd, const std::vector<double>& kd,
                    const std::vector<double>& vd) {
        const Reference r = referenceAttention(s, dims, qd, kd, vd);
        double sum = 0;
        for (size_t i = 0; i < r.out.size(); ++i)
            sum += dOut[i] * r.out[i];
        return sum;
    };
    const std::vector<double> qd = toDouble(q), kd = toDouble(k), vd = toDouble(v);
    const double eps = 1e-5;
    Rng pick(5);
    // 24 random elements, plus the rows at every 64-row block edge (key and query blocks) and the last row, in the
    // last (batch, head), so block boundaries are checked whatever the seed draws.
    std::vector<size_t> edges;
    const size_t lastHead = dims.elements() - size_t(length) * dim;
    for (int row = 0; row < length; ++row)
        if (row % 64 == 0 || row % 64 == 63 || row == length - 1)
            edges.push_back(lastHead + size_t(row) * dim + size_t(row % dim));
    auto checkTensor = [&](const char* name, int which, const std::vector<double>& analytic) {
        const bool all = dims.elements() <= 24;
        const int samples = all ? int(dims.elements()) : 24 + int(edges.size());
        for (int t = 0; t < samples; ++t) {
            const size_t i = all ? size_t(t) : t < 24 ? pick.below(dims.elements()) : edges[t - 24];
            std::vector<double> a = qd, b = kd, c = vd;
            std::vector<double>& x = which == 0 ? a : which == 1 ? b : c;
            x[i] += eps;
            const double up = loss(spec, a, b, c);
            x[i] -= 2 * eps;
            const double down = loss(spec, a, b, c);
            const double numeric = (up - down) / (2 * eps);
            QVERIFY2(
                std::abs(analytic[i] - numeric) < 2e-5 * (1 + std::abs(numeric)),
                qPrintable(QString("%1[%2]: analytic %3, numeric %4").arg(name).arg(i).arg(analytic[i]).arg(numeric)));
        }
    };
    checkTensor("dq", 0, g.dq);
    checkTensor("dk", 1, g.dk);
    checkTensor("dv", 2, g.dv);

    auto checkParams = [&](const char* name, const std::vector<double>& analytic, auto&& field) {
        SchemeSpec s = spec;
        QCOMPARE(analytic.size(), field(s).size());
        for (size_t i = 0; i < analytic.size(); ++i) {
            SchemeSpec a = spec, b = spec;
            field(a)[i] += eps;
            field(b)[i] -= eps;
            const double numeric = (loss(a, qd, kd, vd) - loss(b, qd, kd, vd)) / (2 * eps);
            QVERIFY2(
                std::abs(analytic[i] - numeric) < 2e-5 * (1 + std::abs(numeric)),
                qPrintable(QString("%1[%2]: analytic %3, numeric %4").arg(name).arg(i).arg(analytic[i]).arg(numeric)));
        }
    };
    if (spec.kind == SchemeKind::T5)
        checkParams("dT5Values", g.dT5Values, [](SchemeSpec& s) -> std::vector<double>& { return s.t5Values; });
    else
        QVERIFY(g.dT5Values.empty());
    if (spec.kind == SchemeKind::KerplePower || spec.kind == SchemeKind::KerpleLog) {
        checkParams("dKerpleR1", g.dKerpleR1, [](SchemeSpec& s) -> std::vector<double>& { return s.kerpleR1; });
        checkParams("dKerpleR2", g.dKerpleR2, [](SchemeSpec& s) -> std::vector<double>& { return s.kerpleR2; });
    } else {
        QVERIFY(g.dKerpleR1.empty() && g.dKerpleR2.empty());
    }
}

// Self-Extend against tests/reference/make_self_extend_reference.py (NumPy, P(m, n) written out per pair, gradients
// by finite differences): the kernel's forward and backward and the plain twin, on shapes nothing was tuned on,
// including Hugging Face's rotate_half pairing with partial rotary.
void TestAttention::selfExtendMatchesNumpy_data()
{
    QTest::addColumn<int>("index");
    QFile f(QStringLiteral(POSITIONLAB_TEST_DATA "/self_extend_reference.json"));
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QJsonArray cases = QJsonDocument::fromJson(f.readAll()).object().value("cases").toArray();
    QVERIFY(cases.size() >= 3);
    for (int i = 0; i < cases.size(); ++i)
        QTest::newRow(qPrintable(cases[i].toObject().value("name").toString())) << i;
}

void TestAttention::selfExtendMatchesNumpy()
{
    QFETCH(int, index);
    QFile f(QStringLiteral(POSITIONLAB_TEST_DATA "/self_extend_reference.json"));
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QJsonObject c = QJsonDocument::fromJson(f.readAll()).object().value("cases").toArray()[index].toObject();
    auto floats = [&](const char* name) {
        std::vector<float> x;
        for (const QJsonValue& t : c.value(name).toArray())
            x.push_back(float(t.toDouble()));
        return x;
    };
    auto doubles = [&](const char* name) {
        std::vector<double> x;
        for (const QJsonValue& t : c.value(name).toArray())
            x.push_back(t.toDouble());
        return x;
    };
    const int H = c["heads"].toInt(), N = c["length"].toInt(), D = c["dim"].toInt(), r = c["rotary_dims"].toInt();
    const SchemeSpec spec = makeSchemeSpec(
        "rope", H, false,
        {"dim=" + std::to_string(r), "base=" + QString::number(c["base"].toDouble(), 'g', 17).toStdString(),
         "window=" + std::to_string(c["window"].toInt()), "group=" + std::to_string(c["group"].toInt())},
        N, false, "self-extend");
    const PositionBias bias(spec, N);
    AttentionDims dims{1, H, N, D};
    dims.rotaryDims = r == D ? 0 : r;
    dims.pairing = c["pairing"].toString() == "rotate_half" ? RotaryPairing::RotateHalf : RotaryPairing::Interleaved;
    const std::vector<float> q = floats("q"), k = floats("k"), v = floats("v"), dOut = floats("dOut");
    QCOMPARE(q.size(), dims.elements());
    const AttentionForward fwd = attentionForward(bias, dims, q.data(), k.data(), v.data());
    const AttentionGradients g = attentionBackward(bias, dims, q.data(), k.data(), v.data(), fwd, dOut.data());
    const AttentionReferenceForward twin = attentionForwardReference(bias, dims, q.data(), k.data(), v.data());
    const AttentionReferenceGradients twinGrads =
        attentionBackwardReference(bias, dims, q.data(), k.data(), v.data(), dOut.data());
    const auto worst = [](const auto& ours, const std::vector<double>& ref) {
        return test::maxRelativeError(ours, ref);
    };
    const std::vector<double> out = doubles("out"), lse = doubles("lse");
    const std::vector<double> dq = doubles("dq"), dk = doubles("dk"), dv = doubles("dv");
    for (const auto& [name, error, tolerance] :
         {std::tuple{"kernel out", worst(fwd.out, out), 2e-5},
          std::tuple{"kernel lse", worst(fwd.logSumExp, lse), 2e-6}, std::tuple{"kernel dq", worst(g.dq, dq), 5e-5},
          std::tuple{"kernel dk", worst(g.dk, dk), 5e-5}, std::tuple{"kernel dv", worst(g.dv, dv), 5e-5},
          std::tuple{"twin out", worst(twin.out, out), 1e-6}, std::tuple{"twin lse", worst(twin.logSumExp, lse), 1e-6},
          std::tuple{"twin dq", worst(twinGrads.dq, dq), 1e-6}, std::tuple{"twin dk", worst(twinGrads.dk, dk), 1e-6},
          std::tuple{"twin dv", worst(twinGrads.dv, dv), 1e-6}})
        QVERIFY2(error.value() < tolerance, qPrintable(error.message(name)));
}

// Hugging Face's layouts in the kernel (rotate_half pairing, partial rotary) against the plain twin, which turns the
// dims in place in the input's order instead of packing them interleaved: forward, probabilities and backward, under
// plain rope, a frequency method and both remapping passes.
void TestAttention::rotaryLayoutMatchesReference_data()
{
    QTest::addColumn<QStringList>("sets");
    QTest::addColumn<bool>("rotateHalf");
    QTest::addColumn<int>("heads");
    QTest::addColumn<int>("length");
    QTest::addColumn<int>("headDim");
    QTest::addColumn<int>("rotaryDims"); // 0: all
    QTest::newRow("rotate_half/full") << QStringList{} << true << 2 << 130 << 16 << 0;
    QTest::newRow("rotate_half/partial 6 of 20") << QStringList{} << true << 3 << 97 << 20 << 6;
    QTest::newRow("interleaved/partial 8 of 12/4 heads") << QStringList{} << false << 4 << 150 << 12 << 8;
    QTest::newRow("rotate_half/yarn/partial")
        << QStringList{"scaling=yarn", "factor=3"} << true << 2 << 120 << 24 << 16;
    QTest::newRow("rotate_half/rerope/partial")
        << QStringList{"scaling=rerope", "window=9"} << true << 2 << 140 << 16 << 8;
    QTest::newRow("rotate_half/self-extend/4 heads")
        << QStringList{"scaling=self-extend", "window=11", "group=4"} << true << 4 << 170 << 32 << 0;
    QTest::newRow("rotate_half/self-extend/partial")
        << QStringList{"scaling=self-extend", "window=6", "group=3"} << true << 1 << 90 << 12 << 4;
}

void TestAttention::rotaryLayoutMatchesReference()
{
    QFETCH(QStringList, sets);
    QFETCH(bool, rotateHalf);
    QFETCH(int, heads);
    QFETCH(int, length);
    QFETCH(int, headDim);
    QFETCH(int, rotaryDims);
    const int turned = rotaryDims > 0 ? rotaryDims : headDim;
    const SchemeSpec spec = makeSpec("rope", heads, false, sets + QStringList{QString("dim=%1").arg(turned)}, 32);
    const PositionBias bias(spec, length);
    AttentionDims dims{1, heads, length, headDim};
    dims.rotaryDims = rotaryDims;
    dims.pairing = rotateHalf ? RotaryPairing::RotateHalf : RotaryPairing::Interleaved;
    const std::vector<float> q = randomTensor(dims.elements(), 31), k = randomTensor(dims.elements(), 32),
                             v = randomTensor(dims.elements(), 33), dOut = randomTensor(dims.elements(), 34);
    AttentionOptions all;
    all.wantProbabilities = true;
    const AttentionForward fwd = attentionForward(bias, dims, q.data(), k.data(), v.data(), all);
    const AttentionGradients g = attentionBackward(bias, dims, q.data(), k.data(), v.data(), fwd, dOut.data());
    const AttentionReferenceForward ref = attentionForwardReference(bias, dims, q.data(), k.data(), v.data());
    const AttentionReferenceGradients refGrads =
        attentionBackwardReference(bias, dims, q.data(), k.data(), v.data(), dOut.data());
    const auto worst = [](const auto& ours, const std::vector<double>& twin) {
        return test::maxRelativeError(ours, twin);
    };
    for (const auto& [name, error] :
         {std::pair{"out", worst(fwd.out, ref.out)},
          std::pair{"probabilities", worst(fwd.probabilities, ref.probabilities)},
          std::pair{"dq", worst(g.dq, refGrads.dq)}, std::pair{"dk", worst(g.dk, refGrads.dk)},
          std::pair{"dv", worst(g.dv, refGrads.dv)}})
        QVERIFY2(error.value() < 5e-5, qPrintable(error.message(name)));
    // The layout matters: the same inputs under the other pairing give other scores.
    AttentionDims other = dims;
    other.pairing = rotateHalf ? RotaryPairing::Interleaved : RotaryPairing::RotateHalf;
    const AttentionForward swapped = attentionForward(bias, other, q.data(), k.data(), v.data(), all);
    const test::ErrorMax apart = worst(swapped.probabilities, ref.probabilities);
    QVERIFY2(apart.value() > 1e-3, qPrintable(apart.message("the other pairing")));
}

void TestAttention::identicalForOneAndTwoThreads_data()
{
    QTest::addColumn<QString>("scheme");
    QTest::addColumn<QStringList>("sets");
    QTest::addColumn<int>("batch");
    QTest::addColumn<int>("heads");
    QTest::addColumn<int>("length");
    QTest::addColumn<int>("dim");
    QTest::newRow("alibi/B*H=8") << "alibi" << QStringList{} << 2 << 4 << 700 << 64;
    QTest::newRow("t5/one head") << "t5" << QStringList{} << 1 << 1 << 900 << 32;
    QTest::newRow("kerple-power/3 heads") << "kerple-power" << QStringList{} << 1 << 3 << 513 << 80;
    QTest::newRow("xpos") << "xpos" << QStringList{} << 1 << 2 << 600 << 64;
    QTest::newRow("local") << "local" << QStringList{"window=200"} << 1 << 2 << 1500 << 64;
    QTest::newRow("local/4 heads/sliding K^T") << "local" << QStringList{"window=200"} << 1 << 4 << 1500 << 64;
    QTest::newRow("rope+leaky-rerope") << "rope" << QStringList{"scaling=leaky-rerope", "window=10"} << 1 << 2 << 700
                                       << 64;
    QTest::newRow("local+sinks/4 heads") << "local" << QStringList{"window=200", "sinks=4"} << 1 << 4 << 1500 << 64;
    QTest::newRow("rope+self-extend") << "rope" << QStringList{"scaling=self-extend", "window=12", "group=5"} << 1 << 2
                                      << 700 << 64;
}

void TestAttention::identicalForOneAndTwoThreads()
{
    QFETCH(QString, scheme);
    QFETCH(QStringList, sets);
    QFETCH(int, batch);
    QFETCH(int, heads);
    QFETCH(int, length);
    QFETCH(int, dim);
    const SchemeSpec spec = makeSpec(scheme, heads, false, sets);
    const PositionBias bias(spec, length);
    const AttentionDims dims{batch, heads, length, dim};
    const std::vector<float> q = randomTensor(dims.elements(), 21), k = randomTensor(dims.elements(), 22),
                             v = randomTensor(dims.elements(), 23), dOut = randomTensor(dims.elements(), 24);
    AttentionOptions all;
    all.wantProbabilities = true;
    all.wantRowEntropy = true;
    auto run = [&](int threads) {
        omp_set_num_threads(threads);
        AttentionForward f = attentionForward(bias, dims, q.data(), k.data(), v.data(), all);
        AttentionGradients g = attentionBackward(bias, dims, q.data(), k.data(), v.data(), f, dOut.data());
        return std::make_pair(std::move(f), std::move(g));
    };
    const auto one = run(1);
    const auto two = run(2);
    omp_set_num_threads(2);
    auto same = [](const auto& a, const auto& b) {
        // memcmp must not see the null data() of an empty vector (UBSan: nonnull argument)
        return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(a[0])) == 0);
    };
    QVERIFY(same(one.first.out, two.first.out));
    QVERIFY(same(one.first.logSumExp, two.first.logSumExp));
    QVERIFY(same(one.first.probabilities, two.first.probabilities));
    QVERIFY(same(one.first.rowEntropy, two.first.rowEntropy));
    QVERIFY(same(one.second.dq, two.second.dq));
    QVERIFY(same(one.second.dk, two.second.dk));
    QVERIFY(same(one.second.dv, two.second.dv));
    QVERIFY(same(one.second.dT5Values, two.second.dT5Values));
    QVERIFY(same(one.second.dKerpleR1, two.second.dKerpleR1));
    QVERIFY(same(one.second.dKerpleR2, two.second.dKerpleR2));
}

// attentionForward(..., result) must give exactly what a fresh call gives, whatever `result` held before: stale
// values of the wrong size, NaN garbage of the right size, probabilities from an earlier request.
void TestAttention::reusedBuffersMatchFreshResult_data()
{
    QTest::addColumn<QString>("scheme");
    QTest::addColumn<QStringList>("sets");
    QTest::addColumn<int>("heads");
    QTest::addColumn<int>("length");
    QTest::addColumn<int>("previousLength"); // the length `result` was last filled for
    QTest::addColumn<bool>("previousProbs");
    QTest::addColumn<bool>("probs");
    QTest::newRow("same size, NaN garbage, probs")
        << "local" << QStringList{"window=50"} << 4 << 300 << 300 << true << true;
    QTest::newRow("same size, NaN garbage") << "alibi" << QStringList{} << 4 << 300 << 300 << false << false;
    QTest::newRow("shrinks, drops probs") << "t5" << QStringList{} << 2 << 100 << 400 << true << false;
    QTest::newRow("grows, adds probs") << "bca" << QStringList{"window=64"} << 3 << 500 << 70 << false << true;
    QTest::newRow("rope, grows") << "rope" << QStringList{} << 8 << 257 << 1 << false << false;
    QTest::newRow("kerple-log, 3 heads, N < 64") << "kerple-log" << QStringList{} << 3 << 50 << 90 << false << false;
    QTest::newRow("local, 3 heads, same size")
        << "local" << QStringList{"window=40"} << 3 << 300 << 300 << false << false;
}

void TestAttention::reusedBuffersMatchFreshResult()
{
    QFETCH(QString, scheme);
    QFETCH(QStringList, sets);
    QFETCH(int, heads);
    QFETCH(int, length);
    QFETCH(int, previousLength);
    QFETCH(bool, previousProbs);
    QFETCH(bool, probs);
    const int dim = 64;
    const SchemeSpec spec = makeSpec(scheme, heads, false, sets);
    const PositionBias bias(spec, std::max(length, previousLength));
    const AttentionDims dims{1, heads, length, dim};
    // Inputs for the longer of the two calls; each call reads its first (H, N, D) as a contiguous tensor.
    const size_t elements = static_cast<size_t>(heads) * std::max(length, previousLength) * dim;
    const std::vector<float> q = randomTensor(elements, 31), k = randomTensor(elements, 32),
                             v = randomTensor(elements, 33);
    AttentionOptions options;
    options.wantProbabilities = probs;
    options.wantRowEntropy = true;
    const AttentionForward fresh = attentionForward(bias, dims, q.data(), k.data(), v.data(), options);

    const AttentionDims previousDims{1, heads, previousLength, dim};
    AttentionOptions previousOptions;
    previousOptions.wantProbabilities = previousProbs;
    AttentionForward reused = attentionForward(bias, previousDims, q.data(), k.data(), v.data(), previousOptions);
    const float nan = std::numeric_limits<float>::quiet_NaN();
    // Garbage in every element the call must write (a buffer that grows would otherwise gain zeros, which a fresh
    // result also has where nothing was written).
    reused.out.resize(dims.elements());
    reused.logSumExp.resize(dims.elements() / dim);
    reused.rowEntropy.resize(dims.elements() / dim);
    for (std::vector<float>* buffer : {&reused.out, &reused.logSumExp, &reused.probabilities, &reused.rowEntropy})
        std::fill(buffer->begin(), buffer->end(), nan);
    attentionForward(bias, dims, q.data(), k.data(), v.data(), reused, options);

    auto same = [](const std::vector<float>& a, const std::vector<float>& b) {
        return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
    };
    QVERIFY(same(reused.out, fresh.out));
    QVERIFY(same(reused.logSumExp, fresh.logSumExp));
    QVERIFY(same(reused.rowEntropy, fresh.rowEntropy));
    QVERIFY(same(reused.probabilities, fresh.probabilities));
    QCOMPARE(reused.probabilities.empty(), !probs);

    // The backward's in-place overload likewise: gradients filled for the other length, then NaN garbage.
    const std::vector<float> dOut = randomTensor(elements, 34);
    const AttentionGradients freshGrads =
        attentionBackward(bias, dims, q.data(), k.data(), v.data(), fresh, dOut.data());
    const AttentionForward previous = attentionForward(bias, previousDims, q.data(), k.data(), v.data());
    AttentionGradients reusedGrads =
        attentionBackward(bias, previousDims, q.data(), k.data(), v.data(), previous, dOut.data());
    for (std::vector<float>* buffer : {&reusedGrads.dq, &reusedGrads.dk, &reusedGrads.dv}) {
        buffer->resize(dims.elements());
        std::fill(buffer->begin(), buffer->end(), nan);
    }
    for (std::vector<double>* buffer : {&reusedGrads.dT5Values, &reusedGrads.dKerpleR1, &reusedGrads.dKerpleR2})
        std::fill(buffer->begin(), buffer->end(), std::numeric_limits<double>::quiet_NaN());
    attentionBackward(bias, dims, q.data(), k.data(), v.data(), fresh, dOut.data(), reusedGrads);
    QVERIFY(same(reusedGrads.dq, freshGrads.dq));
    QVERIFY(same(reusedGrads.dk, freshGrads.dk));
    QVERIFY(same(reusedGrads.dv, freshGrads.dv));
    QVERIFY(reusedGrads.dT5Values == freshGrads.dT5Values);
    QVERIFY(reusedGrads.dKerpleR1 == freshGrads.dKerpleR1 && reusedGrads.dKerpleR2 == freshGrads.dKerpleR2);
}

// The kernel reads q and v in place when every head starts on a cache line and packs them otherwise: the results
// must be the same bits either way (the pack keeps q unscaled, as the in-place read does).
void TestAttention::identicalWhereverBuffersStart_data()
{
    QTest::addColumn<QString>("scheme");
    QTest::addColumn<int>("heads");
    QTest::addColumn<int>("dim");
    QTest::newRow("alibi/4 heads (head-parallel)") << "alibi" << 4 << 64;
    QTest::newRow("alibi/1 head (block-parallel)") << "alibi" << 1 << 64;
    QTest::newRow("t5/D=80 (always packed)") << "t5" << 2 << 80;
    QTest::newRow("rope (q always packed, v in place)") << "rope" << 4 << 32;
}

void TestAttention::identicalWhereverBuffersStart()
{
    QFETCH(QString, scheme);
    QFETCH(int, heads);
    QFETCH(int, dim);
    const int length = 333;
    const SchemeSpec spec = makeSpec(scheme, heads, false, {});
    const PositionBias bias(spec, length);
    const AttentionDims dims{1, heads, length, dim};
    const size_t n = dims.elements();
    const std::vector<float> q = randomTensor(n, 41), k = randomTensor(n, 42), v = randomTensor(n, 43),
                             dOut = randomTensor(n, 44);
    // One buffer per tensor with room to place it at any offset from a 64-byte boundary.
    auto run = [&](size_t offsetBytes) {
        std::vector<std::vector<float>> storage;
        std::vector<const float*> at;
        for (const std::vector<float>* x : {&q, &k, &v, &dOut}) {
            storage.emplace_back(n + 32);
            const auto base = reinterpret_cast<uintptr_t>(storage.back().data());
            const size_t skip = ((64 - base % 64) % 64 + offsetBytes) / sizeof(float);
            std::copy(x->begin(), x->end(), storage.back().begin() + skip);
            at.push_back(storage.back().data() + skip);
        }
        AttentionForward f = attentionForward(bias, dims, at[0], at[1], at[2]);
        AttentionGradients g = attentionBackward(bias, dims, at[0], at[1], at[2], f, at[3]);
        return std::make_pair(std::move(f), std::move(g));
    };
    const auto aligned = run(0);
    for (size_t offset : {4, 16, 32}) {
        const auto shifted = run(offset);
        QVERIFY2(aligned.first.out == shifted.first.out, qPrintable(QString("offset %1").arg(offset)));
        QVERIFY(aligned.first.logSumExp == shifted.first.logSumExp);
        QVERIFY(aligned.second.dq == shifted.second.dq);
        QVERIFY(aligned.second.dk == shifted.second.dk);
        QVERIFY(aligned.second.dv == shifted.second.dv);
    }
}

// The kernel flushes subnormals in its worker threads only for its own duration: the calling thread's (and the
// pool's) floating-point mode is what it was before, on one thread and on two.
void TestAttention::floatingPointModeRestored()
{
#if defined(__SSE__)
    const SchemeSpec spec = makeSpec("alibi", 2, false, {});
    const int length = 700;
    const PositionBias bias(spec, length);
    const AttentionDims dims{1, 2, length, 64};
    const std::vector<float> q = randomTensor(dims.elements(), 51), k = randomTensor(dims.elements(), 52),
                             v = randomTensor(dims.elements(), 53), dOut = randomTensor(dims.elements(), 54);
    // The control bits only (rounding, FTZ, DAZ, exception masks): the low six are sticky status flags that any
    // arithmetic may raise.
    constexpr unsigned kControl = ~0x3Fu;
    const unsigned before = _mm_getcsr() & kControl;
    QCOMPARE(before & 0x8040u, 0u); // the default: subnormals kept
    for (int threads : {1, 2}) {
        omp_set_num_threads(threads);
        const AttentionForward f = attentionForward(bias, dims, q.data(), k.data(), v.data());
        attentionBackward(bias, dims, q.data(), k.data(), v.data(), f, dOut.data());
        attentionRowEntropies(bias, 0, length, q.data(), k.data(), 64);
        QCOMPARE(_mm_getcsr() & kControl, before);
        unsigned inWorkers = 0;
#pragma omp parallel reduction(| : inWorkers)
        inWorkers |= _mm_getcsr() & 0x8040u;
        QCOMPARE(inWorkers, 0u);
        // A subnormal still arises in the caller's own arithmetic afterwards.
        volatile float tiny = 1e-30f;
        QVERIFY(tiny * 1e-10f != 0.0f);
    }
    omp_set_num_threads(2);
#else
    QSKIP("no SSE control register on this machine");
#endif
}

void TestAttention::rowEntropiesMatchReference_data()
{
    QTest::addColumn<QString>("scheme");
    QTest::addColumn<bool>("bidirectional");
    QTest::addColumn<QStringList>("sets");
    QTest::addColumn<bool>("biasOnly");
    QTest::addColumn<int>("length");
    QTest::addColumn<int>("context");
    QTest::newRow("alibi/bias only") << "alibi" << false << QStringList{} << true << 700 << 0;
    QTest::newRow("rope+rerope") << "rope" << false << QStringList{"scaling=rerope", "window=20"} << false << 300 << 64;
    QTest::newRow("rope+yarn") << "rope" << false << QStringList{"scaling=yarn", "factor=2.5"} << false << 200 << 32;
    QTest::newRow("local+sinks/bias only")
        << "local" << false << QStringList{"window=9", "sinks=2"} << true << 150 << 0;
    QTest::newRow("local bidir/bias only") << "local" << true << QStringList{"window=7"} << true << 300 << 0;
    QTest::newRow("t5/bias only/logn") << "t5" << false << QStringList{} << true << 200 << 50;
    QTest::newRow("rope/pre-rotated q,k") << "rope" << false << QStringList{} << false << 500 << 0;
    QTest::newRow("xpos/pre-rotated q,k") << "xpos" << false << QStringList{} << false << 130 << 0;
    QTest::newRow("kerple-power/random q,k") << "kerple-power" << true << QStringList{} << false << 257 << 0;
    QTest::newRow("none/logn") << "none" << false << QStringList{} << false << 100 << 8;
    QTest::newRow("N=1") << "alibi" << false << QStringList{} << false << 1 << 0;
}

void TestAttention::rowEntropiesMatchReference()
{
    QFETCH(QString, scheme);
    QFETCH(bool, bidirectional);
    QFETCH(QStringList, sets);
    QFETCH(bool, biasOnly);
    QFETCH(int, length);
    QFETCH(int, context);
    const int heads = 3, dim = 64;
    const SchemeSpec spec = makeSpec(scheme, heads, bidirectional, sets, context, context > 0);
    const PositionBias bias(spec, length);
    const AttentionDims dims{1, heads, length, dim};
    std::vector<double> q(dims.elements(), 0.0), k(dims.elements(), 0.0), v(dims.elements(), 0.0);
    if (!biasOnly) {
        q = toDouble(randomTensor(dims.elements(), 31));
        k = toDouble(randomTensor(dims.elements(), 32));
    }
    const Reference ref = referenceAttention(spec, dims, q, k, v);
    // The entropy entry point takes q and k unrotated, like attentionForward: the kernel rotates them.
    const std::vector<float> qf(q.begin(), q.end()), kf(k.begin(), k.end());
    for (int h = 0; h < heads; ++h) {
        const size_t offset = size_t(h) * length * dim;
        const std::vector<double> got = attentionRowEntropies(bias, h, length, biasOnly ? nullptr : qf.data() + offset,
                                                              biasOnly ? nullptr : kf.data() + offset, dim);
        QCOMPARE(int(got.size()), length);
        for (int m = 0; m < length; ++m)
            QVERIFY2(std::abs(got[m] - ref.entropy[size_t(h) * length + m]) < 2e-5,
                     qPrintable(QString("head %1 row %2: %3 vs %4")
                                    .arg(h)
                                    .arg(m)
                                    .arg(got[m])
                                    .arg(ref.entropy[size_t(h) * length + m])));
    }
}

void TestAttention::rejectsBadDimensions()
{
    const PositionBias alibi(makeSchemeSpec("alibi", 4, false), 16);
    const std::vector<float> x(4 * 32 * 8, 0.5f);
    auto expectInputError = [&](const PositionBias& bias, AttentionDims dims, const char* word) {
        try {
            attentionForward(bias, dims, x.data(), x.data(), x.data());
            QFAIL("no InputError");
        } catch (const InputError& e) {
            QVERIFY2(QString(e.what()).contains(word), e.what());
        }
    };
    expectInputError(alibi, {1, 2, 16, 8}, "heads");  // heads differ from the scheme's
    expectInputError(alibi, {1, 4, 17, 8}, "length"); // longer than the bias was prepared for
    expectInputError(alibi, {1, 4, 0, 8}, "length");
    expectInputError(alibi, {1, 4, 8, 0}, "head-dim");
    expectInputError(alibi, {0, 4, 8, 8}, "batch");
    const PositionBias rope(makeSchemeSpec("rope", 4, false), 16);
    expectInputError(rope, {1, 4, 8, 7}, "head-dim"); // rotary needs pairs
}

void TestAttention::cliAttentionMatchesCore()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const int H = 3, N = 45, D = 24;
    const std::vector<float> q = randomTensor(size_t(H) * N * D, 41), k = randomTensor(size_t(H) * N * D, 42),
                             v = randomTensor(size_t(H) * N * D, 43);
    const std::string base = dir.path().toStdString();
    writeNpy(base + "/q.npy", {H, N, D}, q.data());
    writeNpy(base + "/k.npy", {H, N, D}, k.data());
    writeNpy(base + "/v.npy", {H, N, D}, v.data());
    const CliResult r = runCli({"attention", "rope", "--q", dir.filePath("q.npy"), "--k", dir.filePath("k.npy"), "--v",
                                dir.filePath("v.npy"), "--bidirectional", "--set", "base=500", "--probs",
                                dir.filePath("p.npy"), "-o", dir.filePath("o.npy")});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const NpyArray out = readNpy(base + "/o.npy"), probs = readNpy(base + "/p.npy");
    QCOMPARE(out.shape, (std::vector<int64_t>{H, N, D}));
    QCOMPARE(probs.shape, (std::vector<int64_t>{H, N, N}));
    const SchemeSpec spec = makeSchemeSpec("rope", H, true, {"base=500"});
    const Reference ref = referenceAttention(spec, {1, H, N, D}, toDouble(q), toDouble(k), toDouble(v));
    for (size_t i = 0; i < out.data.size(); ++i)
        QVERIFY(std::abs(out.data[i] - ref.out[i]) < 1e-4);
    for (size_t i = 0; i < probs.data.size(); ++i)
        QVERIFY(std::abs(probs.data[i] - ref.probs[i]) < 1e-5);
}

void TestAttention::cliAttentionRejectsBadInput_data()
{
    QTest::addColumn<QStringList>("args"); // @DIR@ is the temporary directory
    QTest::addColumn<QString>("message");
    const QStringList qkv{"--q", "@DIR@/q.npy", "--k", "@DIR@/k.npy", "--v", "@DIR@/v.npy"};
    QTest::newRow("no -o") << (QStringList{"attention", "alibi"} + qkv) << "-o OUT.npy is required";
    QTest::newRow("csv output") << (QStringList{"attention", "alibi"} + qkv + QStringList{"-o", "@DIR@/o.csv"})
                                << "unsupported extension '.csv'; allowed: .npy";
    QTest::newRow("missing --v") << QStringList{"attention", "alibi",       "--q", "@DIR@/q.npy",
                                                "--k",       "@DIR@/k.npy", "-o",  "@DIR@/o.npy"}
                                 << "--v FILE.npy is required";
    QTest::newRow("2-D input") << QStringList{"attention", "alibi",       "--q", "@DIR@/flat.npy", "--k", "@DIR@/k.npy",
                                              "--v",       "@DIR@/v.npy", "-o",  "@DIR@/o.npy"}
                               << "expected (H, N, D)";
    QTest::newRow("shape mismatch") << QStringList{"attention",    "alibi", "--q",         "@DIR@/q.npy", "--k",
                                                   "@DIR@/k5.npy", "--v",   "@DIR@/v.npy", "-o",          "@DIR@/o.npy"}
                                    << "must have the same shape";
    QTest::newRow("NaN in q") << QStringList{"attention", "alibi",       "--q", "@DIR@/nan.npy", "--k", "@DIR@/k.npy",
                                             "--v",       "@DIR@/v.npy", "-o",  "@DIR@/o.npy"}
                              << "nan.npy";
    QTest::newRow("odd D for rope") << QStringList{"attention", "rope",          "--q", "@DIR@/odd.npy",
                                                   "--k",       "@DIR@/odd.npy", "--v", "@DIR@/odd.npy",
                                                   "-o",        "@DIR@/o.npy"}
                                    << "head dim D of --q = 5 is not allowed for the rotary scheme rope";
    QTest::newRow("heads disagree") << (QStringList{"attention", "alibi", "--heads", "4"} + qkv +
                                        QStringList{"-o", "@DIR@/o.npy"})
                                    << "differs from the 2 heads";
    QTest::newRow("bad parameter") << (QStringList{"attention", "local", "--set", "window=0"} + qkv +
                                       QStringList{"-o", "@DIR@/o.npy"})
                                   << "scheme local: window = 0 is out of range; allowed: integers in [1, ";
    QTest::newRow("bca bidirectional") << (QStringList{"attention", "bca", "--bidirectional"} + qkv +
                                           QStringList{"-o", "@DIR@/o.npy"})
                                       << "scheme bca is causal only; bidirectional attention is not allowed";
    QTest::newRow("bench window without window")
        << QStringList{"bench", "attention", "--scheme", "alibi", "--window", "8"} << "has no window";
    QTest::newRow("bench unknown") << QStringList{"bench", "nothing"} << "allowed: attention, gemm, peak";
    QTest::newRow("bench length 0") << QStringList{"bench", "attention", "--length", "0"}
                                    << "length = 0 is out of range; allowed: integers in [1, 1048576]";
}

void TestAttention::cliAttentionRejectsBadInput()
{
    QFETCH(QStringList, args);
    QFETCH(QString, message);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string base = dir.path().toStdString();
    const std::vector<float> x = randomTensor(2 * 6 * 8, 51);
    writeNpy(base + "/q.npy", {2, 6, 8}, x.data());
    writeNpy(base + "/k.npy", {2, 6, 8}, x.data());
    writeNpy(base + "/v.npy", {2, 6, 8}, x.data());
    writeNpy(base + "/k5.npy", {2, 5, 8}, x.data());
    writeNpy(base + "/flat.npy", {12, 8}, x.data());
    writeNpy(base + "/odd.npy", {2, 6, 5}, x.data());
    std::vector<float> withNan = x;
    withNan[7] = std::numeric_limits<float>::quiet_NaN();
    writeNpy(base + "/nan.npy", {2, 6, 8}, withNan.data());
    for (QString& a : args)
        a.replace("@DIR@", dir.path());
    const CliResult r = runCli(args);
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(QString::fromUtf8(r.err).contains(message), r.err.constData());
    QVERIFY(!QFile::exists(dir.filePath("o.npy")));
}

void TestAttention::cliBenchJson_data()
{
    // N = 100, H = 2, D = 16. Visible keys of row m by closed form; the nominal count (issue 3's convention) gives
    // every row of a window the widest row's keys.
    QTest::addColumn<QStringList>("options");
    QTest::addColumn<double>("pairs");
    QTest::addColumn<double>("nominalPairs");
    auto sum = [](auto keys) {
        double total = 0;
        for (int m = 0; m < 100; ++m)
            total += keys(m);
        return total;
    };
    QTest::newRow("local causal W=16") << QStringList{"--scheme", "local", "--window", "16"}
                                       << sum([](int m) { return std::min(m + 1, 16); }) << 100.0 * 16;
    QTest::newRow("local bidirectional W=16")
        << QStringList{"--scheme", "local", "--window", "16", "--bidirectional"}
        << sum([](int m) { return std::min(m + 15, 99) - std::max(m - 15, 0) + 1; }) << 100.0 * 31;
    QTest::newRow("alibi causal") << QStringList{"--scheme", "alibi"} << 100.0 * 101 / 2 << 100.0 * 100 / 2;
    QTest::newRow("alibi bidirectional") << QStringList{"--scheme", "alibi", "--bidirectional"} << 100.0 * 100
                                         << 100.0 * 100;
}

void TestAttention::cliBenchJson()
{
    QFETCH(QStringList, options);
    QFETCH(double, pairs);
    QFETCH(double, nominalPairs);
    const CliResult r = runCli(QStringList{"bench", "attention", "--length", "100", "--heads", "2", "--dim", "16",
                                           "--repeat", "2", "--threads", "1", "--backward", "--json"}
                               << options);
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const QJsonObject j = QJsonDocument::fromJson(r.out).object();
    // 4 D H flops per pair.
    QCOMPARE(j["flops"].toDouble(), 4.0 * 16 * 2 * pairs);
    QCOMPARE(j["nominal_flops"].toDouble(), 4.0 * 16 * 2 * nominalPairs);
    if (options.contains("--window"))
        QCOMPARE(j["window"].toInt(), 16);
    QVERIFY(j["forward_ms"].toDouble() > 0 && j["backward_ms"].toDouble() > 0 && j["forward_gflops"].toDouble() > 0);
    QCOMPARE(j["forward_nominal_gflops"].toDouble() / j["forward_gflops"].toDouble(), nominalPairs / pairs);
    const CliResult g = runCli({"bench", "gemm", "--size", "64", "--repeat", "1", "--json"});
    QVERIFY2(g.exitCode == 0, g.err.constData());
    QCOMPARE(QJsonDocument::fromJson(g.out).object()["flops"].toDouble(), 2.0 * 64 * 64 * 64);
}

// bench peak measures FMA throughput with the widest ISA the CPU reports; bench attention --peak reports the
// forward's and the backward's share of the peak probed after each of their own runs, median and p90.
void TestAttention::cliBenchPeak()
{
    const CliResult p = runCli({"bench", "peak", "--threads", "1", "--repeat", "2", "--json"});
    QVERIFY2(p.exitCode == 0, p.err.constData());
    const QJsonObject peak = QJsonDocument::fromJson(p.out).object();
    QVERIFY2(QStringList({"avx512f", "avx2+fma", "scalar"}).contains(peak["isa"].toString()), p.out.constData());
    QCOMPARE(peak["gflops_runs"].toArray().size(), 2);
    QVERIFY(peak["gflops"].toDouble() > 0 && peak["gflops_best"].toDouble() >= peak["gflops"].toDouble());
    QVERIFY(peak["gflops_per_cpu_second"].toDouble() > 0);

    const CliResult a = runCli({"bench", "attention", "--length", "64", "--heads", "2", "--dim", "16", "--repeat", "4",
                                "--threads", "1", "--peak", "--backward", "--json"});
    QVERIFY2(a.exitCode == 0, a.err.constData());
    const QJsonObject j = QJsonDocument::fromJson(a.out).object();
    QCOMPARE(j["peak_gflops_runs"].toArray().size(), 4);
    QCOMPARE(j["peak_isa"].toString(), peak["isa"].toString());
    QVERIFY(qFuzzyCompare(j["forward_share_of_peak"].toDouble(),
                          j["forward_gflops"].toDouble() / j["peak_gflops"].toDouble()));
    QVERIFY(qFuzzyCompare(j["forward_share_of_peak_per_cpu_second"].toDouble(),
                          j["forward_gflops_per_cpu_second"].toDouble() / j["peak_gflops_per_cpu_second"].toDouble()));
    // The high quantile beside the median: p90 by linear interpolation between the sorted values.
    auto p90 = [](const QJsonArray& values) {
        std::vector<double> v;
        for (const QJsonValue& x : values)
            v.push_back(x.toDouble());
        std::sort(v.begin(), v.end());
        const double at = 0.9 * double(v.size() - 1);
        const size_t lo = static_cast<size_t>(at);
        return v[lo] + (v[std::min(lo + 1, v.size() - 1)] - v[lo]) * (at - double(lo));
    };
    QVERIFY(qFuzzyCompare(j["peak_gflops_p90"].toDouble(), p90(j["peak_gflops_runs"].toArray())));
    QVERIFY(j["peak_gflops_p90"].toDouble() >= j["peak_gflops"].toDouble());
    // Each run's share is its own GFLOP/s over the probe right after it.
    const double flops = j["flops"].toDouble();
    for (const QString pass : {"forward", "backward"}) {
        const QJsonArray ms = j[pass + "_ms_runs"].toArray(), shares = j[pass + "_share_of_peak_runs"].toArray();
        QCOMPARE(shares.size(), 4);
        const double passFlops = pass == "forward" ? flops : 2.5 * flops;
        if (pass == "forward")
            for (int i = 0; i < 4; ++i)
                QVERIFY(qFuzzyCompare(shares[i].toDouble(),
                                      passFlops / ms[i].toDouble() * 1e-6 / j["peak_gflops_runs"][i].toDouble()));
        QVERIFY(qFuzzyCompare(j[pass + "_share_of_peak_p90"].toDouble(), p90(shares)));
        QVERIFY(j[pass + "_gflops_p90"].toDouble() >= j[pass + "_gflops"].toDouble());
        QVERIFY(j[pass + "_gflops_per_cpu_second_p90"].toDouble() >= j[pass + "_gflops_per_cpu_second"].toDouble());
        QVERIFY(j[pass + "_share_of_peak"].toDouble() > 0 && j[pass + "_share_of_peak_per_cpu_second"].toDouble() > 0);
        QVERIFY(j.contains(pass + "_share_of_peak_per_cpu_second_p90"));
    }
    // The text names both figures.
    const CliResult text = runCli({"bench", "attention", "--length", "64", "--heads", "2", "--dim", "16", "--repeat",
                                   "2", "--threads", "1", "--peak", "--backward"});
    QVERIFY2(text.exitCode == 0, text.err.constData());
    QVERIFY2(text.out.contains("the forward reaches") && text.out.contains("the backward reaches") &&
                 text.out.contains("p90"),
             text.out.constData());
    // Without --peak, no probe runs and no share is claimed.
    const CliResult plain =
        runCli({"bench", "attention", "--length", "64", "--heads", "2", "--dim", "16", "--repeat", "1", "--json"});
    QVERIFY2(plain.exitCode == 0, plain.err.constData());
    QVERIFY(!QJsonDocument::fromJson(plain.out).object().contains("peak_gflops"));
}

// ---- one rule for rotary dim vs head dim (core's makeSchemeSpecForHeadDim) ----

void TestAttention::rotaryDimRule_data()
{
    QTest::addColumn<QString>("scheme");
    QTest::addColumn<QStringList>("sets");
    QTest::addColumn<int>("headDim");
    QTest::addColumn<int>("wantDim");     // the spec's dim afterwards; 0: the scheme has none
    QTest::addColumn<QString>("message"); // non-empty: refused with this
    QTest::newRow("rope dim follows D") << "rope" << QStringList{} << 8 << 8 << "";
    QTest::newRow("rope dim follows D (large)") << "rope" << QStringList{"base=500"} << 256 << 256 << "";
    QTest::newRow("rope explicit equal") << "rope" << QStringList{"dim=8"} << 8 << 8 << "";
    QTest::newRow("rope explicit 8.0") << "rope" << QStringList{"dim=8.0"} << 8 << 8 << "";
    QTest::newRow("rope explicit other") << "rope" << QStringList{"dim=64"} << 8 << 0
                                         << "scheme rope: dim = 64 must equal the head dim D of --q (8); rope and xpos "
                                            "rotate whole heads: leave dim unset and it follows the head dim";
    QTest::newRow("rope last setting wins, equal") << "rope" << QStringList{"dim=64", "dim=8"} << 8 << 8 << "";
    QTest::newRow("rope last setting wins, other")
        << "rope" << QStringList{"dim=8", "dim=64"} << 8 << 0 << "dim = 64 must equal the head dim D of --q (8)";
    QTest::newRow("rope dim not a number") << "rope" << QStringList{"dim=wide"} << 8 << 0 << "dim: 'wide' is not a";
    QTest::newRow("rope odd D")
        << "rope" << QStringList{} << 5 << 0
        << "head dim D of --q = 5 is not allowed for the rotary scheme rope; allowed: even head dims";
    QTest::newRow("xpos dim follows D") << "xpos" << QStringList{"gamma=0.5"} << 32 << 32 << "";
    QTest::newRow("xpos explicit other") << "xpos" << QStringList{"dim=16"} << 32 << 0
                                         << "scheme xpos: dim = 16 must equal the head dim D of --q (32)";
    QTest::newRow("alibi ignores D") << "alibi" << QStringList{} << 7 << 0 << "";
    QTest::newRow("sinusoidal dim is not a head dim") << "sinusoidal" << QStringList{"dim=32"} << 8 << 32 << "";
    QTest::newRow("sandwich dim is not a head dim") << "sandwich" << QStringList{} << 8 << 128 << "";
}

void TestAttention::rotaryDimRule()
{
    QFETCH(QString, scheme);
    QFETCH(QStringList, sets);
    QFETCH(int, headDim);
    QFETCH(int, wantDim);
    QFETCH(QString, message);
    try {
        const SchemeSpec spec =
            makeSchemeSpecForHeadDim(scheme.toStdString(), 2, false, toStd(sets), headDim, "head dim D of --q");
        QVERIFY2(message.isEmpty(), "accepted");
        if (wantDim)
            QCOMPARE(spec.intParam("dim"), wantDim);
        else
            QVERIFY(!spec.params.count("dim"));
        // A spec that passed the rule passes the check of built specs, and the random q/k provider accepts it.
        checkRotaryHeadDim(spec, headDim, "head dim");
        if (headDim % 2 == 0 || !spec.info().rotary)
            QCOMPARE(randomQkProvider(spec, headDim, 1)(4).q.size(), size_t(2 * 4 * headDim));
        if (spec.info().rotary) { // a different head dim is what the check refuses
            try {
                checkRotaryHeadDim(spec, headDim + 2, "head dim of the random q and k");
                QFAIL("checkRotaryHeadDim accepted another head dim");
            } catch (const InputError& e) {
                QVERIFY2(
                    QString(e.what()).contains(QString("dim = %1 must equal the head dim of the random q and k (%2)")
                                                   .arg(headDim)
                                                   .arg(headDim + 2)),
                    e.what());
            }
        }
    } catch (const InputError& e) {
        QVERIFY2(!message.isEmpty(), e.what());
        QVERIFY2(QString(e.what()).contains(message), e.what());
        QVERIFY(!QString(e.what()).contains('\n'));
    }
}

void TestAttention::cliRotaryDimOneRule_data()
{
    QTest::addColumn<QStringList>("args"); // @DIR@: the directory holding q, k, v of shape (2, 6, 8)
    QTest::addColumn<int>("exitCode");
    QTest::addColumn<QString>("message"); // refusals: part of the one-line message
    const QStringList qkv{"--q", "@DIR@/q.npy", "--k", "@DIR@/k.npy", "--v", "@DIR@/v.npy", "-o", "@DIR@/o.npy"};
    QTest::newRow("attention rope, dim follows D = 8") << (QStringList{"attention", "rope"} + qkv) << 0 << "";
    QTest::newRow("attention rope, dim=8 given")
        << (QStringList{"attention", "rope", "--set", "dim=8"} + qkv) << 0 << "";
    QTest::newRow("attention rope, dim=64 refused") << (QStringList{"attention", "rope", "--set", "dim=64"} + qkv) << 2
                                                    << "scheme rope: dim = 64 must equal the head dim D of --q (8)";
    QTest::newRow("attention xpos, dim=4 refused") << (QStringList{"attention", "xpos", "--set", "dim=4"} + qkv) << 2
                                                   << "scheme xpos: dim = 4 must equal the head dim D of --q (8)";
    QTest::newRow("entropy rope, dim follows --head-dim 32")
        << QStringList{"entropy", "rope", "--qk", "random", "--head-dim", "32", "--lengths", "8,24", "--heads", "2"}
        << 0 << "";
    QTest::newRow("entropy rope, dim=32 given with --head-dim 32")
        << QStringList{"entropy", "rope",   "--qk",      "random", "--head-dim", "32",
                       "--set",   "dim=32", "--lengths", "8,24",   "--heads",    "2"}
        << 0 << "";
    QTest::newRow("entropy rope, dim=32 refused at the default head dim")
        << QStringList{"entropy", "rope", "--qk", "random", "--set", "dim=32", "--lengths", "8"} << 2
        << "scheme rope: dim = 32 must equal the head dim --head-dim (64)";
    QTest::newRow("bench rope, dim follows --dim 16")
        << QStringList{"bench", "attention", "--scheme", "rope",     "--dim", "16",    "--length",
                       "40",    "--heads",   "2",        "--repeat", "1",     "--json"}
        << 0 << "";
    QTest::newRow("bench rope, dim=64 refused with --dim 16")
        << QStringList{"bench", "attention", "--scheme", "rope", "--dim", "16", "--set", "dim=64", "--length", "40"}
        << 2 << "scheme rope: dim = 64 must equal the head dim --dim (16)";
}

// attention, entropy and bench follow the same rule: rope/xpos dim is the head dim. Accepted attention runs match
// the double-precision reference (which rotates whole heads); entropy with dim given equals entropy with dim implied.
void TestAttention::cliRotaryDimOneRule()
{
    QFETCH(QStringList, args);
    QFETCH(int, exitCode);
    QFETCH(QString, message);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string base = dir.path().toStdString();
    const int H = 2, N = 6, D = 8;
    const std::vector<float> q = randomTensor(H * N * D, 61), k = randomTensor(H * N * D, 62),
                             v = randomTensor(H * N * D, 63);
    writeNpy(base + "/q.npy", {H, N, D}, q.data());
    writeNpy(base + "/k.npy", {H, N, D}, k.data());
    writeNpy(base + "/v.npy", {H, N, D}, v.data());
    for (QString& a : args)
        a.replace("@DIR@", dir.path());
    const CliResult r = runCli(args);
    QCOMPARE(r.exitCode, exitCode);
    if (exitCode != 0) {
        QVERIFY2(r.err.trimmed().count('\n') == 0 && r.err.contains(message.toUtf8()), r.err.constData());
        QVERIFY(!QFile::exists(dir.filePath("o.npy")));
        return;
    }
    QVERIFY2(r.err.isEmpty(), r.err.constData());
    if (args[0] == "attention") {
        const SchemeSpec spec = makeSchemeSpec(args[1].toStdString(), H, false, {"dim=8"});
        const Reference ref = referenceAttention(spec, {1, H, N, D}, toDouble(q), toDouble(k), toDouble(v));
        const NpyArray out = readNpy(base + "/o.npy");
        QCOMPARE(out.data.size(), ref.out.size());
        for (size_t i = 0; i < out.data.size(); ++i)
            QVERIFY(std::abs(out.data[i] - ref.out[i]) < 1e-4);
    } else if (args[0] == "entropy") {
        // Implied and explicit dim give the same file; and it is rope with dim 32 (core, same seed).
        QStringList other = args;
        const int at = other.indexOf("--set");
        if (at >= 0)
            other.remove(at, 2);
        else
            other << "--set"
                  << "dim=32";
        const CliResult r2 = runCli(other);
        QCOMPARE(r2.exitCode, 0);
        QCOMPARE(r2.out, r.out);
        const SchemeSpec spec = makeSchemeSpec("rope", 2, false, {"dim=32"});
        const std::vector<EntropyPoint> points = entropyCurve(spec, {8, 24}, randomQkProvider(spec, 32, 0));
        const QList<QByteArray> lines = r.out.trimmed().split('\n');
        QCOMPARE(lines.size(), 1 + int(points.size()));
        for (size_t i = 0; i < points.size(); ++i)
            QVERIFY(std::abs(lines[int(i) + 1].split(',')[2].toDouble() - points[i].entropyLast) < 1e-6);
    } else {
        const QJsonObject j = QJsonDocument::fromJson(r.out).object();
        QVERIFY(j["forward_ms"].toDouble() > 0);
        QCOMPARE(j["dim"].toInt(), 16);
    }
}

// ---- compute-time guard: visible pairs and the work estimate ----

void TestAttention::visiblePairsMatchDefinition_data()
{
    QTest::addColumn<QString>("scheme");
    QTest::addColumn<bool>("bidirectional");
    QTest::addColumn<int>("window"); // local/bca
    QTest::addColumn<int>("length");
    for (int n : {1, 2, 17, 300}) {
        QTest::newRow(qPrintable(QString("none causal N=%1").arg(n))) << "none" << false << 0 << n;
        QTest::newRow(qPrintable(QString("alibi bidirectional N=%1").arg(n))) << "alibi" << true << 0 << n;
        for (int w : {1, 2, 16, 1000}) {
            QTest::newRow(qPrintable(QString("local W=%1 N=%2").arg(w).arg(n))) << "local" << false << w << n;
            QTest::newRow(qPrintable(QString("local bidirectional W=%1 N=%2").arg(w).arg(n)))
                << "local" << true << w << n;
        }
        for (int w : {2, 8, 64})
            QTest::newRow(qPrintable(QString("bca W=%1 N=%2").arg(w).arg(n))) << "bca" << false << w << n;
    }
}

// visiblePairs against the masks' definitions, counted cell by cell (design.md: causal n <= m; local 0 <= m - n < W,
// bidirectional |m - n| < W; bca: own block of W/2 and the previous one), and the causal/bidirectional closed forms.
void TestAttention::visiblePairsMatchDefinition()
{
    QFETCH(QString, scheme);
    QFETCH(bool, bidirectional);
    QFETCH(int, window);
    QFETCH(int, length);
    std::vector<std::string> sets;
    if (window)
        sets.push_back("window=" + std::to_string(window));
    const SchemeSpec spec = makeSchemeSpec(scheme.toStdString(), 3, bidirectional, sets);
    double count = 0;
    for (int m = 0; m < length; ++m)
        for (int n = 0; n < length; ++n) {
            bool visible = bidirectional || n <= m;
            if (scheme == "local")
                visible = bidirectional ? std::abs(m - n) < window : (m - n >= 0 && m - n < window);
            if (scheme == "bca")
                visible = n <= m && n / (window / 2) >= m / (window / 2) - 1;
            count += visible;
        }
    QCOMPARE(visiblePairs(spec, length), count);
    if (scheme == "none")
        QCOMPARE(count, length * (length + 1.0) / 2);
    if (scheme == "alibi")
        QCOMPARE(count, double(length) * length);
    // The work estimate: 4 D flops per visible pair and head, D at least kMinWorkDim, summed over the lengths.
    QCOMPARE(attentionWork(spec, {length}, 64), 4.0 * 64 * 3 * count);
    QCOMPARE(attentionWork(spec, {length, length}, 2), 2 * 4.0 * kMinWorkDim * 3 * count);
}

void TestAttention::workEstimateBound_data()
{
    QTest::addColumn<QString>("scheme");
    QTest::addColumn<int>("heads");
    QTest::addColumn<int>("headDim");
    QTest::addColumn<QList<int>>("lengths");
    QTest::addColumn<bool>("accepted");
    QTest::addColumn<QString>("message");
    // Causal alibi, 8 heads of 64: work 4 * 64 * 8 * n (n + 1) / 2 = 1024 n (n + 1). The largest accepted n follows
    // from the limit and the rate (independently of visiblePairs, by the closed form).
    const double budget = kWorkLimitSeconds * kWorkFlopsPerSecond;
    int edge = int(std::sqrt(budget / 1024));
    while (1024.0 * (edge + 1) * (edge + 2) <= budget)
        ++edge;
    while (1024.0 * edge * (edge + 1) > budget)
        --edge;
    QTest::newRow("tiny") << "alibi" << 8 << 64 << QList<int>{16, 64, 256} << true << "";
    QTest::newRow("default entropy lengths, 1024 heads")
        << "alibi" << 1024 << 64 << QList<int>{16, 32, 64, 128, 256, 512, 1024, 2048, 4096} << true << "";
    QTest::newRow("just under the limit") << "alibi" << 8 << 64 << QList<int>{edge} << true << "";
    QTest::newRow("just over the limit") << "alibi" << 8 << 64 << QList<int>{edge + 1} << false << "would take about";
    QTest::newRow("under the limit in two lengths")
        << "alibi" << 8 << 64 << QList<int>{edge / 2, edge / 2} << true << "";
    QTest::newRow("over the limit in two lengths")
        << "alibi" << 8 << 64 << QList<int>{edge, 1024} << false << "the limit is 10 min";
    QTest::newRow("the release note's job: 1048576 x 1024 heads")
        << "alibi" << 1024 << 0 << QList<int>{1048576} << false << "days (";
    QTest::newRow("window keeps long sequences cheap") << "local" << 8 << 64 << QList<int>{1048576} << true << "";
    QTest::newRow("bidirectional doubles the work")
        << "alibi" << 8 << 64 << QList<int>{int(edge / 1.3)} << false << "at a conservative";
}

// checkWorkEstimate refuses above kWorkLimitSeconds at kWorkFlopsPerSecond, accepts just under; one line naming the
// job.
void TestAttention::workEstimateBound()
{
    QFETCH(QString, scheme);
    QFETCH(int, heads);
    QFETCH(int, headDim);
    QFETCH(QList<int>, lengths);
    QFETCH(bool, accepted);
    QFETCH(QString, message);
    const bool bidirectional = QString(QTest::currentDataTag()).startsWith("bidirectional");
    const SchemeSpec spec =
        makeSchemeSpec(scheme.toStdString(), heads, bidirectional,
                       scheme == "local" ? std::vector<std::string>{"window=64"} : std::vector<std::string>{});
    const std::vector<int> n(lengths.begin(), lengths.end());
    const double flops = attentionWork(spec, n, headDim);
    QCOMPARE(estimatedSeconds(flops) <= kWorkLimitSeconds, accepted);
    try {
        checkWorkEstimate(flops, "the job", "allowed: less");
        QVERIFY2(accepted, "accepted");
    } catch (const InputError& e) {
        QVERIFY2(!accepted, e.what());
        const QString what = e.what();
        QVERIFY2(what.startsWith("the job would take about ") && what.contains(message) &&
                     what.endsWith("; allowed: less") && !what.contains('\n'),
                 e.what());
    }
}

PLAB_QTEST_GUILESS_MAIN(TestAttention)
#include "tst_attention.moc"
