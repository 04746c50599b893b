// Generation with a key/value cache (core/runs/generation, HfModel::prefill/decode): greedy tokens against the argmax
// of logits over the growing prefix on every tiny folder under none, pi and yarn, cached logits against recomputed
// ones, windows crossed, a lab model, the sampler's seeds, and bad input.
#include "attention/decode.h"
#include "base/bf16.h"
#include "base/errors.h"
#include "base/random.h"
#include "cli_runner.h"
#include "compare.h"
#include "hf/hf_config.h"
#include "hf/hf_model.h"
#include "model/model.h"
#include "model_configs.h"
#include "runs/generation.h"
#include "test_main.h"

#include <QtTest>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <omp.h>
#include <limits>

using namespace plab;

namespace {

std::string dataFolder(const QString& relative)
{
    return std::string(POSITIONLAB_TEST_DATA) + "/" + relative.toStdString();
}

std::vector<int> idsOf(const std::string& folder, int count)
{
    std::ifstream in(folder + "/ids.json");
    std::vector<int> ids = nlohmann::json::parse(in).get<std::vector<int>>();
    ids.resize(std::min<size_t>(ids.size(), count));
    return ids;
}

int argmaxOfRow(const HfMatrix& logits, Eigen::Index row)
{
    const float* r = logits.row(row).data();
    return static_cast<int>(std::max_element(r, r + logits.cols()) - r);
}

// Every tiny folder, as "hf/NAME" and "hf_families/NAME".
QStringList tinyFolders()
{
    QStringList out;
    for (const QString& set : {QStringLiteral("hf"), QStringLiteral("hf_families")}) {
        const QDir dir(QString::fromStdString(dataFolder(set)));
        for (const QString& name : dir.entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name))
            out << set + QLatin1Char('/') + name;
    }
    return out;
}


// One attentionDecode call's setting: the bias of `scheme` (with `sets`) for `keys` positions, and `queries` query rows
// at the end of a cache of `keys` tokens whose stride is 2 rows longer (as a cache's capacity is).
struct DecodeCase {
    PositionBias bias;
    DecodeDims dims;
};
DecodeCase decodeCase(const QString& scheme, const QStringList& sets, int heads, int kvHeads, int headDim, int queries,
                      int keys)
{
    std::vector<std::string> assignments;
    for (const QString& set : sets)
        assignments.push_back(set.toStdString());
    DecodeDims dims;
    dims.heads = heads;
    dims.kvHeads = kvHeads;
    dims.headDim = headDim;
    dims.queries = queries;
    dims.offset = keys - queries;
    dims.capacity = keys + 2;
    return {PositionBias(makeSchemeSpec(scheme.toStdString(), heads, false, assignments), keys), dims};
}

// `count` numbers uniform in [-2, 2).
std::vector<float> uniformFloats(size_t count, uint64_t seed)
{
    Rng rng(seed);
    std::vector<float> x(count);
    for (float& value : x)
        value = static_cast<float>(4.0 * rng.uniform() - 2.0);
    return x;
}

} // namespace

class TestGenerate : public QObject {
    Q_OBJECT

private slots:
    void greedyMatchesGrowingPrefix_data();
    void greedyMatchesGrowingPrefix();
    void dynamicNtkKeepsCachedKeys();
    void longCacheMatchesForward_data();
    void longCacheMatchesForward();
    void decodeMatchesDirectSoftmax_data();
    void decodeMatchesDirectSoftmax();
    void bf16RoundsToNearestEven_data();
    void bf16RoundsToNearestEven();
    void bf16CacheReadsAsItsFloats_data();
    void bf16CacheReadsAsItsFloats();
    void bf16ModelCachesBf16_data();
    void bf16ModelCachesBf16();
    void labModelMatchesGrowingPrefix_data();
    void labModelMatchesGrowingPrefix();
    void sampling_data();
    void sampling();
    void badInputRefused_data();
    void badInputRefused();
    void cliGenerate_data();
    void cliGenerate();
    void callbackCancelsAndStopIdsEnd();
};

// Rows: every folder under none, pi and yarn (rotary folders; alibi and learned take no method: their own positions),
// and under the config's own scaling where it does not depend on the length (longrope switches tables with it).
// Prompt 10 tokens + 14 new: the windowed folders (sliding_window 8) cross their window in the prompt and again while
// generating; the 16-position folders pass their context.
void TestGenerate::greedyMatchesGrowingPrefix_data()
{
    QTest::addColumn<QString>("folder");
    QTest::addColumn<QString>("scaling");
    for (const QString& folder : tinyFolders()) {
        const HfConfig config = readHfConfig(dataFolder(folder));
        if (config.scheme != "rope") {
            QTest::addRow("%s none", qPrintable(folder)) << folder << QString();
            continue;
        }
        for (const char* method : {"none", "pi", "yarn"})
            QTest::addRow("%s %s", qPrintable(folder), method) << folder << QString::fromLatin1(method);
        if (config.scaling != "none" && config.scaling != "longrope")
            QTest::addRow("%s own (%s)", qPrintable(folder), config.scaling.c_str()) << folder << QString();
    }
}

void TestGenerate::greedyMatchesGrowingPrefix()
{
    QFETCH(QString, folder);
    QFETCH(QString, scaling);
    const HfModel model(dataFolder(folder));
    const std::vector<int> prompt = idsOf(dataFolder(folder), 10);
    GenerateOptions options;
    options.maxNew = 14;
    options.scaling = scaling.toStdString();
    // Every rotary layer under the method, sliding ones too: under the default (full) a folder whose full layers have
    // no rope (cohere2) or that has only sliding ones (mistral_window) is refused, as the CLI refuses it.
    options.scalingLayers = "all";
    const GenerateResult result = generate(model, prompt, options);
    QCOMPARE(static_cast<int>(result.ids.size()), options.maxNew);
    const HfPositions positions(hfPositionSpec(model.config(), options.scaling), HfScalingLayers::All);
    std::vector<int> text = prompt;
    for (size_t i = 0; i < result.ids.size(); ++i) {
        const HfMatrix logits = model.logits(text, positions);
        QVERIFY2(result.ids[i] == argmaxOfRow(logits, logits.rows() - 1),
                 qPrintable(QStringLiteral("token %1: generated %2, argmax of the prefix's logits %3")
                                .arg(i)
                                .arg(result.ids[i])
                                .arg(argmaxOfRow(logits, logits.rows() - 1))));
        text.push_back(result.ids[i]);
    }
    // The cache's logits of every step against the cache-free forward's rows of the whole text.
    HfKvCache cache(positions, static_cast<int>(text.size()));
    const HfMatrix full = model.logits(text, positions);
    test::ErrorMax error(test::ErrorMax::Relative);
    error.addAll(model.prefill(cache, prompt), std::vector<float>(full.row(prompt.size() - 1).data(),
                                                                  full.row(prompt.size() - 1).data() + full.cols()));
    for (size_t t = prompt.size(); t + 1 < text.size(); ++t) {
        const std::vector<float> step = model.decode(cache, text[t]);
        error.addAll(step, std::vector<float>(full.row(t).data(), full.row(t).data() + full.cols()));
    }
    QVERIFY2(error.within(1e-4), qPrintable(error.message(QStringLiteral("cached vs recomputed logits"))));
    QCOMPARE(cache.length(), static_cast<int>(text.size()) - 1);
    // 2 x layers x kv_heads x head_dim x capacity x 4 bytes, exactly.
    const HfConfig& c = model.config();
    QCOMPARE(cache.bytes(), 2.0 * c.layers * c.kvHeads * c.headDim * cache.capacity() * 4);
}

// A cache longer than one decode chunk (256 keys): a step's keys are then scored in several chunks whose softmaxes are
// merged (attentionDecode), with GQA (qwen2: 2 query heads per key/value head), under a method, and with a sink-free
// window whose band crosses chunk boundaries; the cached logits of each step equal the cache-free forward's.
void TestGenerate::longCacheMatchesForward_data()
{
    QTest::addColumn<QString>("folder");
    QTest::addColumn<QString>("scaling");
    QTest::addColumn<int>("promptLength");
    QTest::addRow("qwen2_text, 700 tokens") << "hf/qwen2_text"
                                            << "" << 700;
    QTest::addRow("qwen2_text yarn, 513 tokens") << "hf/qwen2_text"
                                                 << "yarn" << 513;
    QTest::addRow("gpt_neox, 600 tokens") << "hf/gpt_neox"
                                          << "" << 600;
    QTest::addRow("gemma2 window and cap, 600 tokens") << "hf_families/gemma2"
                                                       << "" << 600;
}

void TestGenerate::longCacheMatchesForward()
{
    QFETCH(QString, folder);
    QFETCH(QString, scaling);
    QFETCH(int, promptLength);
    const HfModel model(dataFolder(folder));
    const std::vector<int> seed = idsOf(dataFolder(folder), 64);
    std::vector<int> text;
    for (int i = 0; i < promptLength + 4; ++i)
        text.push_back(seed[static_cast<size_t>(i * 7 + i / 5) % seed.size()]);
    const HfPositions positions(hfPositionSpec(model.config(), scaling.toStdString()), HfScalingLayers::All);
    const HfMatrix full = model.logits(text, positions);
    HfKvCache cache(positions, static_cast<int>(text.size()));
    const std::vector<int> prompt(text.begin(), text.begin() + promptLength);
    test::ErrorMax error(test::ErrorMax::Relative);
    error.addAll(model.prefill(cache, prompt), std::vector<float>(full.row(promptLength - 1).data(),
                                                                  full.row(promptLength - 1).data() + full.cols()));
    for (size_t t = prompt.size(); t + 1 < text.size(); ++t)
        error.addAll(model.decode(cache, text[t]),
                     std::vector<float>(full.row(t).data(), full.row(t).data() + full.cols()));
    QVERIFY2(error.within(1e-4), qPrintable(error.message(QStringLiteral("cached vs recomputed logits"))));
}

// attentionDecode against the softmax written out in double, per head and query row over the visible keys: GQA groups
// of 1 to 8 (5 is not a power of two), head dims of a tail alone (8), a vector and a tail (24), five vectors (80);
// several query rows at once; chunks of 256 keys and a short last one; an additive bias (alibi, t5), a soft cap, a
// window with sinks, chunked attention. The same call on 1, 2 and 3 threads gives the same bits.
void TestGenerate::decodeMatchesDirectSoftmax_data()
{
    QTest::addColumn<QString>("scheme");
    QTest::addColumn<QStringList>("sets");
    QTest::addColumn<int>("group");
    QTest::addColumn<int>("kvHeads");
    QTest::addColumn<int>("headDim");
    QTest::addColumn<int>("queries");
    QTest::addColumn<int>("keys");
    QTest::addRow("none, group 1, D8, 1 row, 17 keys") << "none" << QStringList() << 1 << 3 << 8 << 1 << 17;
    QTest::addRow("none, group 3, D24, 3 rows, 257 keys") << "none" << QStringList() << 3 << 2 << 24 << 3 << 257;
    QTest::addRow("none, group 5, D80, 1 row, 600 keys") << "none" << QStringList() << 5 << 1 << 80 << 1 << 600;
    QTest::addRow("none, group 8, D24, 2 rows, 300 keys") << "none" << QStringList() << 8 << 2 << 24 << 2 << 300;
    QTest::addRow("alibi, group 5, D24, 4 rows, 600 keys") << "alibi" << QStringList() << 5 << 2 << 24 << 4 << 600;
    QTest::addRow("alibi softcap, group 7, D80, 1 row, 513 keys")
        << "alibi" << QStringList{"softcap=3"} << 7 << 1 << 80 << 1 << 513;
    QTest::addRow("t5, group 2, D24, 3 rows, 400 keys") << "t5" << QStringList() << 2 << 2 << 24 << 3 << 400;
    QTest::addRow("local window 20 sinks 3, group 3, D24, 3 rows")
        << "local" << QStringList{"window=20", "sinks=3"} << 3 << 2 << 24 << 3 << 300;
    QTest::addRow("none chunk 16, group 4, D8, 5 rows, 600 keys")
        << "none" << QStringList{"chunk=16"} << 4 << 2 << 8 << 5 << 600;
}

void TestGenerate::decodeMatchesDirectSoftmax()
{
    QFETCH(QString, scheme);
    QFETCH(QStringList, sets);
    QFETCH(int, group);
    QFETCH(int, kvHeads);
    QFETCH(int, headDim);
    QFETCH(int, queries);
    QFETCH(int, keys);
    const int heads = group * kvHeads;
    const DecodeCase c = decodeCase(scheme, sets, heads, kvHeads, headDim, queries, keys);
    const PositionBias& bias = c.bias;
    const DecodeDims& dims = c.dims;
    const size_t D = static_cast<size_t>(headDim), cacheSize = static_cast<size_t>(kvHeads) * dims.capacity * D;
    const std::vector<float> q = uniformFloats(static_cast<size_t>(heads) * queries * D, 1),
                             k = uniformFloats(cacheSize, 2), v = uniformFloats(cacheSize, 3);
    std::vector<float> out(q.size());
    attentionDecode(bias, dims, q.data(), k.data(), v.data(), out.data());
    test::ErrorMax error;
    for (int h = 0; h < heads; ++h)
        for (int r = 0; r < queries; ++r) {
            const int m = dims.offset + r;
            const size_t kv = static_cast<size_t>(h / group) * dims.capacity * D;
            const float* query = q.data() + (static_cast<size_t>(h) * queries + r) * D;
            std::vector<double> scores(keys, -std::numeric_limits<double>::infinity());
            double top = -std::numeric_limits<double>::infinity();
            for (int n = 0; n < keys; ++n) {
                if (!bias.visible(m, n, keys))
                    continue;
                double dot = 0;
                for (size_t d = 0; d < D; ++d)
                    dot += static_cast<double>(query[d]) * k[kv + n * D + d];
                const double s = PositionBias::capped(
                    (dot / std::sqrt(static_cast<double>(D)) + bias.additive(h, m, n)) * bias.rowScale(m, keys),
                    bias.softcap());
                scores[n] = s;
                top = std::max(top, s);
            }
            std::vector<double> want(D, 0.0);
            double sum = 0;
            for (int n = 0; n < keys; ++n) {
                const double p = std::exp(scores[n] - top); // 0 for a key out of sight
                sum += p;
                for (size_t d = 0; d < D; ++d)
                    want[d] += p * v[kv + n * D + d];
            }
            for (size_t d = 0; d < D; ++d)
                error.add(out[(static_cast<size_t>(h) * queries + r) * D + d], want[d] / sum);
        }
    QVERIFY2(error.within(1e-5), qPrintable(error.message(QStringLiteral("decode vs the softmax in double"))));
    const int savedThreads = omp_get_max_threads();
    for (int threads : {1, 2, 3}) {
        omp_set_num_threads(threads);
        std::vector<float> again(q.size());
        attentionDecode(bias, dims, q.data(), k.data(), v.data(), again.data());
        omp_set_num_threads(savedThreads);
        QVERIFY2(again == out, qPrintable(QStringLiteral("%1 threads give other numbers").arg(threads)));
    }
}

// The decode entry over a BF16 cache widens each number exactly and otherwise computes as over float32: its output
// equals, bit for bit, the float32 entry's on a cache holding the same BF16-rounded numbers. Head dims of whole
// vectors (64), a vector and a tail (24) and a tail alone (8); several chunks (700 keys); GQA groups of 2 and 3; an
// additive bias (alibi, the scalar score path), rope (the vector path) and a soft cap.
// base/bf16.h, the rounding every BF16 weight and cache entry goes through, on hand-worked bit patterns: BF16 keeps a
// float32's top 16 bits, so the bottom 16 decide, and exactly half (0x8000) goes to the even neighbour. Truncation
// fails the rows that round up; rounding ties up fails the tie rows.
void TestGenerate::bf16RoundsToNearestEven_data()
{
    QTest::addColumn<uint>("floatBits");
    QTest::addColumn<uint>("bf16Bits");
    QTest::newRow("1 exactly") << 0x3f800000u << 0x3f80u;
    QTest::newRow("just below half an ulp past 1: down") << 0x3f807fffu << 0x3f80u;
    QTest::newRow("half an ulp past 1 (even below): down") << 0x3f808000u << 0x3f80u;
    QTest::newRow("just past half an ulp: up") << 0x3f808001u << 0x3f81u;
    QTest::newRow("half an ulp past 0x3f81 (odd): up to even") << 0x3f818000u << 0x3f82u;
    QTest::newRow("-2.5 exactly") << 0xc0200000u << 0xc020u;
    QTest::newRow("negative, past half: away from zero") << 0xc020c000u << 0xc021u;
    QTest::newRow("the largest float rounds to infinity") << 0x7f7fffffu << 0x7f80u;
    QTest::newRow("infinity") << 0x7f800000u << 0x7f80u;
    QTest::newRow("-infinity") << 0xff800000u << 0xff80u;
    QTest::newRow("quiet NaN") << 0x7fc00000u << 0x7fc0u;
    QTest::newRow("signalling NaN stays a NaN (not infinity)") << 0x7f800001u << 0x7fc0u;
    QTest::newRow("smallest subnormal: to zero") << 0x00000001u << 0x0000u;
    QTest::newRow("subnormal tie, odd below: up") << 0x00018000u << 0x0002u;
}

void TestGenerate::bf16RoundsToNearestEven()
{
    QFETCH(uint, floatBits);
    QFETCH(uint, bf16Bits);
    float value;
    const uint32_t bits = floatBits;
    std::memcpy(&value, &bits, sizeof value);
    QCOMPARE(uint(floatToBf16(value)), bf16Bits);
    // Widening is exact: the BF16 bits are the float's top half, the bottom half zero.
    const float wide = bf16ToFloat(static_cast<uint16_t>(bf16Bits));
    uint32_t wideBits;
    std::memcpy(&wideBits, &wide, sizeof wideBits);
    QCOMPARE(uint(wideBits), bf16Bits << 16);
}

void TestGenerate::bf16CacheReadsAsItsFloats_data()
{
    QTest::addColumn<QString>("scheme");
    QTest::addColumn<QStringList>("sets");
    QTest::addColumn<int>("headDim");
    QTest::addColumn<int>("kvHeads");
    QTest::addColumn<int>("keys");
    QTest::addRow("rope D64 6/2 700") << "rope" << QStringList() << 64 << 2 << 700;
    QTest::addRow("rope D24 6/3 300") << "rope" << QStringList() << 24 << 3 << 300;
    QTest::addRow("rope D8 6/2 40") << "rope" << QStringList() << 8 << 2 << 40;
    QTest::addRow("rope D8 6/2 17") << "rope" << QStringList() << 8 << 2 << 17;
    QTest::addRow("rope D24 6/3 41") << "rope" << QStringList() << 24 << 3 << 41;
    QTest::addRow("alibi D64 6/3 513") << "alibi" << QStringList() << 64 << 3 << 513;
    QTest::addRow("rope softcap D64 6/2 300") << "rope" << QStringList{"softcap=5"} << 64 << 2 << 300;
}

void TestGenerate::bf16CacheReadsAsItsFloats()
{
    QFETCH(QString, scheme);
    QFETCH(QStringList, sets);
    QFETCH(int, headDim);
    QFETCH(int, kvHeads);
    QFETCH(int, keys);
    constexpr int heads = 6;
    const DecodeCase c = decodeCase(scheme, sets, heads, kvHeads, headDim, 1, keys);
    const size_t cacheSize = static_cast<size_t>(kvHeads) * c.dims.capacity * headDim;
    const std::vector<float> q = uniformFloats(static_cast<size_t>(heads) * headDim, 4),
                             k = uniformFloats(cacheSize, 5), v = uniformFloats(cacheSize, 6);
    std::vector<float> kRounded(cacheSize), vRounded(cacheSize);
    std::vector<uint16_t> k16(cacheSize), v16(cacheSize);
    for (size_t i = 0; i < cacheSize; ++i) {
        k16[i] = floatToBf16(k[i]);
        v16[i] = floatToBf16(v[i]);
        kRounded[i] = bf16ToFloat(k16[i]);
        vRounded[i] = bf16ToFloat(v16[i]);
    }
    std::vector<float> fromFloats(q.size()), fromBf16(q.size());
    attentionDecode(c.bias, c.dims, q.data(), kRounded.data(), vRounded.data(), fromFloats.data());
    attentionDecode(c.bias, c.dims, q.data(), k16.data(), v16.data(), fromBf16.data());
    for (size_t i = 0; i < q.size(); ++i)
        QVERIFY2(fromBf16[i] == fromFloats[i], qPrintable(QStringLiteral("output %1: %2 from the BF16 cache, %3 from "
                                                                         "its floats")
                                                              .arg(i)
                                                              .arg(fromBf16[i], 0, 'g', 9)
                                                              .arg(fromFloats[i], 0, 'g', 9)));
}

// Under the BF16 precision a generation's cache holds BF16 (2 bytes a number) and its logits follow the cache-free
// BF16 forward to within BF16's own rounding (the forward keeps keys and values float32, so they are not the same
// numbers). Skipped on a CPU without avx512_bf16.
// Rows: a short prompt, and one longer than the 256 rows a BF16 prefill stores at a time (hf_decode.cpp), so the
// rows of its second block must land where they belong.
void TestGenerate::bf16ModelCachesBf16_data()
{
    QTest::addColumn<int>("promptLength");
    QTest::newRow("prompt 30") << 30;
    QTest::newRow("prompt 300: two blocks of the prefill's store") << 300;
}

void TestGenerate::bf16ModelCachesBf16()
{
    QFETCH(int, promptLength);
    try {
        checkHfPrecisionSupported(HfPrecision::BFloat16);
    } catch (const InputError& e) {
        QSKIP(e.what());
    }
    const HfModel model(dataFolder(QStringLiteral("hf/qwen2_text")), HfPrecision::BFloat16);
    const std::vector<int> seed = idsOf(dataFolder(QStringLiteral("hf/qwen2_text")), 64);
    std::vector<int> text;
    for (int i = 0; i < promptLength + 10; ++i)
        text.push_back(seed[static_cast<size_t>(i * 7 + i / 5) % seed.size()]);
    const HfPositions positions(hfPositionSpec(model.config(), ""), HfScalingLayers::All);
    const HfMatrix full = model.logits(text, positions);
    HfKvCache cache(positions, static_cast<int>(text.size()));
    const std::vector<int> prompt(text.begin(), text.begin() + promptLength);
    test::ErrorMax error(test::ErrorMax::Relative);
    error.addAll(model.prefill(cache, prompt), std::vector<float>(full.row(promptLength - 1).data(),
                                                                  full.row(promptLength - 1).data() + full.cols()));
    for (size_t t = prompt.size(); t + 1 < text.size(); ++t)
        error.addAll(model.decode(cache, text[t]),
                     std::vector<float>(full.row(t).data(), full.row(t).data() + full.cols()));
    // The yardstick: how far BF16's own rounding (weights and product inputs) moves these logits from float32's. On
    // this tiny random model that is 0.15 (relative to 1 + |logit|); rounding the cache as well must not add more
    // than as much again.
    const HfModel exact(dataFolder(QStringLiteral("hf/qwen2_text")));
    const HfMatrix floats = exact.logits(text, positions);
    test::ErrorMax precision(test::ErrorMax::Relative);
    for (size_t t = prompt.size() - 1; t + 1 < text.size(); ++t)
        precision.addAll(std::vector<float>(full.row(t).data(), full.row(t).data() + full.cols()),
                         std::vector<float>(floats.row(t).data(), floats.row(t).data() + floats.cols()));
    QVERIFY2(error.within(2 * precision.value()),
             qPrintable(error.message(QStringLiteral("BF16-cached vs recomputed BF16 logits")) + QStringLiteral("; ") +
                        precision.message(QStringLiteral("BF16 vs float32 logits"))));
    const HfConfig& c = model.config();
    QCOMPARE(cache.bytes(), 2.0 * c.layers * c.kvHeads * c.headDim * cache.capacity() * 2);
}

// dynamic-ntk under a cache: transformers turns each new key by the table of the current length and never turns the
// cached keys again, so past the context the cached logits must differ from a forward that turns every key by the
// final length's table; before the context, where the table does not change, they agree.
void TestGenerate::dynamicNtkKeepsCachedKeys()
{
    const std::string folder = dataFolder(QStringLiteral("hf/qwen2")); // context 16
    const HfModel model(folder);
    const std::vector<int> text = idsOf(folder, 24);
    const SchemeSpec positions = hfPositionSpec(model.config(), "dynamic-ntk", {"factor=4"});
    HfKvCache cache(positions, 24);
    const std::vector<int> prompt(text.begin(), text.begin() + 8);
    model.prefill(cache, prompt);
    test::ErrorMax inside(test::ErrorMax::Relative), past(test::ErrorMax::Relative);
    for (int t = 8; t + 1 < 24; ++t) {
        const std::vector<float> step = model.decode(cache, text[t]);
        const std::vector<int> prefix(text.begin(), text.begin() + t + 1);
        const HfMatrix full = model.logits(prefix, positions);
        const std::vector<float> want(full.row(t).data(), full.row(t).data() + full.cols());
        (t + 1 <= 16 ? inside : past).addAll(step, want);
    }
    QVERIFY2(inside.within(1e-4), qPrintable(inside.message(QStringLiteral("inside the context"))));
    QVERIFY2(past.finite() && past.value() > 1e-3, qPrintable(past.message(QStringLiteral("past the context"))));
}

void TestGenerate::labModelMatchesGrowingPrefix_data()
{
    QTest::addColumn<QString>("scheme");
    QTest::addColumn<QString>("scaling");
    QTest::addRow("rope none") << "rope"
                               << "none";
    QTest::addRow("rope pi") << "rope"
                             << "pi";
    QTest::addRow("rope yarn") << "rope"
                               << "yarn";
    QTest::addRow("rope self-extend") << "rope"
                                      << "self-extend";
    QTest::addRow("alibi") << "alibi"
                           << "";
    QTest::addRow("learned") << "learned"
                             << "";
}

void TestGenerate::labModelMatchesGrowingPrefix()
{
    QFETCH(QString, scheme);
    QFETCH(QString, scaling);
    ModelConfig config = smallModelConfig(scheme.toStdString(), 2, 16, 2, 32, 16);
    config.context = scheme == "learned" ? 32 : 16;
    Model model(config);
    const std::vector<int> prompt = {'T', 'h', 'e', ' ', 'c', 'a', 't'};
    GenerateOptions options;
    options.maxNew = 20;
    options.scaling = scaling.toStdString();
    const std::string before = model.config().scaling;
    const GenerateResult result = generate(model, prompt, options);
    QCOMPARE(model.config().scaling, before); // the method was the call's only
    QCOMPARE(static_cast<int>(result.ids.size()), 20);
    if (!scaling.isEmpty())
        model.setScaling(options.scaling, {});
    std::vector<uint8_t> text(prompt.begin(), prompt.end());
    for (size_t i = 0; i < result.ids.size(); ++i) {
        model.forward(text.data(), nullptr, 1, static_cast<int>(text.size()));
        const float* row = model.logits().data() + (text.size() - 1) * 256;
        QCOMPARE(result.ids[i], static_cast<int>(std::max_element(row, row + 256) - row));
        text.push_back(static_cast<uint8_t>(result.ids[i]));
    }
}

// Rows: two option sets that must give the same tokens, or must differ.
void TestGenerate::sampling_data()
{
    QTest::addColumn<double>("temperature");
    QTest::addColumn<int>("topK");
    QTest::addColumn<qulonglong>("seedA");
    QTest::addColumn<qulonglong>("seedB");
    QTest::addColumn<bool>("same");
    QTest::addColumn<bool>("greedy"); // also equal to the greedy tokens
    QTest::addRow("top-k 1 is greedy") << 1.0 << 1 << 1ULL << 2ULL << true << true;
    QTest::addRow("same seed, same tokens") << 1.0 << 0 << 7ULL << 7ULL << true << false;
    QTest::addRow("same seed with top-k 5") << 0.8 << 5 << 11ULL << 11ULL << true << false;
    // At temperature 50 over 300 tokens each draw is close to uniform: 20 equal draws from two seeds cannot happen.
    QTest::addRow("another seed differs") << 50.0 << 0 << 1ULL << 2ULL << false << false;
}

void TestGenerate::sampling()
{
    QFETCH(double, temperature);
    QFETCH(int, topK);
    QFETCH(qulonglong, seedA);
    QFETCH(qulonglong, seedB);
    QFETCH(bool, same);
    QFETCH(bool, greedy);
    const std::string folder = dataFolder(QStringLiteral("hf/qwen2"));
    const HfModel model(folder);
    const std::vector<int> prompt = idsOf(folder, 6);
    GenerateOptions options;
    options.maxNew = 20;
    options.temperature = temperature;
    options.topK = topK;
    options.seed = seedA;
    const std::vector<int> a = generate(model, prompt, options).ids;
    options.seed = seedB;
    const std::vector<int> b = generate(model, prompt, options).ids;
    QCOMPARE(a == b, same);
    if (greedy) {
        GenerateOptions plain;
        plain.maxNew = 20;
        QCOMPARE(a, generate(model, prompt, plain).ids);
    }
    for (const int id : a)
        QVERIFY(id >= 0 && id < model.config().vocab);
}

void TestGenerate::badInputRefused_data()
{
    QTest::addColumn<QString>("folder");
    QTest::addColumn<int>("promptLength");
    QTest::addColumn<int>("maxNew");
    QTest::addColumn<QString>("scaling");
    QTest::addColumn<int>("badId"); // -1: none; else replaces the first prompt id
    QTest::addColumn<double>("temperature");
    QTest::addColumn<QString>("expected"); // in the message
    QTest::addRow("max-new 0") << "hf/qwen2" << 4 << 0 << "" << -1 << 0.0 << "max-new = 0 is out of range";
    QTest::addRow("max-new negative") << "hf/qwen2" << 4 << -3 << "" << -1 << 0.0 << "max-new = -3";
    QTest::addRow("empty prompt") << "hf/qwen2" << 0 << 4 << "" << -1 << 0.0 << "the prompt is empty";
    QTest::addRow("id past the vocabulary") << "hf/qwen2" << 4 << 4 << "" << 300 << 0.0 << "token id 300";
    QTest::addRow("negative id") << "hf/qwen2" << 4 << 4 << "" << -5 << 0.0 << "allowed: integers in [0, 299]";
    QTest::addRow("negative temperature") << "hf/qwen2" << 4 << 4 << "" << -1 << -1.0 << "temperature = -1";
    QTest::addRow("gpt2 prompt + max-new past 32")
        << "hf/gpt2" << 24 << 9 << "" << -1 << 0.0 << "allowed: max-new up to 8";
    QTest::addRow("rerope refused") << "hf/qwen2" << 4 << 4 << "rerope" << -1 << 0.0 << "the method rerope";
    QTest::addRow("self-extend refused") << "hf/qwen2" << 4 << 4 << "self-extend" << -1 << 0.0
                                         << "the method self-extend";
    QTest::addRow("leaky-rerope refused")
        << "hf/qwen2" << 4 << 4 << "leaky-rerope" << -1 << 0.0 << "the method leaky-rerope";
}

void TestGenerate::badInputRefused()
{
    QFETCH(QString, folder);
    QFETCH(int, promptLength);
    QFETCH(int, maxNew);
    QFETCH(QString, scaling);
    QFETCH(int, badId);
    QFETCH(double, temperature);
    QFETCH(QString, expected);
    const HfModel model(dataFolder(folder));
    std::vector<int> prompt = idsOf(dataFolder(folder), 24);
    while (static_cast<int>(prompt.size()) < promptLength)
        prompt.push_back(prompt[prompt.size() % 24]);
    prompt.resize(promptLength);
    if (badId != -1)
        prompt[0] = badId;
    GenerateOptions options;
    options.maxNew = maxNew;
    options.scaling = scaling.toStdString();
    options.temperature = temperature;
    try {
        generate(model, prompt, options);
        QFAIL("accepted");
    } catch (const InputError& e) {
        QVERIFY2(QString::fromUtf8(e.what()).contains(expected), e.what());
    }
}

// The CLI verb: --json's ids equal the core's greedy tokens, a checkpoint generates, and bad input exits 2 naming the
// option, its value and what is allowed.
void TestGenerate::cliGenerate_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<int>("exitCode");
    QTest::addColumn<QString>("expected"); // in stderr (exit 2) or in stdout
    const QString qwen = QString::fromStdString(dataFolder(QStringLiteral("hf/qwen2")));
    const QString gpt2 = QString::fromStdString(dataFolder(QStringLiteral("hf/gpt2")));
    QTest::addRow("json") << QStringList{qwen, "--ids", "1,2,3", "--max-new", "4", "--json"} << 0 << "\"ids\":[";
    QTest::addRow("max-new 0") << QStringList{qwen, "--ids", "1,2", "--max-new", "0"} << 2
                               << "--max-new = 0 is out of range; allowed: integers in [1,";
    QTest::addRow("max-new missing") << QStringList{qwen, "--ids", "1,2"} << 2 << "--max-new";
    QTest::addRow("id past the vocabulary")
        << QStringList{qwen, "--ids", "1,300", "--max-new", "2"} << 2
        << "token id 300 at position 1 is out of range; allowed: integers in [0, 299]";
    QTest::addRow("empty text") << QStringList{qwen, "--text", "", "--max-new", "2"} << 2 << "the prompt is empty";
    QTest::addRow("no prompt") << QStringList{qwen, "--max-new", "2"} << 2 << "give one of --ids";
    QTest::addRow("gpt2 past its table") << QStringList{gpt2, "--ids", "1,2,3,4", "--max-new", "40"} << 2
                                         << "--max-new = 40 after a prompt of 4 tokens passes the 32 positions";
    QTest::addRow("self-extend") << QStringList{qwen, "--ids", "1,2", "--max-new", "2", "--scaling", "self-extend"} << 2
                                 << "the method self-extend places each key";
    QTest::addRow("negative temperature") << QStringList{qwen, "--ids", "1", "--max-new", "2", "--temperature", "-1"}
                                          << 2 << "--temperature = -1 is out of range";
    QTest::addRow("set without scaling") << QStringList{qwen, "--ids", "1", "--max-new", "2", "--set", "factor=2"} << 2
                                         << "--set needs --scaling";
    // Every layer of mistral_window slides: a method on the full layers (the default) would change nothing.
    const QString mistral = QString::fromStdString(dataFolder(QStringLiteral("hf_families/mistral_window")));
    QTest::addRow("method reaching no layer")
        << QStringList{mistral, "--ids", "1,2", "--max-new", "2", "--scaling", "yarn"} << 2
        << "scaling layers 'full' reach no layer with rotary positions";
    QTest::addRow("scaling-layers unknown")
        << QStringList{mistral, "--ids", "1,2", "--max-new", "2", "--scaling", "yarn", "--scaling-layers", "half"} << 2
        << "half";
    QTest::addRow("scaling-layers without a method")
        << QStringList{mistral, "--ids", "1,2", "--max-new", "2", "--scaling-layers", "sliding"} << 2
        << "--scaling-layers names the layers a method given with --scaling reaches";
}

void TestGenerate::cliGenerate()
{
    QFETCH(QStringList, args);
    QFETCH(int, exitCode);
    QFETCH(QString, expected);
    const test::CliResult r = test::runCli(QStringList{QStringLiteral("generate")} + args);
    QVERIFY2(r.exitCode == exitCode, r.err.constData());
    QVERIFY2((exitCode == 0 ? r.out : r.err).contains(expected.toUtf8()), (r.out + r.err).constData());
    if (exitCode != 0)
        return;
    const nlohmann::json doc = nlohmann::json::parse(r.out.toStdString());
    QVERIFY(doc.contains("text") && doc.contains("prefill_ms") && doc.contains("decode_tokens_per_s"));
    const HfModel model(args[0].toStdString());
    GenerateOptions options;
    options.maxNew = 4;
    QCOMPARE(doc["ids"].get<std::vector<int>>(), generate(model, {1, 2, 3}, options).ids);
    const HfConfig& c = model.config();
    QCOMPARE(doc["cache_bytes"].get<double>(), 2.0 * c.layers * c.kvHeads * c.headDim * (3 + 4 - 1) * 4);
}

// The callback sees each token as it is chosen and false cancels after it; a stop id ends generation after emitting it.
void TestGenerate::callbackCancelsAndStopIdsEnd()
{
    const std::string folder = dataFolder(QStringLiteral("hf/qwen2"));
    const HfModel model(folder);
    const std::vector<int> prompt = idsOf(folder, 6);
    GenerateOptions options;
    options.maxNew = 12;
    const GenerateResult all = generate(model, prompt, options);
    QVERIFY(!all.canceled);
    std::vector<int> seen;
    const GenerateResult canceled = generate(model, prompt, options, [&](int id) {
        seen.push_back(id);
        return seen.size() < 3;
    });
    QVERIFY(canceled.canceled);
    QCOMPARE(canceled.ids, std::vector<int>(all.ids.begin(), all.ids.begin() + 3));
    QCOMPARE(seen, canceled.ids);
    options.stopIds = {all.ids[4]};
    const std::vector<int> stopped = generate(model, prompt, options).ids;
    const size_t first = std::find(all.ids.begin(), all.ids.end(), all.ids[4]) - all.ids.begin();
    QCOMPARE(stopped, std::vector<int>(all.ids.begin(), all.ids.begin() + first + 1));
}

PLAB_QTEST_GUILESS_MAIN(TestGenerate)
#include "tst_generate.moc"
