// CLI verbs over the transformer: train, eval, and entropy from a checkpoint's real queries and keys.
#include "base/atomic_file.h"
#include "base/limits.h"
#include "model/checkpoint.h"
#include "model/fox_bias.h"
#include "views/fire_curves.h"
#include "cli.h"
#include "model/corpus.h"
#include "views/entropy.h"
#include "base/errors.h"
#include "runs/evaluation.h"
#include "runs/method_comparison.h"
#include "model/model.h"
#include "hf/hf_config.h"
#include "hf/hf_model.h"
#include "hf/tokenizer.h"
#include "runs/eval_check.h"
#include "runs/language_model.h"
#include "base/npy.h"
#include "model/optimizer.h"
#include "model/presets.h"
#include "runs/task_runs.h"
#include "runs/training.h"
#include "tasks/task_accuracy.h"
#include "tasks/tasks.h"

#include <nlohmann/json.hpp>

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <limits>
#include <functional>
#include <memory>
#include <optional>

namespace plab::cli {

namespace {

std::atomic<bool>& g_interrupted = interruptFlag();

} // namespace

Corpus corpusFromArgs(const ParsedArgs& args)
{
    return args.has("corpus") ? loadCorpusFile(args.text("corpus")) : loadDefaultCorpus();
}

LoadedCheckpoint checkpointOfScheme(const std::string& verb, const std::string& scheme, const ParsedArgs& args,
                                    std::string* note)
{
    const SchemeWord word = schemeWordFromArgs(scheme, args); // "rope+pi" is rope under pi, as --scaling pi
    LoadedCheckpoint loaded = loadCheckpoint(args.text("checkpoint"));
    if (word.scheme != loaded.model->config().scheme)
        throw InputError(verb + ": the checkpoint was trained with " + loaded.model->config().scheme + ", not " +
                         word.scheme);
    const std::string said = applyScalingOptions(*loaded.model, args, word.method);
    if (note)
        *note = said;
    return loaded;
}

namespace {

// What applyScalingOptions says it applied: the method and parameters in use, and whether they are the checkpoint's.
std::string scalingNote(const ModelConfig& trained, const Model& model, bool setGiven)
{
    const SchemeSpec spec = model.schemeSpec();
    const RotaryMethodInfo& used = rotaryMethodInfo(spec.scaling);
    const std::string inUse = methodCurveLabel(spec.name(), used, spec.scalingParams);
    const std::string changed = setGiven ? "changed by --set" : "";
    if (used.name == trained.scaling) {
        if (used.method == RotaryMethod::None)
            return {};
        return "using the checkpoint's scaling " + inUse + (setGiven ? " (its parameters " + changed + ")" : "") +
               "; --scaling METHOD replaces it, --scaling none gives plain " + spec.name();
    }
    const SchemeSpec was = modelSchemeSpec(trained);
    const std::string before =
        trained.scaling == "none"
            ? "plain " + spec.name()
            : "scaling " + methodCurveLabel(spec.name(), rotaryMethodInfo(was.scaling), was.scalingParams);
    if (used.method == RotaryMethod::None)
        return "using plain " + spec.name() + " in place of the checkpoint's " + before;
    return "using scaling " + inUse + " (the method's defaults" + (setGiven ? ", " + changed : "") +
           ") in place of the checkpoint's " + before;
}

} // namespace

std::string applyScalingOptions(Model& model, const ParsedArgs& args, const std::optional<std::string>& method)
{
    const ModelConfig trained = model.config();
    // The checkpoint's own method, named or not, keeps the parameters it was trained with; another method starts
    // from its defaults. --set changes either's parameters; the checkpoint fixes the scheme's, so --set takes the
    // method's only (core's rule, named here as the option).
    const RotaryMethodInfo& info = rotaryMethodByName(method.value_or(trained.scaling));
    std::vector<std::string> settings =
        info.name == trained.scaling ? trained.scalingSettings : std::vector<std::string>{};
    for (const std::string& a : args.all("set")) {
        checkScalingSet(info, a);
        settings.push_back(a);
    }
    if (info.name != trained.scaling || args.has("set")) {
        try {
            model.setScaling(info.name, settings);
        } catch (const InputError& e) { // a value out of range (logit-c=-1, factor=0): name the options given
            if (!args.has("set"))
                throw;
            std::string given;
            for (const std::string& a : args.all("set"))
                given += " --set " + a;
            throw InputError(given.substr(1) + ": " + e.what(), e.parameter());
        }
    }
    return scalingNote(trained, model, args.has("set"));
}

void printScalingNote(const std::string& note, const ParsedArgs& args, std::ostream& err)
{
    if (!note.empty() && !args.has("quiet"))
        err << note << std::endl;
}

std::vector<int> entropyLengthsFromArgs(const ParsedArgs& args, int maxLength)
{
    return args.integerList("lengths", defaultEntropyLengths(4096), 1, maxLength);
}

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
        {"preset", OptionKind::Value,
         "demo, tiny, quick (default) or large: sizes and schedule (see the README's presets table)", "NAME"},
        {"context", OptionKind::Value, "training context L (default from the preset)", "L"},
        {"layers", OptionKind::Value, "transformer blocks (default from the preset)", "N"},
        {"d-model", OptionKind::Value, "model width (default from the preset)", "D"},
        {"heads", OptionKind::Value, "attention heads; d-model must be divisible by it (default from the preset)", "H"},
        {"d-ff", OptionKind::Value, "MLP hidden width (default from the preset)", "F"},
        {"set", OptionKind::Repeated, "a scheme parameter (see `schemes`)", "NAME=VALUE"},
        {"logn", OptionKind::Flag, "scale scores by log(m+1)/log(context) past the context"},
        {"nope-every", OptionKind::Value,
         "K >= 2: layers l with (l+1) % K == 0 (0-based 3, 7, ... for K = 4) use no positional encoding, the others "
         "the rotary scheme (SmolLM3, Llama 4)",
         "K"},
        {"attn-temperature-tuning", OptionKind::Flag,
         "Llama 4's temperature on the NoPE layers: q at position p times 1 + attn_scale ln(1 + "
         "floor((p+1)/floor_scale))"},
        {"floor-scale", OptionKind::Value, "floor_scale of --attn-temperature-tuning (default 8192)", "F"},
        {"attn-scale", OptionKind::Value, "attn_scale of --attn-temperature-tuning (default 0.1)", "B"},
        {"ssmax", OptionKind::Flag,
         "scalable softmax: row m's scores times s_h ln(n), n its keys, s learned per head (from 1/ln(context))"},
        {"sink-logit", OptionKind::Flag, "a learned logit per head as one more softmax column, dropped after it"},
        {"layer-types", OptionKind::Value,
         "comma list of sliding, full, chunked repeating over the layers (sliding,sliding,sliding,sliding,sliding,full: "
         "Gemma 3's 5:1); sliding layers get --window, chunked --chunk, full --full-scheme",
         "LIST"},
        {"window", OptionKind::Value, "the sliding layers' window W: query m sees keys m-W < n <= m (default context/4)",
         "W"},
        {"chunk", OptionKind::Value, "the chunked layers' chunk C: query m sees keys n <= m of its chunk (default "
         "context/4)", "C"},
        {"full-scheme", OptionKind::Value,
         "the full layers' own scheme (none: RNoPE-SWA; default the model's scheme)", "SCHEME"},
        {"full-set", OptionKind::Repeated,
         "a parameter of the full layers' scheme (base=1000000: Gemma 3's global base)", "NAME=VALUE"},
        scalingOption(),
        {"init", OptionKind::Value,
         "continue from a checkpoint (weights, and AdamW state when saved); same scheme and shapes",
         "MODEL.safetensors"},
        {"seed", OptionKind::Value, "seed of the initialisation and the data order (default 1)", "S"},
    };
}

void layerScheduleFromArgs(const ParsedArgs& args, ModelConfig& mc)
{
    mc.nopeEvery = static_cast<int>(args.integer("nope-every", mc.nopeEvery, 2, 64));
    if (args.has("attn-temperature-tuning"))
        mc.temperature.tuning = true;
    if ((args.has("floor-scale") || args.has("attn-scale")) && !mc.temperature.tuning)
        throw InputError(std::string("--") + (args.has("floor-scale") ? "floor-scale" : "attn-scale") +
                         " sets Llama 4's temperature; allowed only with --attn-temperature-tuning");
    mc.temperature.floorScale = args.number("floor-scale", mc.temperature.floorScale);
    mc.temperature.attnScale = args.number("attn-scale", mc.temperature.attnScale);
    mc.ssmax = mc.ssmax || args.has("ssmax");
    mc.sinkLogit = mc.sinkLogit || args.has("sink-logit");
    if (args.has("layer-types")) {
        const std::string list = args.text("layer-types");
        if (list.empty())
            throw InputError("--layer-types is empty; allowed: a comma list of sliding, full, chunked (repeating over "
                             "the layers)");
        mc.layerTypes.clear();
        size_t start = 0;
        for (size_t comma = list.find(','); ; comma = list.find(',', start)) {
            mc.layerTypes.push_back(list.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
            if (comma == std::string::npos)
                break;
            start = comma + 1;
        }
        for (const std::string& type : mc.layerTypes)
            (void)layerTypeByName(type); // named before the rest of the model is checked
    }
    mc.window = static_cast<int>(args.integer("window", mc.window, 1, 1000000));
    mc.chunk = static_cast<int>(args.integer("chunk", mc.chunk, 1, 1000000));
    if (args.has("full-scheme")) {
        mc.fullScheme = args.text("full-scheme");
        (void)schemeByName(mc.fullScheme);
    }
    if (args.has("full-set"))
        mc.fullSettings = args.all("full-set");
}

const std::vector<std::string>& layerScheduleOptionNames()
{
    static const std::vector<std::string> names{"nope-every", "attn-temperature-tuning", "floor-scale", "attn-scale",
                                                "ssmax",      "sink-logit",              "layer-types", "window",
                                                "chunk",      "full-scheme",             "full-set"};
    return names;
}

namespace {

// The model's sizes: the preset's, changed by --context, --layers, --d-model, --heads, --d-ff.
void modelSizesFromArgs(const ParsedArgs& args, ModelConfig& mc)
{
    mc.context = static_cast<int>(args.integer("context", mc.context, 2, 65536));
    mc.layers = static_cast<int>(args.integer("layers", mc.layers, 1, 64));
    mc.dModel = static_cast<int>(args.integer("d-model", mc.dModel, 2, 8192));
    mc.heads = static_cast<int>(args.integer("heads", mc.heads, 1, kMaxHeads));
    mc.dFf = static_cast<int>(args.integer("d-ff", mc.dFf, 1, 65536));
}

// The optimisation schedule: the preset's, changed by --steps, --batch, --lr, --min-lr, --warmup, --weight-decay,
// --grad-clip.
void scheduleFromArgs(const ParsedArgs& args, TrainConfig& tc)
{
    setTrainingSteps(tc, static_cast<int>(args.integer("steps", tc.steps, 1, 100000000)));
    tc.batch = static_cast<int>(args.integer("batch", tc.batch, 1, 65536));
    tc.learningRate = args.number("lr", tc.learningRate);
    tc.minLearningRate = args.number("min-lr", std::min(tc.minLearningRate, tc.learningRate));
    tc.warmup = static_cast<int>(args.integer("warmup", tc.warmup, 0, 100000000));
    tc.weightDecay = args.number("weight-decay", tc.weightDecay);
    tc.gradClip = args.number("grad-clip", tc.gradClip);
}

} // namespace

std::optional<TaskKind> taskKindFromArgs(const ParsedArgs& args)
{
    if (!args.has("task"))
        return std::nullopt;
    try {
        return taskByName(args.text("task")).kind;
    } catch (const InputError& e) {
        throw InputError("--task: " + std::string(e.what()));
    }
}

void presetFromArgs(const ParsedArgs& args, ModelConfig& mc, TrainConfig& tc)
{
    const std::string preset = args.text("preset", "quick");
    applyPreset(preset, mc, tc);
    if (const std::optional<TaskKind> kind = taskKindFromArgs(args))
        applyTaskPreset(preset, *kind, mc, tc);
}

std::optional<TaskSpec> taskFromArgs(const ParsedArgs& args, int context)
{
    if (!args.has("task")) {
        if (args.has("task-length"))
            throw InputError("--task-length " + args.text("task-length") +
                             " applies only with --task; allowed: --task " +
                             "copy|reverse|addition|passkey --task-length L");
        return std::nullopt;
    }
    TaskSpec spec;
    spec.kind = *taskKindFromArgs(args);
    spec.trainLength = args.has("task-length") ? static_cast<int>(args.integer("task-length", 0, 1, kMaxLength))
                                               : taskLongestLength(spec.kind, context);
    try {
        checkTaskLength(spec.kind, spec.trainLength, context);
    } catch (const InputError& e) {
        throw InputError("--task " + args.text("task") +
                         (args.has("task-length") ? " --task-length " + args.text("task-length") : std::string()) +
                         " at --context " + std::to_string(context) + ": " + e.what());
    }
    return spec;
}

std::vector<OptionDef> taskOptions()
{
    return {{"task", OptionKind::Value,
             "train on generated examples of a task instead of text, the loss on the answers only: copy, reverse, "
             "addition or passkey (see the README)",
             "NAME"},
            {"task-length", OptionKind::Value,
             "with --task: the longest training length L, examples drawn at 1..L (default: the longest the context "
             "holds)",
             "L"}};
}

// A fresh model and its schedule (sweep's cells; train adds --init on top of the same readers).
void modelAndTrainingFromArgs(const ParsedArgs& args, ModelConfig& mc, TrainConfig& tc)
{
    presetFromArgs(args, mc, tc);
    modelSizesFromArgs(args, mc);
    mc.schemeSettings = args.all("set");
    mc.scaling = args.text("scaling", "none"); // every scheme trains under it (a non-rotary one is refused)
    mc.logn = args.has("logn");
    layerScheduleFromArgs(args, mc);
    scheduleFromArgs(args, tc);
}

std::vector<OptionDef> scheduleOptions()
{
    return {
        {"steps", OptionKind::Value, "optimisation steps (default from the preset: quick 1500)", "N"},
        {"batch", OptionKind::Value, "sequences per step (default from the preset)", "B"},
        {"lr", OptionKind::Value, "peak learning rate (quick 2e-3, large 6e-4)", "LR"},
        {"min-lr", OptionKind::Value, "learning rate at the end of the cosine decay", "LR"},
        {"warmup", OptionKind::Value, "linear warm-up steps", "N"},
        {"weight-decay", OptionKind::Value, "AdamW decoupled weight decay on matrices (default 0.1)", "W"},
        {"grad-clip", OptionKind::Value, "clip the global gradient norm (default 1; 0 disables)", "G"},
    };
}

namespace {

// Everything `train` reads from its command line.
struct TrainSetup {
    ModelConfig model;
    TrainConfig training;
    int logEvery = 0;
    int saveEvery = 0;
    size_t evalBytes = 0;
    std::string output;
    bool json = false;
    bool quiet = false;
    std::optional<LoadedCheckpoint> init; // --init: the checkpoint training continues from
    int keptOriginalContext = 0;          // the original-context --init carried into the method (0: none)
    std::string initRun = "this run";     // how --init's messages name the run: "this run (--preset quick)"
    std::optional<TaskSpec> task;         // --task: generated examples instead of the corpus
};

// Core's checks of a checkpoint to continue from name it as the file; the CLI says which option gave it.
void initCheck(const std::function<void()>& check)
{
    try {
        check();
    } catch (const InputError& e) {
        throw InputError("--init " + std::string(e.what()));
    }
}

TrainSetup trainSetupFromArgs(const ParsedArgs& args)
{
    TrainSetup s;
    ModelConfig& mc = s.model;
    TrainConfig& tc = s.training;
    presetFromArgs(args, mc, tc);
    // --init: the checkpoint's model is the starting point; options given here change it (a shape or scheme change
    // is refused by checkInitCompatible), the schedule comes from the preset and options as for a fresh run. With
    // --preset the sizes and context asked for are the preset's, so a preset of another shape is refused, not
    // silently replaced by the checkpoint's.
    std::optional<LoadedCheckpoint>& init = s.init;
    if (args.has("init")) {
        init = loadCheckpoint(args.text("init"));
        takeCheckpointModel(mc, init->model->config(), args.has("preset"));
    }
    // The SCHEME word may carry a method, "rope+yarn", as --scaling yarn.
    std::optional<std::string> method = args.has("scaling") ? std::optional(args.text("scaling")) : std::nullopt;
    const bool schemeGiven = !args.positional.empty() || args.has("scheme");
    if (!init || schemeGiven) {
        const SchemeWord word = schemeWordFromArgs(schemeFromArgs(args, 0, "train"), args);
        mc.scheme = word.scheme;
        method = word.method;
    }
    if (args.has("drop-positions")) { // only with --init (trainForms)
        const std::string& had = init->model->config().scheme;
        if (had != "rope")
            throw InputError("--drop-positions: --init " + args.text("init") + " was trained with scheme " + had +
                             "; allowed: a rope checkpoint (dropping positions removes its rotations)");
        if (schemeGiven && mc.scheme != "none")
            throw InputError("--drop-positions continues the checkpoint with scheme none, not " + mc.scheme +
                             "; allowed: leave SCHEME out, or name none");
        mc.scheme = "none";
    }
    modelSizesFromArgs(args, mc);
    const std::string run = args.has("preset") ? "this run (--preset " + args.text("preset") + ")" : "this run";
    if (init) {
        // Scheme and sizes against the checkpoint's first, before its settings join this run's: another scheme or
        // head dim is named as such, not as a parameter the checkpoint's settings give the wrong scheme.
        initCheck([&] { checkInitSchemeAndSizes(mc, init->model->config(), args.text("init"), run); });
        // --set original-context=N is the user's and wins (0: this run's context)
        s.keptOriginalContext = mergeCheckpointSettings(mc, init->model->config(), method, args.all("set"));
    } else {
        mc.schemeSettings = args.all("set");
        mc.scaling = method.value_or("none");
    }
    mc.logn = mc.logn || args.has("logn");
    layerScheduleFromArgs(args, mc);
    mc.seed = static_cast<uint64_t>(args.integer("seed", static_cast<long long>(mc.seed), 0, 1LL << 62));
    scheduleFromArgs(args, tc);
    tc.dataSeed = static_cast<uint64_t>(args.integer("data-seed", static_cast<long long>(mc.seed), 0, 1LL << 62));
    s.logEvery = static_cast<int>(args.integer("log-every", 0, 0, 100000000));
    s.saveEvery = static_cast<int>(args.integer("save-every", 0, 0, 100000000));
    s.evalBytes = static_cast<size_t>(args.integer("eval-bytes", 65536, 0, 1LL << 40));
    s.output = args.text("o");
    s.json = args.has("json");
    s.quiet = args.has("quiet");
    if (s.quiet)
        refuseOptions("train", args, {"log-every"}, "--quiet prints no step progress");
    s.initRun = run; // the configs and the checkpoint are checked once, by trainModel
    s.task = taskFromArgs(args, mc.context);
    if (s.task)
        refuseOptions("train", args, {"corpus", "eval-bytes"},
                      "--task trains on generated examples, not on text (the final line reports the task's accuracy)");
    return s;
}

// What a task run trains on, as the start line and the checkpoint name it.
std::string taskSource(const TaskSpec& task)
{
    return taskTrainingBatches(task, 0).source; // core's one wording
}

// `corpus` is null for a task run.
void printTrainStart(const TrainSetup& s, const Corpus* corpus, VerbContext& ctx)
{
    const ModelConfig& mc = s.model;
    if (s.json) {
        nlohmann::json start{{"event", "start"},
                             {"config", mc.toJson()},
                             {"training", s.training.toJson()},
                             {"parameters", modelParameterCount(mc)},
                             {"threads", omp_get_max_threads()}};
        if (corpus) {
            start["corpus"] = corpus->source;
            start["train_bytes"] = corpus->train.size();
        } else {
            start["training"].update(s.task->toJson());
        }
        ctx.err << start.dump() << std::endl;
        return;
    }
    std::string window;
    if (schemeByName(mc.scheme).hasWindow) {
        const int w = modelSchemeSpec(mc).intParam("window");
        window = " (window " + std::to_string(w) + ": " + std::to_string(mc.layers) + " layers reach " +
                 std::to_string(mc.layers * (w - 1)) + " positions back)";
    }
    ctx.err << "training " << mc.scheme << window << ": " << mc.layers << " layers, d_model " << mc.dModel << ", "
            << mc.heads << " heads, context " << mc.context << ", " << modelParameterCount(mc) << " parameters; "
            << s.training.steps << " steps of " << s.training.batch << " x " << mc.context << " tokens; "
            << (corpus ? "corpus " + corpus->source + " (" + std::to_string(corpus->train.size()) + " training bytes)"
                       : taskSource(*s.task) + ", loss on the answers only")
            << "; " << omp_get_max_threads() << " threads" << std::endl;
}

// One line (or JSON event) per report on stderr.
std::function<void(const TrainingProgress&)> trainProgressPrinter(const TrainSetup& s, VerbContext& ctx,
                                                                  double cpuStart)
{
    return [json = s.json, &ctx, cpuStart](const TrainingProgress& p) {
        if (json) {
            ctx.err << nlohmann::json{{"event", "step"},
                                      {"step", p.step},
                                      {"steps", p.steps},
                                      {"loss", p.loss},
                                      {"lr", p.learningRate},
                                      {"grad_norm", p.gradNorm},
                                      {"tokens_per_second", p.tokensPerSecond},
                                      {"elapsed_s", p.elapsedSeconds},
                                      {"eta_s", p.etaSeconds},
                                      {"cpu_s", processCpuSeconds() - cpuStart}}
                           .dump()
                    << std::endl;
            return;
        }
        char line[200];
        std::snprintf(line, sizeof line, "step %*d/%d  loss %.4f  lr %.2e  %.0f tok/s  elapsed %s  ETA %s",
                      static_cast<int>(std::to_string(p.steps).size()), p.step, p.steps, p.loss, p.learningRate,
                      p.tokensPerSecond, clockText(p.elapsedSeconds).c_str(), clockText(p.etaSeconds).c_str());
        ctx.err << line << std::endl;
    };
}

// The short held-out check at the training length after training, so a run reports more than its training loss.
// Empty, with `why` set, when it is skipped: --eval-bytes 0, a held-out text too short, or Ctrl-C during it.
std::optional<double> heldOutLoss(Model& model, const Corpus& corpus, const TrainSetup& s, std::string& why)
{
    if (s.evalBytes == 0) {
        why = "--eval-bytes 0";
        return std::nullopt;
    }
    if (corpus.validation.size() < 2) {
        why = "the held-out text has " + std::to_string(corpus.validation.size()) + " bytes";
        return std::nullopt;
    }
    if (!evalLengthsPastText({s.model.context}, modelMaxLength(s.model), corpus.validation.size(), s.evalBytes)
             .empty()) {
        why = "only " + std::to_string(evalScoredBytes(corpus.validation.size(), s.evalBytes)) +
              " held-out bytes are scored, fewer than the context " + std::to_string(s.model.context) +
              " (raise --eval-bytes or use a longer corpus)";
        return std::nullopt;
    }
    EvalOptions eo;
    eo.lengths = {s.model.context};
    eo.maxTokens = s.evalBytes;
    eo.textName = "the held-out text";
    eo.progress = [](double) { return !g_interrupted; }; // Ctrl-C here skips the check; the checkpoint is written
    try {
        return evaluateModel(model, corpus.validation, eo)[0].loss;
    } catch (const RunError&) {
        if (!g_interrupted)
            throw;
        why = "interrupted";
        return std::nullopt;
    }
}

void printTrainDone(const TrainSetup& s, const TrainingResult& trained, std::optional<double> valLoss,
                    const std::string& skipped, VerbContext& ctx)
{
    const CheckpointInfo& info = trained.info;
    if (s.json) {
        nlohmann::json done{{"event", "done"},
                            {"steps", info.step},
                            {"train_loss", info.trainLoss},
                            {"validation_loss", valLoss ? nlohmann::json(*valLoss) : nlohmann::json()},
                            {"tokens_per_second", trained.tokensPerSecond},
                            {"elapsed_s", trained.elapsedSeconds},
                            {"checkpoint", s.output}};
        if (!valLoss)
            done["validation_skipped"] = skipped;
        ctx.err << done.dump() << std::endl;
        return;
    }
    char line[320];
    if (valLoss)
        std::snprintf(line, sizeof line,
                      "done: %d steps in %s, %.0f tok/s; validation loss %.4f (perplexity %.3f, %.4f "
                      "bits/byte) at length %d; wrote %s",
                      info.step, clockText(trained.elapsedSeconds).c_str(), trained.tokensPerSecond, *valLoss,
                      std::exp(*valLoss), *valLoss / std::log(2.0), s.model.context, s.output.c_str());
    else
        std::snprintf(line, sizeof line, "done: %d steps in %s, %.0f tok/s; no validation check (%s); wrote %s",
                      info.step, clockText(trained.elapsedSeconds).c_str(), trained.tokensPerSecond, skipped.c_str(),
                      s.output.c_str());
    ctx.err << line << std::endl;
}

// Test examples a task run is checked on after training (at its training length; passkey at every default depth).
constexpr int kTaskCheckExamples = 100;

// The check after a task run: exact-match accuracy at the training length; empty when Ctrl-C stopped it.
std::optional<TaskAccuracyPoint> taskCheck(Model& model, const TaskSpec& task)
{
    TaskEvalOptions options;
    options.lengths = {task.trainLength};
    options.examples = kTaskCheckExamples;
    options.maxLength = model.maxLength();
    options.progress = [](double) { return !g_interrupted; };
    try {
        TaskAccuracyPoint all;
        all.length = task.trainLength;
        for (const TaskAccuracyPoint& p : evaluateTask(task.kind, modelPredictor(model), options)) {
            all.examples += p.examples;
            all.correct += p.correct;
        }
        all.accuracy = static_cast<double>(all.correct) / all.examples;
        return all;
    } catch (const RunError&) {
        if (!g_interrupted)
            throw;
        return std::nullopt;
    }
}

void printTaskTrainDone(const TrainSetup& s, const TrainingResult& trained,
                        const std::optional<TaskAccuracyPoint>& check, VerbContext& ctx)
{
    const CheckpointInfo& info = trained.info;
    if (s.json) {
        nlohmann::json done{{"event", "done"},
                            {"steps", info.step},
                            {"train_loss", info.trainLoss},
                            {"task", taskInfo(s.task->kind).name},
                            {"task_length", s.task->trainLength},
                            {"accuracy", check ? nlohmann::json(check->accuracy) : nlohmann::json()},
                            {"examples", check ? check->examples : 0},
                            {"tokens_per_second", trained.tokensPerSecond},
                            {"elapsed_s", trained.elapsedSeconds},
                            {"checkpoint", s.output}};
        ctx.err << done.dump() << std::endl;
        return;
    }
    char line[320];
    if (check)
        std::snprintf(line, sizeof line,
                      "done: %d steps in %s, %.0f tok/s; answer loss %.4f; accuracy %.3f (%d of %d test examples) at "
                      "length %d; wrote %s",
                      info.step, clockText(trained.elapsedSeconds).c_str(), trained.tokensPerSecond, info.trainLoss,
                      check->accuracy, check->correct, check->examples, s.task->trainLength, s.output.c_str());
    else
        std::snprintf(line, sizeof line, "done: %d steps in %s, %.0f tok/s; no accuracy check (interrupted); wrote %s",
                      info.step, clockText(trained.elapsedSeconds).c_str(), trained.tokensPerSecond, s.output.c_str());
    ctx.err << line << std::endl;
}

int runTrain(const ParsedArgs& args, VerbContext& ctx)
{
    const TrainSetup setup = trainSetupFromArgs(args);
    applyThreadsOption(args);
    std::optional<Corpus> corpus;
    if (!setup.task)
        corpus = corpusFromArgs(args);

    TrainingHooks hooks;
    hooks.reportEvery = setup.logEvery;
    hooks.interrupt = &g_interrupted; // Ctrl-C also stops inside a long step, before the optimiser runs
    hooks.saveEvery = setup.saveEvery;
    hooks.checkpoint = [&](const Model& model, const CheckpointInfo& info) {
        saveCheckpoint(model, info, setup.output);
    };
    if (!setup.quiet)
        hooks.progress = trainProgressPrinter(setup, ctx, processCpuSeconds());
    // The start lines come once trainModel has checked the run (its one check of the configs, corpus and --init).
    hooks.started = [&](const Model&) {
        if (!setup.quiet)
            printTrainStart(setup, corpus ? &*corpus : nullptr, ctx);
        if (setup.init && !setup.json)
            ctx.err << "continuing from " << args.text("init") << " (step " << setup.init->info.step << ", "
                    << (setup.init->optimizer ? "with its AdamW state" : "no AdamW state saved: fresh moments") << ")"
                    << (droppingPositions(setup.model, setup.init->model->config())
                            ? ", positions dropped: scheme none (DroPE)"
                            : std::string())
                    << (setup.model.scaling != "none" ? ", scaling " + setup.model.scaling : std::string())
                    << (setup.keptOriginalContext > 0
                            ? " with original-context " + std::to_string(setup.keptOriginalContext) +
                                  " (the context the checkpoint was trained at; --set original-context=N changes it)"
                            : std::string())
                    << std::endl;
    };
    InterruptGuard guard;
    const LoadedCheckpoint* init = setup.init ? &*setup.init : nullptr;
    const std::string initSource = init ? "--init " + args.text("init") : std::string("checkpoint");
    TrainingResult trained;
    if (setup.task) {
        const TrainingBatches batches = taskTrainingBatches(*setup.task, setup.training.dataSeed);
        trained = trainModel(setup.model, setup.training, batches, hooks, init, initSource, setup.initRun);
    } else {
        trained = trainModel(setup.model, setup.training, *corpus, hooks, init, initSource, setup.initRun);
    }
    const CheckpointInfo& info = trained.info;
    if (trained.stopped && info.step == 0) {
        ctx.err << "interrupted before the first step; nothing written" << std::endl;
        return 130;
    }
    saveCheckpoint(*trained.model, info, setup.output);
    if (trained.stopped) {
        if (setup.json)
            ctx.err
                << nlohmann::json{{"event", "interrupted"}, {"step", info.step}, {"checkpoint", setup.output}}.dump()
                << std::endl;
        else
            ctx.err << "interrupted at step " << info.step << "; checkpoint written to " << setup.output << std::endl;
        return 130;
    }
    if (setup.task) {
        printTaskTrainDone(setup, trained, taskCheck(*trained.model, *setup.task), ctx);
        return 0;
    }
    std::string skipped;
    const std::optional<double> valLoss = heldOutLoss(*trained.model, *corpus, setup, skipped);
    printTrainDone(setup, trained, valLoss, skipped, ctx);
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

// Progress of one length on stderr at every tenth of the work (sliding windows can take minutes per length); the
// callback also stops the evaluation on Ctrl-C.
std::function<bool(double)> evalProgressPrinter(int length, bool print, VerbContext& ctx)
{
    auto next = std::make_shared<int>(1); // the next tenth to report
    const auto begin = std::chrono::steady_clock::now();
    return [=, &ctx](double fraction) {
        const int tenth = static_cast<int>(std::floor(fraction * 10 + 1e-9));
        if (print && tenth >= *next) {
            *next = tenth + 1;
            const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
            const double eta = fraction > 0 ? elapsed * (1 - fraction) / fraction : std::nan("");
            ctx.err << "length " << length << " (sliding): " << 10 * tenth << "%  elapsed " << clockText(elapsed)
                    << "  ETA " << clockText(eta) << std::endl;
        }
        return !g_interrupted;
    };
}

struct EvalRun {
    Table table;
    nlohmann::json unsupported = nlohmann::json::array();
    int interruptedAt = 0; // the length Ctrl-C stopped, 0 when it ran to the end
};

// Evaluates length after length, printing each result (and sliding progress) on stderr unless --quiet. Bytes for the
// lab's models, tokens for a model folder (LanguageModel::tokenUnit names the column and the lines).
EvalRun evaluateLengths(LanguageModel& model, const std::vector<int32_t>& text, const EvalOptions& opt, bool quiet,
                        VerbContext& ctx)
{
    const std::string unit = model.tokenUnit();
    EvalRun run;
    run.table.columns = {"length", "loss", "perplexity", "bits_per_" + unit};
    run.table.integerColumns = 1;
    for (int length : opt.lengths) {
        if (g_interrupted) {
            run.interruptedAt = length;
            return run;
        }
        EvalOptions one = opt;
        one.lengths = {length};
        one.progress = evalProgressPrinter(length, !quiet && opt.mode == EvalMode::Sliding, ctx);
        const auto begin = std::chrono::steady_clock::now();
        EvalPoint p;
        try {
            p = evaluateModel(model, text, one)[0];
        } catch (const RunError&) {
            if (!g_interrupted)
                throw;
            run.interruptedAt = length;
            return run;
        }
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
        run.table.rows.push_back({double(length), p.loss, p.perplexity, p.bitsPerByte});
        if (!p.supported) {
            run.unsupported.push_back({{"length", length}, {"reason", p.note}});
            if (!quiet)
                ctx.err << "length " << length << ": unsupported (" << p.note << ")" << std::endl;
        } else if (!quiet) {
            char line[200];
            std::snprintf(line, sizeof line, "length %d: loss %.4f  perplexity %.3f  %.4f bits/%s  (%zu %ss, %.1f s)",
                          length, p.loss, p.perplexity, p.bitsPerByte, unit.c_str(), p.tokens, unit.c_str(), seconds);
            ctx.err << line << std::endl;
        }
    }
    return run;
}

// What plain eval and eval --compare share: the checkpoint, the options and the text scored.
struct EvalSetup {
    LoadedCheckpoint loaded;
    EvalOptions options;
    std::string split;
    std::string corpusSource;
    std::vector<uint8_t> text;
};

// Loads the checkpoint and reads --lengths, --mode, --stride, --max-bytes, --split and --corpus; `beforeCorpus` runs on
// the model before the corpus is read (the scaling of plain eval, the rotary check of --compare).
EvalSetup evalSetupFromArgs(const ParsedArgs& args, const std::function<void(Model&)>& beforeCorpus)
{
    EvalSetup s;
    s.loaded = loadCheckpoint(args.positional[0]);
    Model& model = *s.loaded.model;
    beforeCorpus(model);
    s.options.lengths = args.integerList("lengths", extrapolationLengths(model.config().context), 1, kMaxLength);
    s.options.mode = evalModeFromName(args.text("mode", evalModeName(EvalMode::NonOverlapping)));
    s.options.stride = static_cast<int>(args.integer("stride", 0, 1, kMaxLength));
    if (args.has("stride") && s.options.mode != EvalMode::Sliding)
        throw InputError("--stride only applies to --mode sliding");
    s.options.maxTokens = static_cast<size_t>(args.integer("max-bytes", 0, 0, 1LL << 40));
    s.split = args.text("split", "validation");
    const Corpus corpus = corpusFromArgs(args);
    std::vector<uint8_t> all;
    s.text = splitOf(corpus, s.split, all);
    s.corpusSource = corpus.source;
    s.options.textName = "the " + s.split + " split of " + corpus.source;
    // Every length before the first is scored (evaluateModel checks only the length it is given, one at a time).
    checkEvalLengthsFit(s.options.lengths, model.maxLength(), s.text.size(), s.options.maxTokens, s.options.textName);
    return s;
}

nlohmann::json evalMeta(const ParsedArgs& args, const EvalSetup& s)
{
    nlohmann::json meta = {{"checkpoint", args.positional[0]},
                           {"config", s.loaded.model->config().toJson()},
                           {"step", s.loaded.info.step},
                           {"mode", evalModeName(s.options.mode)},
                           {"corpus", s.corpusSource},
                           {"split", s.split},
                           {"bytes", s.text.size()}};
    if (s.options.mode == EvalMode::Sliding)
        meta["stride"] = s.options.stride ? nlohmann::json(s.options.stride) : nlohmann::json("length/2");
    return meta;
}

// ---- a Hugging Face model folder where a checkpoint is (eval, eval --compare) ----

void printInterrupted(const ParsedArgs& args, VerbContext& ctx, const std::string& where);

// A folder's default lengths: L/2, L, 2L, 4L of its context; learned positions stop at L (L/4, L/2, L).
std::vector<int> folderEvalLengths(const LanguageModel& model)
{
    const int L = model.context();
    std::vector<int> lengths;
    const std::vector<double> multipliers =
        model.maxLength() <= L ? std::vector<double>{0.25, 0.5, 1} : std::vector<double>{0.5, 1, 2, 4};
    for (double m : multipliers) {
        const int length = std::clamp(static_cast<int>(L * m), 1, kMaxLength);
        if (lengths.empty() || lengths.back() != length)
            lengths.push_back(length);
    }
    return lengths;
}

struct FolderEvalSetup {
    std::unique_ptr<HfModel> hf;
    std::unique_ptr<HfLanguageModel> model;
    EvalOptions options;
    std::string split;
    std::string corpusSource;
    size_t bytes = 0;
    std::vector<int32_t> tokens;
};

// The folder's model (config.json and tokenizer.json read first: a folder without them fails before the weights
// load), then
// `beforeCorpus` on it (the scaling of plain eval, the rotary check of --compare), then --lengths (in tokens; past a
// learned-position table refused), --mode, --stride, and the --split of --corpus (at most --max-bytes bytes, whole
// UTF-8 characters) tokenized with the folder's tokenizer.
FolderEvalSetup folderEvalSetupFromArgs(const ParsedArgs& args,
                                        const std::function<void(LanguageModel&, const HfConfig&)>& beforeCorpus)
{
    FolderEvalSetup s;
    const std::string dir = args.positional[0];
    readHfConfig(dir); // config.json first: a directory that is no model folder is refused naming it
    const hf::Tokenizer tokenizer = hf::Tokenizer::fromFolder(dir);
    s.hf = std::make_unique<HfModel>(dir, precisionFromArgs(args));
    s.model = std::make_unique<HfLanguageModel>(*s.hf);
    const HfConfig& c = s.hf->config();
    beforeCorpus(*s.model, c);
    s.options.lengths = args.integerList("lengths", folderEvalLengths(*s.model), 1, kMaxLength);
    for (int length : s.options.lengths)
        checkFolderLength("lengths", c, length);
    s.options.mode = evalModeFromName(args.text("mode", evalModeName(EvalMode::NonOverlapping)));
    s.options.stride = static_cast<int>(args.integer("stride", 0, 1, kMaxLength));
    if (args.has("stride") && s.options.mode != EvalMode::Sliding)
        throw InputError("--stride only applies to --mode sliding");
    const size_t maxBytes = static_cast<size_t>(args.integer("max-bytes", 0, 0, 1LL << 40));
    s.split = args.text("split", "validation");
    const Corpus corpus = corpusFromArgs(args);
    std::vector<uint8_t> all;
    std::vector<uint8_t> bytes = splitOf(corpus, s.split, all);
    if (maxBytes && bytes.size() > maxBytes)
        bytes.resize(maxBytes);
    s.bytes = wholeUtf8Characters(bytes).size();
    s.corpusSource = corpus.source;
    s.tokens = folderTextTokens(tokenizer, bytes, "the " + s.split + " split of " + corpus.source);
    s.options.textName = "the " + s.split + " split of " + corpus.source + " (" + std::to_string(s.bytes) + " bytes" +
                         (maxBytes ? ", --max-bytes " + std::to_string(maxBytes) : std::string()) +
                         ", tokenized with " + dir + "/tokenizer.json)";
    checkEvalLengthsFit(s.options.lengths, s.model->maxLength(), s.tokens.size(), 0, s.options.textName, "token");
    return s;
}

nlohmann::json folderEvalMeta(const ParsedArgs& args, const FolderEvalSetup& s)
{
    const HfConfig& c = s.hf->config();
    nlohmann::json meta = {{"model", args.positional[0]},
                           {"model_type", c.modelType},
                           {"context", c.context},
                           {"positions", hfPositionText(s.model->positions())},
                           {"scaling_layers", hfScalingLayersName(s.model->scalingLayers())},
                           {"precision", hfPrecisionName(s.hf->precision())},
                           {"mode", evalModeName(s.options.mode)},
                           {"corpus", s.corpusSource},
                           {"split", s.split},
                           {"bytes", s.bytes},
                           {"tokens", s.tokens.size()},
                           {"lengths_in", "tokens"}};
    if (s.options.mode == EvalMode::Sliding)
        meta["stride"] = s.options.stride ? nlohmann::json(s.options.stride) : nlohmann::json("length/2");
    return meta;
}

// --scaling and --set on a folder: the config's own method and settings unless --scaling names another (which starts
// from its defaults; naming the config's own keeps its settings), --set then changing the method's parameters.
// Returns the note printed on stderr.
std::string applyFolderScaling(LanguageModel& model, const HfConfig& config, const ParsedArgs& args)
{
    std::string note;
    // the checks and the note, the model not yet changed
    const HfPositions positions = folderPositionsFromArgs(config, args, std::nullopt, &note);
    const std::string scaling = args.text("scaling");
    if (!scaling.empty() || args.has("set"))
        model.setScaling(scaling.empty() ? model.scaling() : scaling, args.all("set"));
    if (auto* folder = dynamic_cast<HfLanguageModel*>(&model))
        folder->setScalingLayers(positions.layers);
    return note;
}

int runFolderEval(const ParsedArgs& args, VerbContext& ctx)
{
    std::string note;
    FolderEvalSetup setup = folderEvalSetupFromArgs(
        args, [&](LanguageModel& model, const HfConfig& config) { note = applyFolderScaling(model, config, args); });
    if (!args.has("quiet"))
        ctx.err << note << std::endl;
    InterruptGuard guard;
    EvalRun run = evaluateLengths(*setup.model, setup.tokens, setup.options, args.has("quiet"), ctx);
    if (g_interrupted) {
        printInterrupted(args, ctx,
                         "at length " +
                             std::to_string(run.interruptedAt ? run.interruptedAt : setup.options.lengths.back()));
        return 130;
    }
    run.table.meta = folderEvalMeta(args, setup);
    if (!run.unsupported.empty())
        run.table.meta["unsupported"] = run.unsupported;
    writeDataOutput(args, ctx, true, [&](std::ostream& out, DataFormat f) { writeTable(out, f, run.table); });
    return 0;
}

void printInterrupted(const ParsedArgs& args, VerbContext& ctx, const std::string& where)
{
    ctx.err << "interrupted " << where << "; nothing written"
            << (args.has("o") ? " (" + args.text("o") + " is unchanged)" : std::string()) << std::endl;
}

// eval MODEL --task NAME: exact-match accuracy of the model's greedy answers per length (and depth), CSV or JSON.
int runTaskEval(const ParsedArgs& args, VerbContext& ctx)
{
    LoadedCheckpoint loaded = loadCheckpoint(args.positional[0]);
    Model& model = *loaded.model;
    const std::optional<std::string> method = args.has("scaling") ? std::optional(args.text("scaling")) : std::nullopt;
    const std::string note = applyScalingOptions(model, args, method);
    TaskKind kind;
    try {
        kind = taskByName(args.text("task")).kind;
    } catch (const InputError& e) {
        throw InputError("--task: " + std::string(e.what()));
    }
    const std::string name = taskInfo(kind).name;
    // The training length L the default lengths are multiples of: the checkpoint's own task's, else the context's.
    TaskSpec trained;
    const bool trainedOnTask = TaskSpec::fromJson(loaded.info.training, trained);
    const int trainLength = taskEvalTrainLength(kind, loaded.info.training, model.config().context);
    TaskEvalOptions options;
    options.lengths = args.integerList("lengths", defaultTaskLengths(trainLength), 1, kMaxLength);
    if (args.has("depths")) {
        if (kind != TaskKind::Passkey)
            throw InputError("--depths " + args.text("depths") + " applies only to --task passkey, not to --task " +
                             name + "; allowed: leave --depths out");
        const std::string list = args.text("depths");
        for (size_t start = 0; start <= list.size();) {
            const size_t comma = std::min(list.find(',', start), list.size());
            options.depths.push_back(parseNumber(list.substr(start, comma - start), "--depths"));
            start = comma + 1;
        }
    }
    options.examples = static_cast<int>(args.integer("examples", 100, 1, 1000000));
    options.seed = static_cast<uint64_t>(args.integer("seed", 1, 0, 1LL << 62));
    options.maxLength = model.maxLength();
    try {
        checkTaskEvalOptions(kind, options);
    } catch (const InputError& e) {
        throw InputError((args.has("depths") ? "--depths " + args.text("depths") + ": " : "--lengths: ") +
                         std::string(e.what()));
    }
    printScalingNote(note, args, ctx.err);
    const bool quiet = args.has("quiet");
    if (!quiet && trainedOnTask && trained.kind != kind)
        ctx.err << "note: the checkpoint was trained on task " << taskInfo(trained.kind).name << ", not " << name
                << std::endl;
    else if (!quiet && !trainedOnTask)
        ctx.err << "note: the checkpoint was trained on text, not on a task" << std::endl;

    InterruptGuard guard;
    options.progress = [](double) { return !g_interrupted; };
    model.setCancelFlag(&g_interrupted);
    std::vector<TaskAccuracyPoint> points;
    try {
        points = evaluateTask(kind, modelPredictor(model), options);
    } catch (const RunError&) {
        model.setCancelFlag(nullptr);
        if (!g_interrupted)
            throw;
        printInterrupted(args, ctx, "during --task " + name);
        return 130;
    }
    model.setCancelFlag(nullptr);

    const bool passkey = kind == TaskKind::Passkey;
    Table table;
    table.columns = {"length", "examples", "correct"};
    if (passkey)
        table.columns.push_back("depth");
    table.columns.push_back("accuracy");
    table.integerColumns = 3;
    nlohmann::json unsupported = nlohmann::json::array();
    for (const TaskAccuracyPoint& p : points) {
        std::vector<double> row = {double(p.length), double(p.examples), p.supported ? double(p.correct) : NAN};
        if (passkey)
            row.push_back(p.depth);
        row.push_back(p.supported ? p.accuracy : NAN);
        table.rows.push_back(row);
        const std::string cell =
            "length " + std::to_string(p.length) + (passkey ? " depth " + exactText(p.depth) : std::string());
        if (!p.supported)
            unsupported.push_back({{"length", p.length}, {"reason", p.note}});
        if (quiet)
            continue;
        if (!p.supported) {
            ctx.err << cell << ": unsupported (" << p.note << ")" << std::endl;
            continue;
        }
        char line[200];
        std::snprintf(line, sizeof line, "%s: accuracy %.3f (%d of %d)", cell.c_str(), p.accuracy, p.correct,
                      p.examples);
        ctx.err << line << std::endl;
    }
    table.meta = {{"checkpoint", args.positional[0]},
                  {"config", model.config().toJson()},
                  {"step", loaded.info.step},
                  {"task", name},
                  {"length_means", taskInfo(kind).length},
                  {"train_length", trainLength},
                  {"trained_on", trainedOnTask ? taskInfo(trained.kind).name : std::string("text")},
                  {"seed", options.seed},
                  {"decoding", "greedy, exact match of the answer and its terminator"}};
    if (!unsupported.empty())
        table.meta["unsupported"] = unsupported;
    writeDataOutput(args, ctx, false, [&](std::ostream& out, DataFormat f) { writeTable(out, f, table); });
    return 0;
}

int runEval(const ParsedArgs& args, VerbContext& ctx)
{
    applyThreadsOption(args);
    if (args.has("precision") && !isModelFolder(args.positional[0]))
        throw InputError("--precision: " + args.positional[0] +
                         " is a lab checkpoint, which always computes in float32; --precision applies to a Hugging "
                         "Face model folder's matrix products");
    if (!isModelFolder(args.positional[0]))
        refuseScalingLayers(args, args.positional[0]);
    if (args.has("task")) {
        if (isModelFolder(args.positional[0]))
            return runFolderRetrieval(args, ctx); // retrieval in the folder's tokens (verbs_retrieval.cpp)
        refuseOptions("eval --task", args, {"compare", "score", "examples-out", "corpus", "precision"},
                      "they apply to a model folder's retrieval tasks; a checkpoint's tasks are generated byte by byte");
        if (args.has("o") && isImagePath(args.text("o")))
            throw InputError("-o " + args.text("o") + ": eval CHECKPOINT --task writes .csv or .json; a picture is "
                             "drawn for a model folder's --task");
        return runTaskEval(args, ctx);
    }
    const bool compare = args.has("compare");
    const std::string out = args.text("o"); // its extension is one its form writes (evalForms, checked by runCli)
    if (compare) {
        // Ctrl-C (or SIGTERM) stops at the next batch; nothing is written.
        InterruptGuard guard;
        try {
            if (args.has("o") && isImagePath(out)) {
                exportImage("eval", args, out);
                return 0;
            }
            const MethodComparisonRun run = runMethodComparison(args, ctx.err);
            writeDataOutput(args, ctx, false, [&](std::ostream& o, DataFormat f) {
                writeMethodComparison(o, f, run.curves, run.meta, run.unit);
            });
        } catch (const RunError&) {
            if (!g_interrupted)
                throw;
            printInterrupted(args, ctx, "during --compare");
            return 130;
        }
        return 0;
    }
    if (isModelFolder(args.positional[0]))
        return runFolderEval(args, ctx);
    const std::optional<std::string> method = args.has("scaling") ? std::optional(args.text("scaling")) : std::nullopt;
    std::string note;
    EvalSetup setup = evalSetupFromArgs(args, [&](Model& model) { note = applyScalingOptions(model, args, method); });
    Model& model = *setup.loaded.model;
    const EvalOptions& opt = setup.options;
    // The method and parameters in use, so no one takes the numbers for another's (plain rope's, or the checkpoint's
    // own when another method is named).
    printScalingNote(note, args, ctx.err);

    // Ctrl-C (or SIGTERM) stops at the next batch or layer; the output, written only at the end, is not written at all.
    InterruptGuard guard;
    model.setCancelFlag(&g_interrupted);
    ByteLanguageModel bytes(model);
    EvalRun run = evaluateLengths(bytes, bytesAsTokens(setup.text), opt, args.has("quiet"), ctx);
    model.setCancelFlag(nullptr);
    if (g_interrupted) { // also after the last length, before writing: still nothing written
        printInterrupted(args, ctx,
                         "at length " + std::to_string(run.interruptedAt ? run.interruptedAt : opt.lengths.back()));
        return 130;
    }
    run.table.meta = evalMeta(args, setup);
    if (!run.unsupported.empty())
        run.table.meta["unsupported"] = run.unsupported;
    writeDataOutput(args, ctx, true, [&](std::ostream& out, DataFormat f) { writeTable(out, f, run.table); });
    return 0;
}

} // namespace

MethodComparisonRun runMethodComparison(const ParsedArgs& args, std::ostream& err)
{
    const std::vector<MethodChoice> methods = parseMethodList(args.text("compare"));
    // A checkpoint and a model folder differ in how the model and its text are read; the comparison is one path.
    std::optional<EvalSetup> setup;
    std::optional<FolderEvalSetup> folder;
    std::unique_ptr<ByteLanguageModel> bytes;
    std::vector<int32_t> byteTokens;
    LanguageModel* model = nullptr;
    const std::vector<int32_t>* tokens = nullptr;
    EvalOptions opt;
    MethodComparisonRun run;
    if (isModelFolder(args.positional[0])) {
        folder = folderEvalSetupFromArgs(args, [](LanguageModel& m, const HfConfig&) { checkRotaryModel(m); });
        model = folder->model.get();
        tokens = &folder->tokens;
        opt = folder->options;
        run.context = folder->hf->config().context;
        run.scheme = folder->hf->config().scheme;
        run.meta = folderEvalMeta(args, *folder);
        run.meta["config_scaling"] = {{"scaling", folder->hf->config().scaling},
                                      {"settings", folder->hf->config().scalingSettings}};
    } else {
        setup = evalSetupFromArgs(args, [](Model& m) { checkRotaryModel(m.config()); });
        Model& byteModel = *setup->loaded.model;
        bytes = std::make_unique<ByteLanguageModel>(byteModel);
        byteTokens = bytesAsTokens(setup->text);
        model = bytes.get();
        tokens = &byteTokens;
        opt = setup->options;
        run.context = byteModel.config().context;
        run.scheme = byteModel.config().scheme;
        run.meta = evalMeta(args, *setup);
        run.meta["trained_with"] = {{"scaling", byteModel.config().scaling},
                                    {"settings", byteModel.config().scalingSettings}};
    }
    run.unit = model->tokenUnit();
    const bool quiet = args.has("quiet");
    auto next = std::make_shared<int>(1); // the next tenth to report
    opt.progress = [&err, quiet, next](double fraction) {
        const int tenth = static_cast<int>(std::floor(fraction * 10 + 1e-9));
        if (!quiet && tenth >= *next) {
            *next = tenth + 1;
            err << "methods: " << 10 * tenth << "%" << std::endl;
        }
        return !g_interrupted;
    };
    model->setCancelFlag(&g_interrupted);
    try {
        run.curves = evaluateUnderMethods(*model, *tokens, opt, methods);
    } catch (...) {
        model->setCancelFlag(nullptr);
        throw;
    }
    model->setCancelFlag(nullptr);
    if (g_interrupted)
        throw RunError("evaluation cancelled");
    if (!quiet)
        for (const MethodCurve& c : run.curves) {
            std::string line = c.label + ":";
            char cell[64];
            for (const EvalPoint& p : c.points) {
                std::snprintf(cell, sizeof cell, "  ppl(%d) %.3f", p.length, p.perplexity);
                line += cell;
            }
            err << line << std::endl;
        }
    return run;
}

int runEntropyWithCheckpoint(const std::string& scheme, const ParsedArgs& args, VerbContext& ctx)
{
    // The options the model fixes (--heads, --qk ...) are refused by the verb's usage form (registerEntropy in
    // verbs_schemes.cpp); --scaling and --set are read: the model under a length-extension method.
    applyThreadsOption(args);
    std::string note;
    LoadedCheckpoint loaded = checkpointOfScheme("entropy", scheme, args, &note); // SCHEME's method or --scaling
    Model& model = *loaded.model;
    const int layer = layerFromArgs(args, model.config());
    const std::vector<int> lengths = entropyLengthsFromArgs(args, model.maxLength());
    checkWork(args, modelForwardWork(model.config(), lengths),
              "entropy of the model's layer " + std::to_string(layer) + " over --lengths " +
                  args.text("lengths", "16,...,4096"),
              "fewer or shorter --lengths");
    const Corpus corpus = corpusFromArgs(args);
    printScalingNote(note, args, ctx.err);
    if (args.has("o") && isImagePath(args.text("o"))) {
        exportImage("entropy", args, args.text("o"));
        return 0;
    }
    const ModelEntropyCurve curve = modelEntropyCurve(model, corpus.validation, layer, lengths);
    const SchemeSpec& spec = curve.spec; // a NoPE layer of --nope-every attends without the scheme
    const std::vector<EntropyPoint>& points = curve.points;
    Table t;
    t.columns = {"length", "head", "entropy_last", "entropy_mean"};
    t.integerColumns = 2;
    t.meta = {{"scheme", spec.name()},
              {"heads", spec.heads},
              {"qk", "model"},
              {"checkpoint", args.text("checkpoint")},
              {"layer", layer},
              {"corpus", corpus.source},
              {"config", model.config().toJson()}};
    for (const EntropyPoint& p : points)
        t.rows.push_back({double(p.length), double(p.head), p.entropyLast, p.entropyMean});
    writeDataOutput(args, ctx, true, [&](std::ostream& out, DataFormat f) { writeTable(out, f, t); });
    return 0;
}

int runAttentionWithCheckpoint(const std::string& scheme, const ParsedArgs& args, VerbContext& ctx)
{
    // --q/--k/--v and the scheme's options are refused by the verb's usage form (registerAttentionVerbs in
    // verbs_attention.cpp): the model supplies them; --scaling (or SCHEME's method, "rope+yarn") and --set evaluate it
    // under a length-extension method, as eval does.
    std::string note;
    LoadedCheckpoint loaded = checkpointOfScheme("attention", scheme, args, &note);
    Model& model = *loaded.model;
    const int layer = layerFromArgs(args, model.config());
    const int N = static_cast<int>(args.integer("length", model.config().context, 1, model.maxLength()));
    const int H = model.config().heads, D = model.config().headDim();
    if (args.has("probs") || args.has("fox-bias"))
        checkMemoryEstimate(4.0 * H * double(N) * N, "probabilities or bias (H, N, N)");
    checkWork(args, modelForwardWork(model.config(), {N}), "the model's forward over --length " + std::to_string(N),
              "a shorter --length");
    const Corpus corpus = corpusFromArgs(args);
    const std::vector<uint8_t> tokens = repeatedText(corpus.validation, N); // the validation text's first N bytes
    printScalingNote(note, args, ctx.err);
    model.forward(tokens.data(), nullptr, 1, N);
    AttentionDims dims{1, H, N, D};
    if (!model.layerLogForget(layer).empty()) // fox: this text's forget gates, as the model's forward used them
        dims.logForget = model.layerLogForget(layer).data();
    writeAttentionOutputs(args, model.layerSchemeSpec(layer), dims, model.layerQueries(layer).data(),
                          model.layerKeys(layer).data(), model.layerValues(layer).data());
    if (args.has("fox-bias")) { // the per-input view's matrix, head by head
        std::vector<float> bias(static_cast<size_t>(H) * N * N);
        for (int h = 0; h < H; ++h) {
            // Row-major (N, N): Eigen's default is column-major.
            const Eigen::MatrixXf head = foxBiasOnText(model, tokens, layer, h);
            Eigen::Map<Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(
                bias.data() + static_cast<size_t>(h) * N * N, N, N) = head;
        }
        writeNpy(args.text("fox-bias"), {H, N, N}, bias.data());
    }
    return 0;
}

namespace {

std::vector<OptionDef> trainOptions()
{
    std::vector<OptionDef> options = {
        {"scheme", OptionKind::Value, "positional scheme, instead of the SCHEME word (see `schemes`)", "S"},
        corpusOption({}, "last 10% held out"),
    };
    for (const OptionDef& o : modelOptions())
        options.push_back(o);
    for (const OptionDef& o : scheduleOptions())
        options.push_back(o);
    for (const OptionDef& o : std::vector<OptionDef>{
             {"drop-positions", OptionKind::Flag,
              "with --init of a rope checkpoint: continue it as NoPE (scheme none), every rotation removed, weights "
              "and AdamW state kept (DroPE's recalibration)"},
             taskOptions()[0],
             taskOptions()[1],
             {"data-seed", OptionKind::Value, "seed of the training windows or task examples (default: --seed)", "S"},
             threadsOption(),
             {"log-every", OptionKind::Value, "progress every N steps (default steps/50)", "N"},
             {"save-every", OptionKind::Value, "also write the checkpoint every N steps (default: only at the end)",
              "N"},
             {"eval-bytes", OptionKind::Value,
              "validation bytes scored after training (default 65536; 0 skips the check and says so)", "N"},
             {"json", OptionKind::Flag, "progress as JSON lines on stderr"},
             {"quiet", OptionKind::Flag, "no start line and no step progress on stderr (the final line stays)"},
             {"o", OptionKind::Value, "output checkpoint (written atomically); required", "MODEL.safetensors", false,
              true}})
        options.push_back(o);
    return options;
}

// A fresh run needs SCHEME (or --scheme); one continuing a checkpoint (--init) has the checkpoint's.
std::vector<UsageForm> trainForms()
{
    std::vector<std::string> fresh, continued;
    for (const OptionDef& o : trainOptions()) {
        continued.push_back(o.name);
        if (o.name != "init" && o.name != "drop-positions")
            fresh.push_back(o.name);
    }
    return {{"SCHEME", fresh, {}, {}}, {"[SCHEME] --init MODEL.safetensors", continued, {}, "init"}};
}

} // namespace

namespace {

// Plain eval (the checkpoint's scaling, or --scaling with --set) and eval --compare (one curve per method, which
// replaces the checkpoint's scaling: --scaling and --set would be ignored, so that form refuses them).
std::vector<UsageForm> evalForms()
{
    const std::vector<std::string> shared = {"corpus",  "split", "lengths", "mode",      "stride", "max-bytes",
                                             "threads", "quiet", "o",       "precision", "json"};
    UsageForm plain{"MODEL.safetensors", shared, {}, {}, {{"o", dataExtensions()}}};
    plain.options.insert(plain.options.end(), {"scaling", "set", "scaling-layers"});
    UsageForm compare{
        "MODEL.safetensors --compare METHODS", shared, {}, "compare", {{"o", dataAndPictureExtensions(false)}}};
    compare.options.push_back("compare");
    for (const OptionDef& o : pictureOptions())
        compare.options.push_back(o.name);
    // A checkpoint's byte tasks, or a model folder's retrieval tasks (--compare, --score, --examples-out, -o .png).
    UsageForm task{"MODEL.safetensors|DIR --task NAME",
                   {"task", "lengths", "depths", "examples", "seed", "scaling", "set", "threads", "quiet", "o", "json",
                    "compare", "score", "examples-out", "corpus", "precision"},
                   {},
                   "task",
                   {{"o", dataAndPictureExtensions(false)}}};
    for (const OptionDef& o : pictureOptions())
        task.options.push_back(o.name);
    return {plain, task, compare}; // --task before --compare: a folder's task takes --compare too
}

std::vector<OptionDef> evalOptions()
{
    std::vector<OptionDef> options = {
        corpusOption(),
        {"split", OptionKind::Value, "validation (default, the last 10%), train or all", "NAME"},
        {"lengths", OptionKind::Value,
         "comma-separated window lengths (default L,2L,4L,8L,16L); each must fit the text scored; with --task the "
         "task's lengths (default L/2, L, 3L/2, ..., 4L of its training length L)",
         "N,N,..."},
        {"task", OptionKind::Value,
         "exact-match accuracy of the greedy answers on a task (copy, reverse, addition, passkey) per length, and per "
         "depth for passkey, instead of perplexity; a model folder's retrieval tasks in its own tokens: passkey, "
         "niah-single, niah-multikey, niah-multivalue, variable-tracking, per method, length and depth",
         "NAME"},
        {"depths", OptionKind::Value,
         "with --task passkey: comma-separated needle depths in [0, 1], 0 = start (default 0,0.25,0.5,0.75,1; a "
         "model folder's tasks: 0,0.5,1)",
         "D,D,..."},
        {"examples", OptionKind::Value,
         "with --task: test examples per length (and depth) (default 100; a model folder's: 1 per method, length and "
         "depth)",
         "N"},
        {"seed", OptionKind::Value, "with --task: seed of the test examples (default 1)", "S"},
        {"mode", OptionKind::Value, "nonoverlapping (default) or sliding", "nonoverlapping|sliding"},
        {"stride", OptionKind::Value, "sliding: tokens scored per window (default length/2)", "S"},
        {"max-bytes", OptionKind::Value, "score at most this many bytes (default: all)", "N"},
        threadsOption(),
        precisionOption(),
        {"quiet", OptionKind::Flag, "no per-length results and no sliding progress on stderr"},
        scalingOption(),
        {"set", OptionKind::Repeated,
         "a parameter of the --scaling method (e.g. factor=16), or logit-c=c: scores times 1 + c ln(n/L) past L",
         "NAME=VALUE"},
        scalingLayersOption(),
        {"compare", OptionKind::Value,
         "evaluate a rope/xpos model under each method: methods separated by ',', each with optional "
         "':NAME=VALUE' settings (e.g. none,pi,yarn:factor=8:beta-fast=16,rerope:window=32); unset parameters: factor "
         "= longest length / L (dynamic-ntk keeps 1), window = L/2, others their defaults; logit-c=c with any method "
         "(none:logit-c=0.1)",
         "METHODS"}};
    for (const OptionDef& o : retrievalOptions())
        options.push_back(o);
    for (const OptionDef& o : pictureOptions())
        options.push_back(o);
    options.push_back({"o", OptionKind::Value,
                       "output file: .csv .json .npy (default: CSV on stdout); with --compare, or a model folder's "
                       "--task, .csv .json .png .svg .pdf",
                       "FILE"});
    options.push_back(jsonOption());
    return options;
}

} // namespace

namespace {

// fire-curve: a FIRE checkpoint's learned bias function of the distance at one query row, beside its untrained prior.
int runFireCurve(const ParsedArgs& args, VerbContext& ctx)
{
    const LoadedCheckpoint loaded = loadCheckpoint(args.positional[0]);
    const int context = loaded.model->config().context;
    const int row = static_cast<int>(args.integer("row", context - 1, 0, kMaxLength - 1));
    const FireCurves curves = fireCurves(loaded.model->schemeSpec(), row); // refuses other schemes
    Table t = fireCurvesTable(curves);
    t.meta["checkpoint"] = args.positional[0];
    t.meta["context"] = context;
    writeDataOutput(args, ctx, true, [&](std::ostream& out, DataFormat f) { writeTable(out, f, t); });
    return 0;
}

} // namespace

void registerModelVerbs()
{
    registerVerb({"fire-curve",
                  "MODEL.safetensors",
                  "a FIRE checkpoint's learned bias against distance at one query row, beside its untrained prior",
                  {{"row", OptionKind::Value, "query row m (default: the training context - 1)", "M"},
                   {"o", OptionKind::Value, "output .csv, .json or .npy (default: CSV on stdout)", "FILE"},
                   jsonOption()},
                  1,
                  1,
                  runFireCurve,
                  {},
                  {{"o", dataExtensions()}}});
    registerVerb({"train",
                  "SCHEME",
                  "train a byte-level transformer with a positional scheme; Ctrl-C stops and keeps the checkpoint",
                  trainOptions(),
                  0,
                  1,
                  runTrain,
                  trainForms(),
                  {{"o", {}, checkCheckpointFileName}},
                  "SCHEME may also be given as --scheme S, and may name a method (rope+yarn, as --scaling yarn). With "
                  "--init it may be left out: the run continues the checkpoint's scheme (a SCHEME given must be the "
                  "checkpoint's)."});
    registerVerb({"eval",
                  "MODEL.safetensors",
                  "loss, perplexity and bits per byte of a checkpoint at several lengths (train short, test long); "
                  "Ctrl-C stops (exit 130) and writes nothing",
                  evalOptions(),
                  1,
                  1,
                  runEval,
                  evalForms(),
                  {}, // each form's own (evalForms)
                  "A length longer than the text scored (the held-out split, or --max-bytes) is refused before any "
                  "work, naming the text's size: such a window could not be filled."});
}

} // namespace plab::cli
