// A retrieval task on a Hugging Face folder under methods: the cells, their defaults and estimate, the data written.
#include "runs/retrieval_runs.h"

#include "attention/decode.h"
#include "base/errors.h"
#include "hf/hf_config.h"
#include "hf/hf_model.h"
#include "hf/tokenizer.h"
#include "model/corpus.h"
#include "runs/generation.h"
#include "runs/language_model.h"
#include "schemes/rotary_scaling.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ostream>

namespace plab {

std::string retrievalHaystack(const Corpus& corpus)
{
    std::vector<uint8_t> all = corpus.train;
    all.insert(all.end(), corpus.validation.begin(), corpus.validation.end());
    return wholeUtf8Characters(all);
}

RetrievalScoring retrievalScoringFromName(std::string_view name)
{
    if (name == "exact")
        return RetrievalScoring::Exact;
    if (name == "loglik")
        return RetrievalScoring::Loglik;
    throw InputError("--score " + std::string(name) +
                     " is not allowed; allowed: exact (the greedy answer), loglik "
                     "(the answer's log-likelihood rank among " +
                     std::to_string(kRetrievalCandidates) + " candidates)");
}

const char* retrievalScoringName(RetrievalScoring scoring)
{
    return scoring == RetrievalScoring::Exact ? "exact" : "loglik";
}

void checkRetrievalOptions(const RetrievalOptions& options, const HfConfig& config, const RetrievalGenerator& generator)
{
    if (options.lengths.empty())
        throw InputError("--lengths: no lengths given; allowed: one or more prompt lengths in tokens");
    if (options.depths.empty())
        throw InputError("--depths: no depths given; allowed: one or more depths in [0, 1]");
    if (options.examples < 1)
        throw InputError("--examples " + std::to_string(options.examples) + " is not allowed; allowed: at least 1");
    for (int length : options.lengths)
        try {
            checkHfLength(config, length);
        } catch (const InputError& e) {
            throw InputError("--lengths: " + std::string(e.what()));
        }
    generator.check(options.kind, options.lengths, options.depths);
    checkHfMethodsReach(config, methodNames(options.methods), options.scalingLayers);
}

std::vector<RetrievalMethod> retrievalMethods(const HfLanguageModel& model, const RetrievalOptions& options)
{
    std::vector<MethodChoice> choices = options.methods;
    if (choices.empty())
        choices.push_back({model.scaling(), {}});
    else
        checkRotaryModel(model);
    std::vector<RetrievalMethod> methods;
    for (const MethodChoice& choice : choices) {
        for (const RetrievalMethod& m : methods)
            if (m.choice.method == choice.method)
                throw InputError("methods: method '" + choice.method + "' is given twice; each method may appear once");
        RetrievalMethod m;
        m.choice = choice;
        m.positions = model.positionsUnder(choice.method, resolvedMethodSettings(model, choice, options.lengths));
        m.params = m.positions.scalingParams;
        m.label = model.rotary() ? methodCurveLabel(model.scheme(), rotaryMethodByName(choice.method), m.params)
                                 : model.scheme();
        methods.push_back(std::move(m));
    }
    return methods;
}

nlohmann::json retrievalRecordJson(const RetrievalRecord& r)
{
    return {{"method", r.method.choice.method},
            {"label", r.method.label},
            {"length", r.cell.length},
            {"depth", r.cell.depth},
            {"prompt_ids", r.example.promptIds},
            {"needle_span", {r.example.needleStart, r.example.needleEnd}},
            {"answer_ids", r.example.answerIds},
            {"answer", r.example.answerText},
            {"output_ids", r.score.outputIds},
            {"answer_loglik", r.score.answerLogLik},
            {"rank", r.score.rank},
            {"correct", r.score.correct}};
}

int retrievalForwardsPerExample(RetrievalScoring scoring)
{
    return scoring == RetrievalScoring::Exact ? 1 : kRetrievalCandidates;
}

namespace {

// The greedy answer past its first wrong token, as many tokens as the answer has (what --examples-out shows of a
// wrong example): decoded with a cache from prompt + the output so far, or, under a method that remaps positions
// (no cache has one placement for them), one forward per further token.
std::vector<int> completedGreedyAnswer(const HfModel& model, const HfPositions& positions, const RetrievalExample& e,
                                       std::vector<int> output)
{
    const size_t n = e.answerIds.size();
    if (output.size() >= n)
        return output;
    std::vector<int> ids = e.promptIds;
    ids.insert(ids.end(), output.begin(), output.end());
    GenerateOptions greedy; // chooseToken's greedy rule: the lowest id of equal logits, as scoreRetrievalExact's
    uint64_t state = 0;
    const int vocab = model.config().vocab;
    if (decodeUnsupportedReason(positions.spec).empty()) {
        HfKvCache cache(positions, static_cast<int>(ids.size() + n));
        std::vector<float> logits = model.prefill(cache, ids);
        while (true) {
            output.push_back(chooseToken(logits.data(), vocab, greedy, state));
            if (output.size() >= n)
                break;
            logits = model.decode(cache, output.back());
        }
        return output;
    }
    while (output.size() < n) {
        const HfMatrix row = model.tailLogits(ids, positions, 1);
        output.push_back(chooseToken(row.row(0).data(), vocab, greedy, state));
        ids.push_back(output.back());
    }
    return output;
}

struct PlannedCell {
    int length = 0;
    double depth = 0;
    double tokens = 0; // prompt tokens its examples read, for the progress
};
using CellPrompts = std::function<std::vector<RetrievalExample>(size_t cell)>;

// Every method over every planned cell, the prompts of a cell the same for every method.
RetrievalRun scoreRetrievalCells(const HfModel& model, const RetrievalOptions& options,
                                 std::vector<RetrievalMethod> methods, const std::vector<PlannedCell>& plan,
                                 const CellPrompts& prompts, const RetrievalHooks& hooks)
{
    RetrievalRun run;
    run.methods = std::move(methods);
    double total = 0, done = 0; // progress in prompt tokens read (the cost of the forwards, a fair proxy)
    for (const PlannedCell& c : plan)
        total += c.tokens;
    total *= static_cast<double>(run.methods.size());
    const bool complete = hooks.exampleDone && options.scoring == RetrievalScoring::Exact;
    for (size_t m = 0; m < run.methods.size(); ++m) {
        const HfPositions positions(run.methods[m].positions, options.scalingLayers);
        const TailLogits logits = [&](const std::vector<int>& ids, int rows) {
            return model.tailLogits(ids, positions, rows);
        };
        for (size_t i = 0; i < plan.size(); ++i) {
            RetrievalCell cell{m, plan[i].length, plan[i].depth};
            double ranks = 0;
            for (const RetrievalExample& e : prompts(i)) {
                if (hooks.progress && !hooks.progress(total > 0 ? done / total : 0)) {
                    run.stopped = true;
                    return run;
                }
                RetrievalScore s = options.scoring == RetrievalScoring::Exact ? scoreRetrievalExact(e, logits)
                                                                              : scoreRetrievalLoglik(e, logits);
                ++cell.examples;
                cell.correct += s.correct ? 1 : 0;
                ranks += s.rank;
                done += static_cast<double>(e.promptIds.size());
                if (complete && !s.correct)
                    s.outputIds = completedGreedyAnswer(model, positions, e, std::move(s.outputIds));
                if (hooks.exampleDone)
                    hooks.exampleDone({run.methods[m], cell, e, s});
            }
            cell.accuracy = cell.examples > 0 ? static_cast<double>(cell.correct) / cell.examples : NAN;
            cell.meanRank =
                options.scoring == RetrievalScoring::Loglik && cell.examples > 0 ? ranks / cell.examples : 0;
            run.cells.push_back(cell);
            if (hooks.cellDone)
                hooks.cellDone(run.cells.back());
        }
    }
    if (hooks.progress)
        hooks.progress(1);
    return run;
}

} // namespace

RetrievalRun runRetrieval(const HfModel& model, const RetrievalGenerator& generator, const RetrievalOptions& options,
                          const RetrievalHooks& hooks)
{
    checkRetrievalOptions(options, model.config(), generator);
    HfLanguageModel language(model);
    language.setScalingLayers(options.scalingLayers);
    std::vector<PlannedCell> plan;
    for (int length : options.lengths)
        for (double depth : options.depths)
            plan.push_back({length, depth, static_cast<double>(length) * options.examples});
    return scoreRetrievalCells(
        model, options, retrievalMethods(language, options), plan,
        [&](size_t i) {
            return retrievalExamples(generator, options.kind, plan[i].length, plan[i].depth, options.examples,
                                     options.seed);
        },
        hooks);
}

void checkRetrievalPrompts(const std::vector<RetrievalPromptCell>& cells, const HfConfig& config,
                           const RetrievalOptions& options)
{
    if (options.scoring != RetrievalScoring::Exact)
        throw InputError("--score loglik cannot be used with --examples-in: a prompts file holds no candidate "
                         "answers; allowed: --score exact");
    try {
        checkHfLength(config, longestPromptRead(cells));
    } catch (const InputError& e) {
        throw InputError("--examples-in: " + std::string(e.what()));
    }
    checkHfMethodsReach(config, methodNames(options.methods), options.scalingLayers);
}

std::vector<RetrievalMethod> retrievalPromptMethods(const HfLanguageModel& model,
                                                    const std::vector<RetrievalPromptCell>& cells,
                                                    RetrievalOptions options)
{
    int longest = 0; // factor = the longest prompt over the context, as for generated prompts (their exact lengths)
    for (const RetrievalPromptCell& c : cells)
        for (const RetrievalExample& e : c.examples)
            longest = std::max(longest, static_cast<int>(e.promptIds.size()));
    options.lengths = {longest};
    return retrievalMethods(model, options);
}

RetrievalRun runRetrievalOnPrompts(const HfModel& model, const std::vector<RetrievalPromptCell>& cells,
                                   const RetrievalOptions& options, const RetrievalHooks& hooks)
{
    checkRetrievalPrompts(cells, model.config(), options);
    HfLanguageModel language(model);
    language.setScalingLayers(options.scalingLayers);
    std::vector<PlannedCell> plan;
    for (const RetrievalPromptCell& c : cells) {
        double tokens = 0;
        for (const RetrievalExample& e : c.examples)
            tokens += static_cast<double>(e.promptIds.size());
        plan.push_back({c.length, c.depth, tokens});
    }
    return scoreRetrievalCells(
        model, options, retrievalPromptMethods(language, cells, options), plan,
        [&](size_t i) { return cells[i].examples; }, hooks);
}

double retrievalSeconds(const std::function<double(int length)>& windowFlops, const RetrievalOptions& options,
                        size_t methods, double flopsPerSecond)
{
    const size_t forwards = methods * options.depths.size() * static_cast<size_t>(options.examples) *
                            static_cast<size_t>(retrievalForwardsPerExample(options.scoring));
    double seconds = 0;
    for (int length : options.lengths) // one window of the length per forward
        seconds +=
            methodComparisonSeconds(windowFlops, forwards, {length}, static_cast<size_t>(length), flopsPerSecond);
    return seconds;
}

RetrievalOptions retrievalDefaults(RetrievalKind kind, int context, const std::string& ownScaling, bool rotary,
                                   int maxLength, int minimumLength,
                                   const std::function<double(int length)>& windowFlops, double flopsPerSecond)
{
    RetrievalOptions o;
    o.kind = kind;
    o.depths = {0, 0.5, 1};
    o.examples = 1;
    if (rotary)
        for (const char* name : {ownScaling.c_str(), "none", "yarn"})
            if (std::none_of(o.methods.begin(), o.methods.end(),
                             [&](const MethodChoice& c) { return c.method == name; }))
                o.methods.push_back({name, {}});
    // Leaner and leaner until the estimate fits: the lengths in eighths of the context, always one past it (the
    // question a method answers), the middle ones dropped first, then the longest brought in to 9/8.
    const std::vector<std::vector<int>> ladder = {{2, 4, 8, 10}, {2, 8, 10}, {2, 10}, {2, 9}, {1, 9}};
    auto fits = [&] {
        return !windowFlops || flopsPerSecond <= 0 ||
               retrievalSeconds(windowFlops, o, std::max<size_t>(1, o.methods.size()), flopsPerSecond) <=
                   kMethodComparisonBudgetSeconds;
    };
    for (const std::vector<int>& eighths : ladder) {
        o.lengths.clear();
        for (const int e : eighths) {
            const int length = std::clamp(static_cast<int>(static_cast<long long>(context) * e / 8), minimumLength + 1,
                                          std::max(minimumLength + 1, maxLength));
            if (o.lengths.empty() || length > o.lengths.back())
                o.lengths.push_back(length);
        }
        if (fits())
            break;
    }
    if (!fits() && o.methods.size() > 2)
        o.methods.pop_back(); // yarn, when the model's own is another: its own and none stay
    return o;
}

void writeRetrievalRun(std::ostream& out, DataFormat format, const RetrievalRun& run, const nlohmann::json& meta)
{
    if (format == DataFormat::Npy)
        throw InputError("a retrieval run is written as .csv, .json or .png (its method column is text), not .npy");
    if (format == DataFormat::Csv) {
        out << "method,length,depth,examples,correct,accuracy\n";
        char line[160];
        for (const RetrievalCell& c : run.cells) {
            std::snprintf(line, sizeof line, ",%d,%.10g,%d,%d,%.10g\n", c.length, c.depth, c.examples, c.correct,
                          c.accuracy);
            out << run.methods[c.method].choice.method << line;
        }
        out.flush();
        return;
    }
    nlohmann::json doc = meta.is_object() ? meta : nlohmann::json::object();
    doc["methods"] = nlohmann::json::array();
    for (size_t m = 0; m < run.methods.size(); ++m) {
        nlohmann::json cells = nlohmann::json::array();
        for (const RetrievalCell& c : run.cells)
            if (c.method == m) {
                nlohmann::json cell = {{"length", c.length},
                                       {"depth", c.depth},
                                       {"examples", c.examples},
                                       {"correct", c.correct},
                                       {"accuracy", c.accuracy}};
                if (c.meanRank > 0)
                    cell["mean_rank"] = c.meanRank;
                cells.push_back(std::move(cell));
            }
        nlohmann::json params = nlohmann::json::object();
        for (const auto& [name, value] : run.methods[m].params)
            params[name] = value;
        doc["methods"].push_back({{"method", run.methods[m].choice.method},
                                  {"label", run.methods[m].label},
                                  {"settings", run.methods[m].choice.settings},
                                  {"params", params},
                                  {"cells", std::move(cells)}});
    }
    out << doc.dump(1) << '\n';
    out.flush();
}

// ---------------------------------------------------------------- sweeps

void checkSweepRetrieval(const SweepRetrieval& r)
{
    try {
        retrievalTaskByName(r.task);
    } catch (const InputError& e) {
        throw InputError("--task: " + std::string(e.what()));
    }
    if (r.depths.empty())
        throw InputError("--depths: no depths given; allowed: one or more depths in [0, 1]");
    for (double d : r.depths)
        if (!(d >= 0 && d <= 1))
            throw InputError("--depths: " + std::to_string(d) +
                             " is outside [0, 1]; allowed: depths from 0 (the "
                             "haystack's start) to 1 (its end)");
    if (r.examples < 1)
        throw InputError("--examples " + std::to_string(r.examples) + " is not allowed; allowed: at least 1");
    retrievalScoringFromName(r.score);
}

SweepRetrieval sweepRetrievalFromJson(const nlohmann::json& j, const std::string& source)
{
    SweepRetrieval r;
    try {
        r.task = j.at("task").get<std::string>();
        r.depths = j.at("depths").get<std::vector<double>>();
        r.examples = j.at("examples").get<int>();
        r.seed = j.at("seed").get<uint64_t>();
        r.score = j.at("score").get<std::string>();
    } catch (const nlohmann::json::exception& e) {
        throw InputError(source +
                         " is not a retrieval task ({\"task\", \"depths\", \"examples\", \"seed\", "
                         "\"score\"}): " +
                         e.what());
    }
    checkSweepRetrieval(r);
    return r;
}

std::optional<SweepResult> evaluateRetrievalSweepCell(const SweepGrid& grid, size_t index, const Corpus& corpus,
                                                      const TrainingHooks& hooks)
{
    const SweepCell cell = sweepCell(grid, index);
    const SweepRetrieval& sr = *grid.retrieval;
    const hf::Tokenizer tokenizer = hf::Tokenizer::fromFolder(grid.modelFolder);
    const RetrievalGenerator generator(tokenizer, retrievalHaystack(corpus), corpus.source);
    const HfModel hf(grid.modelFolder);
    RetrievalOptions options;
    options.kind = retrievalTaskByName(sr.task).kind;
    options.lengths = grid.evalLengths;
    options.depths = sr.depths;
    options.examples = sr.examples;
    options.seed = sr.seed;
    options.scoring = retrievalScoringFromName(sr.score);
    options.methods = {{cell.method, cell.settings}};
    options.scalingLayers = grid.scalingLayers;
    if (hf.config().scheme != "rope") // none on alibi or learned positions: the folder's own
        options.methods.clear();
    RetrievalHooks hooks2;
    const std::atomic<bool>* flag = hooks.interrupt;
    hooks2.progress = [flag](double) { return !(flag && flag->load()); };
    const auto begin = std::chrono::steady_clock::now();
    const RetrievalRun run = runRetrieval(hf, generator, options, hooks2);
    if (run.stopped)
        return std::nullopt;
    const HfConfig& config = hf.config();
    SweepResult r;
    r.scheme = config.scheme;
    r.variant = cell.variant;
    r.context = config.context;
    r.scaling = cell.method == "none" ? std::string() : cell.method;
    r.model = grid.modelFolder;
    r.modelType = config.modelType;
    r.task = sr.task;
    r.lengths = options.lengths;
    r.depths = options.depths;
    for (int length : options.lengths) {
        std::vector<double> row;
        double sum = 0;
        for (double depth : options.depths)
            for (const RetrievalCell& c : run.cells)
                if (c.length == length && c.depth == depth) {
                    row.push_back(c.accuracy);
                    sum += c.accuracy;
                }
        r.depthAccuracy.push_back(row);
        r.accuracy.push_back(row.empty() ? NAN : sum / static_cast<double>(row.size()));
        r.loss.push_back(NAN);
        r.perplexity.push_back(NAN);
        r.tokens.push_back(static_cast<double>(length) * static_cast<double>(options.depths.size() * options.examples));
    }
    r.evalSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    stampSweepCellIdentity(r, grid, cell);
    return r;
}

} // namespace plab
