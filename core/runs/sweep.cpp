// Sweep grids, cells, the crash-safe results file and the statistics over seeds (see sweep.h).
#include "runs/sweep.h"
#include "runs/retrieval_runs.h"

#include "base/atomic_file.h"
#include "base/errors.h"
#include "runs/eval_check.h"
#include "hf/hf_config.h"
#include "hf/hf_model.h"
#include "hf/tokenizer.h"
#include "runs/language_model.h"
#include "schemes/rotary_scaling.h"
#include "schemes/schemes.h"
#include "tasks/task_accuracy.h"

#include <omp.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef POSITIONLAB_VERSION
#define POSITIONLAB_VERSION "unknown"
#endif

namespace plab {

namespace fs = std::filesystem;

namespace {

std::string joined(const std::vector<std::string>& items, const char* separator)
{
    std::string s;
    for (const std::string& item : items)
        s += (s.empty() ? "" : separator) + item;
    return s;
}

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

// Typed field access with InputError naming the source and the field.
struct JsonReader {
    const nlohmann::json& j;
    std::string source;
    InputError fail(const std::string& what) const { return InputError(source + ": " + what); }
    const nlohmann::json& field(const char* key) const
    {
        if (!j.is_object() || !j.contains(key))
            throw fail(std::string("has no '") + key + "'");
        return j[key];
    }
    long long integer(const char* key, long long lo, long long hi) const
    {
        const nlohmann::json& v = field(key);
        if (!v.is_number_integer() || v.get<long long>() < lo || v.get<long long>() > hi)
            throw fail(std::string("'") + key + "' is " + v.dump() + "; allowed: an integer in [" + std::to_string(lo) +
                       ", " + std::to_string(hi) + "]");
        return v.get<long long>();
    }
    double number(const char* key) const
    {
        const nlohmann::json& v = field(key);
        if (!v.is_number())
            throw fail(std::string("'") + key + "' is " + v.dump() + "; allowed: a number");
        return v.get<double>();
    }
    std::string text(const char* key) const
    {
        const nlohmann::json& v = field(key);
        if (!v.is_string())
            throw fail(std::string("'") + key + "' is " + v.dump() + "; allowed: a string");
        return v.get<std::string>();
    }
    std::vector<std::string> texts(const char* key) const
    {
        const nlohmann::json& v = field(key);
        if (!v.is_array() || !std::all_of(v.begin(), v.end(), [](const nlohmann::json& e) { return e.is_string(); }))
            throw fail(std::string("'") + key + "' is not a list of strings");
        return v.get<std::vector<std::string>>();
    }
    bool boolean(const char* key) const
    {
        const nlohmann::json& v = field(key);
        if (!v.is_boolean())
            throw fail(std::string("'") + key + "' is " + v.dump() + "; allowed: true or false");
        return v.get<bool>();
    }
};

// A result's numbers: NaN (unsupported length) is null in JSON.
nlohmann::json numbersJson(const std::vector<double>& values)
{
    nlohmann::json a = nlohmann::json::array();
    for (double v : values)
        a.push_back(std::isfinite(v) ? nlohmann::json(v) : nlohmann::json());
    return a;
}

std::vector<double> numbersFrom(const JsonReader& r, const char* key, size_t count)
{
    const nlohmann::json& v = r.field(key);
    if (!v.is_array() || v.size() != count)
        throw r.fail(std::string("'") + key + "' is not a list of " + std::to_string(count) + " numbers");
    std::vector<double> out;
    for (const nlohmann::json& e : v) {
        if (e.is_null())
            out.push_back(std::nan(""));
        else if (e.is_number())
            out.push_back(e.get<double>());
        else
            throw r.fail(std::string("'") + key + "' holds " + e.dump() + "; allowed: numbers or null");
    }
    return out;
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

std::string numberText(double value)
{
    std::ostringstream text;
    text << value;
    return text.str();
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

// ---------------------------------------------------------------- results

nlohmann::json SweepResult::toJson() const
{
    nlohmann::json j{{"cell", cell},
                     {"key", key},
                     {"scheme", scheme},
                     {"seed", seed},
                     {"variant", variant},
                     {"context", context},
                     {"lengths", lengths},
                     {"loss", numbersJson(loss)},
                     {"perplexity", numbersJson(perplexity)},
                     {"steps", steps},
                     {"train_loss", trainLoss},
                     {"train_seconds", trainSeconds},
                     {"eval_seconds", evalSeconds},
                     {"threads", threads},
                     {"grid", gridHash},
                     {"version", version}};
    if (!scaling.empty())
        j["scaling"] = scaling;
    if (!settings.empty())
        j["settings"] = settings;
    if (!model.empty()) {
        j["model"] = model;
        j["model_type"] = modelType;
        j["tokens"] = nlohmann::json::array();
        for (double t : tokens) // counts: written as integers
            j["tokens"].push_back(static_cast<long long>(t));
    }
    if (!method.empty()) {
        j["method"] = method;
        j["method_settings"] = methodSettings;
    }
    if (!evaluations.empty()) {
        j["evaluations"] = nlohmann::json::array();
        for (const SweepResult& e : evaluations)
            j["evaluations"].push_back(e.toJson());
    }
    if (!task.empty()) {
        j["task"] = task;
        j["accuracy"] = numbersJson(accuracy);
        if (!depths.empty()) {
            j["depths"] = depths;
            j["depth_accuracy"] = nlohmann::json::array();
            for (const std::vector<double>& row : depthAccuracy)
                j["depth_accuracy"].push_back(numbersJson(row));
        }
    }
    return j;
}

SweepResult SweepResult::fromJson(const nlohmann::json& j, const std::string& source)
{
    const JsonReader r{j, source};
    if (!j.is_object())
        throw r.fail("is not a JSON object");
    SweepResult s;
    s.cell = static_cast<size_t>(r.integer("cell", 0, 1LL << 40));
    s.key = r.text("key");
    s.scheme = r.text("scheme");
    s.seed = static_cast<uint64_t>(r.integer("seed", 0, 1LL << 62));
    s.variant = r.text("variant");
    s.scaling = j.contains("scaling") ? r.text("scaling") : std::string();
    s.settings = j.contains("settings") ? r.text("settings") : std::string();
    s.model = j.contains("model") ? r.text("model") : std::string();
    s.modelType = j.contains("model_type") ? r.text("model_type") : std::string();
    s.context = static_cast<int>(r.integer("context", 1, 1 << 20));
    const nlohmann::json& lengths = r.field("lengths");
    if (!lengths.is_array())
        throw r.fail("'lengths' is not a list");
    for (const nlohmann::json& l : lengths) {
        if (!l.is_number_integer())
            throw r.fail("'lengths' holds " + l.dump() + "; allowed: integers");
        s.lengths.push_back(l.get<int>());
    }
    s.loss = numbersFrom(r, "loss", s.lengths.size());
    s.perplexity = numbersFrom(r, "perplexity", s.lengths.size());
    if (j.contains("tokens"))
        s.tokens = numbersFrom(r, "tokens", s.lengths.size());
    if (j.contains("task")) {
        s.task = r.text("task");
        s.accuracy = numbersFrom(r, "accuracy", s.lengths.size());
        if (j.contains("depths")) { // passkey lines (written since the depth x length heatmap)
            const nlohmann::json& depths = r.field("depths");
            if (!depths.is_array() ||
                !std::all_of(depths.begin(), depths.end(), [](const nlohmann::json& d) { return d.is_number(); }))
                throw r.fail("'depths' is not a list of numbers");
            s.depths = depths.get<std::vector<double>>();
            const nlohmann::json& rows = r.field("depth_accuracy");
            if (!rows.is_array() || rows.size() != s.lengths.size())
                throw r.fail("'depth_accuracy' is not a list of " + std::to_string(s.lengths.size()) +
                             " rows (one per length)");
            for (const nlohmann::json& row : rows)
                s.depthAccuracy.push_back(numbersFrom(
                    JsonReader{nlohmann::json{{"row", row}}, r.source + " depth_accuracy"}, "row", s.depths.size()));
        }
    }
    s.steps = static_cast<int>(r.integer("steps", 0, 100000000));
    s.trainLoss = r.number("train_loss");
    s.trainSeconds = r.number("train_seconds");
    s.evalSeconds = r.number("eval_seconds");
    s.threads = static_cast<int>(r.integer("threads", 0, 1 << 20));
    s.gridHash = r.text("grid");
    s.version = r.text("version");
    if (j.contains("method")) {
        s.method = r.text("method");
        s.methodSettings = r.text("method_settings");
    }
    if (j.contains("evaluations")) {
        const nlohmann::json& added = r.field("evaluations");
        if (!added.is_array())
            throw r.fail("'evaluations' is not a list");
        for (size_t i = 0; i < added.size(); ++i) {
            SweepResult e = fromJson(added[i], source + " evaluation " + std::to_string(i + 1));
            if (e.method.empty() || !e.evaluations.empty() || e.cell != s.cell)
                throw r.fail("evaluation " + std::to_string(i + 1) +
                             " is not an added evaluation of this cell (a method, the same cell, none nested)");
            s.evaluations.push_back(std::move(e));
        }
    }
    return s;
}

double zeroShotFactor(int longestSequence, int context)
{
    return std::max(1.0, std::ceil(static_cast<double>(longestSequence) / context));
}

int longestTaskSequence(TaskKind kind, const std::vector<int>& lengths)
{
    return taskExampleBytes(kind, *std::max_element(lengths.begin(), lengths.end())) - 1;
}

double sweepZeroShotFactor(const SweepGrid& grid)
{
    const int longest = grid.task ? longestTaskSequence(grid.task->kind, grid.evalLengths)
                                  : *std::max_element(grid.evalLengths.begin(), grid.evalLengths.end());
    return zeroShotFactor(longest, grid.model.context);
}

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
    return variant;
}

std::string sweepModelName(int layers, const std::string& modelOptions, bool withDepth)
{
    std::string name = withDepth && layers > 0 ? "layers=" + std::to_string(layers) : std::string();
    if (!modelOptions.empty())
        name += (name.empty() ? "" : " ") + modelOptions;
    return name;
}

const char* positionLabVersion()
{
    return POSITIONLAB_VERSION;
}

void poolTaskPoints(const std::vector<TaskAccuracyPoint>& points, const std::vector<int>& lengths,
                    const std::vector<double>& depths, SweepResult& r)
{
    for (int length : lengths) {
        int examples = 0, correct = 0;
        bool supported = true;
        for (const TaskAccuracyPoint& p : points)
            if (p.length == length) {
                examples += p.examples;
                correct += p.correct;
                supported = supported && p.supported;
            }
        r.lengths.push_back(length);
        r.loss.push_back(std::nan(""));
        r.perplexity.push_back(std::nan(""));
        r.accuracy.push_back(supported && examples > 0 ? static_cast<double>(correct) / examples : std::nan(""));
    }
    if (depths.empty())
        return;
    r.depths = depths;
    for (int length : lengths) {
        std::vector<double> row;
        for (double depth : depths)
            for (const TaskAccuracyPoint& p : points)
                if (p.length == length && p.depth == depth)
                    row.push_back(p.supported ? p.accuracy : std::nan(""));
        r.depthAccuracy.push_back(std::move(row));
    }
}

SweepResult sweepResultFromEvaluation(const std::string& scheme, uint64_t seed, const std::string& variant, int context,
                                      const std::vector<EvalPoint>& points)
{
    SweepResult r;
    r.scheme = scheme;
    r.seed = seed;
    r.variant = variant;
    r.context = context;
    for (const EvalPoint& p : points) {
        r.lengths.push_back(p.length);
        r.loss.push_back(p.supported ? p.loss : std::nan(""));
        r.perplexity.push_back(p.supported ? p.perplexity : std::nan(""));
    }
    return r;
}

namespace {

std::string modelTextName(const SweepGrid& grid, const Corpus& corpus)
{
    return "the validation split of " + corpus.source + " (tokenized with " + grid.modelFolder + "/tokenizer.json)";
}

} // namespace

void checkSweepEvalLengths(const SweepGrid& grid, const Corpus& corpus, long long cell)
{
    if (grid.task || grid.retrieval) // a task grid scores generated examples, not the held-out text
        return;
    if (grid.modelGrid()) { // one model and one text for every cell
        const std::string name = modelTextName(grid, corpus);
        const std::vector<int32_t> tokens =
            folderTextTokens(hf::Tokenizer::fromFolder(grid.modelFolder), corpus.validation, name);
        checkEvalLengthsFit(grid.evalLengths, hfMaxLength(readHfConfig(grid.modelFolder)), tokens.size(),
                            grid.evalBytes, name, "token");
        return;
    }
    const size_t first = cell < 0 ? 0 : static_cast<size_t>(cell);
    const size_t end = cell < 0 ? grid.cellCount() : first + 1;
    for (size_t i = first; i < end; ++i)
        checkEvalLengthsFit(grid.evalLengths, modelMaxLength(sweepCell(grid, i).model), corpus.validation.size(),
                            grid.evalBytes, "the validation split of " + corpus.source);
}

Corpus loadSweepCorpus(const SweepGrid& grid)
{
    return grid.corpus.empty() ? loadDefaultCorpus() : loadCorpusFile(grid.corpus);
}

void stampSweepCellIdentity(SweepResult& r, const SweepGrid& grid, const SweepCell& cell)
{
    r.cell = cell.index;
    r.key = cell.key();
    r.threads = omp_get_max_threads();
    r.gridHash = grid.hash();
    r.version = positionLabVersion();
}

namespace {

// The fields every result line of a cell carries, after its evaluation.
void finishResult(SweepResult& r, const SweepGrid& grid, const SweepCell& cell, const TrainingResult& trained)
{
    r.scaling = grid.model.scaling == "none" ? std::string() : grid.model.scaling;
    r.settings = joined(grid.model.schemeSettings, " ");
    stampSweepCellIdentity(r, grid, cell);
    r.layers = cell.model.layers;
    r.modelOptions = modelOptionsLabel(cell.model);
    r.steps = trained.info.step;
    r.trainLoss = trained.info.trainLoss;
    r.trainSeconds = trained.elapsedSeconds;
}

// A task grid's batches: the task's examples drawn with the cell's data seed (as train --task).
TrainingBatches sweepTaskBatches(const TaskSpec& task, uint64_t seed)
{
    TrainingBatches batches;
    batches.draw = [task, seed](int step, int B, int T, uint8_t* inputs, uint8_t* targets, float* weights) {
        fillTaskBatch(task, seed, step, B, T, inputs, targets, weights);
    };
    batches.source = "task " + taskInfo(task.kind).name;
    batches.record = task.toJson();
    return batches;
}

// A cell's model scored as the grid scores (the task's accuracy, passkey's depths pooled per length and kept per
// depth; or the perplexity at every length): the result's lengths and numbers and its evaluation seconds. nullopt when
// the interrupt flag or `evalProgress` stopped it.
std::optional<SweepResult> scoreCellModel(const SweepGrid& grid, const SweepCell& cell, Model& model,
                                          const Corpus& corpus, const TrainingHooks& hooks,
                                          const std::function<bool(double)>& evalProgress,
                                          std::vector<EvalPoint>* textPoints = nullptr)
{
    bool stopped = false;
    const std::atomic<bool>* flag = hooks.interrupt;
    std::function<bool(double)> progress;
    if (flag || evalProgress)
        progress = [flag, &evalProgress, &stopped](double fraction) {
            stopped = (flag && flag->load()) || (evalProgress && !evalProgress(fraction));
            return !stopped;
        };
    const auto begin = std::chrono::steady_clock::now();
    SweepResult r;
    if (!grid.task) {
        EvalOptions eo;
        eo.lengths = grid.evalLengths;
        eo.mode = grid.evalMode;
        eo.maxTokens = grid.evalBytes;
        eo.textName = "the validation split of " + corpus.source;
        eo.progress = progress;
        std::vector<EvalPoint> points;
        try {
            points = evaluateModel(model, corpus.validation, eo);
        } catch (const RunError&) {
            if (stopped)
                return std::nullopt;
            throw;
        }
        r = sweepResultFromEvaluation(cell.scheme, cell.seed, cell.variant, cell.model.context, points);
        if (textPoints)
            *textPoints = std::move(points);
    } else {
        const TaskSpec& task = *grid.task;
        TaskEvalOptions options;
        options.lengths = grid.evalLengths;
        options.examples = grid.taskExamples;
        options.seed = cell.seed; // the test examples are drawn with the cell's seed too
        options.maxLength = model.maxLength();
        options.progress = progress;
        std::vector<TaskAccuracyPoint> points;
        try {
            points = evaluateTask(task.kind, modelPredictor(model), options);
        } catch (const RunError&) {
            if (stopped)
                return std::nullopt;
            throw;
        }
        r.scheme = cell.scheme;
        r.seed = cell.seed;
        r.variant = cell.variant;
        r.context = cell.model.context;
        r.task = taskInfo(task.kind).name;
        poolTaskPoints(points, grid.evalLengths,
                       task.kind == TaskKind::Passkey ? defaultPasskeyDepths() : std::vector<double>{}, r);
    }
    r.evalSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    return r;
}

// The grid's added evaluations of a trained cell: each zero-shot method on a rotary cell, then DroPE on a rope cell
// (which takes the model and its optimiser state: it must come last). false when stopped.
bool addCellEvaluations(const SweepGrid& grid, const SweepCell& cell, SweepCellRun& run, TrainingResult& trained,
                        const Corpus& corpus, const TrainingHooks& hooks,
                        const std::function<bool(double)>& evalProgress)
{
    auto finish = [&](SweepResult& e, const std::string& method, const std::string& settings) {
        e.method = method;
        e.methodSettings = settings;
        e.scaling = run.result.scaling;
        e.settings = run.result.settings;
        e.cell = run.result.cell;
        e.key = run.result.key;
        e.steps = run.result.steps;
        e.trainLoss = run.result.trainLoss;
        e.threads = run.result.threads;
        e.gridHash = run.result.gridHash;
        e.version = run.result.version;
        e.layers = run.result.layers;
        e.modelOptions = run.result.modelOptions;
    };
    Model& model = *trained.model;
    if (schemeByName(cell.scheme).rotary && !grid.evalScalings.empty()) {
        const std::string factor = "factor=" + numberText(sweepZeroShotFactor(grid));
        for (const std::string& method : grid.evalScalings) {
            model.setScaling(method, {factor});
            std::optional<SweepResult> e = scoreCellModel(grid, cell, model, corpus, hooks, evalProgress);
            model.setScaling(cell.model.scaling, cell.model.scalingSettings);
            if (!e)
                return false;
            finish(*e, method, factor);
            e->trainSeconds = 0; // scored, not trained
            run.result.evaluations.push_back(std::move(*e));
        }
    }
    if (!grid.drope || cell.scheme != "rope")
        return true;
    Recalibration recalibration = droppedPositionsRun(std::move(trained), cell.train, grid.drope->fraction);
    TrainingResult dropped = grid.task ? trainModel(recalibration.model, recalibration.train,
                                                    sweepTaskBatches(*grid.task, recalibration.train.dataSeed), hooks,
                                                    &recalibration.init, "the rope cell", "the DroPE recalibration")
                                       : trainModel(recalibration.model, recalibration.train, corpus, hooks,
                                                    &recalibration.init, "the rope cell", "the DroPE recalibration");
    if (dropped.stopped)
        return false;
    for (double c : grid.drope->logitC) {
        // DroPE's test-time logit scale is a modifier: the weights are not touched.
        dropped.model->setScaling("none",
                                  c > 0 ? std::vector<std::string>{logitCSetting(c)} : std::vector<std::string>{});
        std::optional<SweepResult> e = scoreCellModel(grid, cell, *dropped.model, corpus, hooks, evalProgress);
        if (!e)
            return false;
        finish(*e, "drope", "fraction=" + numberText(grid.drope->fraction) + " logit-c=" + numberText(c));
        e->steps = dropped.info.step;
        e->trainLoss = dropped.info.trainLoss;
        e->trainSeconds = dropped.elapsedSeconds;
        run.result.evaluations.push_back(std::move(*e));
    }
    return true;
}

} // namespace

std::optional<SweepCellRun> trainSweepCell(const SweepGrid& grid, size_t index, const Corpus& corpus,
                                           const TrainingHooks& hooks, const std::function<bool(double)>& evalProgress)
{
    if (grid.modelGrid())
        throw InputError("a model grid trains nothing; its cells are evaluated (evaluateSweepModelCell)");
    const SweepCell cell = sweepCell(grid, index);
    if (!grid.task)
        checkSweepEvalLengths(grid, corpus, static_cast<long long>(index)); // before training, not after it
    TrainingResult trained =
        grid.task ? trainModel(cell.model, cell.train, sweepTaskBatches(*grid.task, cell.train.dataSeed), hooks)
                  : trainModel(cell.model, cell.train, corpus, hooks);
    if (trained.stopped)
        return std::nullopt;
    SweepCellRun run;
    std::optional<SweepResult> scored =
        scoreCellModel(grid, cell, *trained.model, corpus, hooks, evalProgress, &run.points);
    if (!scored)
        return std::nullopt;
    run.result = std::move(*scored);
    finishResult(run.result, grid, cell, trained);
    run.info = trained.info;
    if (!addCellEvaluations(grid, cell, run, trained, corpus, hooks, evalProgress))
        return std::nullopt;
    run.model = std::move(trained.model); // null when DroPE continued it
    return run;
}

std::optional<SweepResult> evaluateSweepModelCell(const SweepGrid& grid, size_t index, const Corpus& corpus,
                                                  const TrainingHooks& hooks)
{
    const SweepCell cell = sweepCell(grid, index);
    const std::string name = modelTextName(grid, corpus);
    const std::vector<int32_t> tokens =
        folderTextTokens(hf::Tokenizer::fromFolder(grid.modelFolder), corpus.validation, name);
    const HfModel hf(grid.modelFolder);
    HfLanguageModel model(hf);
    EvalOptions eo;
    eo.lengths = grid.evalLengths;
    eo.mode = grid.evalMode;
    eo.maxTokens = grid.evalBytes;
    eo.textName = name;
    bool stopped = false;
    const std::atomic<bool>* flag = hooks.interrupt;
    if (flag)
        eo.progress = [flag, &stopped](double) {
            stopped = flag->load();
            return !stopped;
        };
    const auto begin = std::chrono::steady_clock::now();
    std::vector<EvalPoint> points;
    try {
        if (model.rotary())
            points = evaluateUnderMethods(model, tokens, eo, {{cell.method, cell.settings}}).front().points;
        else // none on alibi or learned positions (validateSweepGrid refuses any other method there)
            points = evaluateModel(model, tokens, eo);
    } catch (const RunError&) {
        if (stopped)
            return std::nullopt;
        throw;
    }
    const HfConfig& config = hf.config();
    SweepResult r = sweepResultFromEvaluation(config.scheme, 0, cell.variant, config.context, points);
    r.scaling = cell.method == "none" ? std::string() : cell.method;
    r.model = grid.modelFolder;
    r.modelType = config.modelType;
    for (const EvalPoint& p : points)
        r.tokens.push_back(static_cast<double>(p.tokens));
    r.evalSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    stampSweepCellIdentity(r, grid, cell);
    return r;
}

std::optional<SweepResult> runSweepCell(const SweepGrid& grid, size_t index, const Corpus& corpus,
                                        const TrainingHooks& hooks)
{
    if (grid.modelGrid() && grid.retrieval)
        return evaluateRetrievalSweepCell(grid, index, corpus, hooks); // core/runs/retrieval_runs
    if (grid.modelGrid())
        return evaluateSweepModelCell(grid, index, corpus, hooks);
    std::optional<SweepCellRun> run = trainSweepCell(grid, index, corpus, hooks);
    if (!run)
        return std::nullopt;
    return std::move(run->result);
}

namespace {

// Splits text into lines; `torn` is set when the text does not end with a newline (the last piece is then torn).
std::vector<std::string> splitLines(const std::string& text, bool& torn)
{
    std::vector<std::string> lines;
    size_t start = 0;
    while (start < text.size()) {
        const size_t end = text.find('\n', start);
        if (end == std::string::npos) {
            lines.push_back(text.substr(start));
            torn = true;
            return lines;
        }
        lines.push_back(text.substr(start, end - start));
        start = end + 1;
    }
    torn = false;
    return lines;
}

std::string readWholeFd(int fd, const std::string& path)
{
    std::string text;
    char buf[65536];
    if (::lseek(fd, 0, SEEK_SET) < 0)
        throw RunError(path + ": cannot seek: " + std::strerror(errno));
    for (;;) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            throw RunError(path + ": cannot read: " + std::strerror(errno));
        }
        if (n == 0)
            return text;
        text.append(buf, static_cast<size_t>(n));
    }
}

// Parses the lines of a results file (the torn tail already removed).
std::vector<SweepResult> parseResultLines(const std::vector<std::string>& lines, const std::string& path,
                                          const SweepGrid* grid)
{
    std::vector<SweepResult> results;
    std::set<size_t> seen;
    const std::string gridHash = grid ? grid->hash() : std::string();
    for (size_t i = 0; i < lines.size(); ++i) {
        const std::string where = path + " line " + std::to_string(i + 1);
        auto bad = [&](const std::string& why) {
            return InputError(where + " is not a good result (" + why + "); the other " +
                              std::to_string(lines.size() - 1) + " lines are kept as they are: remove or repair line " +
                              std::to_string(i + 1) + " and run again");
        };
        nlohmann::json j;
        try {
            j = nlohmann::json::parse(lines[i]);
        } catch (const nlohmann::json::exception& e) {
            throw bad(std::string("not JSON: ") + e.what());
        }
        SweepResult r;
        try {
            r = SweepResult::fromJson(j, "the line");
        } catch (const InputError& e) {
            throw bad(e.what());
        }
        if (grid) {
            if (r.gridHash != gridHash)
                throw InputError(where + " is a result of another grid (hash " + r.gridHash +
                                 ", this folder's grid is " + gridHash +
                                 "); a results file belongs to the sweep.json beside it: use a new folder");
            if (r.cell >= grid->cellCount() || sweepCell(*grid, r.cell).key() != r.key)
                throw bad("cell " + std::to_string(r.cell) + " '" + r.key + "' is not a cell of this grid");
        }
        if (seen.insert(r.cell).second)
            results.push_back(std::move(r));
    }
    return results;
}

} // namespace

SweepResultsRead readSweepResults(const std::string& path, const SweepGrid* grid)
{
    SweepResultsRead out;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        // No file yet is no result yet. Decided by this open's own errno: a check afterwards could find the file a
        // writer created meanwhile and report the failed open as an error (seen under --jobs).
        if (errno == ENOENT)
            return out;
        throw InputError(path + ": cannot be read: " + std::strerror(errno));
    }
    std::string text;
    try {
        text = readWholeFd(fd, path);
    } catch (const RunError& e) { // e.g. a folder where the file should be: the user's input, not a failed run
        ::close(fd);
        throw InputError(e.what());
    }
    ::close(fd);
    std::vector<std::string> lines = splitLines(text, out.tornTail);
    if (out.tornTail)
        lines.pop_back();
    out.results = parseResultLines(lines, path, grid);
    return out;
}

bool appendSweepResult(const std::string& path, const SweepResult& result)
{
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0)
        throw RunError(path + ": cannot be opened for appending: " + std::strerror(errno));
    struct Closer {
        int fd;
        ~Closer() { ::close(fd); } // also releases the lock
    } closer{fd};
    while (::flock(fd, LOCK_EX) != 0)
        if (errno != EINTR)
            throw RunError(path + ": cannot be locked: " + std::strerror(errno));
    // Under the lock nobody else writes: a tail without its newline is a killed writer's, cut it off.
    const std::string text = readWholeFd(fd, path);
    bool torn = false;
    std::vector<std::string> lines = splitLines(text, torn);
    if (torn) {
        lines.pop_back();
        const size_t keep = text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1;
        if (::ftruncate(fd, static_cast<off_t>(keep)) != 0)
            throw RunError(path + ": cannot drop the torn last line: " + std::strerror(errno));
    }
    for (const std::string& line : lines) {
        // Only the cell index matters here: a corrupt line is the reader's business, never a reason to lose a result.
        try {
            const nlohmann::json j = nlohmann::json::parse(line);
            if (j.is_object() && j.contains("cell") && j["cell"] == result.cell && j.contains("grid") &&
                j["grid"] == result.gridHash)
                return false;
        } catch (const nlohmann::json::exception&) {
        }
    }
    const std::string line = result.toJson().dump() + "\n";
    size_t written = 0;
    while (written < line.size()) {
        const ssize_t n = ::write(fd, line.data() + written, line.size() - written);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            throw RunError(path + ": cannot append: " + std::strerror(errno));
        }
        written += static_cast<size_t>(n);
    }
    if (::fsync(fd) != 0)
        throw RunError(path + ": cannot sync: " + std::strerror(errno));
    return true;
}

// ---------------------------------------------------------------- the folder

SweepGrid loadSweepGrid(const std::string& dir)
{
    const std::string path = (fs::path(dir) / kSweepGridFile).string();
    if (!fs::is_directory(dir))
        throw InputError(dir + " is not a sweep folder (no such folder)");
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw InputError(path + ": cannot be read; a sweep folder holds the sweep.json its sweep wrote");
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception& e) {
        throw InputError(path + ": not JSON: " + e.what());
    }
    SweepGrid grid = SweepGrid::fromJson(j, path);
    if (j.contains("hash") && j["hash"] != grid.hash())
        throw InputError(path + ": its hash " + j["hash"].dump() + " does not match its grid (" + grid.hash() +
                         "); the file was edited: restore it or start a new folder");
    return grid;
}

void prepareSweepFolder(const std::string& dir, const SweepGrid& grid)
{
    std::error_code ec;
    if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
        throw InputError("-o " + dir + " is a file; allowed: a folder (new, or one this sweep wrote)");
    fs::create_directories(dir, ec);
    if (ec)
        throw InputError("-o " + dir + ": the folder cannot be created: " + ec.message());
    if (::access(dir.c_str(), W_OK | X_OK) != 0)
        throw InputError("-o " + dir + ": the folder cannot be written: " + std::strerror(errno));
    const std::string path = (fs::path(dir) / kSweepGridFile).string();
    if (fs::exists(path, ec)) {
        const SweepGrid stored = loadSweepGrid(dir);
        const std::string difference = sweepGridDifference(grid, stored);
        if (!difference.empty())
            throw InputError(path + " holds another grid; " + difference +
                             ". Allowed: the same command to resume, or a new -o folder for a new grid");
        return;
    }
    nlohmann::json j = grid.toJson();
    j["hash"] = grid.hash();
    writeFileAtomically(path, j.dump(2) + "\n");
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
    grid.methods.clear();      // a model grid's methods are told apart too; its model folder is not
    grid.evalScalings.clear(); // their rows are told apart by the method
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
            throw InputError("collect: the folders' models or training differ (" + difference +
                             "), and the summary would mix them; allowed: folders whose grids differ only in schemes, "
                             "seeds, variants, the method, the common settings, the model's layers and options "
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
        const std::string options = grid.modelGrid() ? std::string() : modelOptionsLabel(grid.model);
        for (SweepResult& r : read.results) {
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
