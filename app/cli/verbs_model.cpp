// What the model verbs share: a model, its schedule and a task read from the command line; the verbs' registration.
#include "verbs_model.h"

#include "cli.h"

#include "base/errors.h"
#include "base/limits.h"
#include "model/checkpoint.h"
#include "model/corpus.h"
#include "model/model.h"
#include "model/presets.h"
#include "runs/method_comparison.h"
#include "runs/training.h"
#include "schemes/schemes.h"
#include "tasks/tasks.h"
#include "views/entropy.h"

#include <cstdio>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace plab::cli {

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

void registerModelVerbs()
{
    registerFireCurveVerb();
    registerTrainVerb();
    registerEvalVerb();
}

} // namespace plab::cli
