// Cached decoding of a folder's model: the prefill keeps each layer's rotated keys and values, then one token at a
// time runs the same layers (HfModel::runLayer) with one row of attention against the cache (attention/decode.h).
#include "hf/hf_forward_state.h"

#include "attention/decode.h"
#include "base/errors.h"
#include "base/limits.h"

#include <algorithm>

namespace plab {

HfKvCache::HfKvCache(const HfPositions& positions, int capacity) : m_data(std::make_unique<Data>())
{
    const std::string reason = decodeUnsupportedReason(positions.spec);
    if (!reason.empty())
        throw InputError("generation with a cache: " + reason);
    checkIntegerRange("the tokens a cache holds", capacity, 1, kMaxLength);
    m_data->positions = positions;
    m_data->capacity = capacity;
}

HfKvCache::~HfKvCache() = default;

int HfKvCache::length() const
{
    return m_data->length;
}

int HfKvCache::capacity() const
{
    return m_data->capacity;
}

double HfKvCache::bytes() const
{
    double bytes = 0;
    for (size_t l = 0; l < m_data->keys.size(); ++l)
        bytes += 4.0 * static_cast<double>(m_data->keys[l].size() + m_data->values[l].size());
    for (size_t l = 0; l < m_data->keysBf16.size(); ++l)
        bytes += 2.0 * static_cast<double>(m_data->keysBf16[l].size() + m_data->valuesBf16[l].size());
    return bytes;
}

namespace {

DecodeDims decodeDims(const HfForwardState& s, const HfKvCache::Data& cache, int queries, int offset)
{
    DecodeDims d;
    d.heads = s.dims.heads;
    d.kvHeads = s.dims.keyValueHeads();
    d.headDim = s.dims.headDim;
    d.queries = queries;
    d.offset = offset;
    d.capacity = cache.capacity;
    d.pairing = s.dims.pairing;
    d.rotaryDims = s.dims.rotaryDims;
    return d;
}

// Rows [first, first + count) of every key/value head: the new keys (turned at their positions by the table of a
// sequence of `length` tokens) and values copied from (kvHeads, count, D) into the cache, rounded to BF16 after the
// rotation where the cache holds BF16.
void store(HfKvCache::Data& cache, size_t layer, const PositionBias& bias, const DecodeDims& d, const float* k,
           const float* v, int first, int count, int length)
{
    const size_t D = static_cast<size_t>(d.headDim), headRows = static_cast<size_t>(cache.capacity) * D;
    const size_t newRows = static_cast<size_t>(count) * D; // one head's new rows in k and v
    if (cache.keysBf16.empty()) {
        for (int hk = 0; hk < d.kvHeads; ++hk) {
            std::copy_n(k + hk * newRows, newRows, cache.keys[layer].data() + hk * headRows + first * D);
            std::copy_n(v + hk * newRows, newRows, cache.values[layer].data() + hk * headRows + first * D);
        }
        rotateRowsAt(bias, d, cache.keys[layer].data() + first * D, d.kvHeads, headRows, count, first, length, true);
        return;
    }
    // A prefill's rows go through a bounded buffer, 256 at a time: it is thread-local, and it would otherwise keep the
    // longest prompt's keys.
    constexpr int kRowsAtOnce = 256;
    thread_local std::vector<float> turned; // (kvHeads, rows, D): rotated keys before rounding
    for (int r0 = 0; r0 < count; r0 += kRowsAtOnce) {
        const int rows = std::min(kRowsAtOnce, count - r0);
        const size_t block = static_cast<size_t>(rows) * D;
        turned.resize(d.kvHeads * block);
        for (int hk = 0; hk < d.kvHeads; ++hk)
            std::copy_n(k + hk * newRows + r0 * D, block, turned.data() + hk * block);
        rotateRowsAt(bias, d, turned.data(), d.kvHeads, block, rows, first + r0, length, true);
        for (int hk = 0; hk < d.kvHeads; ++hk) {
            const size_t at = hk * headRows + static_cast<size_t>(first + r0) * D;
            const float* values = v + hk * newRows + r0 * D;
            std::transform(turned.data() + hk * block, turned.data() + (hk + 1) * block,
                           cache.keysBf16[layer].data() + at, floatToBf16);
            std::transform(values, values + block, cache.valuesBf16[layer].data() + at, floatToBf16);
        }
    }
}

} // namespace

void HfModel::attend(size_t index, HfForwardState& s, const PositionBias& bias) const
{
    if (!s.decoding) {
        attentionForward(bias, s.dims, s.qh.data(), s.kh.data(), s.vh.data(), s.forward, s.options, s.rotaryTables);
        if (s.cache) // a prefill: the window's keys and values, as the kernel turned the keys, kept for decoding
            store(*s.cache, index, bias, decodeDims(s, *s.cache, s.T, 0), s.kh.data(), s.vh.data(), 0, s.T, s.T);
        return;
    }
    // One token at position p = the tokens cached: its query and key turned at p by the table of p + 1 tokens (the
    // current length: dynamic-ntk's and longrope's convention in transformers), its key and value appended.
    HfKvCache::Data& cache = *s.cache;
    const int p = cache.length;
    const DecodeDims d = decodeDims(s, cache, 1, p);
    store(cache, index, bias, d, s.kh.data(), s.vh.data(), p, 1, p + 1);
    rotateRowsAt(bias, d, s.qh.data(), d.heads, d.headDim, 1, p, p + 1, false);
    s.forward.out.resize(s.qh.size());
    if (cache.keysBf16.empty())
        attentionDecode(bias, d, s.qh.data(), cache.keys[index].data(), cache.values[index].data(),
                        s.forward.out.data());
    else
        attentionDecode(bias, d, s.qh.data(), cache.keysBf16[index].data(), cache.valuesBf16[index].data(),
                        s.forward.out.data());
}

std::vector<float> HfModel::prefill(HfKvCache& cacheHandle, const std::vector<int>& ids) const
{
    const HfConfig& c = m_config;
    HfKvCache::Data& cache = cacheHandle.data();
    if (cache.length != 0)
        throw InputError("prefill of a cache that already holds " + std::to_string(cache.length) +
                         " tokens; allowed: an empty cache");
    checkHfLength(c, cache.capacity); // a learned-position table must hold every position the cache will hold
    if (ids.empty() || static_cast<int>(ids.size()) > cache.capacity)
        throw InputError("a prompt of " + std::to_string(ids.size()) + " tokens for a cache of " +
                         std::to_string(cache.capacity) + "; allowed: 1.." + std::to_string(cache.capacity) +
                         " tokens");
    const size_t perLayer = static_cast<size_t>(c.kvHeads) * cache.capacity * c.headDim;
    // Under BF16 the cache holds BF16, as transformers' bf16 models hold theirs: a long decode step streams the cache.
    const bool bf16 = m_precision == HfPrecision::BFloat16;
    checkMemoryEstimate(2.0 * hfWeightBytes(m_precision) * c.layers * perLayer,
                        "the key/value cache of " + std::to_string(cache.capacity) + " tokens of " + c.folder);
    cache.kvHeads = c.kvHeads;
    cache.headDim = c.headDim;
    if (bf16) {
        cache.keysBf16.assign(c.layers, std::vector<uint16_t>(perLayer));
        cache.valuesBf16.assign(c.layers, std::vector<uint16_t>(perLayer));
    } else {
        cache.keys.assign(c.layers, std::vector<float>(perLayer));
        cache.values.assign(c.layers, std::vector<float>(perLayer));
    }
    HfMatrix hidden, logits;
    forward(ids, cache.positions, nullptr, &hidden, HfForwardOutput::Losses, &cache);
    cache.length = static_cast<int>(ids.size());
    initState(cache.decodeState, cache.positions, 1, cache.capacity);
    cache.decodeState.cache = &cache;
    cache.decodeState.decoding = true;
    HfMatrix last = hidden.bottomRows(1);
    headLogits(last, logits);
    return std::vector<float>(logits.data(), logits.data() + logits.size());
}

std::vector<float> HfModel::decode(HfKvCache& cacheHandle, int id) const
{
    HfKvCache::Data& cache = cacheHandle.data();
    if (cache.length == 0)
        throw InputError("decode before a prefill; allowed: prefill the prompt first");
    if (cache.length >= cache.capacity)
        throw InputError("the cache holds its " + std::to_string(cache.capacity) +
                         " tokens; allowed: at most that many tokens in one generation");
    HfMatrix x, logits;
    embed({id}, cache.length, x);
    for (size_t layer = 0; layer < m_layers.size(); ++layer)
        runLayer(layer, cache.decodeState, x);
    ++cache.length;
    headLogits(x, logits);
    return std::vector<float>(logits.data(), logits.data() + logits.size());
}

} // namespace plab
