// `positionlab-cli eval`: perplexity at several lengths of a checkpoint or a model folder, and eval --compare.
#include "verbs_model.h"

#include "cli.h"

#include "base/errors.h"
#include "base/limits.h"
#include "hf/hf_config.h"
#include "hf/hf_model.h"
#include "hf/tokenizer.h"
#include "model/checkpoint.h"
#include "model/corpus.h"
#include "model/model.h"
#include "runs/eval_check.h"
#include "runs/evaluation.h"
#include "runs/language_model.h"
#include "runs/method_comparison.h"
#include "runs/training.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace plab::cli {

namespace {

std::atomic<bool>& g_interrupted = interruptFlag();

} // namespace

namespace {

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

int runEval(const ParsedArgs& args, VerbContext& ctx)
{
    applyThreadsOption(args);
    if (args.has("precision") && !isModelFolder(args.positional[0]))
        throw InputError("--precision: " + args.positional[0] +
                         " is a lab checkpoint, which always computes in float32; --precision applies to a Hugging "
                         "Face model folder's matrix products");
    if (!isModelFolder(args.positional[0]))
        refuseScalingLayers(args, args.positional[0]);
    if (args.has("task") || args.has("examples-in")) {
        if (isModelFolder(args.positional[0]))
            return runFolderRetrieval(args, ctx); // retrieval in the folder's tokens (verbs_retrieval.cpp)
        if (args.has("examples-in"))
            throw InputError("--examples-in: " + args.positional[0] +
                             " is a lab checkpoint; --examples-in scores a prompts file through a model folder "
                             "(export the checkpoint with `export CHECKPOINT -o DIR` to read its prompts that way)");
        refuseOptions(
            "eval --task", args, {"compare", "score", "corpus", "precision", "allow-long"},
            "they apply to a model folder's retrieval tasks; a checkpoint's tasks are generated byte by byte");
        if (args.has("o") && isImagePath(args.text("o")))
            throw InputError("-o " + args.text("o") +
                             ": eval CHECKPOINT --task writes .csv or .json; a picture is "
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
    compare.options.insert(compare.options.end(), {"compare", "scaling-layers"});
    for (const OptionDef& o : pictureOptions())
        compare.options.push_back(o.name);
    // A checkpoint's byte tasks, or a model folder's retrieval tasks (--compare, --score, --examples-out, -o .png).
    UsageForm task{"MODEL.safetensors|DIR --task NAME",
                   {"task", "lengths", "depths", "examples", "seed", "scaling", "set", "threads", "quiet", "o", "json",
                    "compare", "score", "examples-out", "corpus", "precision", "scaling-layers", "allow-long"},
                   {},
                   "task",
                   {{"o", dataAndPictureExtensions(false)}}};
    // A model folder scoring the prompts of a file (an earlier run's, or a checkpoint's task examples).
    UsageForm prompts{"DIR --examples-in FILE.jsonl",
                      {"examples-in", "threads", "quiet", "o", "json", "compare", "score", "examples-out", "precision",
                       "scaling-layers", "allow-long"},
                      {},
                      "examples-in",
                      {{"o", dataAndPictureExtensions(false)}}};
    for (const OptionDef& o : pictureOptions()) {
        task.options.push_back(o.name);
        prompts.options.push_back(o.name);
    }
    return {plain, task, prompts, compare}; // --task before --compare: a folder's task takes --compare too
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
    options.push_back({"allow-long", OptionKind::Flag,
                       "a model folder's --task or --examples-in: run even when its estimate exceeds 10 minutes "
                       "(refused by default, before computing)"});
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

void printInterrupted(const ParsedArgs& args, VerbContext& ctx, const std::string& where)
{
    ctx.err << "interrupted " << where << "; nothing written"
            << (args.has("o") ? " (" + args.text("o") + " is unchanged)" : std::string()) << std::endl;
}

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
        folder = folderEvalSetupFromArgs(args, [&](LanguageModel& m, const HfConfig& config) {
            checkRotaryModel(m);
            // every method of the list reaches these layer types
            const HfScalingLayers layers = hfScalingLayersByName(args.text("scaling-layers", "full"));
            checkHfMethodsReach(config, methodNames(methods), layers);
            dynamic_cast<HfLanguageModel&>(m).setScalingLayers(layers);
        });
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

void registerEvalVerb()
{
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
