// Sweep grids: their JSON and hash, the cells they hold and their checks (see sweep.h).
#include "runs/sweep.h"
#include "runs/retrieval_runs.h"

#include "runs/sweep_internal.h"

#include "base/errors.h"
#include "hf/hf_config.h"
#include "schemes/rotary_scaling.h"
#include "schemes/schemes.h"

#include <algorithm>
#include <set>

namespace plab {

using sweep_internal::joined;
using sweep_internal::JsonReader;
using sweep_internal::numberText;

namespace {

// The grid's model fields that do not vary per cell: model_config's shape and layer schedule (ModelConfig::toJson
// resolves a scheme; a grid has none), the common settings and the method.
nlohmann::json baseModelJson(const ModelConfig& m)
{
    nlohmann::json j = modelShapeJson(m);
    j["settings"] = m.schemeSettings;
    if (m.scaling != "none") // only then: a grid without a method keeps the hash (and results) it had before
        j["scaling"] = m.scaling;
    return j;
}

// TrainConfig's JSON without data_seed, which each cell sets (a grid hashes the same as before it was written here).
nlohmann::json gridTrainJson(const TrainConfig& train)
{
    nlohmann::json j = train.toJson();
    j.erase("data_seed");
    return j;
}

std::string seedList(const std::vector<uint64_t>& seeds)
{
    std::string s;
    for (uint64_t v : seeds)
        s += (s.empty() ? "" : ",") + std::to_string(v);
    return s;
}

} // namespace

// ---------------------------------------------------------------- the grid

nlohmann::json SweepGrid::toJson() const
{
    nlohmann::json v = nlohmann::json::array();
    for (const auto& variant : variants)
        v.push_back(variant);
    nlohmann::json j = {{"format", "positionlab-sweep"},
                        {"version", 1},
                        {"schemes", schemes},
                        {"seeds", seeds},
                        {"variants", v},
                        {"preset", preset},
                        {"model", baseModelJson(model)},
                        {"train", gridTrainJson(train)},
                        {"corpus", corpus},
                        {"eval", {{"lengths", evalLengths}, {"mode", evalModeName(evalMode)}, {"bytes", evalBytes}}}};
    if (task) { // only then, so a text grid's JSON and hash stay as before
        j["task"] = task->toJson();
        j["task"]["examples"] = taskExamples;
    }
    if (modelGrid()) { // likewise
        j["hf_model"] = modelFolder;
        j["methods"] = methods;
        if (scalingLayers != HfScalingLayers::Full)
            j["scaling_layers"] = hfScalingLayersName(scalingLayers);
    }
    if (retrieval)
        j["retrieval"] = {{"task", retrieval->task},
                          {"depths", retrieval->depths},
                          {"examples", retrieval->examples},
                          {"seed", retrieval->seed},
                          {"score", retrieval->score}};
    if (!evalScalings.empty()) // the same: only when asked for
        j["eval_scalings"] = evalScalings;
    if (drope)
        j["drope"] = {{"fraction", drope->fraction}, {"logit_c", drope->logitC}};
    return j;
}

SweepGrid SweepGrid::fromJson(const nlohmann::json& j, const std::string& source)
{
    const JsonReader r{j, source};
    if (!j.is_object() || !j.contains("format") || j["format"] != "positionlab-sweep")
        throw r.fail("is not a PositionLab sweep grid (no \"format\": \"positionlab-sweep\")");
    if (r.integer("version", 0, 1000000) != 1)
        throw r.fail("has version " + j["version"].dump() + "; this build reads version 1");
    SweepGrid g;
    g.schemes = r.texts("schemes");
    const nlohmann::json& seeds = r.field("seeds");
    if (!seeds.is_array())
        throw r.fail("'seeds' is not a list");
    for (const nlohmann::json& s : seeds) {
        if (!s.is_number_unsigned())
            throw r.fail("'seeds' holds " + s.dump() + "; allowed: non-negative integers");
        g.seeds.push_back(s.get<uint64_t>());
    }
    const nlohmann::json& variants = r.field("variants");
    if (!variants.is_array())
        throw r.fail("'variants' is not a list");
    g.variants.clear();
    for (const nlohmann::json& v : variants)
        g.variants.push_back(JsonReader{nlohmann::json{{"v", v}}, source}.texts("v"));
    g.preset = r.text("preset");
    // The shape and the schedule are read as model_config reads them (one set of ranges: validateModelConfig's,
    // checked with the scheme when a cell is validated or trained, and validateTrainConfig's).
    const JsonReader m{r.field("model"), source + " model"};
    readModelShape(r.field("model"), g.model, source);
    g.model.logn = m.boolean("logn");
    g.model.schemeSettings = m.texts("settings");
    g.model.scaling = j["model"].contains("scaling") ? m.text("scaling") : "none";
    g.train = TrainConfig::fromJson(r.field("train"), source);
    g.corpus = r.text("corpus");
    const JsonReader e{r.field("eval"), source + " eval"};
    const nlohmann::json& lengths = e.field("lengths");
    if (!lengths.is_array())
        throw e.fail("'lengths' is not a list");
    for (const nlohmann::json& l : lengths) {
        if (!l.is_number_integer() || l.get<long long>() < 1 || l.get<long long>() > kMaxLength)
            throw e.fail("'lengths' holds " + l.dump() + "; allowed: integers in [1, " + std::to_string(kMaxLength) +
                         "]");
        g.evalLengths.push_back(l.get<int>());
    }
    g.evalMode = evalModeFromName(e.text("mode"));
    g.evalBytes = static_cast<size_t>(e.integer("bytes", 0, 1LL << 40));
    if (j.contains("task")) {
        TaskSpec task;
        if (!TaskSpec::fromJson(j["task"], task))
            throw r.fail("'task' is not a task ({\"task\": NAME, \"task_length\": L, \"examples\": N})");
        g.task = task;
        g.taskExamples = static_cast<int>(JsonReader{j["task"], source + " task"}.integer("examples", 1, 1000000));
    }
    if (j.contains("hf_model")) {
        g.modelFolder = r.text("hf_model");
        g.methods = r.texts("methods");
        if (j.contains("scaling_layers"))
            try {
                g.scalingLayers = hfScalingLayersByName(r.text("scaling_layers"));
            } catch (const InputError& e) {
                throw r.fail(std::string("'scaling_layers': ") + e.what());
            }
    }
    if (j.contains("retrieval"))
        g.retrieval = sweepRetrievalFromJson(j["retrieval"], source + " retrieval");
    if (j.contains("eval_scalings"))
        g.evalScalings = r.texts("eval_scalings");
    if (j.contains("drope")) {
        const JsonReader d{j["drope"], source + " drope"};
        SweepDrope drope;
        drope.fraction = d.number("fraction");
        const nlohmann::json& c = d.field("logit_c");
        if (!c.is_array() || !std::all_of(c.begin(), c.end(), [](const nlohmann::json& e) { return e.is_number(); }))
            throw d.fail("'logit_c' is not a list of numbers");
        drope.logitC = c.get<std::vector<double>>();
        g.drope = drope;
    }
    return g;
}

std::string SweepGrid::hash() const
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (unsigned char c : toJson().dump()) {
        h ^= c;
        h *= 0x100000001b3ULL;
    }
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
    return buf;
}

size_t SweepGrid::cellCount() const
{
    if (modelGrid()) {
        try {
            return sweepModelChoices(*this).size();
        } catch (const InputError&) { // a bad method list has no cells; validateSweepGrid names what is wrong
            return 0;
        }
    }
    return schemes.size() * seeds.size() * variants.size();
}

std::vector<MethodChoice> sweepModelChoices(const SweepGrid& grid)
{
    std::vector<MethodChoice> choices;
    if (grid.methods.empty())
        return choices;
    std::string list;
    for (const std::string& m : grid.methods)
        list += (list.empty() ? "" : ",") + m;
    for (const MethodChoice& base : parseMethodList(list)) {
        const RotaryMethodInfo& info = rotaryMethodByName(base.method);
        for (const std::vector<std::string>& variant : grid.variants) {
            MethodChoice c = base;
            for (const std::string& setting : variant) {
                const std::string name = setting.substr(0, setting.find('='));
                const bool taken =
                    isMethodModifierSetting(setting) || std::any_of(info.params.begin(), info.params.end(),
                                                                    [&](const ParamInfo& p) { return p.name == name; });
                if (taken)
                    c.settings.push_back(setting);
            }
            const bool seen = std::any_of(choices.begin(), choices.end(), [&](const MethodChoice& o) {
                return o.method == c.method && o.settings == c.settings;
            });
            if (!seen)
                choices.push_back(std::move(c));
        }
    }
    return choices;
}

std::string SweepCell::key() const
{
    if (!method.empty())
        return "method=" + method + (variant.empty() ? "" : " " + variant);
    return "scheme=" + scheme + " seed=" + std::to_string(seed) + (variant.empty() ? "" : " " + variant);
}

SweepCell sweepCell(const SweepGrid& grid, size_t index)
{
    if (index >= grid.cellCount())
        throw InputError("cell " + std::to_string(index) + " is out of range; allowed: 0.." +
                         std::to_string(grid.cellCount() == 0 ? 0 : grid.cellCount() - 1) + " (the grid has " +
                         std::to_string(grid.cellCount()) + " cells)");
    SweepCell c;
    c.index = index;
    if (grid.modelGrid()) {
        const MethodChoice choice = sweepModelChoices(grid)[index];
        c.method = choice.method;
        c.settings = choice.settings;
        c.variant = joined(choice.settings, " ");
        return c;
    }
    const size_t V = grid.variants.size(), S = grid.schemes.size();
    const size_t variant = index % V;
    const size_t scheme = index / V % S;
    const size_t seed = index / V / S;
    c.scheme = grid.schemes[scheme];
    c.seed = grid.seeds[seed];
    c.variant = joined(grid.variants[variant], " ");
    c.model = grid.model;
    c.model.scheme = c.scheme;
    c.model.seed = c.seed;
    for (const std::string& setting : grid.variants[variant])
        c.model.schemeSettings.push_back(setting);
    c.train = grid.train;
    c.train.dataSeed = c.seed;
    return c;
}

namespace {

// A model grid's checks, from config.json alone (no weights loaded): the methods and variants, every length against
// the model's position table, and every cell's positions (hfPositionSpec: a method on alibi or learned positions is
// refused saying rotary methods apply to rope models only; a setting out of range names it).
void validateModelGrid(const SweepGrid& grid)
{
    if (grid.methods.empty())
        throw InputError("no methods listed; allowed: one or more, e.g. none,pi,yarn", "methods");
    std::set<std::vector<std::string>> seenVariants;
    for (const auto& v : grid.variants)
        if (!seenVariants.insert(v).second)
            throw InputError("the variant '" + joined(v, " ") + "' is given twice; allowed: distinct values", "vary");
    if (grid.evalLengths.empty())
        throw InputError("no evaluation lengths; allowed: one or more, e.g. 512,1024,2048", "lengths");
    std::vector<MethodChoice> choices;
    try {
        choices = sweepModelChoices(grid);
    } catch (const InputError& e) {
        throw InputError(e.what(), "methods");
    }
    for (const auto& variant : grid.variants)
        for (const std::string& setting : variant) {
            const std::string name = setting.substr(0, setting.find('='));
            const bool anyTakes = std::any_of(choices.begin(), choices.end(), [&](const MethodChoice& c) {
                return std::find(c.settings.begin(), c.settings.end(), setting) != c.settings.end();
            });
            if (!anyTakes)
                throw InputError("no method of the list (" + joined(grid.methods, ",") + ") has a parameter " + name +
                                     "; allowed: a parameter of one of them",
                                 "vary");
        }
    if (grid.retrieval)
        checkSweepRetrieval(*grid.retrieval);
    const HfConfig config = readHfConfig(grid.modelFolder);
    try {
        checkHfMethodsReach(config, methodNames(choices), grid.scalingLayers);
    } catch (const InputError& e) {
        throw InputError(e.what(), "scaling-layers");
    }
    for (int length : grid.evalLengths)
        try {
            checkHfLength(config, length);
        } catch (const InputError& e) {
            throw InputError(e.what(), "lengths");
        }
    const int longest = *std::max_element(grid.evalLengths.begin(), grid.evalLengths.end());
    for (size_t i = 0; i < choices.size(); ++i) {
        const SweepCell c = sweepCell(grid, i);
        try {
            if (config.scheme != "rope" && c.method != "none")
                hfPositionSpec(config, c.method); // refused: rotary methods apply to rope models only
            else if (config.scheme == "rope") {
                std::vector<std::string> settings = hfMethodSettings(config, c.method, longest);
                settings.insert(settings.end(), c.settings.begin(), c.settings.end());
                hfPositionSpec(config, c.method, settings);
            } else if (!c.settings.empty())
                hfPositionSpec(config, "none", c.settings);
        } catch (const InputError& e) {
            throw InputError("cell " + c.key() + ": " + e.what(), "methods");
        }
    }
}

// The added evaluations' checks: known methods that take a factor, each once; a scheme they apply to; DroPE's fraction
// and logit-c values (the modifier's own range).
void validateSweepEvaluations(const SweepGrid& grid)
{
    std::set<std::string> seen;
    for (const std::string& method : grid.evalScalings) {
        const RotaryMethodInfo& info = rotaryMethodByName(method); // InputError listing the methods
        const bool hasFactor =
            std::any_of(info.params.begin(), info.params.end(), [](const ParamInfo& p) { return p.name == "factor"; });
        if (method == "none" || !hasFactor)
            throw InputError("evaluation method " + method +
                                 " cannot be scored zero-shot with a factor; allowed: pi, ntk, dynamic-ntk, yarn, "
                                 "llama3, longrope (none: every cell is evaluated as trained anyway)",
                             "eval-scaling");
        if (!seen.insert(method).second)
            throw InputError("evaluation method " + method + " is listed twice; allowed: each method once",
                             "eval-scaling");
    }
    if (!grid.evalScalings.empty() && std::none_of(grid.schemes.begin(), grid.schemes.end(),
                                                   [](const std::string& s) { return schemeByName(s).rotary; }))
        throw InputError("zero-shot evaluation methods apply to rotary schemes (rope, xpos), and the grid has none",
                         "eval-scaling");
    if (!grid.drope)
        return;
    if (!(grid.drope->fraction > 0 && grid.drope->fraction <= 1))
        throw InputError("DroPE recalibration fraction = " + numberText(grid.drope->fraction) +
                             " is out of range; allowed: (0, 1], a share of the rope cell's steps (DroPE uses "
                             "0.005-0.125)",
                         "drope");
    if (std::find(grid.schemes.begin(), grid.schemes.end(), "rope") == grid.schemes.end())
        throw InputError("the DroPE recipe continues rope cells, and the grid has no scheme rope", "drope");
    if (grid.drope->logitC.empty())
        throw InputError("the DroPE recipe needs at least one logit-c value (0: unscaled)", "drope-logit-c");
    std::set<double> values;
    for (double c : grid.drope->logitC) {
        makeSchemeSpec("none", 1, false, {logitCSetting(c)}, grid.model.context); // the modifier's range
        if (!values.insert(c).second)
            throw InputError("logit-c " + numberText(c) + " is listed twice; allowed: distinct values",
                             "drope-logit-c");
    }
}

} // namespace

void validateSweepGrid(const SweepGrid& grid)
{
    if (grid.modelGrid()) {
        validateModelGrid(grid);
        return;
    }
    if (grid.scalingLayers != HfScalingLayers::Full)
        throw InputError("--scaling-layers picks among a Hugging Face folder's layer types; a training grid's models "
                         "have layers of one rope; allowed: --scaling-layers with --model DIR",
                         "scaling-layers");
    if (grid.schemes.empty())
        throw InputError("no schemes listed; allowed: one or more schemes (see positionlab-cli schemes)", "schemes");
    std::set<std::string> seenSchemes;
    for (const std::string& s : grid.schemes) {
        schemeByName(s); // InputError naming the allowed schemes
        if (!seenSchemes.insert(s).second)
            throw InputError("scheme " + s + " is listed twice; allowed: each scheme once", "schemes");
    }
    if (grid.seeds.empty())
        throw InputError("no seeds listed; allowed: distinct seeds, e.g. 1,2,3", "seeds");
    std::set<uint64_t> seenSeeds;
    for (uint64_t s : grid.seeds)
        if (!seenSeeds.insert(s).second)
            throw InputError("seed " + std::to_string(s) + " is listed twice in " + seedList(grid.seeds) +
                                 "; allowed: distinct seeds (a repeated seed repeats the same run)",
                             "seeds");
    if (grid.variants.empty())
        throw InputError("the grid has no variants; allowed: at least the plain scheme");
    std::set<std::vector<std::string>> seenVariants;
    for (const auto& v : grid.variants)
        if (!seenVariants.insert(v).second)
            throw InputError("the variant '" + joined(v, " ") + "' is given twice; allowed: distinct values", "vary");
    if (grid.evalLengths.empty())
        throw InputError("no evaluation lengths; allowed: one or more, e.g. 32,64,128", "lengths");
    if (grid.task) {
        checkTaskLength(grid.task->kind, grid.task->trainLength, grid.model.context);
        TaskEvalOptions options;
        options.lengths = grid.evalLengths;
        options.examples = grid.taskExamples;
        checkTaskEvalOptions(grid.task->kind, options);
    }
    validateSweepEvaluations(grid);
    for (size_t i = 0; i < grid.cellCount(); ++i) {
        const SweepCell c = sweepCell(grid, i);
        try {
            validateModelConfig(c.model);
            validateTrainConfig(c.train);
        } catch (const InputError& e) {
            throw InputError("cell " + c.key() + ": " + e.what(), e.parameter()); // the CLI still names its option
        }
    }
}

std::string sweepGridDifference(const SweepGrid& ours, const SweepGrid& theirs, const std::string& oursWhere,
                                const std::string& theirsWhere)
{
    const nlohmann::json a = ours.toJson(), b = theirs.toJson();
    const nlohmann::json patch = nlohmann::json::diff(b, a);
    if (patch.empty())
        return {};
    // The first changed field, by its JSON pointer, with both values.
    const std::string path = patch[0].value("path", std::string());
    // Name the top-level field (schemes, seeds, train, ...) and show its whole value both ways: short and clear.
    const size_t slash = path.find('/', 1);
    const std::string top = path.substr(1, slash == std::string::npos ? std::string::npos : slash - 1);
    // A list (schemes, seeds, variants, lengths) is shown whole; inside an object, the field itself (train.steps).
    std::string shown = path;
    if (a.contains(nlohmann::json::json_pointer("/" + top)) && a[nlohmann::json::json_pointer("/" + top)].is_array())
        shown = "/" + top;
    else if (const size_t inner = path.find('/', slash == std::string::npos ? path.size() : slash + 1);
             inner != std::string::npos)
        shown = path.substr(0, inner); // e.g. /eval/lengths of /eval/lengths/2
    const nlohmann::json::json_pointer pointer(shown);
    const std::string here = a.contains(pointer) ? a[pointer].dump() : "(absent)";
    const std::string there = b.contains(pointer) ? b[pointer].dump() : "(absent)";
    std::string name = shown.substr(1);
    std::replace(name.begin(), name.end(), '/', '.');
    return name + ": " + here + " " + oursWhere + ", " + there + " " + theirsWhere;
}

} // namespace plab
