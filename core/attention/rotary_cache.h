// Rotary tables kept across attention calls: a model's layers share one bias and one set of dims, so its forward builds
// the cos/sin table of every position and pair once instead of once per layer.
#pragma once

#include "attention/attention.h"

#include <memory>
#include <vector>

namespace plab {

namespace kernel {
struct Pass;
struct RotaryTable;
} // namespace kernel

class RotaryTableCache {
public:
    RotaryTableCache();
    ~RotaryTableCache();
    RotaryTableCache(const RotaryTableCache&) = delete;
    RotaryTableCache& operator=(const RotaryTableCache&) = delete;

    // The table of pass `passIndex` of calls under `bias` and `dims`, built on its first use of that bias (by address:
    // keep the cache no longer than the biases it sees) and of the dims that shape the table.
    const kernel::RotaryTable& table(const PositionBias& bias, const AttentionDims& dims, size_t passIndex,
                                     const kernel::Pass& pass);

private:
    struct Entry;
    std::vector<std::unique_ptr<Entry>> m_entries;
};

// attentionForward (attention.h) with its rotary tables from `cache`: the same results, bit for bit.
void attentionForward(const PositionBias& bias, const AttentionDims& dims, const float* q, const float* k,
                      const float* v, AttentionForward& result, const AttentionOptions& options,
                      RotaryTableCache& cache);

} // namespace plab
