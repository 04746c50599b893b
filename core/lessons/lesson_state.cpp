// A lesson's ```json state block read key by key, each view's keys checked and resolved (defaults filled in).
#include "lessons/lessons_internal.h"

#include "base/errors.h"
#include "model/model.h"
#include "model/positions_on_text.h"
#include "model/presets.h"
#include "schemes/rotary_scaling.h"
#include "schemes/schemes.h"
#include "tasks/tasks.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

namespace plab {

using lessons_internal::joined;
using lessons_internal::shortNumber;

namespace {

constexpr int kMaxLessonHeads = 128;   // the GUI panel's range
constexpr int kMaxLessonLength = 4096; // bias and compare pictures
constexpr int kMaxEntropyLength = 65536;
constexpr int kMaxRepeat = 2048;
const char* const kEntropyHeadDimName = "entropy view's head dim";
constexpr int kEntropyHeadDim = 64;

const std::map<LessonView, std::set<std::string>>& allowedKeys()
{
    static const std::map<LessonView, std::set<std::string>> keys = {
        {LessonView::Bias,
         {"view", "caption", "scheme", "params", "heads", "head", "length", "bidirectional", "context", "logn",
          "buckets", "curve"}},
        {LessonView::Compare,
         {"view", "caption", "schemes", "params", "heads", "head", "length", "bidirectional", "context", "logn",
          "difference", "separate_scales"}},
        {LessonView::Dot, {"view", "caption", "curves", "max_distance", "log_x"}},
        {LessonView::Entropy,
         {"view", "caption", "schemes", "params", "heads", "head", "bidirectional", "context", "logn", "lengths", "qk",
          "seed", "measure"}},
        {LessonView::Attention, {"view", "caption", "model", "text", "layer", "head", "repeat_to", "show"}},
        {LessonView::Train,
         {"view", "caption", "schemes", "preset", "task", "task_length", "recalibration_percent", "nope_every",
          "attn_temperature_tuning", "floor_scale", "attn_scale", "ssmax", "sink_logit", "layer_types",
          "sliding_window", "attention_chunk_size", "full_scheme", "full_settings"}},
        {LessonView::Model, {"view", "caption", "page", "text", "layer", "head", "repeat_to"}},
        {LessonView::Frequencies, {"view", "caption", "scheme", "params", "length", "context"}},
    };
    return keys;
}

// Reads one state block; every message starts "NAME:LINE: " with the line of the key at fault.
class StateReader {
public:
    StateReader(const std::string& name, int firstLine, const std::vector<std::string>& lines)
        : m_name(name), m_firstLine(firstLine), m_lines(lines)
    {
    }

    [[noreturn]] void fail(const std::string& key, const std::string& message) const
    {
        throw InputError(m_name + ":" + std::to_string(lineOf(key)) + ": " + message);
    }

    // The line where "key" first appears in the block (the block's first line when it does not).
    int lineOf(const std::string& key) const
    {
        if (!key.empty()) {
            const std::string quoted = "\"" + key + "\"";
            for (size_t i = 0; i < m_lines.size(); ++i)
                if (m_lines[i].find(quoted) != std::string::npos)
                    return m_firstLine + static_cast<int>(i);
        }
        return m_firstLine;
    }

    nlohmann::json parse() const
    {
        std::string text;
        std::vector<size_t> lineStarts;
        for (const std::string& l : m_lines) {
            lineStarts.push_back(text.size());
            text += l + "\n";
        }
        try {
            return nlohmann::json::parse(text);
        } catch (const nlohmann::json::parse_error& e) {
            // e.byte is 1-based and points just past the offending character.
            const size_t at = e.byte > 0 ? e.byte - 1 : 0;
            const auto it = std::upper_bound(lineStarts.begin(), lineStarts.end(), at);
            const int line = m_firstLine + static_cast<int>(std::max<std::ptrdiff_t>(0, it - lineStarts.begin() - 1));
            throw InputError(m_name + ":" + std::to_string(line) + ": the state block is not valid JSON (" +
                             syntaxHint(e) + ")");
        } catch (const nlohmann::json::exception&) {
            throw InputError(m_name + ":" + std::to_string(m_firstLine) + ": the state block is not valid JSON");
        }
    }

    int integer(const nlohmann::json& j, const std::string& key, int fallback, long long lo, long long hi) const
    {
        if (!j.contains(key))
            return fallback;
        const nlohmann::json& v = j.at(key);
        if (!v.is_number_integer())
            fail(key, "\"" + key + "\" = " + v.dump() + " is not an integer; allowed: integers in [" +
                          std::to_string(lo) + ", " + std::to_string(hi) + "]");
        const long long x =
            v.is_number_unsigned()
                ? static_cast<long long>(std::min<unsigned long long>(v.get<unsigned long long>(), 1ULL << 62))
                : v.get<long long>();
        if (x < lo || x > hi)
            fail(key, "\"" + key + "\" = " + v.dump() + " is out of range; allowed: integers in [" +
                          std::to_string(lo) + ", " + std::to_string(hi) + "]");
        return static_cast<int>(x);
    }

    bool boolean(const nlohmann::json& j, const std::string& key, bool fallback) const
    {
        if (!j.contains(key))
            return fallback;
        if (!j.at(key).is_boolean())
            fail(key, "\"" + key + "\" = " + j.at(key).dump() + " is not allowed; allowed: true, false");
        return j.at(key).get<bool>();
    }

    std::string string(const nlohmann::json& j, const std::string& key, const std::string& fallback) const
    {
        if (!j.contains(key))
            return fallback;
        if (!j.at(key).is_string())
            fail(key, "\"" + key + "\" = " + j.at(key).dump() + " is not a string");
        return j.at(key).get<std::string>();
    }

    std::string choice(const nlohmann::json& j, const std::string& key, const std::string& fallback,
                       const std::vector<std::string>& allowed) const
    {
        const std::string value = string(j, key, fallback);
        if (std::find(allowed.begin(), allowed.end(), value) == allowed.end())
            fail(key, "\"" + key + "\" = '" + value + "' is not allowed; allowed: " + joined(allowed));
        return value;
    }

    // A scheme name, or a rotary scheme with a length-extension method ("rope+yarn", as the compare view names it).
    std::string schemeName(const std::string& key, const std::string& name) const
    {
        try {
            const auto [scheme, method] = splitSchemeLabel(name);
            const SchemeInfo& info = schemeByName(scheme);
            const RotaryMethodInfo& m = rotaryMethodByName(method);
            if (m.method != RotaryMethod::None && !info.rotary)
                throw InputError("'" + name + "': a length-extension method needs a rotary scheme (rope, xpos)");
            return m.method == RotaryMethod::None ? info.name : info.name + "+" + m.name;
        } catch (const InputError& e) {
            fail(key, e.what());
        }
    }

    std::vector<std::string> schemeList(const nlohmann::json& j, const std::string& key, size_t lo, size_t hi) const
    {
        if (!j.contains(key))
            fail(key, "this view needs \"" + key + "\": a list of " + std::to_string(lo) +
                          (hi == lo   ? ""
                           : hi > 100 ? " or more"
                                      : " to " + std::to_string(hi)) +
                          " scheme names");
        const nlohmann::json& list = j.at(key);
        if (!list.is_array() || list.size() < lo || list.size() > hi)
            fail(key, "\"" + key + "\" = " + list.dump() + " is not allowed; allowed: a list of " + std::to_string(lo) +
                          (hi > 100 ? " or more" : " to " + std::to_string(hi)) + " scheme names");
        std::vector<std::string> names;
        for (const nlohmann::json& s : list) {
            if (!s.is_string())
                fail(key, "\"" + key + "\" holds " + s.dump() + "; allowed: scheme names");
            names.push_back(schemeName(key, s.get<std::string>()));
        }
        return names;
    }

    // Runs a spec check, blaming the scheme and params keys for what it refuses.
    template <typename Check>
    void checkSpec(const char* key, const Check& check) const
    {
        try {
            check();
        } catch (const InputError& e) {
            fail(key, e.what());
        }
    }

private:
    static std::string syntaxHint(const nlohmann::json::parse_error& e)
    {
        // "[json.exception.parse_error.101] parse error at line 2, column 5: syntax error while parsing object -
        // unexpected '}'; expected string literal": keep what follows the last ": ".
        const std::string what = e.what();
        const size_t colon = what.rfind(": ");
        return colon == std::string::npos ? "syntax error" : what.substr(colon + 2);
    }

    std::string m_name;
    int m_firstLine;
    const std::vector<std::string>& m_lines;
};

// The keys every view shares: the view itself, the caption, and the scheme settings (heads, length, mask, params).
void readCommonKeys(const StateReader& r, LessonState& s)
{
    const nlohmann::json& j = s.json;
    if (!j.is_object())
        r.fail("", "a state block must be a JSON object such as {\"view\": \"bias\", \"scheme\": \"alibi\"}");
    if (!j.contains("view"))
        r.fail("", "the state has no \"view\"; allowed: " + joined(lessonViewNames()));
    const std::string view = r.choice(j, "view", "", lessonViewNames());
    s.view = static_cast<LessonView>(std::find(lessonViewNames().begin(), lessonViewNames().end(), view) -
                                     lessonViewNames().begin());
    const std::set<std::string>& allowed = allowedKeys().at(s.view);
    for (const auto& [key, value] : j.items())
        if (!allowed.count(key))
            r.fail(key, "unknown key \"" + key + "\" for the " + view +
                            " view; allowed: " + joined(std::vector<std::string>(allowed.begin(), allowed.end())));
    s.caption = r.string(j, "caption", "");

    s.heads = r.integer(j, "heads", 8, 1, kMaxLessonHeads);
    const bool modelHeads = s.view == LessonView::Attention || s.view == LessonView::Model;
    s.head = r.integer(j, "head", 0, 0, modelHeads ? kMaxLessonHeads - 1 : s.heads - 1);
    s.length = r.integer(j, "length", 32, 1, kMaxLessonLength);
    s.bidirectional = r.boolean(j, "bidirectional", false);
    s.context = r.integer(j, "context", 0, 0, kMaxLength);
    s.logn = r.boolean(j, "logn", false);
    if (s.logn && s.context == 0)
        r.fail("logn",
               "\"logn\" needs \"context\", the training context L past which scores are scaled by log(m+1)/log(L)");
    if (j.contains("params")) {
        const nlohmann::json& params = j.at("params");
        if (!params.is_object())
            r.fail("params", "\"params\" must be an object of NAME: number, e.g. {\"r1\": 0.5}");
        for (const auto& [name, value] : params.items()) {
            if (!value.is_number())
                r.fail("params", "params." + name + " = " + value.dump() + " is not a number");
            s.params[name] = value.get<double>();
        }
    }
}

void readBiasKeys(const StateReader& r, LessonState& s)
{
    const nlohmann::json& j = s.json;
    if (!j.contains("scheme"))
        r.fail("", "the bias view needs \"scheme\"");
    s.schemes = {r.schemeName("scheme", r.string(j, "scheme", ""))};
    s.buckets = r.boolean(j, "buckets", false);
    if (s.buckets && s.schemes[0] != "t5")
        r.fail("buckets", "\"buckets\" is for the t5 scheme only (got " + s.schemes[0] + ")");
    s.curve = r.boolean(j, "curve", false);
    if (s.curve && s.schemes[0] != "fire")
        r.fail("curve", "\"curve\" is for the fire scheme only (got " + s.schemes[0] + ")");
    r.checkSpec(j.contains("params") ? "params" : "scheme", [&] {
        const auto [scheme, method] = splitSchemeLabel(s.schemes[0]);
        makeSchemeSpec(scheme, s.heads, s.bidirectional, s.settings(), s.context, s.logn, method);
    });
}

// The Rotary frequencies view draws rope (`render frequencies`): "rope" or "rope+METHOD", rope's parameters in params.
void readFrequenciesKeys(const StateReader& r, LessonState& s)
{
    const nlohmann::json& j = s.json;
    s.schemes = {r.schemeName("scheme", r.string(j, "scheme", "rope"))};
    const auto [scheme, method] = splitSchemeLabel(s.schemes[0]);
    if (scheme != "rope")
        r.fail("scheme", "\"scheme\" = '" + s.schemes[0] +
                             "' is not allowed; the frequencies view draws rope: rope or rope+METHOD");
    r.checkSpec(j.contains("params") ? "params" : "scheme",
                [&] { makeSchemeSpec(scheme, 1, false, s.settings(), s.context, false, method); });
}

void readCompareKeys(const StateReader& r, LessonState& s)
{
    const nlohmann::json& j = s.json;
    s.schemes = r.schemeList(j, "schemes", 2, 4);
    s.difference = r.boolean(j, "difference", false);
    s.separateScales = r.boolean(j, "separate_scales", false);
    r.checkSpec(j.contains("params") ? "params" : "schemes", [&] {
        for (size_t i = 0; i < s.schemes.size(); ++i) {
            const auto [scheme, method] = splitSchemeLabel(s.schemes[i]);
            makeSchemeSpec(scheme, s.heads, s.bidirectional && schemeByName(scheme).bidirectionalAllowed,
                           i == 0 ? s.settings() : std::vector<std::string>{}, s.context, s.logn, method);
        }
    });
}

void readDotKeys(const StateReader& r, LessonState& s)
{
    const nlohmann::json& j = s.json;
    if (j.contains("curves")) {
        const nlohmann::json& list = j.at("curves");
        if (!list.is_array() || list.empty() || list.size() > 16)
            r.fail("curves", "\"curves\" must be a list of 1 to 16 [dim, base] pairs, e.g. [[128, 10000]]");
        s.curves.clear();
        for (const nlohmann::json& c : list) {
            const bool pair = c.is_array() && c.size() == 2 && c[0].is_number_integer() && c[1].is_number();
            const long long dim = pair ? c[0].get<long long>() : 0;
            const double base = pair ? c[1].get<double>() : 0;
            if (dim < 2 || dim > 4096 || dim % 2 != 0 || !(base > 1) || !std::isfinite(base))
                r.fail("curves", "\"curves\" holds " + c.dump() +
                                     "; allowed: [dim, base] with an even dim in [2, "
                                     "4096] and a base > 1");
            s.curves.emplace_back(static_cast<int>(dim), base);
        }
    }
    s.maxDistance = r.integer(j, "max_distance", 256, 1, 100000);
    s.logX = r.boolean(j, "log_x", false);
}

void readEntropyKeys(const StateReader& r, LessonState& s)
{
    const nlohmann::json& j = s.json;
    s.schemes = r.schemeList(j, "schemes", 1, 16);
    if (j.contains("lengths")) {
        const nlohmann::json& list = j.at("lengths");
        if (!list.is_array() || list.empty() || list.size() > 32)
            r.fail("lengths",
                   "\"lengths\" must be a list of 1 to 32 lengths in [1, " + std::to_string(kMaxEntropyLength) + "]");
        s.lengths.clear();
        for (const nlohmann::json& n : list) {
            if (!n.is_number_integer() || n.get<long long>() < 1 || n.get<long long>() > kMaxEntropyLength)
                r.fail("lengths", "\"lengths\" holds " + n.dump() + "; allowed: integers in [1, " +
                                      std::to_string(kMaxEntropyLength) + "]");
            s.lengths.push_back(n.get<int>());
        }
    }
    s.qk = r.choice(j, "qk", "zero", {"zero", "random"});
    s.seed = r.integer(j, "seed", 0, 0, 1 << 30);
    s.measure = r.choice(j, "measure", "last", {"last", "mean"});
    r.checkSpec(j.contains("params") ? "params" : "schemes", [&] {
        for (size_t i = 0; i < s.schemes.size(); ++i) {
            const auto [scheme, method] = splitSchemeLabel(s.schemes[i]);
            makeSchemeSpecForHeadDim(scheme, s.heads, s.bidirectional && schemeByName(scheme).bidirectionalAllowed,
                                     i == 0 ? s.settings() : std::vector<std::string>{}, kEntropyHeadDim,
                                     kEntropyHeadDimName, s.context, s.logn, method);
        }
    });
}

void readAttentionKeys(const StateReader& r, LessonState& s)
{
    const nlohmann::json& j = s.json;
    if (!j.contains("model"))
        r.fail("", "the attention view needs \"model\": the scheme of the demo model that reads the text");
    s.schemes = {r.schemeName("model", r.string(j, "model", ""))};
    if (!j.contains("text"))
        r.fail("", "the attention view needs \"text\": the text the model reads");
    s.text = r.string(j, "text", "");
    if (s.text.empty() || s.text.size() > static_cast<size_t>(kMaxRepeat))
        r.fail("text",
               "\"text\" has " + std::to_string(s.text.size()) + " bytes; allowed: 1 to " + std::to_string(kMaxRepeat));
    if (j.contains("layer"))
        s.layer = r.integer(j, "layer", 0, 0, 63);
    s.repeatTo = r.integer(j, "repeat_to", 0, 1, kMaxRepeat);
    s.show = r.choice(j, "show", "weights", textViewNames());
    try {
        checkTextView(textViewByName(s.show), schemeByName(s.schemes[0].substr(0, s.schemes[0].find('+'))).kind);
    } catch (const InputError& e) {
        r.fail("show", e.what());
    }
}

// The most tokens a model state's text may be repeated to: the "Your model" tab's limit (kHfMaxTokens in ui/).
constexpr int kMaxModelTokens = 8192;

void readModelKeys(const StateReader& r, LessonState& s)
{
    const nlohmann::json& j = s.json;
    s.page = r.choice(j, "page", "attention", {"attention", "entropy", "sinks"});
    if (!j.contains("text"))
        r.fail("", "the model view needs \"text\": the text the opened model reads");
    s.text = r.string(j, "text", "");
    if (s.text.empty())
        r.fail("text", "\"text\" is empty; allowed: a text of at least one character");
    if (j.contains("layer"))
        s.layer = r.integer(j, "layer", 0, 0, 1023);
    s.repeatTo = r.integer(j, "repeat_to", 0, 1, kMaxModelTokens);
}

// A train state's layer types, read as a model config reads them (readModelShape's keys and messages), then checked
// with the preset's model of each scheme.
template <typename Check>
void readLayerTypeKeys(const StateReader& r, const nlohmann::json& j, ModelConfig& model, const Check& check)
{
    static const char* const keys[] = {"layer_types", "sliding_window", "attention_chunk_size", "full_scheme",
                                       "full_settings"};
    nlohmann::json shape = modelShapeJson(model);
    bool any = false;
    for (const char* key : keys)
        if (j.contains(key)) {
            shape[key] = j.at(key);
            any = true;
        }
    if (!any)
        return;
    for (const char* key : keys)
        if (j.contains(key)) {
            try {
                readModelShape(shape, model, "lesson");
            } catch (const InputError& e) {
                r.fail(key, e.what());
            }
            check(key);
            return;
        }
}

// The Train tab's model options. Their ranges are validateModelConfig's, the one check every run's model passes: the
// preset's model of each scheme is checked as each key is added, so the message blames the key at fault.
void readModelOptionKeys(const StateReader& r, LessonState& s)
{
    const nlohmann::json& j = s.json;
    ModelConfig model;
    TrainConfig train;
    applyPreset(s.preset, model, train);
    auto check = [&](const std::string& key) {
        for (const std::string& label : s.schemes) {
            model.scheme = splitSchemeLabel(label).first;
            try {
                validateModelConfig(model);
            } catch (const InputError& e) {
                r.fail(key, "\"" + key + "\" = " + j.at(key).dump() + " is not allowed with scheme " + label +
                                " and preset " + s.preset + " (" + std::to_string(model.layers) +
                                " layers): " + e.what());
            }
        }
    };
    if (j.contains("nope_every")) {
        const nlohmann::json& v = j.at("nope_every");
        if (!v.is_number_integer())
            r.fail("nope_every", "\"nope_every\" = " + v.dump() +
                                     " is not an integer; allowed: 0 (off) or K >= 2, layer l (from 1) NoPE when K "
                                     "divides l");
        // Kept inside int, so an absurd value is refused by the check, not wrapped.
        model.nopeEvery = static_cast<int>(std::clamp<long long>(
            v.is_number_unsigned()
                ? static_cast<long long>(std::min<unsigned long long>(v.get<unsigned long long>(), 1ULL << 30))
                : v.get<long long>(),
            -1, 1 << 30));
        check("nope_every");
    }
    model.temperature.tuning = r.boolean(j, "attn_temperature_tuning", false);
    for (const char* key : {"floor_scale", "attn_scale"}) {
        if (!j.contains(key))
            continue;
        if (!model.temperature.tuning)
            r.fail(key, std::string("\"") + key + "\" sets Llama 4's temperature; allowed only with " +
                            "\"attn_temperature_tuning\": true");
        if (!j.at(key).is_number())
            r.fail(key, std::string("\"") + key + "\" = " + j.at(key).dump() + " is not a number");
        (key == std::string("floor_scale") ? model.temperature.floorScale : model.temperature.attnScale) =
            j.at(key).get<double>();
        check(key);
    }
    if (model.temperature.tuning)
        check("attn_temperature_tuning");
    model.ssmax = r.boolean(j, "ssmax", false);
    model.sinkLogit = r.boolean(j, "sink_logit", false);
    if (model.ssmax)
        check("ssmax");
    if (model.sinkLogit)
        check("sink_logit");
    readLayerTypeKeys(r, s.json, model, check);
    s.nopeEvery = model.nopeEvery;
    s.layerTypes = model.layerTypes;
    s.window = model.window;
    s.chunk = model.chunk;
    s.fullScheme = model.fullScheme;
    s.fullSettings = model.fullSettings;
    s.temperature = model.temperature;
    s.ssmax = model.ssmax;
    s.sinkLogit = model.sinkLogit;
}

void readTrainKeys(const StateReader& r, LessonState& s)
{
    s.schemes = r.schemeList(s.json, "schemes", 1, 1000);
    s.preset = r.choice(s.json, "preset", "demo", presetNames());
    if (s.json.contains("task"))
        s.task = r.choice(s.json, "task", "", taskNames());
    if (s.task.empty() && (s.json.contains("task_length") || s.json.contains("recalibration_percent")))
        r.fail(s.json.contains("task_length") ? "task_length" : "recalibration_percent",
               "\"task_length\" and \"recalibration_percent\" apply only with \"task\"; allowed: add \"task\": " +
                   joined(taskNames()));
    s.taskLength = r.integer(s.json, "task_length", 0, 1, 1000);
    if (s.json.contains("recalibration_percent")) {
        const nlohmann::json& v = s.json.at("recalibration_percent");
        if (!v.is_number() || !(v.get<double>() >= 0.5 && v.get<double>() <= 100))
            r.fail("recalibration_percent", "\"recalibration_percent\" = " + v.dump() +
                                                " is not allowed; allowed: a number in [0.5, 100] (the DroPE recipe)");
        s.recalibration = v.get<double>();
    }
    readModelOptionKeys(r, s);
}

LessonState readState(const StateReader& r, int firstLine)
{
    // Each view's own keys after the ones they share.
    using KeyReader = void (*)(const StateReader&, LessonState&);
    static const std::map<LessonView, KeyReader> readers = {
        {LessonView::Bias, readBiasKeys},
        {LessonView::Compare, readCompareKeys},
        {LessonView::Dot, readDotKeys},
        {LessonView::Entropy, readEntropyKeys},
        {LessonView::Attention, readAttentionKeys},
        {LessonView::Train, readTrainKeys},
        {LessonView::Model, readModelKeys},
        {LessonView::Frequencies, readFrequenciesKeys},
    };
    LessonState s;
    s.line = firstLine;
    s.json = r.parse();
    readCommonKeys(r, s);
    readers.at(s.view)(r, s);
    return s;
}

} // namespace

namespace lessons_internal {

LessonState readLessonState(const std::string& name, int firstLine, const std::vector<std::string>& lines)
{
    const StateReader reader(name, firstLine, lines);
    return readState(reader, firstLine);
}

} // namespace lessons_internal

std::vector<std::string> LessonState::settings() const
{
    std::vector<std::string> out;
    for (const auto& [name, value] : params)
        out.push_back(name + "=" + shortNumber(value));
    return out;
}

} // namespace plab
