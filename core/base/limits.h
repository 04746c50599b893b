// The tool's limits on one request: memory and compute-time guards that refuse absurd sizes before any work starts.
#pragma once

#include <string>

namespace plab {

// Refuses (InputError) a request whose memory would exceed what the tool allows, naming the estimate.
void checkMemoryEstimate(double bytes, const std::string& what);
constexpr double kMemoryBudgetBytes = 8.0 * (1ull << 30);

// Bytes the machine can give a new allocation now (Linux: MemAvailable of /proc/meminfo); 0 when unknown.
double availableMemoryBytes();
// Refuses (InputError) `what` needing `bytes` when the machine has less available, naming both sizes; does nothing
// when the available memory is unknown.
void checkFitsInMemory(double bytes, const std::string& what);

// ---- compute-time guard: refuse, before computing, a job that would run for hours ----
// Work is counted as `bench attention` counts it: 4 D flops (q.k and p.v) per visible (query, key) pair and head.
// The rate is deliberately conservative: measured on the 2-core development machine while others compiled, the
// entropy path ran at 50-60 GFLOP/s counted this way for D <= 16 and 80-105 at D = 64, the attention kernel at 80
// (1 or 2 threads, loaded) to 170 (quiet). So a job estimated under the limit finishes within it even on one thread
// of a busy machine, and a refused one would really have taken several minutes at least.
constexpr double kWorkFlopsPerSecond = 20e9;
constexpr double kWorkLimitSeconds = 600;
// Per visible pair the softmax, bias and entropy cost about as much as a dot product of this many dimensions, whatever
// D is: head dims below it (and the bias-only entropy, D = 0) count as this many.
constexpr int kMinWorkDim = 16;

// Estimated seconds of `flops` at kWorkFlopsPerSecond.
double estimatedSeconds(double flops);
// Refuses (InputError) work estimated above kWorkLimitSeconds, before anything is computed: one line naming `what`,
// the estimate (time, flops, rate), the limit and `howToProceed`.
void checkWorkEstimate(double flops, const std::string& what, const std::string& howToProceed);
// The same refusal for a run with a cost model of its own (a model folder's retrieval): `seconds` is that model's
// estimate, the one the run prints.
void checkEstimatedSeconds(double seconds, const std::string& what, const std::string& howToProceed);

} // namespace plab
