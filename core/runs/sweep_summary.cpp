// The sweep's summary: each row's labels, mean/sd/min/max over seeds, folders read side by side, CSV and JSON.
#include "runs/sweep.h"
#include "runs/sweep_internal.h"

#include "base/errors.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

namespace plab {

namespace fs = std::filesystem;
using sweep_internal::joined;

std::string sweepRowScheme(const SweepResult& r)
{
    if (r.method == "drope")
        return "drope";
    if (!r.method.empty())
        return r.scheme + "+" + r.method;
    return r.scaling.empty() ? r.scheme : r.scheme + "+" + r.scaling;
}

std::string sweepRowVariant(const SweepResult& r)
{
    std::string variant = r.settings;
    auto add = [&](const std::string& more) {
        if (!more.empty())
            variant += (variant.empty() ? "" : " ") + more;
    };
    add(r.variant);
    if (!r.method.empty() && r.method != "drope")
        add("zero-shot");
    add(r.methodSettings);
    if (!r.scalingLayers.empty())
        add("scaling-layers=" + r.scalingLayers);
    return variant;
}

std::string sweepModelName(int layers, const std::string& modelOptions, bool withDepth)
{
    std::string name = withDepth && layers > 0 ? "layers=" + std::to_string(layers) : std::string();
    if (!modelOptions.empty())
        name += (name.empty() ? "" : " ") + modelOptions;
    return name;
}

// ---------------------------------------------------------------- statistics

SampleStats sampleStats(const std::vector<double>& values)
{
    SampleStats s;
    double sum = 0;
    for (double v : values) {
        if (std::isnan(v))
            continue;
        if (s.n == 0)
            s.min = s.max = v;
        s.min = std::min(s.min, v);
        s.max = std::max(s.max, v);
        sum += v;
        ++s.n;
    }
    if (s.n == 0)
        return s;
    s.mean = sum / s.n;
    double squares = 0;
    for (double v : values)
        if (!std::isnan(v))
            squares += (v - s.mean) * (v - s.mean);
    s.sd = s.n > 1 ? std::sqrt(squares / (s.n - 1)) : 0.0;
    return s;
}

std::vector<SweepSummaryRow> summarizeSweep(const std::vector<SweepResult>& results)
{
    struct Group {
        std::string scheme, variant; // as shown: the scheme with its method, the common settings with the variant
        int context;
        std::string task;
        std::map<int, std::vector<double>> perplexity, ratio, accuracy;
        std::string model;
        int layers;
        std::string modelOptions;
    };
    std::vector<Group> groups;
    // Each cell's own result, then the evaluations it added, as results of their own.
    std::vector<const SweepResult*> all;
    for (const SweepResult& r : results) {
        all.push_back(&r);
        for (const SweepResult& e : r.evaluations)
            all.push_back(&e);
    }
    for (const SweepResult* each : all) {
        const SweepResult& r = *each;
        const std::string scheme = sweepRowScheme(r);
        const std::string variant = sweepRowVariant(r);
        auto it = std::find_if(groups.begin(), groups.end(), [&](const Group& g) {
            return g.scheme == scheme && g.variant == variant && g.context == r.context && g.task == r.task &&
                   g.model == r.model && g.layers == r.layers && g.modelOptions == r.modelOptions;
        });
        if (it == groups.end()) {
            groups.push_back({scheme, variant, r.context, r.task, {}, {}, {}, r.model, r.layers, r.modelOptions});
            it = groups.end() - 1;
        }
        double atContext = std::nan("");
        for (size_t i = 0; i < r.lengths.size(); ++i)
            if (r.lengths[i] == r.context)
                atContext = r.perplexity[i];
        for (size_t i = 0; i < r.lengths.size(); ++i) {
            it->perplexity[r.lengths[i]].push_back(r.perplexity[i]);
            it->ratio[r.lengths[i]].push_back(r.perplexity[i] / atContext); // NaN when either is missing
            if (!r.task.empty())
                it->accuracy[r.lengths[i]].push_back(r.accuracy[i]);
        }
    }
    std::vector<SweepSummaryRow> rows;
    for (const Group& g : groups)
        for (const auto& [length, values] : g.perplexity)
            rows.push_back({g.scheme, g.variant, g.context, length, sampleStats(values),
                            sampleStats(g.ratio.at(length)), g.task,
                            g.task.empty() ? SampleStats{} : sampleStats(g.accuracy.at(length)), g.model, g.layers,
                            g.modelOptions});
    return rows;
}

namespace {

// A grid without the fields a summary row names (scheme with its method, settings and variant, the model's depth and
// options, context): what must agree for two folders' rows to be read side by side. The preset is only a note on where
// the sizes came from.
SweepGrid summaryKeyless(SweepGrid grid)
{
    const ModelConfig plain;
    grid.model.layers = plain.layers;
    grid.model.nopeEvery = plain.nopeEvery;
    grid.model.layerTypes = plain.layerTypes;
    grid.model.window = plain.window;
    grid.model.chunk = plain.chunk;
    grid.model.fullScheme = plain.fullScheme;
    grid.model.fullSettings = plain.fullSettings;
    grid.model.temperature = plain.temperature;
    grid.model.ssmax = plain.ssmax;
    grid.model.sinkLogit = plain.sinkLogit;
    grid.schemes.clear();
    grid.seeds.clear();
    grid.variants = {{}};
    grid.preset.clear();
    grid.model.scaling = "none";
    grid.model.schemeSettings.clear();
    grid.model.context = 0;
    grid.methods.clear();                       // a model grid's methods are told apart too; its model folder is not
    grid.scalingLayers = HfScalingLayers::Full; // and so are the layers they reach (the rows' variant names them)
    grid.evalScalings.clear();                  // their rows are told apart by the method
    grid.drope.reset();
    return grid;
}

} // namespace

std::vector<SweepResult> collectSweepResults(const std::vector<std::string>& dirs)
{
    if (dirs.empty())
        throw InputError("collect: no sweep folder given; allowed: one or more folders a sweep wrote");
    std::vector<SweepResult> all;
    std::optional<SweepGrid> first;
    for (const std::string& dir : dirs) {
        const SweepGrid grid = loadSweepGrid(dir);
        // What the folders' cells score, before any other field: a text sweep beside a task's would otherwise be
        // named by whichever field JSON order puts first.
        auto scored = [](const SweepGrid& g) {
            return g.modelGrid() ? std::string("a model grid's text")
                   : g.task      ? taskInfo(g.task->kind).name
                                 : std::string("text");
        };
        if (!first)
            first = grid;
        else if (scored(*first) != scored(grid))
            throw InputError("collect: the folders score different things (task: " + scored(*first) + " in " +
                             dirs.front() + ", " + scored(grid) + " in " + dir +
                             "), and the summary would mix them; allowed: folders of one task, or all of text");
        else if (const std::string difference = sweepGridDifference(summaryKeyless(*first), summaryKeyless(grid),
                                                                    "in " + dirs.front(), "in " + dir);
                 !difference.empty())
            throw InputError(
                "collect: the folders' models or training differ (" + difference +
                "), and the summary would mix them; allowed: folders whose grids differ only in schemes, "
                "seeds, variants, the method and the layers it reaches, the common settings, the model's layers and "
                "options "
                "(nope_every, Llama 4's temperature, ssmax, sink_logit) and the context, which it tells "
                "apart");
        const std::string path = (fs::path(dir) / kSweepResultsFile).string();
        SweepResultsRead read = readSweepResults(path, &grid);
        if (read.results.empty())
            throw InputError(dir + " has no finished cell (" + path +
                             " holds no result); run the sweep first, or leave this folder out");
        // Grid order, not the order cells happened to finish in (--jobs, Slurm): summaries list schemes as asked.
        std::sort(read.results.begin(), read.results.end(),
                  [](const SweepResult& a, const SweepResult& b) { return a.cell < b.cell; });
        // The folder's model, which its lines do not repeat: rows of different models stay apart.
        const int layers = grid.modelGrid() ? 0 : grid.model.layers;
        for (SweepResult& r : read.results) {
            ModelConfig model = grid.model; // with the cell's scheme: full layers without one of their own name it
            model.scheme = r.scheme;
            const std::string options = grid.modelGrid() ? std::string() : modelOptionsLabel(model);
            r.layers = layers;
            r.modelOptions = options;
            for (SweepResult& e : r.evaluations) {
                e.layers = layers;
                e.modelOptions = options;
            }
            all.push_back(std::move(r));
        }
    }
    return all;
}

namespace {

const std::vector<std::string>& summaryColumns()
{
    static const std::vector<std::string> columns = {
        "scheme",  "variant", "context",    "length",   "n",         "ppl_mean",  "ppl_sd", "ppl_min",
        "ppl_max", "ratio_n", "ratio_mean", "ratio_sd", "ratio_min", "ratio_max", "layers", "options"};
    return columns;
}

// One CSV field: quoted (quotes doubled) when it holds a comma, a quote or a line break, as RFC 4180 reads it.
std::string csvField(const std::string& text)
{
    if (text.find_first_of(",\"\n\r") == std::string::npos)
        return text;
    std::string quoted = "\"";
    for (char c : text)
        quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
    return quoted + "\"";
}

// The model columns every row ends with: its depth (empty when not known) and its options.
std::string modelColumns(const SweepSummaryRow& r)
{
    return (r.layers > 0 ? std::to_string(r.layers) : std::string()) + "," + csvField(r.modelOptions);
}

} // namespace

std::string sweepSummaryCsv(const std::vector<SweepSummaryRow>& rows)
{
    auto stats = [](const SampleStats& s) {
        if (s.n == 0)
            return std::string("0,,,,");
        return std::to_string(s.n) + "," + exactText(s.mean) + "," + exactText(s.sd) + "," + exactText(s.min) + "," +
               exactText(s.max);
    };
    if (!rows.empty() && !rows.front().task.empty()) {
        std::string out = "scheme,variant,context,task,length,n,acc_mean,acc_sd,acc_min,acc_max,layers,options\n";
        for (const SweepSummaryRow& r : rows)
            out += r.scheme + "," + r.variant + "," + std::to_string(r.context) + "," + r.task + "," +
                   std::to_string(r.length) + "," + stats(r.accuracy) + "," + modelColumns(r) + "\n";
        return out;
    }
    std::string out = joined(summaryColumns(), ",") + "\n";
    for (const SweepSummaryRow& r : rows)
        out += r.scheme + "," + r.variant + "," + std::to_string(r.context) + "," + std::to_string(r.length) + "," +
               stats(r.perplexity) + "," + stats(r.ratio) + "," + modelColumns(r) + "\n";
    return out;
}

nlohmann::json sweepSummaryJson(const std::vector<SweepSummaryRow>& rows, const std::vector<std::string>& dirs)
{
    auto stats = [](const SampleStats& s) -> nlohmann::json {
        if (s.n == 0)
            return {{"n", 0}, {"mean", nullptr}, {"sd", nullptr}, {"min", nullptr}, {"max", nullptr}};
        return {{"n", s.n}, {"mean", s.mean}, {"sd", s.sd}, {"min", s.min}, {"max", s.max}};
    };
    auto layers = [](const SweepSummaryRow& r) -> nlohmann::json {
        return r.layers > 0 ? nlohmann::json(r.layers) : nlohmann::json(nullptr);
    };
    nlohmann::json out = {{"format", "positionlab-sweep-summary"},
                          {"folders", dirs},
                          {"ratio", "ppl(length) / ppl(context) of each seed"},
                          {"rows", nlohmann::json::array()}};
    for (const SweepSummaryRow& r : rows) {
        if (!r.task.empty()) {
            out["rows"].push_back({{"scheme", r.scheme},
                                   {"variant", r.variant},
                                   {"context", r.context},
                                   {"task", r.task},
                                   {"length", r.length},
                                   {"accuracy", stats(r.accuracy)},
                                   {"layers", layers(r)},
                                   {"options", r.modelOptions}});
            continue;
        }
        out["rows"].push_back({{"scheme", r.scheme},
                               {"variant", r.variant},
                               {"context", r.context},
                               {"length", r.length},
                               {"perplexity", stats(r.perplexity)},
                               {"ratio", stats(r.ratio)},
                               {"layers", layers(r)},
                               {"options", r.modelOptions}});
    }
    return out;
}

} // namespace plab
