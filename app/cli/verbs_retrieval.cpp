// eval DIR --task NAME: a retrieval task in a Hugging Face folder's own tokens under methods
// (core/runs/retrieval_runs).
#include "base/atomic_file.h"
#include "base/errors.h"
#include "base/limits.h"
#include "cli.h"
#include "hf/hf_config.h"
#include "hf/hf_model.h"
#include "hf/tokenizer.h"
#include "model/corpus.h"
#include "runs/generation.h"
#include "runs/language_model.h"
#include "runs/retrieval_runs.h"
#include "schemes/rotary_scaling.h"
#include "tasks/task_accuracy.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>

namespace plab::cli {

namespace {

std::string methodsText(const std::vector<MethodChoice>& methods)
{
    std::string text;
    for (const MethodChoice& m : methods)
        text += (text.empty() ? "" : ",") + methodChoiceText(m);
    return text;
}

} // namespace

namespace {

// eval DIR --examples-in FILE: the prompts of the file, scored as they are under the methods.
RetrievalSetup promptsSetupFromArgs(const ParsedArgs& args)
{
    // --task, --lengths, --depths, --examples, --seed and --corpus (they generate prompts) are refused by the usage
    // form `eval DIR --examples-in FILE.jsonl`, which does not list them.
    RetrievalSetup s;
    const std::string dir = args.positional[0];
    readHfConfig(dir); // config.json first: a directory that is no model folder is refused naming it
    s.model = std::make_unique<HfModel>(dir, precisionFromArgs(args));
    const HfConfig& c = s.model->config();
    s.prompts = readRetrievalPrompts(args.text("examples-in"), c.vocab);
    const HfLanguageModel language(*s.model);
    s.options.scoring = retrievalScoringFromName(args.text("score", "exact"));
    s.options.lengthsInTokens = false;
    s.options.methods = args.has("compare") ? parseMethodList(args.text("compare")) : std::vector<MethodChoice>{};
    if (args.has("scaling-layers"))
        s.options.scalingLayers = hfScalingLayersByName(args.text("scaling-layers"));
    checkRetrievalPrompts(s.prompts, c, s.options);
    s.methods = retrievalPromptMethods(language, s.prompts, s.options);
    size_t examples = 0;
    for (const RetrievalPromptCell& cell : s.prompts) {
        if (std::find(s.options.lengths.begin(), s.options.lengths.end(), cell.length) == s.options.lengths.end())
            s.options.lengths.push_back(cell.length);
        if (std::find(s.options.depths.begin(), s.options.depths.end(), cell.depth) == s.options.depths.end())
            s.options.depths.push_back(cell.depth);
        examples += cell.examples.size();
        for (const RetrievalExample& e : cell.examples)
            s.seconds += static_cast<double>(s.methods.size()) * c.prefillFlops(static_cast<int>(e.promptIds.size())) /
                         kHfEvalFlopsPerSecond;
    }
    checkWorkSeconds(args, s.seconds, "retrieval (--examples-in " + args.text("examples-in") + ")",
                     "a file of fewer or shorter prompts, or fewer --compare methods");
    std::sort(s.options.depths.begin(), s.options.depths.end());
    s.options.examples = 0; // per cell: the file's (a cell may hold more or fewer than another)
    for (const RetrievalPromptCell& cell : s.prompts)
        s.options.examples = std::max(s.options.examples, static_cast<int>(cell.examples.size()));
    s.meta = {{"model", dir},
              {"model_type", c.modelType},
              {"context", c.context},
              {"precision", hfPrecisionName(s.model->precision())},
              {"task", "prompts of " + args.text("examples-in")},
              {"score", retrievalScoringName(s.options.scoring)},
              {"prompts", args.text("examples-in")},
              {"examples_total", examples},
              {"lengths_in", "as the prompts file gives them"},
              {"methods", methodsText(s.options.methods.empty() ? std::vector<MethodChoice>{s.methods.front().choice}
                                                                : s.options.methods)}};
    return s;
}

} // namespace

std::vector<double> depthsOption(const ParsedArgs& args)
{
    const std::string list = args.text("depths");
    std::vector<double> depths;
    for (size_t start = 0; start <= list.size();) {
        const size_t comma = std::min(list.find(',', start), list.size());
        depths.push_back(parseNumber(list.substr(start, comma - start), "--depths"));
        start = comma + 1;
    }
    return depths;
}

RetrievalSetup retrievalSetupFromArgs(const ParsedArgs& args)
{
    if (args.has("examples-in"))
        return promptsSetupFromArgs(args);
    RetrievalSetup s;
    const std::string dir = args.positional[0];
    readHfConfig(dir); // config.json first: a directory that is no model folder is refused naming it
    try {
        s.options.kind = retrievalTaskByName(args.text("task")).kind;
    } catch (const InputError& e) {
        throw InputError("--task: " + std::string(e.what()));
    }
    s.tokenizer = std::make_unique<hf::Tokenizer>(hf::Tokenizer::fromFolder(dir));
    const Corpus corpus = corpusFromArgs(args);
    s.generator = std::make_unique<RetrievalGenerator>(*s.tokenizer, retrievalHaystack(corpus), corpus.source);
    s.model = std::make_unique<HfModel>(dir, precisionFromArgs(args));
    const HfConfig& c = s.model->config();
    const HfLanguageModel language(*s.model);
    const RetrievalOptions defaults = retrievalDefaults(
        s.options.kind, c.context, language.scaling(), language.rotary(), hfMaxLength(c),
        s.generator->minimumLength(s.options.kind), [&c](int n) { return c.prefillFlops(n); }, kHfEvalFlopsPerSecond);
    s.options.lengths = args.integerList("lengths", defaults.lengths, 1, kMaxLength);
    s.options.depths = args.has("depths") ? depthsOption(args) : defaults.depths;
    s.options.examples = static_cast<int>(args.integer("examples", defaults.examples, 1, 1000000));
    s.options.seed = static_cast<uint64_t>(args.integer("seed", 1, 0, 1LL << 62));
    s.options.scoring = retrievalScoringFromName(args.text("score", "exact"));
    s.options.methods = args.has("compare") ? parseMethodList(args.text("compare")) : defaults.methods;
    if (args.has("scaling-layers"))
        s.options.scalingLayers = hfScalingLayersByName(args.text("scaling-layers"));
    checkRetrievalOptions(s.options, c, *s.generator);
    s.methods = retrievalMethods(language, s.options); // every method checked before any work
    s.seconds =
        retrievalSeconds([&c](int n) { return c.prefillFlops(n); }, s.options, s.methods.size(), kHfEvalFlopsPerSecond);
    checkWorkSeconds(args, s.seconds, "retrieval (task " + retrievalTaskInfo(s.options.kind).name + ")",
                     "shorter or fewer --lengths, fewer --depths, --examples or methods");
    s.meta = {{"model", dir},
              {"model_type", c.modelType},
              {"context", c.context},
              {"precision", hfPrecisionName(s.model->precision())},
              {"task", retrievalTaskInfo(s.options.kind).name},
              {"score", retrievalScoringName(s.options.scoring)},
              {"seed", s.options.seed},
              {"examples", s.options.examples},
              {"corpus", corpus.source},
              {"haystack_tokens", s.generator->haystackTokens()},
              {"lengths_in", "prompt tokens (special tokens included), exact"},
              {"methods", methodsText(s.options.methods.empty() ? std::vector<MethodChoice>{s.methods.front().choice}
                                                                : s.options.methods)}};
    return s;
}

RetrievalRun runRetrievalFromArgs(const ParsedArgs& args, RetrievalSetup& s, std::ostream& err,
                                  const std::function<void(const RetrievalRecord&)>& exampleDone)
{
    const bool quiet = args.has("quiet");
    const size_t cells =
        s.methods.size() * (s.generator ? s.options.lengths.size() * s.options.depths.size() : s.prompts.size());
    if (!quiet) {
        char line[320];
        std::snprintf(line, sizeof line,
                      "retrieval: task %s, %zu method(s) x %zu length(s) x %zu depth(s) x %d example(s) = %zu cells, "
                      "%s scoring; estimated %s at %.0f GFLOP/s (2 free cores)",
                      retrievalTaskInfo(s.options.kind).name.c_str(), s.methods.size(), s.options.lengths.size(),
                      s.options.depths.size(), s.options.examples, cells, retrievalScoringName(s.options.scoring),
                      clockText(s.seconds).c_str(), kHfEvalFlopsPerSecond / 1e9);
        if (!s.generator)
            std::snprintf(line, sizeof line,
                          "retrieval: %zu prompt(s) of %s in %zu cell(s) x %zu method(s), %s scoring; estimated %s "
                          "at %.0f GFLOP/s (2 free cores)",
                          s.meta.value("examples_total", size_t{0}), args.text("examples-in").c_str(), s.prompts.size(),
                          s.methods.size(), retrievalScoringName(s.options.scoring), clockText(s.seconds).c_str(),
                          kHfEvalFlopsPerSecond / 1e9);
        err << line << std::endl;
    }
    const auto start = std::chrono::steady_clock::now();
    RetrievalHooks hooks;
    hooks.progress = [](double) { return !interruptFlag().load(); };
    hooks.exampleDone = exampleDone;
    size_t done = 0;
    hooks.cellDone = [&](const RetrievalCell& c) {
        ++done;
        if (quiet)
            return;
        const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        char line[320];
        std::snprintf(line, sizeof line,
                      "[%zu/%zu] %s, length %d, depth %g: accuracy %.3f (%d of %d); elapsed %s, "
                      "ETA %s",
                      done, cells, s.methods[c.method].label.c_str(), c.length, c.depth, c.accuracy, c.correct,
                      c.examples, clockText(elapsed).c_str(),
                      clockText(elapsed / static_cast<double>(done) * static_cast<double>(cells - done)).c_str());
        err << line << std::endl;
    };
    RetrievalRun run = s.generator ? runRetrieval(*s.model, *s.generator, s.options, hooks)
                                   : runRetrievalOnPrompts(*s.model, s.prompts, s.options, hooks);
    if (run.stopped)
        throw RunError("retrieval cancelled");
    return run;
}

int runFolderRetrieval(const ParsedArgs& args, VerbContext& ctx)
{
    for (const char* option : {"scaling", "set"})
        if (args.has(option))
            throw InputError(std::string("eval DIR --task: --") + option +
                             " is not read here; allowed: --compare METHODS (e.g. none,yarn:factor=4)");
    const std::string out = args.text("o");
    const std::string examplesOut = args.text("examples-out");
    if (args.has("examples-out"))
        checkOutputPath("examples-out", examplesOut, {".jsonl"});
    InterruptGuard guard;
    try {
        if (args.has("o") && isImagePath(out)) {
            exportImage("eval", args, out); // the heatmaps, one per method (verbs_render.cpp)
            return 0;
        }
        RetrievalSetup setup = retrievalSetupFromArgs(args);
        std::string lines;
        // Only with --examples-out: a per-example hook makes core complete each wrong answer past its first wrong
        // token (a second forward of the prompt), which doubled a run of a model that gets little right.
        std::function<void(const RetrievalRecord&)> writeExample;
        if (args.has("examples-out"))
            writeExample = [&](const RetrievalRecord& r) { lines += retrievalRecordJson(r).dump() + "\n"; };
        const RetrievalRun run = runRetrievalFromArgs(args, setup, ctx.err, writeExample);
        if (args.has("examples-out"))
            writeFileAtomically(examplesOut, lines);
        nlohmann::json meta = setup.meta;
        meta["decoding"] = setup.options.scoring == RetrievalScoring::Exact
                               ? "greedy, exact match of the answer's tokens (one teacher-forced forward)"
                               : "the answer's log-likelihood rank among 10 candidates, correct at rank 1";
        writeDataOutput(args, ctx, false, [&](std::ostream& o, DataFormat f) { writeRetrievalRun(o, f, run, meta); });
    } catch (const RunError&) {
        if (!interruptFlag())
            throw;
        ctx.err << "interrupted during " << (args.has("examples-in") ? "--examples-in" : "--task " + args.text("task"))
                << "; nothing written" << (args.has("o") ? " (" + out + " is unchanged)" : std::string()) << std::endl;
        return 130;
    }
    return 0;
}

std::function<void(const TaskExample&, const uint8_t*)> taskExampleWriter(const ParsedArgs& args, Model& model,
                                                                          std::string& lines)
{
    checkOutputPath("examples-out", args.text("examples-out"), {".jsonl"});
    const std::string method = model.config().scaling.empty() ? std::string("none") : model.config().scaling;
    const std::string label = schemeLabel(model.schemeSpec());
    return [&model, &lines, method, label](const TaskExample& example, const uint8_t* argmax) {
        std::vector<int> output = greedyAnswerPrefix(example, argmax);
        const size_t answerBytes = static_cast<size_t>(example.answerBytes());
        if (output.size() < answerBytes) {
            // Wrong: what greedy decoding goes on to write, as many bytes as the answer has.
            std::vector<int> text(example.bytes.begin(), example.bytes.begin() + example.answerStart);
            text.insert(text.end(), output.begin(), output.end());
            GenerateOptions greedy;
            greedy.maxNew = static_cast<int>(answerBytes - output.size());
            const GenerateResult more = generate(model, text, greedy);
            output.insert(output.end(), more.ids.begin(), more.ids.end());
        }
        lines += taskExampleRecordJson(example, output, method, label).dump() + "\n";
    };
}

std::vector<OptionDef> retrievalOptions()
{
    return {
        {"score", OptionKind::Value,
         "with a model folder's --task: exact (default; the greedy answer's tokens) or loglik (the answer's "
         "log-likelihood rank among 10 candidates, correct at rank 1)",
         "exact|loglik"},
        {"examples-in", OptionKind::Value,
         "a model folder: score the prompts of a JSON-lines file (prompt_ids, answer_ids, length, depth per line, as "
         "--examples-out writes them, or a checkpoint's task examples) under --compare's methods, instead of a "
         "--task's generated ones",
         "FILE.jsonl"},
        {"examples-out", OptionKind::Value,
         "with --task or --examples-in: one JSON object per example (method, length, depth, prompt_ids, "
         "needle_span, answer_ids, output_ids, correct); a checkpoint's task examples in the same fields, its "
         "byte ids as prompt_ids",
         "FILE.jsonl"}};
}

} // namespace plab::cli
