// FP32 FMA peak probe (see attention_peak.h): chains of FMAs per thread, dispatched on what the CPU reports.
#include "attention/attention_peak.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <ctime>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define PLAB_X86 1
#endif

namespace plab {

namespace {

// Each loop returns a sum of its accumulators, so the compiler must keep every chain. acc = acc * a + b converges to
// b / (1 - a) = 0.5: no overflow, no denormals.
constexpr float kFactor = 0.9999f, kAddend = 0.00005f;

#ifdef PLAB_X86
// 16 chains of 16 lanes: 2 FMA pipes x latency 4 need 8 in flight; 16 leaves room for longer latencies.
constexpr int kChains512 = 16;
__attribute__((target("avx512f"))) float fmaLoopAvx512(int64_t iterations)
{
    __m512 acc[kChains512];
    for (int c = 0; c < kChains512; ++c)
        acc[c] = _mm512_set1_ps(0.001f * c);
    const __m512 a = _mm512_set1_ps(kFactor), b = _mm512_set1_ps(kAddend);
    for (int64_t i = 0; i < iterations; ++i)
        for (int c = 0; c < kChains512; ++c)
            acc[c] = _mm512_fmadd_ps(acc[c], a, b);
    __m512 sum = acc[0];
    for (int c = 1; c < kChains512; ++c)
        sum = _mm512_add_ps(sum, acc[c]);
    alignas(64) float lanes[16];
    _mm512_store_ps(lanes, sum);
    float total = 0;
    for (float x : lanes)
        total += x;
    return total;
}

// 12 chains of 8 lanes (16 ymm registers: 12 accumulators and the two constants).
constexpr int kChains256 = 12;
__attribute__((target("avx2,fma"))) float fmaLoopAvx2(int64_t iterations)
{
    __m256 acc[kChains256];
    for (int c = 0; c < kChains256; ++c)
        acc[c] = _mm256_set1_ps(0.001f * c);
    const __m256 a = _mm256_set1_ps(kFactor), b = _mm256_set1_ps(kAddend);
    for (int64_t i = 0; i < iterations; ++i)
        for (int c = 0; c < kChains256; ++c)
            acc[c] = _mm256_fmadd_ps(acc[c], a, b);
    __m256 sum = acc[0];
    for (int c = 1; c < kChains256; ++c)
        sum = _mm256_add_ps(sum, acc[c]);
    alignas(32) float lanes[8];
    _mm256_store_ps(lanes, sum);
    float total = 0;
    for (float x : lanes)
        total += x;
    return total;
}
#endif

constexpr int kChainsScalar = 8;
float fmaLoopScalar(int64_t iterations)
{
    float acc[kChainsScalar];
    for (int c = 0; c < kChainsScalar; ++c)
        acc[c] = 0.001f * c;
    for (int64_t i = 0; i < iterations; ++i)
        for (int c = 0; c < kChainsScalar; ++c)
            acc[c] = acc[c] * kFactor + kAddend;
    float total = 0;
    for (float x : acc)
        total += x;
    return total;
}

struct FmaLoop {
    float (*run)(int64_t iterations) = fmaLoopScalar;
    double flopsPerIteration = 2.0 * kChainsScalar;
    const char* isa = "scalar";
};

FmaLoop widestFmaLoop()
{
#ifdef PLAB_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f"))
        return {fmaLoopAvx512, 2.0 * 16 * kChains512, "avx512f"};
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return {fmaLoopAvx2, 2.0 * 8 * kChains256, "avx2+fma"};
#endif
    return {};
}

volatile float g_sink; // keeps the loops' results, so no compiler drops them

double threadCpuSeconds()
{
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + t.tv_nsec * 1e-9;
}

struct Timing {
    double wallSeconds = 0;
    double cpuSeconds = 0; // summed over the threads
};

// Every thread of the team runs `iterations` iterations.
Timing timedRun(const FmaLoop& loop, int threads, int64_t iterations)
{
    Timing timing;
    const auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel num_threads(threads)
    {
        const double c0 = threadCpuSeconds();
        const float result = loop.run(iterations);
        const double cpu = threadCpuSeconds() - c0;
#pragma omp critical
        {
            g_sink = g_sink + result;
            timing.cpuSeconds += cpu;
        }
    }
    timing.wallSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return timing;
}

} // namespace

FmaPeakRun measureFmaPeak(int threads, double seconds)
{
    if (threads <= 0)
        threads = omp_get_num_procs();
    const FmaLoop loop = widestFmaLoop();
    // Calibrate: grow a short run until a thread spends a measurable CPU time in it, then scale it to `seconds` of
    // CPU time per thread (wall time on a shared machine also counts the neighbours' turns).
    int64_t iterations = 1 << 14;
    double t = timedRun(loop, threads, iterations).cpuSeconds / threads;
    while (t < 0.01 && iterations < (int64_t(1) << 40)) {
        iterations *= 4;
        t = timedRun(loop, threads, iterations).cpuSeconds / threads;
    }
    iterations = std::max<int64_t>(1, static_cast<int64_t>(iterations * seconds / t));
    const Timing timing = timedRun(loop, threads, iterations);
    const double flops = loop.flopsPerIteration * static_cast<double>(iterations) * threads;
    FmaPeakRun run;
    run.threads = threads;
    run.isa = loop.isa;
    run.seconds = timing.wallSeconds;
    run.gflops = flops / timing.wallSeconds * 1e-9;
    run.gflopsPerCpuSecond = flops / timing.cpuSeconds * 1e-9;
    return run;
}

} // namespace plab
