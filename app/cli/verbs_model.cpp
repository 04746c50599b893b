// CLI verbs over the transformer: train, eval, and entropy from a checkpoint's real queries and keys.
#include "atomic_file.h"
#include "bias_views.h"
#include "cli.h"
#include "corpus.h"
#include "entropy.h"
#include "errors.h"
#include "model.h"
#include "training.h"
#include "npy.h"

#include <nlohmann/json.hpp>

#include <omp.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <limits>
#include <optional>

namespace plab::cli {

namespace {

std::atomic<bool>& g_interrupted = interruptFlag();

Corpus corpusFromArgs(const ParsedArgs& args)
{
    return args.has("corpus") ? loadCorpusFile(args.text("corpus")) : loadDefaultCorpus();
}

// --checkpoint of entropy/attention: the model, which must have been trained with SCHEME.
LoadedCheckpoint checkpointOfScheme(const std::string& verb, const std::string& scheme, const ParsedArgs& args)
{
    LoadedCheckpoint loaded = loadCheckpoint(args.text("checkpoint"));
    if (scheme != loaded.model->config().scheme)
        throw InputError(verb + ": the checkpoint was trained with " + loaded.model->config().scheme + ", not " + scheme);
    return loaded;
}

} // namespace

std::string clockText(double seconds)
{
    if (!std::isfinite(seconds) || seconds < 0)
        return "?";
    const long s = std::lround(seconds);
    char buf[32];
    if (s >= 3600)
        std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
    else
        std::snprintf(buf, sizeof buf, "%ld:%02ld", s / 60, s % 60);
    return buf;
}

int layerFromArgs(const ParsedArgs& args, const ModelConfig& config)
{
    std::optional<long long> requested;
    if (args.has("layer"))
        requested = parseInteger(args.text("layer"), "layer", std::numeric_limits<long long>::min(),
                                 std::numeric_limits<long long>::max());
    return modelLayer(config, requested);
}

std::vector<OptionDef> modelOptions()
{
    return {
        {"preset", OptionKind::Value, "demo, tiny, quick (default) or large: sizes and schedule (see the README's presets table)"},
        {"context", OptionKind::Value, "training context L (default from the preset)"},
        {"layers", OptionKind::Value, "transformer blocks (default from the preset)"},
        {"d-model", OptionKind::Value, "model width (default from the preset)"},
        {"heads", OptionKind::Value, "attention heads; d-model must be divisible by it (default from the preset)"},
        {"d-ff", OptionKind::Value, "MLP hidden width (default from the preset)"},
        {"set", OptionKind::Repeated, "NAME=VALUE: a scheme parameter (see `schemes`)"},
        {"logn", OptionKind::Flag, "scale scores by log(m+1)/log(context) past the context"},
        {"seed", OptionKind::Value, "seed of the initialisation and the data order (default 1)"},
    };
}

void modelAndTrainingFromArgs(const ParsedArgs& args, ModelConfig& mc, TrainConfig& tc)
{
    applyPreset(args.text("preset", "quick"), mc, tc);
    mc.context = static_cast<int>(args.integer("context", mc.context, 2, 65536));
    mc.layers = static_cast<int>(args.integer("layers", mc.layers, 1, 64));
    mc.dModel = static_cast<int>(args.integer("d-model", mc.dModel, 2, 8192));
    mc.heads = static_cast<int>(args.integer("heads", mc.heads, 1, kMaxHeads));
    mc.dFf = static_cast<int>(args.integer("d-ff", mc.dFf, 1, 65536));
    mc.schemeSettings = args.all("set");
    mc.logn = args.has("logn");
    setTrainingSteps(tc, static_cast<int>(args.integer("steps", tc.steps, 1, 100000000)));
    tc.batch = static_cast<int>(args.integer("batch", tc.batch, 1, 65536));
    tc.learningRate = args.number("lr", tc.learningRate);
    tc.minLearningRate = args.number("min-lr", std::min(tc.minLearningRate, tc.learningRate));
    tc.warmup = static_cast<int>(args.integer("warmup", tc.warmup, 0, 100000000));
    tc.weightDecay = args.number("weight-decay", tc.weightDecay);
    tc.gradClip = args.number("grad-clip", tc.gradClip);
}

std::vector<OptionDef> scheduleOptions()
{
    return {
        {"steps", OptionKind::Value, "optimisation steps (default from the preset: quick 1500)"},
        {"batch", OptionKind::Value, "sequences per step (default from the preset)"},
        {"lr", OptionKind::Value, "peak learning rate (quick 2e-3, large 6e-4)"},
        {"min-lr", OptionKind::Value, "learning rate at the end of the cosine decay"},
        {"warmup", OptionKind::Value, "linear warm-up steps"},
        {"weight-decay", OptionKind::Value, "AdamW decoupled weight decay on matrices (default 0.1)"},
        {"grad-clip", OptionKind::Value, "clip the global gradient norm (default 1; 0 disables)"},
    };
}

namespace {

int runTrain(const ParsedArgs& args, VerbContext& ctx)
{
    if (!args.has("scheme"))
        throw InputError("train: --scheme is required (see positionlab-cli schemes)");
    if (!args.has("o"))
        throw InputError("train: -o MODEL.safetensors is required");
    const std::string output = args.text("o");
    if (output.size() < 12 || output.compare(output.size() - 12, 12, ".safetensors") != 0)
        throw InputError("-o " + output + ": a checkpoint is written as MODEL.safetensors (other extensions are refused)");
    ModelConfig mc;
    TrainConfig tc;
    modelAndTrainingFromArgs(args, mc, tc);
    mc.scheme = args.text("scheme");
    mc.seed = static_cast<uint64_t>(args.integer("seed", 1, 0, 1LL << 62));
    tc.dataSeed = static_cast<uint64_t>(args.integer("data-seed", static_cast<long long>(mc.seed), 0, 1LL << 62));
    const int logEvery = static_cast<int>(args.integer("log-every", 0, 0, 100000000));
    const int saveEvery = static_cast<int>(args.integer("save-every", 0, 0, 100000000));
    const bool json = args.has("json");
    validateModelConfig(mc);
    validateTrainConfig(tc);
    applyThreadsOption(args);
    { AtomicFile probe(output); } // refuse an unwritable -o before minutes of training, leave nothing behind

    const Corpus corpus = corpusFromArgs(args);
    checkTrainingCorpus(corpus, mc.context);
    if (json) {
        ctx.err << nlohmann::json{{"event", "start"}, {"config", mc.toJson()}, {"training", tc.toJson()},
                                  {"parameters", modelParameterCount(mc)}, {"corpus", corpus.source},
                                  {"train_bytes", corpus.train.size()}, {"threads", omp_get_max_threads()}}
                       .dump()
                << std::endl;
    } else {
        std::string window;
        if (schemeByName(mc.scheme).hasWindow) {
            const int w = modelSchemeSpec(mc).intParam("window");
            window = " (window " + std::to_string(w) + ": " + std::to_string(mc.layers) + " layers reach " +
                     std::to_string(mc.layers * (w - 1)) + " positions back)";
        }
        ctx.err << "training " << mc.scheme << window << ": " << mc.layers << " layers, d_model " << mc.dModel << ", "
                << mc.heads << " heads, context " << mc.context << ", " << modelParameterCount(mc) << " parameters; "
                << tc.steps << " steps of " << tc.batch << " x " << mc.context << " tokens; corpus " << corpus.source
                << " (" << corpus.train.size() << " training bytes); " << omp_get_max_threads() << " threads" << std::endl;
    }

    const double cpuStart = processCpuSeconds();
    TrainingHooks hooks;
    hooks.reportEvery = logEvery;
    hooks.interrupt = &g_interrupted; // Ctrl-C also stops inside a long step, before the optimiser runs
    hooks.saveEvery = saveEvery;
    hooks.checkpoint = [&](const Model& model, const CheckpointInfo& info) { saveCheckpoint(model, info, output); };
    hooks.progress = [&](const TrainingProgress& p) {
        if (json) {
            ctx.err << nlohmann::json{{"event", "step"}, {"step", p.step}, {"steps", p.steps}, {"loss", p.loss},
                                      {"lr", p.learningRate}, {"grad_norm", p.gradNorm},
                                      {"tokens_per_second", p.tokensPerSecond}, {"elapsed_s", p.elapsedSeconds},
                                      {"eta_s", p.etaSeconds}, {"cpu_s", processCpuSeconds() - cpuStart}}
                           .dump()
                    << std::endl;
        } else {
            char line[200];
            std::snprintf(line, sizeof line, "step %*d/%d  loss %.4f  lr %.2e  %.0f tok/s  elapsed %s  ETA %s",
                          static_cast<int>(std::to_string(p.steps).size()), p.step, p.steps, p.loss, p.learningRate,
                          p.tokensPerSecond, clockText(p.elapsedSeconds).c_str(), clockText(p.etaSeconds).c_str());
            ctx.err << line << std::endl;
        }
    };
    InterruptGuard guard;
    TrainingResult trained = trainModel(mc, tc, corpus, hooks);
    Model& model = *trained.model;
    CheckpointInfo& info = trained.info;
    const bool interrupted = trained.stopped;
    if (interrupted && info.step == 0) {
        ctx.err << "interrupted before the first step; nothing written" << std::endl;
        return 130;
    }
    saveCheckpoint(model, info, output);
    const double elapsed = trained.elapsedSeconds;
    const double tokensPerSecond = trained.tokensPerSecond;
    if (interrupted) {
        if (json)
            ctx.err << nlohmann::json{{"event", "interrupted"}, {"step", info.step}, {"checkpoint", output}}.dump()
                    << std::endl;
        else
            ctx.err << "interrupted at step " << info.step << "; checkpoint written to " << output << std::endl;
        return 130;
    }
    // A short held-out check at the training length, so a run reports more than its training loss.
    EvalOptions eo;
    eo.lengths = {mc.context};
    eo.maxTokens = static_cast<size_t>(args.integer("eval-bytes", 65536, 0, 1LL << 40));
    eo.progress = [](double) { return !g_interrupted; }; // Ctrl-C here skips the check; the checkpoint is written
    double valLoss = std::nan("");
    try {
        if (eo.maxTokens && corpus.validation.size() >= 2)
            valLoss = evaluateModel(model, corpus.validation, eo)[0].loss;
    } catch (const RunError&) {
        if (!g_interrupted)
            throw;
    }
    if (json) {
        ctx.err << nlohmann::json{{"event", "done"}, {"steps", info.step}, {"train_loss", info.trainLoss},
                                  {"validation_loss", std::isfinite(valLoss) ? nlohmann::json(valLoss) : nlohmann::json()},
                                  {"tokens_per_second", tokensPerSecond}, {"elapsed_s", elapsed}, {"checkpoint", output}}
                       .dump()
                << std::endl;
    } else {
        char line[240];
        std::snprintf(line, sizeof line, "done: %d steps in %s, %.0f tok/s; validation loss %.4f (perplexity %.3f, %.4f bits/byte) at length %d; wrote %s",
                      info.step, clockText(elapsed).c_str(), tokensPerSecond, valLoss, std::exp(valLoss),
                      valLoss / std::log(2.0), mc.context, output.c_str());
        ctx.err << line << std::endl;
    }
    return 0;
}

const std::vector<uint8_t>& splitOf(const Corpus& corpus, const std::string& split, std::vector<uint8_t>& all)
{
    if (split == "validation")
        return corpus.validation;
    if (split == "train")
        return corpus.train;
    if (split == "all") {
        all = corpus.train;
        all.insert(all.end(), corpus.validation.begin(), corpus.validation.end());
        return all;
    }
    throw InputError("--split " + split + " is not allowed; allowed: validation, train, all");
}

int runEval(const ParsedArgs& args, VerbContext& ctx)
{
    applyThreadsOption(args);
    LoadedCheckpoint loaded = loadCheckpoint(args.positional[0]);
    Model& model = *loaded.model;
    const int L = model.config().context;
    EvalOptions opt;
    opt.lengths = args.integerList("lengths", {L, 2 * L, 4 * L, 8 * L, 16 * L}, 1, kMaxLength);
    opt.mode = evalModeFromName(args.text("mode", "nonoverlapping"));
    opt.stride = static_cast<int>(args.integer("stride", 0, 1, kMaxLength));
    if (args.has("stride") && opt.mode != EvalMode::Sliding)
        throw InputError("--stride only applies to --mode sliding");
    opt.maxTokens = static_cast<size_t>(args.integer("max-bytes", 0, 0, 1LL << 40));
    const std::string split = args.text("split", "validation");
    if (args.has("o") && isImagePath(args.text("o"))) {
        exportImage("eval", args, args.text("o"));
        return 0;
    }
    const Corpus corpus = corpusFromArgs(args);
    std::vector<uint8_t> all;
    const std::vector<uint8_t>& text = splitOf(corpus, split, all);

    Table t;
    t.columns = {"length", "loss", "perplexity", "bits_per_byte"};
    nlohmann::json unsupported = nlohmann::json::array();
    const bool quiet = args.has("quiet");
    // Ctrl-C (or SIGTERM) stops at the next batch or layer; the output, written only at the end, is not written at all.
    InterruptGuard guard;
    model.setCancelFlag(&g_interrupted);
    opt.progress = [](double) { return !g_interrupted; };
    auto interrupted = [&](int length) {
        model.setCancelFlag(nullptr);
        ctx.err << "interrupted at length " << length << "; nothing written"
                << (args.has("o") ? " (" + args.text("o") + " is unchanged)" : std::string()) << std::endl;
        return 130;
    };
    for (int length : opt.lengths) {
        if (g_interrupted)
            return interrupted(length);
        EvalOptions one = opt;
        one.lengths = {length};
        const auto begin = std::chrono::steady_clock::now();
        EvalPoint p;
        try {
            p = evaluateModel(model, text, one)[0];
        } catch (const RunError&) {
            if (!g_interrupted)
                throw;
            return interrupted(length);
        }
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
        t.rows.push_back({double(length), p.loss, p.perplexity, p.bitsPerByte});
        if (!p.supported) {
            unsupported.push_back({{"length", length}, {"reason", p.note}});
            if (!quiet)
                ctx.err << "length " << length << ": unsupported (" << p.note << ")" << std::endl;
        } else if (!quiet) {
            char line[200];
            std::snprintf(line, sizeof line, "length %d: loss %.4f  perplexity %.3f  %.4f bits/byte  (%zu bytes, %.1f s)",
                          length, p.loss, p.perplexity, p.bitsPerByte, p.tokens, seconds);
            ctx.err << line << std::endl;
        }
    }
    t.meta = {{"checkpoint", args.positional[0]},
              {"config", model.config().toJson()},
              {"step", loaded.info.step},
              {"mode", opt.mode == EvalMode::Sliding ? "sliding" : "nonoverlapping"},
              {"corpus", corpus.source},
              {"split", split},
              {"bytes", text.size()}};
    if (opt.mode == EvalMode::Sliding)
        t.meta["stride"] = opt.stride ? nlohmann::json(opt.stride) : nlohmann::json("length/2");
    if (!unsupported.empty())
        t.meta["unsupported"] = unsupported;
    model.setCancelFlag(nullptr);
    if (g_interrupted) // after the last length, before writing: still nothing written
        return interrupted(opt.lengths.back());
    writeDataOutput(args, ctx, true, [&](std::ostream& out, DataFormat f) { writeTable(out, f, t); });
    return 0;
}

} // namespace

int runEntropyWithCheckpoint(const std::string& scheme, const ParsedArgs& args, VerbContext& ctx)
{
    for (const char* option : {"heads", "set", "context", "logn", "bidirectional", "seed", "head-dim"})
        if (args.has(option))
            throw InputError(std::string("entropy: --") + option +
                             " cannot be combined with --checkpoint (the model fixes its scheme and sizes)");
    if (args.has("qk") && args.text("qk") != "model")
        throw InputError("entropy: --qk " + args.text("qk") + " cannot be combined with --checkpoint (it uses the model's q and k)");
    applyThreadsOption(args);
    LoadedCheckpoint loaded = checkpointOfScheme("entropy", scheme, args);
    Model& model = *loaded.model;
    const int layer = layerFromArgs(args, model.config());
    const std::vector<int> lengths = args.integerList("lengths", {16, 32, 64, 128, 256, 512, 1024, 2048, 4096}, 1,
                                                      model.maxLength());
    checkWork(args, modelForwardWork(model.config(), lengths),
              "entropy of the model's layer " + std::to_string(layer) + " over --lengths " +
                  args.text("lengths", "16,...,4096"),
              "fewer or shorter --lengths");
    const Corpus corpus = corpusFromArgs(args);
    if (args.has("o") && isImagePath(args.text("o"))) {
        exportImage("entropy", args, args.text("o"));
        return 0;
    }
    const SchemeSpec spec = model.schemeSpec();
    const std::vector<EntropyPoint> points =
        entropyCurve(spec, lengths, modelQkProvider(model, corpus.validation, layer));
    Table t;
    t.columns = {"length", "head", "entropy_last", "entropy_mean"};
    t.meta = {{"scheme", spec.name()}, {"heads", spec.heads}, {"qk", "model"}, {"checkpoint", args.text("checkpoint")},
              {"layer", layer}, {"corpus", corpus.source}, {"config", model.config().toJson()}};
    for (const EntropyPoint& p : points)
        t.rows.push_back({double(p.length), double(p.head), p.entropyLast, p.entropyMean});
    writeDataOutput(args, ctx, true, [&](std::ostream& out, DataFormat f) { writeTable(out, f, t); });
    return 0;
}

int runAttentionWithCheckpoint(const std::string& scheme, const ParsedArgs& args, VerbContext&)
{
    for (const char* option : {"q", "k", "v", "heads", "set", "context", "logn", "bidirectional"})
        if (args.has(option))
            throw InputError(std::string("attention: --") + option +
                             " cannot be combined with --checkpoint (the model supplies q, k, v and its scheme)");
    checkAttentionOutputs(args);
    LoadedCheckpoint loaded = checkpointOfScheme("attention", scheme, args);
    Model& model = *loaded.model;
    const int layer = layerFromArgs(args, model.config());
    const int N = static_cast<int>(args.integer("length", model.config().context, 1, model.maxLength()));
    const int H = model.config().heads, D = model.config().headDim();
    if (args.has("probs"))
        checkMemoryEstimate(4.0 * H * double(N) * N, "probabilities (H, N, N)");
    checkWork(args, modelForwardWork(model.config(), {N}),
              "the model's forward over --length " + std::to_string(N), "a shorter --length");
    const Corpus corpus = corpusFromArgs(args);
    std::vector<uint8_t> tokens(N); // the validation text's first N bytes, repeated when shorter
    for (int i = 0; i < N; ++i)
        tokens[i] = corpus.validation[static_cast<size_t>(i) % corpus.validation.size()];
    model.forward(tokens.data(), nullptr, 1, N);
    writeAttentionOutputs(args, model.schemeSpec(), {1, H, N, D}, model.layerQueries(layer).data(),
                          model.layerKeys(layer).data(), model.layerValues(layer).data());
    return 0;
}

void registerModelVerbs()
{
    std::vector<OptionDef> trainOptions = {
        {"scheme", OptionKind::Value, "positional scheme (see `schemes`); required"},
        {"corpus", OptionKind::Value, "UTF-8 text file (default: the Debian fortunes files); last 10% held out"},
    };
    for (const OptionDef& o : modelOptions())
        trainOptions.push_back(o);
    for (const OptionDef& o : scheduleOptions())
        trainOptions.push_back(o);
    for (const OptionDef& o : std::vector<OptionDef>{
             {"data-seed", OptionKind::Value, "seed of the training windows (default: --seed)"},
             {"threads", OptionKind::Value, "OpenMP threads (default: all cores)"},
             {"log-every", OptionKind::Value, "progress every N steps (default steps/50)"},
             {"save-every", OptionKind::Value, "also write the checkpoint every N steps (default: only at the end)"},
             {"eval-bytes", OptionKind::Value, "validation bytes scored after training (default 65536; 0 skips)"},
             {"json", OptionKind::Flag, "progress as JSON lines on stderr"},
             {"o", OptionKind::Value, "output checkpoint MODEL.safetensors (written atomically); required"}})
        trainOptions.push_back(o);
    registerVerb({"train",
                  "positionlab-cli train --scheme S [--corpus FILE] [--context L] [--steps N] [--preset quick|large] "
                  "[model options] -o MODEL.safetensors",
                  "train a byte-level transformer with a positional scheme; Ctrl-C stops and keeps the checkpoint",
                  trainOptions, 0, 0, runTrain});
    registerVerb({"eval",
                  "positionlab-cli eval MODEL.safetensors [--corpus FILE] [--lengths 64,128,...] "
                  "[--mode nonoverlapping|sliding] [--stride S] [-o FILE]",
                  "loss, perplexity and bits per byte of a checkpoint at several lengths (train short, test long); "
                  "Ctrl-C stops (exit 130) and writes nothing",
                  {{"corpus", OptionKind::Value, "UTF-8 text file (default: the fortunes corpus)"},
                   {"split", OptionKind::Value, "validation (default, the last 10%), train or all"},
                   {"lengths", OptionKind::Value, "comma-separated window lengths (default L,2L,4L,8L,16L)"},
                   {"mode", OptionKind::Value, "nonoverlapping (default) or sliding"},
                   {"stride", OptionKind::Value, "sliding: tokens scored per window (default length/2)"},
                   {"max-bytes", OptionKind::Value, "score at most this many bytes (default: all)"},
                   {"threads", OptionKind::Value, "OpenMP threads (default: all cores)"},
                   {"quiet", OptionKind::Flag, "no per-length progress on stderr"},
                   {"o", OptionKind::Value, "output file: .csv .json .npy (default: CSV on stdout)"}},
                  1, 1, runEval});
}

} // namespace plab::cli
