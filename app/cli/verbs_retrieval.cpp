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
#include "runs/language_model.h"
#include "runs/retrieval_runs.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>

namespace plab::cli {

namespace {

std::vector<double> depthsFromText(const std::string& list)
{
    std::vector<double> depths;
    for (size_t start = 0; start <= list.size();) {
        const size_t comma = std::min(list.find(',', start), list.size());
        depths.push_back(parseNumber(list.substr(start, comma - start), "--depths"));
        start = comma + 1;
    }
    return depths;
}

std::string methodsText(const std::vector<MethodChoice>& methods)
{
    std::string text;
    for (const MethodChoice& m : methods)
        text += (text.empty() ? "" : ",") + methodChoiceText(m);
    return text;
}

} // namespace

RetrievalSetup retrievalSetupFromArgs(const ParsedArgs& args)
{
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
    s.options.depths = args.has("depths") ? depthsFromText(args.text("depths")) : defaults.depths;
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
    const size_t cells = s.methods.size() * s.options.lengths.size() * s.options.depths.size();
    if (!quiet) {
        char line[320];
        std::snprintf(line, sizeof line,
                      "retrieval: task %s, %zu method(s) x %zu length(s) x %zu depth(s) x %d example(s) = %zu cells, "
                      "%s scoring; estimated %s at %.0f GFLOP/s (2 free cores)",
                      retrievalTaskInfo(s.options.kind).name.c_str(), s.methods.size(), s.options.lengths.size(),
                      s.options.depths.size(), s.options.examples, cells, retrievalScoringName(s.options.scoring),
                      clockText(s.seconds).c_str(), kHfEvalFlopsPerSecond / 1e9);
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
    RetrievalRun run = runRetrieval(*s.model, *s.generator, s.options, hooks);
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
        const RetrievalRun run = runRetrievalFromArgs(args, setup, ctx.err, [&](const RetrievalRecord& r) {
            if (args.has("examples-out"))
                lines += retrievalRecordJson(r).dump() + "\n";
        });
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
        ctx.err << "interrupted during --task " << args.text("task") << "; nothing written"
                << (args.has("o") ? " (" + out + " is unchanged)" : std::string()) << std::endl;
        return 130;
    }
    return 0;
}

std::vector<OptionDef> retrievalOptions()
{
    return {{"score", OptionKind::Value,
             "with a model folder's --task: exact (default; the greedy answer's tokens) or loglik (the answer's "
             "log-likelihood rank among 10 candidates, correct at rank 1)",
             "exact|loglik"},
            {"examples-out", OptionKind::Value,
             "with a model folder's --task: one JSON object per example (method, length, depth, prompt_ids, "
             "needle_span, answer_ids, output_ids, correct)",
             "FILE.jsonl"}};
}

} // namespace plab::cli
