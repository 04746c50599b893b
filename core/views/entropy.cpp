// Entropy curves: row entropies of attention distributions from the attention kernel (never an N x N matrix).
#include "views/entropy.h"

#include "attention/attention.h"
#include "base/limits.h"
#include "base/errors.h"
#include "base/random.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace plab {

QkProvider randomQkProvider(const SchemeSpec& spec, int headDim, uint64_t seed)
{
    if (headDim < 1 || headDim > 4096)
        throw InputError("head-dim = " + std::to_string(headDim) + " is out of range; allowed: integers in [1, 4096]");
    if (spec.info().rotary && headDim % 2)
        throw InputError("head-dim = " + std::to_string(headDim) + " must be even for the rotary scheme " +
                         spec.name());
    checkRotaryHeadDim(spec, headDim, "head dim of the random q and k");
    return [spec, headDim, seed](int length) {
        // (H, N, D) twice: refuse before allocating what the machine cannot have.
        checkMemoryEstimate(2.0 * 4.0 * spec.heads * length * headDim,
                            "random q and k of " + std::to_string(spec.heads) + " heads x " + std::to_string(length) +
                                " positions x " + std::to_string(headDim) + " dims");
        QkSample s;
        s.heads = spec.heads;
        s.length = length;
        s.headDim = headDim;
        const size_t perHead = static_cast<size_t>(length) * headDim;
        s.q.resize(perHead * spec.heads);
        s.k.resize(perHead * spec.heads);
        for (int h = 0; h < spec.heads; ++h) {
            Rng rngQ(seed * 1000003ULL + 2 * h);
            Rng rngK(seed * 1000003ULL + 2 * h + 1);
            for (size_t i = 0; i < perHead; ++i) {
                s.q[h * perHead + i] = static_cast<float>(rngQ.normal());
                s.k[h * perHead + i] = static_cast<float>(rngK.normal());
            }
        }
        return s;
    };
}

std::vector<EntropyPoint> entropyCurve(const SchemeSpec& spec, const std::vector<int>& lengths,
                                       const QkProvider& provider, const EntropyProgress& progress)
{
    if (lengths.empty())
        throw InputError("lengths: at least one length is needed");
    int maxLength = 0;
    for (int n : lengths) {
        checkIntegerRange("length", n, 1, kMaxLength);
        maxLength = std::max(maxLength, n);
    }
    const PositionBias bias(spec, maxLength);
    std::vector<EntropyPoint> points;
    int done = 0;
    for (int n : lengths) {
        if (progress && !progress(done))
            return points;
        QkSample sample;
        if (provider) {
            // (H, N, D) twice, plus a block of scores per thread.
            checkMemoryEstimate(2.0 * 4.0 * spec.heads * n * 64 + 2.0 * 4.0 * 64 * n,
                                "q and k at length " + std::to_string(n));
            sample = provider(n);
            if (!sample.logForget.empty() && sample.logForget.size() != static_cast<size_t>(spec.heads) * n)
                throw std::logic_error("entropyCurve: the sample's forget gates are not (heads, length)");
        }
        for (int h = 0; h < spec.heads; ++h) {
            const size_t offset = static_cast<size_t>(h) * n * sample.headDim;
            const double* logForget =
                sample.logForget.empty() ? nullptr : sample.logForget.data() + static_cast<size_t>(h) * n;
            // The attention kernel's own row statistics: entropy curves and attention outputs come from one code path.
            const std::vector<double> rows =
                attentionRowEntropies(bias, h, n, provider ? sample.q.data() + offset : nullptr,
                                      provider ? sample.k.data() + offset : nullptr, sample.headDim, logForget);
            double sum = 0;
            for (double e : rows)
                sum += e;
            points.push_back({n, h, rows.back(), sum / n});
        }
        ++done;
    }
    if (progress)
        progress(done);
    return points;
}

std::vector<int> defaultEntropyLengths(int maxLength)
{
    std::vector<int> lengths;
    for (int n = 16; n <= maxLength; n *= 2)
        lengths.push_back(n);
    return lengths;
}

} // namespace plab
