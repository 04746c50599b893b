// The layer-type modifiers (window, chunk, sinks, softcap) on every scheme: the fused kernel against its double twin
// forward and backward, the window's and chunk's edges, a window wider than the sequence, the soft cap's gradient by
// finite differences, the bias view's band and the refusals of bad values.
#include "attention/attention.h"
#include "attention/attention_reference.h"
#include "base/errors.h"
#include "base/random.h"
#include "model/model_config.h"
#include "cli_runner.h"
#include "test_main.h"

#include <QRegularExpression>
#include <QtTest>

#include <cmath>
#include <cstring>
#include <limits>

using namespace plab;

namespace {

std::vector<float> randomTensor(size_t count, uint64_t seed, double scale = 1.0)
{
    Rng rng(seed);
    std::vector<float> x(count);
    for (float& e : x)
        e = float(scale * rng.normal());
    return x;
}

std::vector<std::string> toStd(const QStringList& list)
{
    std::vector<std::string> out;
    for (const QString& s : list)
        out.push_back(s.toStdString());
    return out;
}

// A spec from settings ("scaling=METHOD" picks the method; "sliding=W" sets SchemeSpec::window directly, for the
// methods whose own parameter is named window), with random learned values where the scheme has them.
SchemeSpec makeSpec(const QString& scheme, int heads, const QStringList& sets, int context)
{
    QStringList own;
    std::string scaling = "none";
    int sliding = 0, sinks = 0;
    for (const QString& a : sets)
        if (a.startsWith("scaling="))
            scaling = a.mid(8).toStdString();
        else if (a.startsWith("sliding="))
            sliding = a.mid(8).toInt();
        else if (!sets.filter(QRegularExpression("^sliding=")).isEmpty() && a.startsWith("sinks="))
            sinks = a.mid(6).toInt(); // set with the sliding window, which they need
        else
            own << a;
    SchemeSpec spec = makeSchemeSpec(scheme.toStdString(), heads, false, toStd(own), context, false, scaling);
    spec.window = sliding ? sliding : spec.window;
    spec.sinks = sinks ? sinks : spec.sinks;
    Rng rng(77);
    if (spec.kind == SchemeKind::T5) {
        spec.t5Values.resize(size_t(spec.intParam("num-buckets")) * heads);
        for (double& t : spec.t5Values)
            t = rng.normal();
    }
    if (spec.kind == SchemeKind::KerplePower || spec.kind == SchemeKind::KerpleLog) {
        spec.kerpleR1.assign(heads, 0.5);
        spec.kerpleR2.assign(heads, 0.9);
    }
    validateSchemeSpec(spec);
    return spec;
}

// Worst |a - b| / (1 + |b|) over two arrays; infinite when the sizes differ or any entry is not finite, so a NaN
// fails every comparison below.
template <typename A, typename B>
double worstRelative(const A& a, const B& b)
{
    if (a.size() != b.size())
        return std::numeric_limits<double>::infinity();
    double worst = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        const double d = std::abs(double(a[i]) - double(b[i])) / (1 + std::abs(double(b[i])));
        if (!std::isfinite(d))
            return std::numeric_limits<double>::infinity();
        worst = d > worst ? d : worst;
    }
    return worst;
}

#define CHECK_CLOSE(name, a, b, tolerance)                                                                             \
    do {                                                                                                               \
        const double error_ = worstRelative(a, b);                                                                     \
        QVERIFY2(error_ <= (tolerance), qPrintable(QString("%1: worst relative error %2").arg(name).arg(error_)));     \
    } while (0)

// Every scheme the fused kernel computes (cope has a path of its own and refuses the modifiers).
const QStringList kSchemes = {"none",         "sinusoidal", "learned",  "rope",  "xpos", "t5",   "alibi",
                              "kerple-power", "kerple-log", "sandwich", "local", "bca",  "fire", "fox"};

bool isWindowed(const QString& scheme)
{
    return scheme == "local" || scheme == "bca";
}

// The own window of local and bca in these rows, so that the modifiers cut something inside it.
QStringList ownWindow(const QString& scheme)
{
    return scheme == "local" ? QStringList{"window=40"} : scheme == "bca" ? QStringList{"window=40"} : QStringList{};
}

struct Case {
    SchemeSpec spec;
    AttentionDims dims;
    std::vector<float> q, k, v, dOut;
};

Case makeCase(const QString& scheme, const QStringList& sets, int batch, int heads, int length, int dim, int context)
{
    Case c{makeSpec(scheme, heads, sets, context), {batch, heads, length, dim}, {}, {}, {}, {}};
    const size_t n = c.dims.elements();
    c.q = randomTensor(n, 11, 1.5); // large enough scores that a soft cap of 2 bends them
    c.k = randomTensor(n, 12, 1.5);
    c.v = randomTensor(n, 13);
    c.dOut = randomTensor(n, 14);
    return c;
}

} // namespace

class TestAttentionMasks : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void kernelMatchesTwin_data();
    void kernelMatchesTwin();
    void wideWindowIsNoWindow_data();
    void wideWindowIsNoWindow();
    void twinMasksFollowDefinition_data();
    void twinMasksFollowDefinition();
    void softcapForwardIsCappedScores();
    void softcapGradientMatchesFiniteDifferences_data();
    void softcapGradientMatchesFiniteDifferences();
    void biasViewDrawsBand_data();
    void biasViewDrawsBand();
    void visiblePairsCountBand();
    void refusesBadValues_data();
    void refusesBadValues();
    void cliRefusesBadValues_data();
    void cliRefusesBadValues();
    void modelRecordsModifiers();
};

void TestAttentionMasks::kernelMatchesTwin_data()
{
    QTest::addColumn<QString>("scheme");
    QTest::addColumn<QStringList>("sets");
    QTest::addColumn<int>("batch");
    QTest::addColumn<int>("heads");
    QTest::addColumn<int>("length");
    QTest::addColumn<int>("context");
    // Every scheme x each modifier: B*H = 4 (a thread per head, single-pass backward) and B*H = 3 (query blocks
    // shared, two-pass backward), N across two 64-row query blocks.
    for (const QString& scheme : kSchemes) {
        QList<QPair<QString, QStringList>> modifiers;
        if (!isWindowed(scheme)) {
            modifiers << qMakePair(QString("window=17"), QStringList{"window=17"});
            modifiers << qMakePair(QString("window=20+sinks=3"), QStringList{"window=20", "sinks=3"});
        }
        modifiers << qMakePair(QString("chunk=24"), QStringList{"chunk=24"});
        modifiers << qMakePair(QString("softcap=2"), QStringList{"softcap=2"});
        modifiers << qMakePair(QString("window/chunk+softcap"), isWindowed(scheme)
                                                                    ? QStringList{"chunk=30", "softcap=3"}
                                                                    : QStringList{"window=33", "softcap=3"});
        for (const auto& [name, sets] : modifiers) {
            QTest::newRow(qPrintable(scheme + "/" + name + "/B*H=4"))
                << scheme << (ownWindow(scheme) + sets) << 2 << 2 << 90 << 0;
            QTest::newRow(qPrintable(scheme + "/" + name + "/B*H=3"))
                << scheme << (ownWindow(scheme) + sets) << 1 << 3 << 77 << 0;
        }
    }
    // The length-extension methods: a window on rope with each (set directly where the method's own parameter is
    // named window), and sinks across ReRoPE's near and far placements.
    QTest::newRow("rope+yarn/window") << "rope" << QStringList{"scaling=yarn", "factor=3", "window=20"} << 1 << 2 << 100
                                      << 32;
    QTest::newRow("rope+pi/chunk+softcap")
        << "rope" << QStringList{"scaling=pi", "factor=2", "chunk=16", "softcap=2"} << 2 << 2 << 80 << 32;
    QTest::newRow("rope+ntk/window") << "rope" << QStringList{"scaling=ntk", "factor=2", "window=25"} << 1 << 3 << 90
                                     << 32;
    QTest::newRow("rope+llama3/chunk") << "rope" << QStringList{"scaling=llama3", "factor=4", "chunk=20"} << 1 << 2
                                       << 90 << 32;
    QTest::newRow("xpos+dynamic-ntk/window")
        << "xpos" << QStringList{"scaling=dynamic-ntk", "window=21"} << 1 << 2 << 90 << 32;
    QTest::newRow("rope+rerope/sliding") << "rope" << QStringList{"scaling=rerope", "window=9", "sliding=30"} << 1 << 2
                                         << 100 << 32;
    QTest::newRow("rope+rerope/sliding<w")
        << "rope" << QStringList{"scaling=rerope", "window=20", "sliding=12"} << 2 << 2 << 70 << 32;
    QTest::newRow("rope+leaky-rerope/chunk+sinks")
        << "rope" << QStringList{"scaling=leaky-rerope", "window=10", "leak=3", "chunk=25", "sinks=4"} << 2 << 2 << 90
        << 40;
    QTest::newRow("rope+self-extend/sliding+sinks")
        << "rope" << QStringList{"scaling=self-extend", "window=9", "group=4", "sliding=40", "sinks=2"} << 1 << 3 << 100
        << 32;
    QTest::newRow("rope+longrope/window+softcap")
        << "rope" << QStringList{"scaling=longrope", "window=19", "softcap=4"} << 1 << 2 << 70 << 32;
    QTest::newRow("alibi/logn+window") << "alibi" << QStringList{"window=30"} << 1 << 2 << 100 << 40;
    QTest::newRow("rope/logit-c+softcap") << "rope" << QStringList{"logit-c=0.3", "softcap=2"} << 1 << 2 << 80 << 40;
    // The window's edges: T = W - 1, W, W + 1, around the 64-row blocks and 16-key lanes.
    for (int W : {17, 64})
        for (int T : {W - 1, W, W + 1})
            QTest::newRow(qPrintable(QString("rope/window=%1/T=%2").arg(W).arg(T)))
                << "rope" << QStringList{QString("window=%1").arg(W)} << 1 << 4 << T << 0;
    for (int C : {16, 64})
        for (int T : {C - 1, C, C + 1})
            QTest::newRow(qPrintable(QString("alibi/chunk=%1/T=%2").arg(C).arg(T)))
                << "alibi" << QStringList{QString("chunk=%1").arg(C)} << 1 << 3 << T << 0;
    QTest::newRow("rope/window=1") << "rope" << QStringList{"window=1"} << 1 << 2 << 40 << 0;
    QTest::newRow("rope/chunk=1") << "rope" << QStringList{"chunk=1"} << 1 << 2 << 40 << 0;
}

// Forward (out, lse, probabilities, entropies) and backward (dq, dk, dv, the bias parameters' gradients) of the
// fused kernel against the double twin.
void TestAttentionMasks::kernelMatchesTwin()
{
    QFETCH(QString, scheme);
    QFETCH(QStringList, sets);
    QFETCH(int, batch);
    QFETCH(int, heads);
    QFETCH(int, length);
    QFETCH(int, context);
    const bool logn = QString(QTest::currentDataTag()).contains("logn");
    Case c = makeCase(scheme, sets, batch, heads, length, 16, context);
    if (logn) {
        c.spec.logn = true;
        validateSchemeSpec(c.spec);
    }
    const PositionBias bias(c.spec, length + 5); // a table longer than the sequence
    AttentionOptions all;
    all.wantProbabilities = true;
    all.wantRowEntropy = true;
    const AttentionForward fwd = attentionForward(bias, c.dims, c.q.data(), c.k.data(), c.v.data(), all);
    const AttentionReferenceForward ref = attentionForwardReference(bias, c.dims, c.q.data(), c.k.data(), c.v.data());
    CHECK_CLOSE("out", fwd.out, ref.out, 1e-4);
    CHECK_CLOSE("lse", fwd.logSumExp, ref.logSumExp, 2e-6);
    CHECK_CLOSE("probabilities", fwd.probabilities, ref.probabilities, 2e-6);
    CHECK_CLOSE("entropy", fwd.rowEntropy, ref.rowEntropy, 1e-4);
    for (size_t i = 0; i < ref.probabilities.size(); ++i) // masked cells exactly 0
        if (ref.probabilities[i] == 0.0)
            QVERIFY2(fwd.probabilities[i] == 0.0f, qPrintable(QString("cell %1: %2").arg(i).arg(fwd.probabilities[i])));

    const AttentionGradients g =
        attentionBackward(bias, c.dims, c.q.data(), c.k.data(), c.v.data(), fwd, c.dOut.data());
    const AttentionReferenceGradients rg =
        attentionBackwardReference(bias, c.dims, c.q.data(), c.k.data(), c.v.data(), c.dOut.data());
    CHECK_CLOSE("dq", g.dq, rg.dq, 1e-4);
    CHECK_CLOSE("dk", g.dk, rg.dk, 1e-4);
    CHECK_CLOSE("dv", g.dv, rg.dv, 1e-4);
    CHECK_CLOSE("dT5Values", g.dT5Values, rg.dT5Values, 1e-4);
    CHECK_CLOSE("dKerpleR1", g.dKerpleR1, rg.dKerpleR1, 1e-4);
    CHECK_CLOSE("dKerpleR2", g.dKerpleR2, rg.dKerpleR2, 1e-4);
    CHECK_CLOSE("dFire.w2", g.dFire.w2, rg.dFire.w2, 1e-4);
    CHECK_CLOSE("dFire.c", std::vector<double>{g.dFire.c}, std::vector<double>{rg.dFire.c}, 1e-4);
}

void TestAttentionMasks::wideWindowIsNoWindow_data()
{
    QTest::addColumn<QString>("scheme");
    QTest::addColumn<QString>("setting");
    QTest::addColumn<int>("heads");
    QTest::addColumn<int>("length");
    for (const QString scheme : {"rope", "alibi", "t5", "none"})
        for (int T : {50, 130}) {
            for (const QString& setting : {QString("window=%1").arg(T), QString("window=%1").arg(T + 7),
                                           QString("chunk=%1").arg(T), QString("chunk=%1").arg(T + 100)})
                for (int heads : {2, 4})
                    QTest::newRow(qPrintable(QString("%1/%2/T=%3/H=%4").arg(scheme, setting).arg(T).arg(heads)))
                        << scheme << setting << heads << T;
        }
}

// A window or chunk at least as wide as the sequence hides nothing: the same bits as no modifier, forward and backward.
void TestAttentionMasks::wideWindowIsNoWindow()
{
    QFETCH(QString, scheme);
    QFETCH(QString, setting);
    QFETCH(int, heads);
    QFETCH(int, length);
    const Case plain = makeCase(scheme, {}, 1, heads, length, 16, 0);
    const SchemeSpec wide = makeSpec(scheme, heads, {setting}, 0);
    QVERIFY(wide.window > 0 || wide.chunk > 0);
    const PositionBias plainBias(plain.spec, length), wideBias(wide, length);
    AttentionOptions all;
    all.wantProbabilities = true;
    all.wantRowEntropy = true;
    const float *q = plain.q.data(), *k = plain.k.data(), *v = plain.v.data();
    const AttentionForward a = attentionForward(plainBias, plain.dims, q, k, v, all);
    const AttentionForward b = attentionForward(wideBias, plain.dims, q, k, v, all);
    auto same = [](const std::vector<float>& x, const std::vector<float>& y) {
        return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0;
    };
    QVERIFY(same(a.out, b.out));
    QVERIFY(same(a.logSumExp, b.logSumExp));
    QVERIFY(same(a.probabilities, b.probabilities));
    QVERIFY(same(a.rowEntropy, b.rowEntropy));
    const AttentionGradients ga = attentionBackward(plainBias, plain.dims, q, k, v, a, plain.dOut.data());
    const AttentionGradients gb = attentionBackward(wideBias, plain.dims, q, k, v, b, plain.dOut.data());
    QVERIFY(same(ga.dq, gb.dq));
    QVERIFY(same(ga.dk, gb.dk));
    QVERIFY(same(ga.dv, gb.dv));
    QVERIFY(ga.dT5Values == gb.dT5Values);
}

void TestAttentionMasks::twinMasksFollowDefinition_data()
{
    QTest::addColumn<QStringList>("sets");
    QTest::addColumn<int>("window");
    QTest::addColumn<int>("chunk");
    QTest::addColumn<int>("sinks");
    QTest::newRow("window=5") << QStringList{"window=5"} << 5 << 0 << 0;
    QTest::newRow("window=1") << QStringList{"window=1"} << 1 << 0 << 0;
    QTest::newRow("chunk=7") << QStringList{"chunk=7"} << 0 << 7 << 0;
    QTest::newRow("window=6+sinks=2") << QStringList{"window=6", "sinks=2"} << 6 << 0 << 2;
    QTest::newRow("chunk=8+sinks=3") << QStringList{"chunk=8", "sinks=3"} << 0 << 8 << 3;
    QTest::newRow("window=4+chunk=9") << QStringList{"window=4", "chunk=9"} << 4 << 9 << 0;
}

// The twin's probabilities are 0 exactly where the definitions hide a key: window m - W < n <= m, chunk
// ⌊n/C⌋ = ⌊m/C⌋ and n <= m, sinks n < S and n <= m; and the kernel's (interval) probabilities agree cell by cell.
void TestAttentionMasks::twinMasksFollowDefinition()
{
    QFETCH(QStringList, sets);
    QFETCH(int, window);
    QFETCH(int, chunk);
    QFETCH(int, sinks);
    const int N = 37;
    const Case c = makeCase("rope", sets, 1, 1, N, 8, 0);
    const PositionBias bias(c.spec, N);
    const AttentionReferenceForward ref = attentionForwardReference(bias, c.dims, c.q.data(), c.k.data(), c.v.data());
    AttentionOptions probs;
    probs.wantProbabilities = true;
    const AttentionForward fwd = attentionForward(bias, c.dims, c.q.data(), c.k.data(), c.v.data(), probs);
    for (int m = 0; m < N; ++m)
        for (int n = 0; n < N; ++n) {
            bool visible = n <= m;
            if (window > 0)
                visible = visible && m - window < n;
            if (chunk > 0)
                visible = visible && n / chunk == m / chunk;
            visible = visible || (n < sinks && n <= m);
            const double p = ref.probabilities[size_t(m) * N + n];
            const float pk = fwd.probabilities[size_t(m) * N + n];
            QVERIFY2(visible ? p > 0 : p == 0.0, qPrintable(QString("twin (%1, %2): %3").arg(m).arg(n).arg(p)));
            QVERIFY2(visible ? pk > 0 : pk == 0.0f, qPrintable(QString("kernel (%1, %2): %3").arg(m).arg(n).arg(pk)));
        }
}

// The twin's capped forward against the uncapped twin's scores capped here: log p = s - lse gives each uncapped score
// z, then softmax(c tanh(z / c)) row by row must be the capped twin's probabilities.
void TestAttentionMasks::softcapForwardIsCappedScores()
{
    const int N = 30, H = 2;
    const double cap = 1.5;
    const Case c = makeCase("alibi", {}, 1, H, N, 8, 0);
    SchemeSpec capped = c.spec;
    capped.softcap = cap;
    const PositionBias plainBias(c.spec, N), cappedBias(capped, N);
    const AttentionReferenceForward plain =
        attentionForwardReference(plainBias, c.dims, c.q.data(), c.k.data(), c.v.data());
    const AttentionReferenceForward withCap =
        attentionForwardReference(cappedBias, c.dims, c.q.data(), c.k.data(), c.v.data());
    double worst = 0;
    for (int row = 0; row < H * N; ++row) {
        const int m = row % N;
        std::vector<double> s(m + 1);
        double sum = 0;
        for (int n = 0; n <= m; ++n) {
            const double z = std::log(plain.probabilities[size_t(row) * N + n]) + plain.logSumExp[row];
            s[n] = std::exp(cap * std::tanh(z / cap));
            sum += s[n];
        }
        for (int n = 0; n <= m; ++n) {
            const double d = std::abs(s[n] / sum - withCap.probabilities[size_t(row) * N + n]);
            worst = d > worst || !std::isfinite(d) ? d : worst;
        }
    }
    QVERIFY2(worst <= 1e-10, qPrintable(QString("worst |p - capped softmax| = %1").arg(worst)));
}

void TestAttentionMasks::softcapGradientMatchesFiniteDifferences_data()
{
    QTest::addColumn<QString>("scheme");
    QTest::addColumn<QStringList>("sets");
    QTest::newRow("rope/softcap=1.5") << "rope" << QStringList{"softcap=1.5"};
    QTest::newRow("alibi/softcap=0.7") << "alibi" << QStringList{"softcap=0.7"};
    QTest::newRow("t5/window=4+softcap=2") << "t5" << QStringList{"window=4", "softcap=2"};
    QTest::newRow("kerple-log/chunk=5+softcap=1") << "kerple-log" << QStringList{"chunk=5", "softcap=1"};
}

// The twin's backward through the soft cap against central differences of its own forward (loss = sum(dOut * out)),
// every third element of q, k and v; the kernel's gradients against the twin's. (The learned bias parameters' gradients
// pass through the same capped dS: kernelMatchesTwin compares them.)
void TestAttentionMasks::softcapGradientMatchesFiniteDifferences()
{
    QFETCH(QString, scheme);
    QFETCH(QStringList, sets);
    const int N = 11, H = 2, D = 4;
    const Case c = makeCase(scheme, sets, 1, H, N, D, 0);
    auto loss = [&](const SchemeSpec& spec, const std::vector<float>& q, const std::vector<float>& k,
                    const std::vector<float>& v) {
        const PositionBias bias(spec, N);
        const AttentionReferenceForward r = attentionForwardReference(bias, c.dims, q.data(), k.data(), v.data());
        double sum = 0;
        for (size_t i = 0; i < r.out.size(); ++i)
            sum += c.dOut[i] * r.out[i];
        return sum;
    };
    const PositionBias bias(c.spec, N);
    const AttentionReferenceGradients g =
        attentionBackwardReference(bias, c.dims, c.q.data(), c.k.data(), c.v.data(), c.dOut.data());
    // Central differences in float inputs: a step of 2^-12 keeps the perturbed inputs exact (|x| < 2^11) and the
    // truncation error near eps^2 = 6e-8; the twin runs in double, so rounding adds about 1e-16 / eps.
    const float eps = 1.0f / 4096;
    for (int which = 0; which < 3; ++which) {
        const std::vector<double>& analytic = which == 0 ? g.dq : which == 1 ? g.dk : g.dv;
        for (size_t i = which; i < c.dims.elements(); i += 3) { // every third element: all rows, dims, both heads
            std::vector<float> x[3] = {c.q, c.k, c.v};
            x[which][i] += eps;
            const double up = loss(c.spec, x[0], x[1], x[2]);
            x[which][i] -= 2 * eps;
            const double down = loss(c.spec, x[0], x[1], x[2]);
            const double numeric = (up - down) / (2 * eps);
            QVERIFY2(
                std::abs(analytic[i] - numeric) <= 1e-5 * (1 + std::abs(numeric)),
                qPrintable(
                    QString("%1[%2]: analytic %3, numeric %4").arg("qkv"[which]).arg(i).arg(analytic[i]).arg(numeric)));
        }
    }
    const AttentionForward fwd = attentionForward(bias, c.dims, c.q.data(), c.k.data(), c.v.data());
    const AttentionGradients kg =
        attentionBackward(bias, c.dims, c.q.data(), c.k.data(), c.v.data(), fwd, c.dOut.data());
    CHECK_CLOSE("kernel dq", kg.dq, g.dq, 1e-4);
    CHECK_CLOSE("kernel dk", kg.dk, g.dk, 1e-4);
    CHECK_CLOSE("kernel dv", kg.dv, g.dv, 1e-4);
}

void TestAttentionMasks::biasViewDrawsBand_data()
{
    QTest::addColumn<QString>("scheme");
    QTest::addColumn<QStringList>("sets");
    QTest::addColumn<int>("window");
    QTest::addColumn<int>("chunk");
    QTest::addColumn<double>("softcap");
    QTest::newRow("rope/window=8") << "rope" << QStringList{"window=8"} << 8 << 0 << 0.0;
    QTest::newRow("alibi/chunk=6") << "alibi" << QStringList{"chunk=6"} << 0 << 6 << 0.0;
    QTest::newRow("alibi/softcap=2") << "alibi" << QStringList{"softcap=2"} << 0 << 0 << 2.0;
    QTest::newRow("sandwich/window=5+softcap=3") << "sandwich" << QStringList{"window=5", "softcap=3"} << 5 << 0 << 3.0;
}

// The bias view's matrix (PositionBias::fillView, which the GUI's heatmap and `bias` draw): -inf (the masked colour)
// exactly outside the band, the scheme's value inside it, capped to c tanh(b / c) under a soft cap.
void TestAttentionMasks::biasViewDrawsBand()
{
    QFETCH(QString, scheme);
    QFETCH(QStringList, sets);
    QFETCH(int, window);
    QFETCH(int, chunk);
    QFETCH(double, softcap);
    const int N = 25;
    const SchemeSpec spec = makeSpec(scheme, 2, sets, 0);
    SchemeSpec plainSpec = spec;
    plainSpec.window = plainSpec.chunk = 0;
    plainSpec.softcap = 0;
    const PositionBias bias(spec, N), plain(plainSpec, N);
    std::vector<float> view(size_t(N) * N), plainView(size_t(N) * N);
    for (int h = 0; h < 2; ++h) {
        bias.fillView(h, N, 0, N, view.data());
        plain.fillView(h, N, 0, N, plainView.data());
        for (int m = 0; m < N; ++m)
            for (int n = 0; n < N; ++n) {
                const bool inside = n <= m && (window == 0 || m - window < n) && (chunk == 0 || n / chunk == m / chunk);
                const float got = view[size_t(m) * N + n], want = plainView[size_t(m) * N + n];
                if (!inside) {
                    QVERIFY2(std::isinf(got) && got < 0, qPrintable(QString("(%1, %2): %3").arg(m).arg(n).arg(got)));
                    continue;
                }
                const double expected = softcap > 0 ? softcap * std::tanh(want / softcap) : want;
                QVERIFY2(std::abs(got - expected) <= 1e-5 * (1 + std::abs(expected)),
                         qPrintable(QString("(%1, %2): %3, expected %4").arg(m).arg(n).arg(got).arg(expected)));
            }
    }
}

// Visible pairs under a window are sum_m min(m + 1, W); under a chunk, each whole chunk adds C (C + 1) / 2.
void TestAttentionMasks::visiblePairsCountBand()
{
    const int N = 100;
    double windowPairs = 0;
    for (int m = 0; m < N; ++m)
        windowPairs += std::min(m + 1, 16);
    QCOMPARE(visiblePairs(makeSchemeSpec("rope", 1, false, {"window=16"}), N), windowPairs);
    QCOMPARE(visiblePairs(makeSchemeSpec("alibi", 1, false, {"chunk=25"}), N), 4 * 25.0 * 26 / 2);
    QCOMPARE(visiblePairs(makeSchemeSpec("alibi", 1, false, {"chunk=25", "sinks=3"}), N),
             4 * 25.0 * 26 / 2 + 3 * (3 * 25.0)); // chunks 2-4: every row also sees the 3 sinks
    QCOMPARE(nominalPairs(makeSchemeSpec("rope", 1, false, {"window=16"}), N), N * 16.0);
}

void TestAttentionMasks::refusesBadValues_data()
{
    QTest::addColumn<QString>("scheme");
    QTest::addColumn<bool>("bidirectional");
    QTest::addColumn<QStringList>("sets");
    QTest::addColumn<QString>("message");
    QTest::newRow("window=0") << "rope" << false << QStringList{"window=0"}
                              << "window = 0 is out of range; allowed: integers in [1, 1000000]";
    QTest::newRow("window=-4") << "alibi" << false << QStringList{"window=-4"}
                               << "window = -4 is out of range; allowed: integers in [1, 1000000]";
    QTest::newRow("window=2.5") << "rope" << false << QStringList{"window=2.5"} << "window = 2.5 is out of range";
    QTest::newRow("chunk=0") << "rope" << false << QStringList{"chunk=0"}
                             << "chunk = 0 is out of range; allowed: integers in [1, 1000000]";
    QTest::newRow("softcap=0") << "rope" << false << QStringList{"softcap=0"}
                               << "softcap = 0 is out of range; allowed: (0, 1000000]";
    QTest::newRow("softcap=-2") << "alibi" << false << QStringList{"softcap=-2"}
                                << "softcap = -2 is out of range; allowed: (0, 1000000]";
    QTest::newRow("window bidirectional")
        << "alibi" << true << QStringList{"window=8"} << "window = 8 needs causal attention";
    QTest::newRow("chunk bidirectional") << "t5" << true << QStringList{"chunk=8"}
                                         << "chunk = 8 needs causal attention";
    QTest::newRow("sinks alone") << "rope" << false << QStringList{"sinks=2"} << "sinks = 2 needs a window or a chunk";
    QTest::newRow("sinks=-1") << "rope" << false << QStringList{"window=4", "sinks=-1"} << "sinks = -1 is out of range";
    QTest::newRow("cope window") << "cope" << false << QStringList{"window=4"}
                                 << "scheme cope does not combine with window";
    QTest::newRow("cope softcap") << "cope" << false << QStringList{"softcap=4"}
                                  << "scheme cope does not combine with softcap";
}

void TestAttentionMasks::refusesBadValues()
{
    QFETCH(QString, scheme);
    QFETCH(bool, bidirectional);
    QFETCH(QStringList, sets);
    QFETCH(QString, message);
    try {
        makeSchemeSpec(scheme.toStdString(), 2, bidirectional, toStd(sets));
        QFAIL("accepted");
    } catch (const InputError& e) {
        QVERIFY2(QString(e.what()).contains(message), e.what());
    }
}

void TestAttentionMasks::cliRefusesBadValues_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("message");
    QTest::newRow("bias window=0") << QStringList{"bias", "rope", "--set", "window=0"} << "window = 0 is out of range";
    QTest::newRow("bias softcap=0") << QStringList{"bias", "alibi", "--set", "softcap=0"}
                                    << "softcap = 0 is out of range; allowed: (0, 1000000]";
    QTest::newRow("bias bidirectional chunk")
        << QStringList{"bias", "alibi", "--bidirectional", "--set", "chunk=4"} << "chunk = 4 needs causal attention";
    QTest::newRow("bench chunk=0") << QStringList{"bench", "attention", "rope", "--length", "64", "--set", "chunk=0"}
                                   << "chunk = 0 is out of range";
}

void TestAttentionMasks::cliRefusesBadValues()
{
    QFETCH(QStringList, args);
    QFETCH(QString, message);
    const plab::test::CliResult r = plab::test::runCli(args);
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(QString::fromUtf8(r.err).contains(message), r.err.constData());
}

// A model's config keeps the modifiers through its checkpoint JSON; the window stays on the scheme's layers and the
// soft cap goes to the NoPE layers too (RNoPE-SWA: rope with a window, NoPE layers seeing everything).
void TestAttentionMasks::modelRecordsModifiers()
{
    ModelConfig c;
    c.scheme = "rope";
    c.layers = 4;
    c.nopeEvery = 2;
    c.schemeSettings = {"window=16", "softcap=30", "sinks=2"};
    const ModelConfig back = ModelConfig::fromJson(c.toJson(), "test");
    const SchemeSpec rope = modelLayerSchemeSpec(back, 0), nope = modelLayerSchemeSpec(back, 1);
    QCOMPARE(rope.window, 16);
    QCOMPARE(rope.sinks, 2);
    QCOMPARE(rope.softcap, 30.0);
    QCOMPARE(nope.kind, SchemeKind::None);
    QCOMPARE(nope.window, 0);
    QCOMPARE(nope.softcap, 30.0);
    ModelConfig none = c;
    none.scheme = "none";
    none.nopeEvery = 0;
    QCOMPARE(modelLayerSchemeSpec(ModelConfig::fromJson(none.toJson(), "test"), 1).window, 16);
}

PLAB_QTEST_GUILESS_MAIN(TestAttentionMasks)
#include "tst_attention_masks.moc"
