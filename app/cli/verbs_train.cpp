// `positionlab-cli train`: a byte-level transformer trained from a scheme (or continued from --init), or on a task.
#include "verbs_model.h"

#include "cli.h"

#include "base/errors.h"
#include "model/checkpoint.h"
#include "model/corpus.h"
#include "model/model.h"
#include "model/optimizer.h"
#include "runs/eval_check.h"
#include "runs/evaluation.h"
#include "runs/task_runs.h"
#include "runs/training.h"
#include "tasks/task_accuracy.h"
#include "tasks/tasks.h"

#include <nlohmann/json.hpp>

#include <omp.h>

#include <atomic>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace plab::cli {

namespace {

std::atomic<bool>& g_interrupted = interruptFlag();

} // namespace

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

void registerTrainVerb()
{
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
}

} // namespace plab::cli
