// A real model's attention (core/hf/hf_attention.h): maps, sinks and entropy by position against the NumPy
// reference's probabilities (tests/reference/make_hf_tiny.py's ref_attention.npy), levels of detail, bad input.
#include "base/errors.h"
#include "base/npy.h"
#include "hf/hf_attention.h"
#include "test_main.h"

#include <QtTest>

#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>

using namespace plab;

namespace {

std::string hfData(const QString& name)
{
    return std::string(POSITIONLAB_TEST_DATA) + "/hf/" + name.toStdString();
}

std::vector<int> idsOf(const std::string& folder)
{
    std::ifstream in(folder + "/ids.json");
    return nlohmann::json::parse(in).get<std::vector<int>>();
}

// The reference probability p(layer, head, m, n) of ref_attention.npy (layers, H, T, T).
struct Reference {
    NpyArray array;
    int heads, length;
    double at(int layer, int head, int m, int n) const
    {
        return array.data[((static_cast<size_t>(layer) * heads + head) * length + m) * length + n];
    }
};

Reference referenceOf(const std::string& folder)
{
    Reference r{readNpy(folder + "/ref_attention.npy"), 0, 0};
    r.heads = static_cast<int>(r.array.shape[1]);
    r.length = static_cast<int>(r.array.shape[2]);
    return r;
}

} // namespace

class TestHfAttention : public QObject {
    Q_OBJECT

private slots:
    void matchesReference_data();
    void matchesReference();
    void levelOfDetailAveragesBlocks_data();
    void levelOfDetailAveragesBlocks();
    void levelOfDetailMaxAndResample_data();
    void levelOfDetailMaxAndResample();
    void badInputRefused_data();
    void badInputRefused();
    void cancelStopsTheForward();
};

void TestHfAttention::matchesReference_data()
{
    QTest::addColumn<QString>("folder");
    QTest::addRow("qwen2 rope, GQA 4/2, BF16") << "qwen2_text";
    QTest::addRow("bloom ALiBi, 6 heads") << "bloom";
}

// Every map cell, every sink mass (mean of column 0) and every entropy by position (mean over heads of -sum p log p)
// against the float64 NumPy forward's probabilities.
void TestHfAttention::matchesReference()
{
    QFETCH(QString, folder);
    const std::string dir = hfData(folder);
    const HfModel model(dir);
    const std::vector<int> ids = idsOf(dir);
    const HfAttentionCapture capture = captureHfAttention(model, ids, hfPositionSpec(model.config()), true);
    const Reference ref = referenceOf(dir);
    QCOMPARE(static_cast<int>(ref.array.shape[0]), capture.layers);
    QCOMPARE(ref.heads, capture.heads);
    QCOMPARE(ref.length, capture.length);
    const int T = capture.length;
    const std::vector<double> entropy = hfEntropyByPosition(capture);
    for (int l = 0; l < capture.layers; ++l) {
        std::vector<double> refEntropy(T, 0.0);
        for (int h = 0; h < capture.heads; ++h) {
            const HfAttentionMap map = hfAttentionMap(capture, l, h, T);
            QCOMPARE(map.rows, T);
            double sink = 0;
            for (int m = 0; m < T; ++m) {
                sink += ref.at(l, h, m, 0) / T;
                for (int n = 0; n < T; ++n) {
                    const float ours = map.values[static_cast<size_t>(m) * T + n];
                    const double p = ref.at(l, h, m, n);
                    if (n > m) {
                        QVERIFY2(std::isinf(ours) && ours < 0, "a key after the query is masked");
                        continue;
                    }
                    QVERIFY2(std::abs(ours - p) <= 2e-4,
                             qPrintable(QStringLiteral("layer %1 head %2 (%3, %4): %5 vs %6")
                                            .arg(l)
                                            .arg(h)
                                            .arg(m)
                                            .arg(n)
                                            .arg(ours)
                                            .arg(p)));
                    if (p > 0)
                        refEntropy[m] -= p * std::log(p) / capture.heads;
                }
            }
            QVERIFY2(std::abs(capture.sink(l, h) - sink) <= 2e-4,
                     qPrintable(QStringLiteral("sink of layer %1 head %2: %3 vs %4")
                                    .arg(l)
                                    .arg(h)
                                    .arg(capture.sink(l, h))
                                    .arg(sink)));
        }
        for (int m = 0; m < T; ++m)
            QVERIFY2(std::abs(entropy[static_cast<size_t>(l) * T + m] - refEntropy[m]) <= 1e-3,
                     qPrintable(QStringLiteral("entropy of layer %1 at %2: %3 vs %4")
                                    .arg(l)
                                    .arg(m)
                                    .arg(entropy[static_cast<size_t>(l) * T + m])
                                    .arg(refEntropy[m])));
    }
}

void TestHfAttention::levelOfDetailAveragesBlocks_data()
{
    QTest::addColumn<int>("maxCells");
    QTest::addColumn<int>("rowBegin");
    QTest::addColumn<int>("rowEnd");
    QTest::addColumn<int>("colBegin");
    QTest::addColumn<int>("colEnd");
    QTest::addColumn<bool>("sampleRows");
    QTest::addRow("whole map in 5 x 5") << 5 << 0 << 0 << 0 << 0 << false;
    QTest::addRow("whole map in 7 x 7") << 7 << 0 << 0 << 0 << 0 << false;
    QTest::addRow("a zoomed window, exact") << 100 << 10 << 20 << 3 << 15 << false;
    QTest::addRow("a zoomed window in 3 x 4 blocks") << 4 << 12 << 15 << 0 << 24 << false;
    QTest::addRow("thumbnail 6 x 6, rows sampled") << 6 << 0 << 0 << 0 << 0 << true;
    QTest::addRow("thumbnail 5 x 5, rows sampled") << 5 << 0 << 0 << 0 << 0 << true;
}

// A coarse cell is the mean of the exact probabilities over the visible pairs of its block (NumPy's reference again);
// with rows sampled, over the visible pairs of the block's last row.
void TestHfAttention::levelOfDetailAveragesBlocks()
{
    QFETCH(int, maxCells);
    QFETCH(int, rowBegin);
    QFETCH(int, rowEnd);
    QFETCH(int, colBegin);
    QFETCH(int, colEnd);
    QFETCH(bool, sampleRows);
    const std::string dir = hfData(QStringLiteral("qwen2_text"));
    const HfModel model(dir);
    const HfAttentionCapture capture = captureHfAttention(model, idsOf(dir), hfPositionSpec(model.config()), true);
    const Reference ref = referenceOf(dir);
    const int layer = 1, head = 3;
    const HfAttentionMap map =
        hfAttentionMap(capture, layer, head, maxCells, rowBegin, rowEnd, colBegin, colEnd, sampleRows);
    QVERIFY(map.rows <= maxCells && map.cols <= maxCells);
    QCOMPARE(map.rowStart(0), map.rowBegin);
    for (int i = 0; i < map.rows; ++i)
        for (int j = 0; j < map.cols; ++j) {
            double sum = 0;
            int count = 0;
            const int rowStop = i + 1 < map.rows ? map.rowStart(i + 1) : map.rowEnd;
            for (int m = sampleRows ? rowStop - 1 : map.rowStart(i); m < rowStop; ++m)
                for (int n = map.colStart(j); n < (j + 1 < map.cols ? map.colStart(j + 1) : map.colEnd); ++n)
                    if (n <= m) {
                        sum += ref.at(layer, head, m, n);
                        ++count;
                    }
            const float ours = map.values[static_cast<size_t>(i) * map.cols + j];
            if (count == 0)
                QVERIFY(std::isinf(ours));
            else
                QVERIFY2(
                    std::abs(ours - sum / count) <= 2e-4,
                    qPrintable(QStringLiteral("cell (%1, %2): %3 vs %4").arg(i).arg(j).arg(ours).arg(sum / count)));
        }
}

void TestHfAttention::levelOfDetailMaxAndResample_data()
{
    QTest::addColumn<int>("maxCells");
    QTest::addColumn<int>("rowBegin");
    QTest::addColumn<int>("rowEnd");
    QTest::addColumn<int>("colBegin");
    QTest::addColumn<int>("colEnd");
    QTest::addRow("whole map in 5 x 5") << 5 << 0 << 24 << 0 << 24;
    QTest::addRow("whole map in 7 x 7") << 7 << 0 << 24 << 0 << 24;
    QTest::addRow("a window in 4 x 3 blocks") << 4 << 9 << 21 << 2 << 11;
    QTest::addRow("a window, one cell per token") << 100 << 10 << 20 << 3 << 15;
}

// Max maps (the app's level of detail): a cell is the largest reference probability of its block's visible pairs, the
// peaks are the window's largest (past key 0 too); resampling a per-token map gives the same cells without a score,
// and resampling from a coarser overview alone never shows less than the truth (each cell an upper bound).
void TestHfAttention::levelOfDetailMaxAndResample()
{
    QFETCH(int, maxCells);
    QFETCH(int, rowBegin);
    QFETCH(int, rowEnd);
    QFETCH(int, colBegin);
    QFETCH(int, colEnd);
    const std::string dir = hfData(QStringLiteral("qwen2_text"));
    const HfModel model(dir);
    const HfAttentionCapture capture = captureHfAttention(model, idsOf(dir), hfPositionSpec(model.config()), true);
    const Reference ref = referenceOf(dir);
    const int layer = 0, head = 2, T = capture.length;
    const HfAttentionMap map =
        hfAttentionMap(capture, layer, head, maxCells, rowBegin, rowEnd, colBegin, colEnd, false, HfMapReduce::Max);
    auto blockMax = [&](const HfAttentionMap& g, int i, int j, bool pastFirst = false) {
        double best = -INFINITY;
        for (int m = g.rowStart(i); m < (i + 1 < g.rows ? g.rowStart(i + 1) : g.rowEnd); ++m)
            for (int n = g.colStart(j); n < (j + 1 < g.cols ? g.colStart(j + 1) : g.colEnd); ++n)
                if (n <= m && (!pastFirst || n > 0))
                    best = std::max(best, ref.at(layer, head, m, n));
        return best;
    };
    double peak = 0, peakPastFirst = 0;
    for (int i = 0; i < map.rows; ++i)
        for (int j = 0; j < map.cols; ++j) {
            const double expected = blockMax(map, i, j);
            const float ours = map.values[static_cast<size_t>(i) * map.cols + j];
            if (std::isinf(expected))
                QVERIFY(std::isinf(ours));
            else
                QVERIFY2(std::abs(ours - expected) <= 2e-4,
                         qPrintable(QStringLiteral("cell (%1, %2): %3 vs %4").arg(i).arg(j).arg(ours).arg(expected)));
            peak = std::max(peak, expected);
            peakPastFirst = std::max(peakPastFirst, blockMax(map, i, j, true));
        }
    QVERIFY(std::abs(map.peak - peak) <= 2e-4);
    QVERIFY(std::abs(map.peakPastFirstKey - peakPastFirst) <= 2e-4);
    QVERIFY(map.peakPastFirstKey <= map.peak);
    // From a per-token map of the whole text (and a coarse overview behind it): the same cells.
    const HfAttentionMap exact = hfAttentionMap(capture, layer, head, T, 0, T, 0, T, false, HfMapReduce::Max);
    const HfAttentionMap overview = hfAttentionMap(capture, layer, head, 3, 0, T, 0, T, false, HfMapReduce::Max);
    const HfAttentionMap resampled = hfResampleMap({&exact, &overview}, maxCells, rowBegin, rowEnd, colBegin, colEnd);
    QCOMPARE(resampled.rows, map.rows);
    QCOMPARE(resampled.cols, map.cols);
    for (size_t c = 0; c < map.values.size(); ++c)
        QVERIFY(resampled.values[c] == map.values[c] || std::abs(resampled.values[c] - map.values[c]) <= 1e-6);
    // From the 3 x 3 overview alone: never below the truth, and a cell of a whole overview block is that block.
    const HfAttentionMap coarse = hfResampleMap({&overview}, maxCells, rowBegin, rowEnd, colBegin, colEnd);
    for (int i = 0; i < coarse.rows; ++i)
        for (int j = 0; j < coarse.cols; ++j) {
            const double truth = blockMax(coarse, i, j);
            const float shown = coarse.values[static_cast<size_t>(i) * coarse.cols + j];
            QVERIFY(std::isinf(truth) ? true : shown >= truth - 2e-4); // ours against NumPy's, as above
        }
    QVERIFY_THROWS_EXCEPTION(InputError, hfResampleMap({&overview}, maxCells, 0, T + 1, 0, T));
    const HfAttentionMap mean = hfAttentionMap(capture, layer, head, 3);
    QVERIFY_THROWS_EXCEPTION(InputError, hfResampleMap({&mean}, maxCells, 0, T, 0, T));
}

void TestHfAttention::badInputRefused_data()
{
    QTest::addColumn<int>("layer");
    QTest::addColumn<int>("head");
    QTest::addColumn<int>("maxCells");
    QTest::addColumn<int>("rowEnd");
    QTest::addColumn<QString>("expected");
    QTest::addRow("layer 2 of 2") << 2 << 0 << 8 << 0 << "layer 2 is out of range; allowed: 0..1";
    QTest::addRow("head -1") << 0 << -1 << 8 << 0 << "head -1 is out of range; allowed: 0..3";
    QTest::addRow("no cells") << 0 << 0 << 0 << 0 << "cells per side";
    QTest::addRow("window past the text") << 0 << 0 << 8 << 99 << "outside the 24 tokens";
}

void TestHfAttention::badInputRefused()
{
    QFETCH(int, layer);
    QFETCH(int, head);
    QFETCH(int, maxCells);
    QFETCH(int, rowEnd);
    QFETCH(QString, expected);
    const std::string dir = hfData(QStringLiteral("qwen2_text"));
    const HfModel model(dir);
    const HfAttentionCapture capture = captureHfAttention(model, idsOf(dir), hfPositionSpec(model.config()), true);
    try {
        hfAttentionMap(capture, layer, head, maxCells, 0, rowEnd, 0, rowEnd);
        QFAIL("no InputError");
    } catch (const InputError& e) {
        QVERIFY2(QString::fromUtf8(e.what()).contains(expected), e.what());
    }
}

void TestHfAttention::cancelStopsTheForward()
{
    const std::string dir = hfData(QStringLiteral("qwen2_text"));
    const HfModel model(dir);
    int calls = 0, layersSeen = 0;
    const HfAttentionCapture capture =
        captureHfAttention(model, idsOf(dir), hfPositionSpec(model.config()), false, [&](int done, int layers) {
            ++calls;
            layersSeen = layers;
            return done < 1;
        });
    QCOMPARE(calls, 1);
    QCOMPARE(layersSeen, 2);
    QCOMPARE(capture.layers, 0);
    QVERIFY_THROWS_EXCEPTION(InputError, hfAttentionMap(capture, 0, 0, 8));
}

PLAB_QTEST_GUILESS_MAIN(TestHfAttention)
#include "tst_hf_attention.moc"
