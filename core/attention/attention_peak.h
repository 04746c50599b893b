// FP32 FMA peak probe: the ceiling that the attention kernel's GFLOP/s are read against, measured on this machine.
#pragma once

#include <string>

namespace plab {

struct FmaPeakRun {
    double gflops = 0;             // all threads together, per wall second
    double gflopsPerCpuSecond = 0; // per second of CPU time the threads got: on a shared machine, what the cores do
    double seconds = 0;            // wall time of the run
    int threads = 0;
    std::string isa; // the instructions that ran: "avx512f", "avx2+fma" or "scalar"
};

// Independent chains of fused multiply-adds on `threads` OpenMP threads (<= 0: all processors) for about `seconds`,
// with the widest FMA the CPU reports at run time (AVX-512, else AVX2 + FMA, else scalar code), whatever the build
// targets. Enough chains per thread to cover the FMA latency on every pipe, so the run is bound by FMA throughput.
// `seconds` is CPU time per thread (calibrated so), not wall time, which on a shared machine counts the neighbours too.
FmaPeakRun measureFmaPeak(int threads, double seconds = 0.1);

} // namespace plab
