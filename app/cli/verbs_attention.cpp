// CLI verbs over the attention engine: `attention` (npy in, npy out) and `bench attention|gemm|peak` (timings as text
// or JSON).
#include "attention/attention.h"
#include "attention/attention_peak.h"
#include "base/limits.h"
#include "cli.h"
#include "base/aligned_allocator.h"
#include "base/errors.h"
#include "base/npy.h"
#include "base/random.h"
#include "hf/hf_model.h"
#include "hf/hf_products.h"
#include "schemes/fox.h"

#include <Eigen/Core>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <numeric>
#include <sstream>

namespace plab::cli {

namespace {

// ---- attention ----

NpyArray readInput(const ParsedArgs& args, const std::string& option)
{
    if (!args.has(option))
        throw InputError("attention: --" + option + " FILE.npy is required");
    NpyArray a = readNpy(args.text(option)); // throws InputError on non-finite values, naming the file
    if (a.shape.size() != 3 || a.shape[0] < 1 || a.shape[1] < 1 || a.shape[2] < 1)
        throw InputError("--" + option + " " + args.text(option) + ": shape " + a.shapeText() +
                         " is not allowed; expected (H, N, D) with H, N, D >= 1");
    return a;
}

int runAttention(const ParsedArgs& args, VerbContext& ctx)
{
    if (args.has("checkpoint") && isModelFolder(args.text("checkpoint"))) // a real model's layer (verbs_folder.cpp)
        return runFolderAttention(args, ctx);
    refuseScalingLayers(args, args.has("checkpoint") ? args.text("checkpoint") : std::string("attention's input"));
    const std::string scheme = schemeFromArgs(args, 0, "attention");
    if (args.has("checkpoint")) // q, k, v from a trained model (verbs_checkpoint.cpp)
        return runAttentionWithCheckpoint(scheme, args, ctx);
    const NpyArray q = readInput(args, "q"), k = readInput(args, "k"), v = readInput(args, "v");
    if (k.shape != q.shape || v.shape != q.shape)
        throw InputError("attention: q, k and v must have the same shape (H, N, D); got q " + q.shapeText() + ", k " +
                         k.shapeText() + ", v " + v.shapeText());
    if (q.shape[0] > kMaxHeads)
        throw InputError("attention: H = " + std::to_string(q.shape[0]) + " heads is out of range; allowed: [1, " +
                         std::to_string(kMaxHeads) + "]");
    if (q.shape[1] > kMaxLength || q.shape[2] > 4096)
        throw InputError("attention: shape " + q.shapeText() +
                         " is too large; allowed N <= " + std::to_string(kMaxLength) + ", D <= 4096");
    const int H = static_cast<int>(q.shape[0]), N = static_cast<int>(q.shape[1]), D = static_cast<int>(q.shape[2]);
    if (args.has("heads") && args.integer("heads", H, 1, kMaxHeads) != H)
        throw InputError("--heads " + args.text("heads") + " differs from the " + std::to_string(H) + " heads of --q");
    const SchemeSpec spec = schemeSpecFromArgs(scheme, args, H, D, "head dim D of --q");
    refuseUnreadContext("attention", {scheme}, args);
    if (args.has("probs"))
        checkMemoryEstimate(4.0 * H * double(N) * N, "probabilities (H, N, N)");
    checkWork(args, attentionWork(spec, {N}, D),
              "attention of " + std::to_string(H) + " heads x " + std::to_string(N) + " positions x " +
                  std::to_string(D) + " dims",
              "shorter or fewer-headed --q, --k, --v");
    writeAttentionOutputs(args, spec, {1, H, N, D}, q.data.data(), k.data.data(), v.data.data());
    return 0;
}

// ---- bench ----

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// The q-quantile of v (0 <= q <= 1), interpolated linearly between order statistics. The high quantile of a speed
// (q = 0.9) beside the median: on a shared machine, what the kernel does when the neighbours leave it alone.
double quantile(std::vector<double> v, double q)
{
    std::sort(v.begin(), v.end());
    const double at = q * double(v.size() - 1);
    const size_t lo = static_cast<size_t>(at), hi = std::min(lo + 1, v.size() - 1);
    return v[lo] + (v[hi] - v[lo]) * (at - double(lo));
}
constexpr double kHighQuantile = 0.9;

// work / time in GFLOP/s for each of `ms`.
std::vector<double> gflopsOf(double flops, const std::vector<double>& ms)
{
    std::vector<double> g;
    for (double t : ms)
        g.push_back(flops / t * 1e-6);
    return g;
}

// CPU time of the whole process (all threads), in ms: on a shared, loaded machine flops per CPU-second show the
// kernel's efficiency when wall time mostly shows the neighbours.
double processCpuMs()
{
    return processCpuSeconds() * 1e3;
}

struct Timings {
    std::vector<double> wallMs, cpuMs;
};

// Times `repeat` calls of run(); between them (untimed) calls between(), e.g. a calibration that should see the same
// neighbours on the machine as the runs it calibrates.
template <typename F, typename G>
Timings timeRuns(int repeat, F&& run, G&& between)
{
    Timings t;
    for (int i = 0; i < repeat; ++i) {
        const double c0 = processCpuMs();
        const auto t0 = std::chrono::steady_clock::now();
        run();
        t.wallMs.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
        t.cpuMs.push_back(processCpuMs() - c0);
        between();
    }
    return t;
}
template <typename F>
Timings timeRuns(int repeat, F&& run)
{
    return timeRuns(repeat, run, [] {});
}

// Resident memory of this process (VmRSS) and its peak since the last reset (VmHWM), in bytes; -1 off Linux.
long long procStatusBytes(const char* key)
{
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line))
        if (line.rfind(key, 0) == 0)
            return std::stoll(line.substr(std::string(key).size())) * 1024;
    return -1;
}
void resetPeakMemory()
{
    std::ofstream("/proc/self/clear_refs") << "5"; // Linux >= 4.0: VmHWM := VmRSS
}

// On cache lines, as the model's activations are (base/aligned_allocator.h), so the kernel reads q and v in place
// as it does in training; a plain vector would start 16 bytes past a line and be timed with the packs that costs.
AlignedFloats randomTensor(size_t count, uint64_t seed)
{
    AlignedFloats x(count);
    Rng rng(seed);
    for (float& e : x)
        e = static_cast<float>(rng.normal());
    return x;
}

// What `bench attention` times, from its options; refused here (memory, work estimate) before anything is allocated.
struct BenchSetup {
    SchemeSpec spec;
    AttentionDims dims;
    int repeat = 5;
    int threads = 1;
    bool backward = false;
    bool peak = false; // --peak: the FMA peak probe after every timed run, forward and backward
};

BenchSetup benchSetupFromArgs(const ParsedArgs& args)
{
    // `bench attention rope` and `bench attention --scheme rope` alike (also rope+rerope, as --scaling rerope); ALiBi
    // when neither.
    const SchemeWord word =
        schemeWordFromArgs(args.positional.size() > 1 || args.has("scheme") ? schemeFromArgs(args, 1, "bench attention")
                                                                            : std::string("alibi"),
                           args);
    const std::string& scheme = word.scheme;
    BenchSetup b;
    const int N = static_cast<int>(args.integer("length", 2048, 1, kMaxLength));
    const int H = static_cast<int>(args.integer("heads", 8, 1, kMaxHeads));
    const int D = static_cast<int>(args.integer("dim", 64, 1, 4096));
    b.repeat = static_cast<int>(args.integer("repeat", 5, 1, 100000));
    b.threads = applyThreadsOption(args);
    b.backward = args.has("backward");
    b.peak = args.has("peak");
    std::vector<std::string> sets = args.all("set");
    if (args.has("window")) {
        // The window of the scheme (local, bca) or of its method (rerope, leaky-rerope, self-extend): set as window=W.
        auto hasWindow = [](const RotaryMethodInfo& m) {
            return std::any_of(m.params.begin(), m.params.end(), [](const ParamInfo& p) { return p.name == "window"; });
        };
        if (!schemeByName(scheme).hasWindow && !hasWindow(rotaryMethodByName(word.method.value_or("none")))) {
            std::string schemes, methods;
            for (const SchemeInfo& s : schemeCatalog())
                if (s.hasWindow)
                    schemes += (schemes.empty() ? "" : ", ") + s.name;
            for (const RotaryMethodInfo& m : rotaryMethodCatalog())
                if (hasWindow(m))
                    methods += (methods.empty() ? "" : ", ") + m.name;
            throw InputError("--window: " + scheme + (word.method ? "+" + *word.method : "") +
                             " has no window; allowed with the schemes " + schemes + " and the rotary methods " +
                             methods + " (--scaling METHOD or SCHEME rope+METHOD)");
        }
        std::string given;
        if (findAssignment(sets, "window", given))
            throw InputError("--window " + args.text("window") + " and --set window=" + given +
                             " both set the window; allowed: one of them");
        sets.push_back("window=" + args.text("window"));
    }
    b.spec = makeSchemeSpecForHeadDim(scheme, H, args.has("bidirectional"), sets, D, "head dim --dim",
                                      contextFromArgs(args), args.has("logn"), word.method.value_or("none"));
    b.spec.ssmax = args.has("ssmax");
    b.spec.sinkLogit = args.has("sink-logit");
    refuseUnreadContext("bench attention", {scheme + (word.method ? "+" + *word.method : "")}, args);
    b.dims = {1, H, N, D};
    checkMemoryEstimate(4.0 * 4.0 * double(b.dims.elements()) * (b.backward ? 3 : 1), "q, k, v, out");
    // A warm-up and `repeat` timed runs of the forward, and as many of the backward (2.5x the forward's flops).
    checkWork(args, attentionWork(b.spec, {N}, D) * (1.0 + b.repeat) * (b.backward ? 3.5 : 1.0),
              "bench attention N=" + std::to_string(N) + " H=" + std::to_string(H) + " D=" + std::to_string(D) +
                  " with " + std::to_string(b.repeat) + " repeats" + (b.backward ? " and --backward" : ""),
              "a smaller --length, --heads, --dim or --repeat");
    return b;
}

// The bench's figures, as JSON and as text, filled by the forward and (with --backward) the backward.
struct BenchReport {
    nlohmann::json json;
    std::ostringstream text;
};

void reportForward(const BenchSetup& b, const Timings& runs, double extraBytes, BenchReport& r)
{
    const SchemeSpec& spec = b.spec;
    const int N = b.dims.length, H = b.dims.heads, D = b.dims.headDim;
    const bool window = spec.info().hasWindow;
    const bool banded = window || spec.window > 0 || spec.chunk > 0; // rows see a band of keys, not all before them
    // Useful work: 4 D flops (q.k and p.v) per visible (query, key) pair and head: 4 H N^2 D for full attention,
    // about half of it causal, about 4 H N W D for a window.
    const double flops = 4.0 * D * H * visiblePairs(spec, N);
    // The nominal count other tools quote (4 H N^2 D full, half causal, 4 H N W D a window): see nominalPairs.
    const double nominalFlops = 4.0 * D * H * nominalPairs(spec, N);
    const double fwd = median(runs.wallMs), fwdCpu = median(runs.cpuMs);
    // What was timed, as every scheme output names it (core's schemeSpecJson: parameters, context, logn, the method
    // and its parameters), then the figures.
    r.json = schemeSpecJson(spec);
    r.json["logn"] = spec.logn;
    r.json.update({{"length", N},
                   {"heads", H},
                   {"dim", D},
                   {"threads", b.threads},
                   {"repeat", b.repeat},
                   {"flops", wholeNumbersAsIntegers(flops)},
                   {"forward_ms", fwd},
                   {"forward_ms_runs", runs.wallMs},
                   {"forward_gflops", flops / fwd * 1e-6},
                   {"forward_gflops_p90", quantile(gflopsOf(flops, runs.wallMs), kHighQuantile)},
                   {"extra_memory_mib", extraBytes / (1 << 20)},
                   {"forward_cpu_ms", fwdCpu},
                   {"forward_gflops_per_cpu_second", flops / fwdCpu * 1e-6},
                   {"forward_gflops_per_cpu_second_p90", quantile(gflopsOf(flops, runs.cpuMs), kHighQuantile)},
                   {"nominal_flops", wholeNumbersAsIntegers(nominalFlops)},
                   {"forward_nominal_gflops", nominalFlops / fwd * 1e-6}});
    if (window)
        r.json["window"] = spec.intParam("window");
    // The full label: rope+rerope with the method's parameters, logn, sinks.
    std::string method;
    for (const auto& [name, value] : spec.scalingParams)
        method += (method.empty() ? " (" : ", ") + name + "=" + exactText(value);
    const int sinks = spec.params.count("sinks") ? spec.intParam("sinks") : spec.sinks;
    r.text << std::fixed << std::setprecision(2) << "attention " << schemeLabel(spec) << method
           << (method.empty() ? "" : ")") << (spec.bidirectional ? " bidirectional" : " causal") << " N=" << N
           << " H=" << H << " D=" << D << (window ? " W=" + std::to_string(spec.intParam("window")) : "")
           << (spec.window > 0 ? " window=" + std::to_string(spec.window) : "")
           << (spec.chunk > 0 ? " chunk=" + std::to_string(spec.chunk) : "")
           << (sinks > 0 ? " sinks=" + std::to_string(sinks) : "")
           << (spec.softcap > 0 ? " softcap=" + exactText(spec.softcap) : "")
           << (spec.logn ? " logn L=" + std::to_string(spec.context) : "") << " threads=" << b.threads
           << "\n  forward  median " << fwd << " ms  " << flops / fwd * 1e-6 << " GFLOP/s (p90 of the runs "
           << r.json["forward_gflops_p90"].get<double>() << ")"
           << "  extra memory " << extraBytes / (1 << 20) << " MiB\n  (CPU time " << fwdCpu
           << " ms: " << flops / fwdCpu * 1e-6 << " GFLOP per CPU-second)\n";
    if (banded)
        r.text << "  (" << nominalFlops / fwd * 1e-6
               << " GFLOP/s counting 4 H N K D, K = " << std::lround(nominalFlops / (4.0 * D * H * N))
               << " keys for every row: rows near the sequence's ends see fewer, so the useful work is "
               << 100.0 * flops / nominalFlops << "% of that)\n";
}

// The share of the FP32 FMA peak of one pass ("forward" or "backward", whose figures r.json already holds), with the
// peak probed right after each of its timed runs (`peaks`, one per run): median and high quantile of the peak, the
// share of the medians, and the high quantile of the runs' own shares (each run over the probe that followed it), per
// wall second and per CPU-second.
void reportPeakShare(const std::string& pass, double passFlops, const Timings& runs,
                     const std::vector<FmaPeakRun>& peaks, BenchReport& r)
{
    std::vector<double> peak, peakCpu, share, shareCpu;
    for (size_t i = 0; i < peaks.size() && i < runs.wallMs.size(); ++i) {
        peak.push_back(peaks[i].gflops);
        peakCpu.push_back(peaks[i].gflopsPerCpuSecond);
        share.push_back(passFlops / runs.wallMs[i] * 1e-6 / peaks[i].gflops);
        shareCpu.push_back(passFlops / runs.cpuMs[i] * 1e-6 / peaks[i].gflopsPerCpuSecond);
    }
    const double gflops = r.json[pass + "_gflops"], gflopsCpu = r.json[pass + "_gflops_per_cpu_second"];
    const double peakMedian = median(peak), peakCpuMedian = median(peakCpu);
    r.json[pass + "_share_of_peak"] = gflops / peakMedian;
    r.json[pass + "_share_of_peak_p90"] = quantile(share, kHighQuantile);
    r.json[pass + "_share_of_peak_runs"] = share;
    r.json[pass + "_share_of_peak_per_cpu_second"] = gflopsCpu / peakCpuMedian;
    r.json[pass + "_share_of_peak_per_cpu_second_p90"] = quantile(shareCpu, kHighQuantile);
    if (pass == "forward") { // the peak's own figures, from the probes after the forward's runs
        r.json["peak_gflops"] = peakMedian;
        r.json["peak_gflops_p90"] = quantile(peak, kHighQuantile);
        r.json["peak_gflops_runs"] = peak;
        r.json["peak_isa"] = peaks.empty() ? std::string() : peaks.back().isa;
        r.json["peak_gflops_per_cpu_second"] = peakCpuMedian;
        r.text << "  FP32 FMA peak (" << r.json["peak_isa"].get<std::string>() << ") median " << peakMedian
               << " GFLOP/s (p90 " << quantile(peak, kHighQuantile) << "), probed after every timed run\n";
    }
    r.text << "  the " << pass << " reaches " << 100.0 * gflops / peakMedian << "% of it (p90 of the runs' shares "
           << 100.0 * quantile(share, kHighQuantile) << "%; per CPU-second " << 100.0 * gflopsCpu / peakCpuMedian
           << "%, p90 " << 100.0 * quantile(shareCpu, kHighQuantile) << "%)\n";
}

void reportBackward(const Timings& runs, BenchReport& r)
{
    const double flops = r.json["flops"], fwd = r.json["forward_ms"], fwdCpu = r.json["forward_cpu_ms"];
    const double bwd = median(runs.wallMs);
    r.json["backward_cpu_ms"] = median(runs.cpuMs);
    r.json["backward_over_forward_cpu"] = median(runs.cpuMs) / fwdCpu;
    // FlashAttention's convention: the backward does 2.5x the forward's matrix products.
    r.json["backward_ms"] = bwd;
    r.json["backward_ms_runs"] = runs.wallMs;
    r.json["backward_gflops"] = 2.5 * flops / bwd * 1e-6;
    r.json["backward_gflops_p90"] = quantile(gflopsOf(2.5 * flops, runs.wallMs), kHighQuantile);
    r.json["backward_gflops_per_cpu_second"] = 2.5 * flops / median(runs.cpuMs) * 1e-6;
    r.json["backward_gflops_per_cpu_second_p90"] = quantile(gflopsOf(2.5 * flops, runs.cpuMs), kHighQuantile);
    r.json["backward_over_forward"] = bwd / fwd;
    r.text << "  backward median " << bwd << " ms  " << 2.5 * flops / bwd * 1e-6 << " GFLOP/s (p90 of the runs "
           << r.json["backward_gflops_p90"].get<double>() << "; 2.5x forward flops)  " << bwd / fwd << "x forward\n";
}

int runBenchAttention(const ParsedArgs& args, VerbContext& ctx)
{
    const BenchSetup b = benchSetupFromArgs(args);
    AttentionDims dims = b.dims;
    const PositionBias bias(b.spec, dims.length);
    // fox: the forget gates of a random input (logits gate-bias + N(0, 1)), as a model hands them to the kernel.
    std::vector<double> logForget;
    if (b.spec.kind == SchemeKind::Fox) {
        const int slices = dims.batch * dims.heads, N = dims.length;
        const AlignedFloats z = randomTensor(static_cast<size_t>(slices) * N, 5);
        std::vector<float> logits(z.begin(), z.end());
        for (float& x : logits)
            x += static_cast<float>(b.spec.param("gate-bias"));
        logForget.resize(logits.size());
        for (int s = 0; s < slices; ++s)
            foxCumulativeLogGates(logits.data() + static_cast<size_t>(s) * N, N, 1,
                                  logForget.data() + static_cast<size_t>(s) * N);
        dims.logForget = logForget.data();
    }
    const AlignedFloats q = randomTensor(dims.elements(), 1), k = randomTensor(dims.elements(), 2),
                        v = randomTensor(dims.elements(), 3);
    // First run: warm-up and the memory measurement (peak resident growth minus the output it returns).
    resetPeakMemory();
    const long long rssBefore = procStatusBytes("VmRSS:");
    double extraBytes = -1;
    AttentionForward forward = attentionForward(bias, dims, q.data(), k.data(), v.data());
    const long long peak = procStatusBytes("VmHWM:");
    if (rssBefore >= 0 && peak >= 0)
        extraBytes = std::max(0.0, double(peak - rssBefore) - 4.0 * double(dims.elements() + forward.logSumExp.size()));
    // The timed runs write into the same output buffers, as training steps and the live views do: a fresh 32 MiB
    // output per call would time the allocator's page faults (glibc maps blocks of 32 MiB and more anew on every
    // call), not attention.
    BenchReport report;
    // --peak: the FMA peak probe after every timed run (run, probe, run, probe...), so each run has a peak measured
    // under the same load on the machine.
    std::vector<FmaPeakRun> peakRuns;
    auto probe = [&] {
        if (b.peak)
            peakRuns.push_back(measureFmaPeak(b.threads));
    };
    const Timings forwardRuns = timeRuns(
        b.repeat, [&] { attentionForward(bias, dims, q.data(), k.data(), v.data(), forward); }, probe);
    reportForward(b, forwardRuns, extraBytes, report);
    if (b.peak)
        reportPeakShare("forward", report.json["flops"].get<double>(), forwardRuns, peakRuns, report);
    if (b.backward) {
        const AlignedFloats dOut = randomTensor(dims.elements(), 4);
        // Into the same gradient buffers each time, as the forward (and a training step) does.
        AttentionGradients grads = attentionBackward(bias, dims, q.data(), k.data(), v.data(), forward, dOut.data());
        peakRuns.clear();
        const Timings backwardRuns = timeRuns(
            b.repeat, [&] { attentionBackward(bias, dims, q.data(), k.data(), v.data(), forward, dOut.data(), grads); },
            probe);
        reportBackward(backwardRuns, report);
        if (b.peak)
            reportPeakShare("backward", 2.5 * report.json["flops"].get<double>(), backwardRuns, peakRuns, report);
    }
    if (args.has("json"))
        ctx.out << report.json.dump() << '\n';
    else
        ctx.out << report.text.str();
    return 0;
}

// Same-run calibration: a single-precision matrix product of (about) a given FLOP count, by Eigen (the default) or
// by oneDNN's matmul (--library onednn, core's hfLinear: the yardstick issue 28 sets the kernel against).
int runBenchGemm(const ParsedArgs& args, VerbContext& ctx)
{
    const std::string library = args.text("library", "eigen");
    if (library != "eigen" && library != "onednn")
        throw InputError("--library " + library + " is not allowed; allowed: eigen (the default) or onednn");
    const int threads = applyThreadsOption(args);
    const int repeat = static_cast<int>(args.integer("repeat", 5, 1, 100000));
    int n = static_cast<int>(args.integer("size", 1024, 1, 16384));
    if (args.has("flops")) {
        refuseOptions("bench gemm", args, {"size"}, "--size and --flops both set n; allowed: one of them");
        const double target = args.number("flops", 0);
        if (!(target >= 2 && target <= 2.0 * 16384.0 * 16384.0 * 16384.0))
            throw InputError("--flops " + args.text("flops") + " is out of range; allowed: [2, 8.8e12]");
        n = std::max(1, static_cast<int>(std::lround(std::cbrt(target / 2.0))));
    }
    Eigen::setNbThreads(threads);
    checkMemoryEstimate(3.0 * 4.0 * n * double(n), "gemm matrices");
    Timings runs;
    if (library == "onednn") { // y = x w^T, as nn.Linear; the same flops as a * b
        const HfMatrix x = HfMatrix::Random(n, n);
        const HfWeightMatrix w(HfMatrix::Random(n, n), HfPrecision::Float32);
        const Eigen::VectorXf noBias;
        HfMatrix y;
        hfLinear(x, w, noBias, y); // warm-up (and oneDNN's primitive creation)
        runs = timeRuns(repeat, [&] { hfLinear(x, w, noBias, y); });
    } else {
        const Eigen::MatrixXf a = Eigen::MatrixXf::Random(n, n), b = Eigen::MatrixXf::Random(n, n);
        Eigen::MatrixXf c(n, n);
        c.noalias() = a * b; // warm-up
        runs = timeRuns(repeat, [&] { c.noalias() = a * b; });
    }
    const std::vector<double>& ms = runs.wallMs;
    const double med = median(ms);
    const double cpu = median(runs.cpuMs);
    const double flops = 2.0 * n * double(n) * n;
    if (args.has("json")) {
        ctx.out << nlohmann::json{{"size", n},
                                  {"library", library},
                                  {"threads", threads},
                                  {"repeat", repeat},
                                  {"flops", wholeNumbersAsIntegers(flops)},
                                  {"ms", med},
                                  {"ms_runs", ms},
                                  {"gflops", flops / med * 1e-6},
                                  {"cpu_ms", cpu},
                                  {"gflops_per_cpu_second", flops / cpu * 1e-6}}
                       .dump()
                << '\n';
    } else {
        ctx.out << std::fixed << std::setprecision(2) << "gemm " << library << " " << n << "x" << n << "x" << n
                << " threads=" << threads << ": median " << med << " ms  " << flops / med * 1e-6 << " GFLOP/s\n";
    }
    return 0;
}

// The machine's FP32 FMA peak (see measureFmaPeak), the ceiling for every GFLOP/s figure of the other benchmarks.
int runBenchPeak(const ParsedArgs& args, VerbContext& ctx)
{
    const int threads = applyThreadsOption(args);
    const int repeat = static_cast<int>(args.integer("repeat", 5, 1, 100000));
    std::vector<double> gflops, perCpuSecond;
    std::string isa;
    for (int i = 0; i < repeat; ++i) {
        const FmaPeakRun run = measureFmaPeak(threads);
        gflops.push_back(run.gflops);
        perCpuSecond.push_back(run.gflopsPerCpuSecond);
        isa = run.isa;
    }
    const double best = *std::max_element(gflops.begin(), gflops.end());
    if (args.has("json"))
        ctx.out << nlohmann::json{{"threads", threads},
                                  {"repeat", repeat},
                                  {"isa", isa},
                                  {"gflops", median(gflops)},
                                  {"gflops_runs", gflops},
                                  {"gflops_best", best},
                                  {"gflops_per_cpu_second", median(perCpuSecond)}}
                       .dump()
                << '\n';
    else
        ctx.out << std::fixed << std::setprecision(2) << "FP32 FMA peak (" << isa << ") threads=" << threads
                << ": median " << median(gflops) << " GFLOP/s, best " << best << " GFLOP/s (per CPU-second "
                << median(perCpuSecond) << ")\n";
    return 0;
}

// bench model --perplexity N: N tokens cut into windows of each --lengths value (the last one shorter), each window one
// forward plus its next-token losses (HfModel::nextTokenLosses, what eval on a folder runs per window); seconds per
// length.
int runBenchModelPerplexity(const HfModel& model, const ParsedArgs& args, VerbContext& ctx, int threads)
{
    const HfConfig& c = model.config();
    const int tokens = static_cast<int>(args.integer("perplexity", 8192, 2, 1 << 24));
    const std::vector<int> lengths = args.integerList("lengths", {512, 1024, 2048, 4096}, 2, kMaxLength);
    std::vector<int> ids(tokens);
    for (int i = 0; i < tokens; ++i)
        ids[i] = static_cast<int>((1000003LL * i + 7) % c.vocab);
    const SchemeSpec positions = hfPositionSpec(c);
    std::vector<double> seconds, losses;
    double flops = 0;
    const double c0 = processCpuMs();
    const auto t0 = std::chrono::steady_clock::now();
    for (const int length : lengths) {
        const auto start = std::chrono::steady_clock::now();
        double lossSum = 0;
        int windows = 0;
        for (int begin = 0; begin < tokens; begin += length, ++windows) {
            const std::vector<int> window(ids.begin() + begin, ids.begin() + std::min(tokens, begin + length));
            const std::vector<int> next(window.begin() + 1, window.end());
            const std::vector<double> windowLosses = model.nextTokenLosses(window, next, positions);
            lossSum += windowLosses.empty() ? 0.0
                                            : std::accumulate(windowLosses.begin(), windowLosses.end(), 0.0) /
                                                  static_cast<double>(windowLosses.size());
            flops += c.prefillFlops(static_cast<int>(window.size()));
        }
        seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
        losses.push_back(lossSum / windows);
    }
    const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double cpu = (processCpuMs() - c0) * 1e-3;
    const long long peak = procStatusBytes("VmHWM:");
    if (args.has("json")) {
        ctx.out << nlohmann::json{{"model", c.folder},
                                  {"model_type", c.modelType},
                                  {"perplexity_tokens", tokens},
                                  {"lengths", lengths},
                                  {"threads", threads},
                                  {"precision", hfPrecisionName(model.precision())},
                                  {"seconds", seconds},
                                  {"mean_loss", losses},
                                  {"total_seconds", total},
                                  {"cpu_seconds", cpu},
                                  {"gflops", flops / total * 1e-9},
                                  {"peak_rss_bytes", peak},
                                  {"weights_bytes", model.weightBytes()}}
                       .dump()
                << '\n';
        return 0;
    }
    ctx.out << std::fixed << std::setprecision(2) << "model " << c.modelType << " perplexity over " << tokens
            << " tokens threads=" << threads << " precision=" << hfPrecisionName(model.precision()) << ":";
    for (size_t i = 0; i < lengths.size(); ++i)
        ctx.out << "  L=" << lengths[i] << " " << seconds[i] << " s (loss " << losses[i] << ")";
    ctx.out << "  total " << total << " s (CPU " << cpu << " s, " << flops / total * 1e-9 << " GFLOP/s)  peak RSS "
            << peak / 1048576.0 << " MiB (weights " << model.weightBytes() / 1048576.0 << " MiB)\n";
    return 0;
}

// One prefill of a Hugging Face model folder, loading excluded: median ms, tokens/s, GFLOP/s (prefillFlops) and the
// process's peak resident memory against the weights (in --precision's bytes). With --perplexity,
// runBenchModelPerplexity instead.
int runBenchModel(const ParsedArgs& args, VerbContext& ctx)
{
    if (args.positional.size() < 2)
        throw InputError("bench model: the model folder is missing; usage: bench model DIR --length T");
    const int threads = applyThreadsOption(args);
    Eigen::setNbThreads(threads);
    const int repeat = static_cast<int>(args.integer("repeat", 5, 1, 100000));
    const int length = static_cast<int>(args.integer("length", 2048, 1, kMaxLength));
    const HfModel model(args.positional[1], precisionFromArgs(args));
    if (args.has("perplexity"))
        return runBenchModelPerplexity(model, args, ctx, threads);
    const HfConfig& c = model.config();
    std::vector<int> ids(length);
    for (int i = 0; i < length; ++i)
        ids[i] = static_cast<int>((1000003LL * i + 7) % c.vocab);
    const SchemeSpec positions = hfPositionSpec(c);
    model.logits(ids, positions); // warm-up
    const Timings runs = timeRuns(repeat, [&] { model.logits(ids, positions); });
    const double med = median(runs.wallMs);
    const double flops = c.prefillFlops(length);
    const long long peak = procStatusBytes("VmHWM:");
    const double weightBytes = model.weightBytes();
    if (args.has("json")) {
        ctx.out << nlohmann::json{{"model", c.folder},
                                  {"model_type", c.modelType},
                                  {"length", length},
                                  {"threads", threads},
                                  {"precision", hfPrecisionName(model.precision())},
                                  {"repeat", repeat},
                                  {"ms", med},
                                  {"ms_runs", runs.wallMs},
                                  {"cpu_ms", median(runs.cpuMs)},
                                  {"tokens_per_second", length / med * 1e3},
                                  {"flops", flops},
                                  {"gflops", flops / med * 1e-6},
                                  {"peak_rss_bytes", peak},
                                  {"weights_bytes", weightBytes}}
                       .dump()
                << '\n';
    } else {
        ctx.out << std::fixed << std::setprecision(2) << "model " << c.modelType << " prefill T=" << length
                << " threads=" << threads << " precision=" << hfPrecisionName(model.precision()) << ": median " << med
                << " ms  " << length / med * 1e3 << " tokens/s  " << flops / med * 1e-6 << " GFLOP/s  peak RSS "
                << peak / 1048576.0 << " MiB (weights " << weightBytes / 1048576.0 << " MiB)\n";
    }
    return 0;
}

int runBench(const ParsedArgs& args, VerbContext& ctx)
{
    const std::string what = args.positional[0];
    if (what == "model")
        return runBenchModel(args, ctx);
    if (args.positional.size() > 1 && what != "attention")
        throw InputError("bench " + what + ": unexpected '" + args.positional[1] +
                         "' (only `bench attention` takes a SCHEME, `bench model` a DIR)");
    if (what == "attention")
        return runBenchAttention(args, ctx);
    if (what == "gemm")
        return runBenchGemm(args, ctx);
    if (what == "peak")
        return runBenchPeak(args, ctx);
    throw InputError("bench: unknown benchmark '" + what + "'; allowed: attention, gemm, peak, model");
}

} // namespace

void writeAttentionOutputs(const ParsedArgs& args, const SchemeSpec& spec, const AttentionDims& dims, const float* q,
                           const float* k, const float* v)
{
    AttentionOptions options;
    options.wantProbabilities = args.has("probs");
    const PositionBias bias(spec, dims.length);
    const AttentionForward result = attentionForward(bias, dims, q, k, v, options);
    const int H = dims.heads, N = dims.length;
    if (options.wantProbabilities)
        writeNpy(args.text("probs"), {H, N, N}, result.probabilities.data());
    writeNpy(args.text("o"), {H, N, dims.headDim}, result.out.data());
}

namespace {

// attention's options: the scheme's, the q/k/v files, a checkpoint's (or model folder's) layer on text, and -o.
std::vector<OptionDef> attentionOptions()
{
    std::vector<OptionDef> options = schemeOptions();
    options.insert(options.end(),
                   {{"q", OptionKind::Value, "queries, float32 (H, N, D), before any rotation", "Q.npy"},
                    {"k", OptionKind::Value, "keys, float32 (H, N, D)", "K.npy"},
                    {"v", OptionKind::Value, "values, float32 (H, N, D)", "V.npy"},
                    {"probs", OptionKind::Value, "also write the probabilities, float32 (H, N, N)", "P.npy"}});
    for (const OptionDef& o : checkpointOptions("q, k, v of the model's layer on text (instead of --q/--k/--v)"))
        options.push_back(o);
    options.insert(
        options.end(),
        {{"length", OptionKind::Value,
          "with --checkpoint: sequence length N (default the context; a model folder: N tokens, default the "
          "context but at most 2048)",
          "N"},
         {"fox-bias", OptionKind::Value,
          "with --checkpoint of a fox model: also write its forget gates' bias F_m - F_n on the text, float32 (H, N, "
          "N); cells n > m (masked) hold 0",
          "B.npy"},
         allowLongOption(),
         scalingLayersOption(),
         {"o", OptionKind::Value, "output, float32 (H, N, D)", "OUT.npy", false, true}});
    return options;
}

// bench's options: each names the subject it applies to (attention, gemm, model).
std::vector<OptionDef> benchOptions()
{
    return {
        {"scheme", OptionKind::Value, "attention: scheme, instead of the SCHEME word (default alibi)", "S"},
        {"length", OptionKind::Value, "attention, model: sequence length N (default 2048)", "N"},
        {"heads", OptionKind::Value, "attention: heads H (default 8)", "H"},
        {"dim", OptionKind::Value, "attention: head dimension D (default 64)", "D"},
        {"window", OptionKind::Value,
         "attention: window W of local/bca or of the rerope/leaky-rerope/self-extend method", "W"},
        {"bidirectional", OptionKind::Flag, "attention: no causal mask"},
        {"set", OptionKind::Repeated, "attention: a scheme parameter", "NAME=VALUE"},
        contextOption("attention"),
        {"logn", OptionKind::Flag, "attention: the logn modifier (needs --context)"},
        {"ssmax", OptionKind::Flag, "attention: scalable softmax at its prior s = 1/ln(context) (1 without --context)"},
        {"sink-logit", OptionKind::Flag, "attention: a sink logit per head (at its prior 0)"},
        scalingOption(),
        {"backward", OptionKind::Flag, "attention: also time the backward pass"},
        {"peak", OptionKind::Flag,
         "attention: also measure the FP32 FMA peak after each timed run (forward and backward); report the share, "
         "median and p90"},
        {"size", OptionKind::Value, "gemm: n of an n x n x n product (default 1024)", "n"},
        {"library", OptionKind::Value,
         "gemm: eigen (Eigen's product, the default) or onednn (oneDNN's f32 matmul, the kernel's yardstick)", "LIB"},
        {"perplexity", OptionKind::Value,
         "model: instead of one prefill, time next-token losses over N tokens in windows of each --lengths value", "N"},
        {"lengths", OptionKind::Value, "model --perplexity: window lengths (default 512,1024,2048,4096)", "L1,L2,..."},
        {"flops", OptionKind::Value, "gemm: pick n so the product does about this many flops", "F"},
        threadsOption(),
        precisionOption(),
        {"repeat", OptionKind::Value, "timed runs; the median is reported (default 5)", "R"},
        allowLongOption(),
        {"json", OptionKind::Flag, "one JSON object on stdout"}};
}

} // namespace

void registerAttentionVerbs()
{
    const std::vector<std::string> fromFiles = {
        "scheme", "heads", "bidirectional", "set",        "context", "logn", "scaling", "q",
        "k",      "v",     "probs",         "allow-long", "o"};
    const std::vector<std::string> fromModel = {"scheme", "checkpoint",     "layer",      "corpus",
                                                "length", "probs",          "allow-long", "scaling",
                                                "set",    "scaling-layers", "o",          "fox-bias"};
    registerVerb(
        {"attention",
         "SCHEME",
         "multi-head attention of q, k, v under a scheme (bias, rotation, mask inside the kernel)",
         attentionOptions(),
         0,
         1,
         runAttention,
         {{"SCHEME --q Q.npy --k K.npy --v V.npy", fromFiles, {}, {}},
          {"SCHEME --checkpoint MODEL.safetensors", fromModel, {}, "checkpoint"}},
         {{"o", {".npy"}}, {"probs", {".npy"}}, {"fox-bias", {".npy"}}},
         "SCHEME may also be given as --scheme S. With --checkpoint the model supplies q, k, v and its scheme; "
         "--scaling METHOD (or SCHEME rope+METHOD) and --set (the method's parameters) evaluate it under a "
         "length-extension method, as eval does. --checkpoint DIR, a Hugging Face model folder: SCHEME may be left out "
         "(the folder fixes it); the text is the --corpus's validation split in the folder's tokens (repeated to "
         "--length tokens), -o gets the layer's attention output (heads, T, D) and --probs its probabilities (heads, "
         "T, T); a learned-position model (gpt2) refuses a --length past its context."});
    registerVerb(
        {"bench",
         "attention|gemm|peak|model",
         "time the attention kernel (median ms, GFLOP/s, extra memory), an Eigen GEMM calibration, the FP32 "
         "FMA peak, or one prefill of a Hugging Face model folder",
         benchOptions(),
         1,
         2,
         runBench,
         {{"attention [SCHEME]",
           {"scheme", "length", "heads", "dim", "window", "bidirectional", "set", "context", "logn", "ssmax",
            "sink-logit", "scaling", "backward", "peak", "threads", "repeat", "allow-long", "json"},
           "attention",
           {}},
          {"gemm", {"size", "flops", "library", "threads", "repeat", "json"}, "gemm", {}},
          {"peak", {"threads", "repeat", "json"}, "peak", {}},
          {"model DIR", {"length", "perplexity", "lengths", "threads", "precision", "repeat", "json"}, "model", {}}}});
}

} // namespace plab::cli
