// A trained rotary model under several length-extension methods: defaults, the method list, labels and the evaluation.
#include "runs/method_comparison.h"

#include "schemes/catalog_table.h"
#include "base/errors.h"
#include "model/model_config.h"
#include "schemes/schemes.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace plab {

namespace {

std::string numberText(double v)
{
    char text[40];
    std::snprintf(text, sizeof text, "%.10g", v);
    return text;
}

// Splits on `separator`, keeping empty pieces (so "a,,b" shows its empty item).
std::vector<std::string> splitText(std::string_view text, char separator)
{
    std::vector<std::string> pieces;
    size_t start = 0;
    while (true) {
        const size_t at = text.find(separator, start);
        pieces.emplace_back(text.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
        if (at == std::string_view::npos)
            return pieces;
        start = at + 1;
    }
}

void checkDistinctMethods(const std::vector<MethodChoice>& methods)
{
    if (methods.empty())
        throw InputError("methods: the list is empty; give at least one method, e.g. none,pi,yarn");
    for (size_t i = 0; i < methods.size(); ++i)
        for (size_t j = 0; j < i; ++j)
            if (methods[i].method == methods[j].method)
                throw InputError("methods: method '" + methods[i].method +
                                 "' is given twice; each method may appear once");
}

} // namespace

std::vector<MethodChoice> parseMethodList(std::string_view text)
{
    if (text.empty())
        throw InputError("methods: the list is empty; give at least one method, e.g. none,pi,yarn");
    std::vector<MethodChoice> methods;
    for (const std::string& item : splitText(text, ',')) {
        if (item.empty())
            throw InputError("methods: '" + std::string(text) + "' has an empty item; separate methods by one ','");
        std::vector<std::string> parts = splitText(item, ':');
        const auto known = std::find_if(rotaryMethodCatalog().begin(), rotaryMethodCatalog().end(),
                                        [&](const RotaryMethodInfo& m) { return m.name == parts[0]; });
        if (known == rotaryMethodCatalog().end()) {
            std::string names;
            for (const RotaryMethodInfo& m : rotaryMethodCatalog())
                names += (names.empty() ? "" : ", ") + m.name;
            throw InputError("methods: '" + parts[0] + "' is not a known method; known methods: " + names);
        }
        const RotaryMethodInfo& info = *known;
        MethodChoice choice;
        choice.method = info.name;
        for (size_t i = 1; i < parts.size(); ++i) {
            checkMethodSetting(info, parts[i]);
            choice.settings.push_back(parts[i]);
        }
        methods.push_back(std::move(choice));
    }
    checkDistinctMethods(methods);
    return methods;
}

std::vector<std::string> methodNames(const std::vector<MethodChoice>& choices)
{
    std::vector<std::string> names;
    for (const MethodChoice& choice : choices)
        names.push_back(choice.method);
    return names;
}

std::string methodChoiceText(const MethodChoice& choice)
{
    std::string text = choice.method;
    for (const std::string& s : choice.settings)
        text += ":" + s;
    return text;
}

void checkMethodChoice(const MethodChoice& choice)
{
    const RotaryMethodInfo& info = rotaryMethodByName(choice.method);
    std::map<std::string, double> values;
    for (const ParamInfo& p : info.params)
        values[p.name] = p.defaultValue;
    std::vector<std::string> modifiers;
    for (const std::string& setting : choice.settings) {
        checkMethodSetting(info, setting);
        const size_t eq = setting.find('=');
        const std::string name = setting.substr(0, eq);
        const std::string text = setting.substr(eq + 1);
        if (isMethodModifierSetting(setting) && !catalog::entryNamed(info.params, name)) { // a method's own window wins
            modifiers.push_back(setting); // checked together below: sinks need the window beside them
            continue;
        }
        try {
            values[name] = parseNumber(text, name);
        } catch (const InputError&) {
            throw InputError("scaling " + info.name + ": " + name + " = '" + text +
                             "' is not a number; allowed: " + catalog::entryNamed(info.params, name)->rangeText());
        }
    }
    catalog::checkParamValues(info.params, values, "scaling " + info.name, "scaling " + info.name + ": no parameter ");
    if (!modifiers.empty()) // their values are checked with the scheme's (makeSchemeSpec)
        makeSchemeSpec("none", 1, false, modifiers, 1);
}

std::vector<std::string> methodDefaultSettings(const RotaryMethodInfo& method, int context, int longestLength)
{
    std::vector<std::string> settings;
    for (const ParamInfo& p : method.params) {
        double value = p.defaultValue;
        if (p.name == "factor" && method.method != RotaryMethod::DynamicNtk && context > 0)
            value = std::max(1.0, static_cast<double>(longestLength) / context);
        else if (p.name == "window" && context > 0)
            value = context / 2;
        settings.push_back(p.name + "=" + numberText(value));
    }
    return settings;
}

MethodComparisonDefaults methodComparisonDefaults(int context, const std::string& ownScaling, int maxLength,
                                                  const std::function<double(int length)>& windowFlops,
                                                  double flopsPerSecond)
{
    MethodComparisonDefaults d;
    d.own = true;
    for (const char* name : {"none", "yarn", "ntk"})
        if (name != ownScaling)
            d.methods.push_back(name);
    const int most = std::max(8, maxLength);
    const size_t curves = d.methods.size() + 1;
    // The longest length past the context, in eighths of it: 2 x, 3/2, 5/4.
    for (const int eighths : {16, 12, 10}) {
        d.lengths.clear();
        for (const int n : {context / 2, context, static_cast<int>(static_cast<long long>(context) * eighths / 8)}) {
            const int length = std::clamp(n, 8, most);
            if (d.lengths.empty() || length > d.lengths.back())
                d.lengths.push_back(length);
        }
        d.tokensPerLength = static_cast<size_t>(d.lengths.back());
        if (!windowFlops || flopsPerSecond <= 0 ||
            methodComparisonSeconds(windowFlops, curves, d.lengths, d.tokensPerLength, flopsPerSecond) <=
                kMethodComparisonBudgetSeconds)
            break;
    }
    return d;
}

double methodComparisonSeconds(const std::function<double(int length)>& windowFlops, size_t curves,
                               const std::vector<int>& lengths, size_t scoredTokens, double flopsPerSecond)
{
    double flops = 0;
    for (const int length : lengths)
        if (length > 0)
            for (const EvalWindow& w : planEvalWindows(scoredTokens, length, EvalMode::NonOverlapping, 0))
                flops += windowFlops(w.length);
    return flopsPerSecond > 0 ? static_cast<double>(curves) * flops / flopsPerSecond : 0;
}

namespace {

void refuseNonRotary(const std::string& scheme)
{
    throw InputError("the model's scheme is " + scheme +
                     "; evaluating under length-extension methods needs a rotary model (allowed: rope, xpos)");
}

} // namespace

void checkRotaryModel(const ModelConfig& config)
{
    if (!schemeByName(config.scheme).rotary)
        refuseNonRotary(config.scheme);
}

void checkRotaryModel(const LanguageModel& model)
{
    if (!model.rotary())
        refuseNonRotary(model.scheme());
}

std::string methodCurveLabel(const std::string& scheme, const RotaryMethodInfo& method,
                             const std::map<std::string, double>& params)
{
    if (method.method == RotaryMethod::None)
        return scheme;
    std::string shown;
    for (size_t i = 0; i < method.params.size(); ++i) {
        const ParamInfo& p = method.params[i];
        const auto it = params.find(p.name);
        if (it == params.end() || (i > 0 && it->second == p.defaultValue))
            continue;
        shown += (shown.empty() ? "" : ", ") + p.name + " " + numberText(it->second);
    }
    return scheme + "+" + method.name + (shown.empty() ? "" : " (" + shown + ")");
}

std::vector<std::string> resolvedMethodSettings(const LanguageModel& model, const MethodChoice& choice,
                                                const std::vector<int>& lengths)
{
    const RotaryMethodInfo& info = rotaryMethodByName(choice.method);
    const int longest = lengths.empty() ? model.context() : *std::max_element(lengths.begin(), lengths.end());
    std::vector<std::string> settings = model.methodSettings(info.name, longest);
    for (const std::string& s : choice.settings) {
        checkMethodSetting(info, s);
        settings.push_back(s);
    }
    return settings;
}

std::vector<MethodCurve> evaluateUnderMethods(LanguageModel& model, const std::vector<int32_t>& tokens,
                                              const EvalOptions& options, const std::vector<MethodChoice>& methods)
{
    checkRotaryModel(model);
    checkDistinctMethods(methods);
    // Every method's parameters are checked (the model's own spec path) before any work.
    std::vector<MethodCurve> curves;
    std::vector<std::vector<std::string>> settings;
    for (const MethodChoice& choice : methods) {
        MethodCurve curve;
        curve.choice = choice;
        settings.push_back(resolvedMethodSettings(model, choice, options.lengths));
        // InputError naming the parameter, its value and what is allowed
        const SchemeSpec spec = model.positionsUnder(choice.method, settings.back());
        curve.params = spec.scalingParams;
        curve.label = methodCurveLabel(model.scheme(), rotaryMethodByName(choice.method), curve.params);
        if (spec.logitC > 0) { // the modifier beside the method's parameters
            curve.params["logit-c"] = spec.logitC;
            curve.label += " × logit-c " + numberText(spec.logitC);
        }
        curves.push_back(std::move(curve));
    }

    // The model's own scaling comes back however this ends.
    struct Restore {
        LanguageModel& model;
        std::string method;
        std::vector<std::string> settings;
        ~Restore() { model.setScaling(method, settings); }
    } restore{model, model.scaling(), model.scalingSettings()};

    for (size_t m = 0; m < curves.size(); ++m) {
        model.setScaling(curves[m].choice.method, settings[m]);
        EvalOptions one = options;
        if (options.progress) {
            const double count = static_cast<double>(curves.size());
            one.progress = [&, m, count](double fraction) { return options.progress((m + fraction) / count); };
        }
        curves[m].points = evaluateModel(model, tokens, one);
    }
    return curves;
}

std::vector<MethodCurve> evaluateUnderMethods(Model& model, const std::vector<uint8_t>& text,
                                              const EvalOptions& options, const std::vector<MethodChoice>& methods)
{
    ByteLanguageModel bytes(model);
    return evaluateUnderMethods(bytes, bytesAsTokens(text), options, methods);
}

void writeMethodComparison(std::ostream& out, DataFormat format, const std::vector<MethodCurve>& curves,
                           const nlohmann::json& meta, const std::string& unit)
{
    if (format == DataFormat::Npy)
        throw InputError("a comparison of methods is written as .csv or .json (its method column is text), not .npy");
    if (format == DataFormat::Csv) {
        out << "method,length,loss,perplexity,bits_per_" << unit << "\n";
        char buf[32];
        for (const MethodCurve& c : curves)
            for (const EvalPoint& p : c.points) {
                out << c.choice.method << ',' << p.length;
                for (double v : {p.loss, p.perplexity, p.bitsPerByte}) {
                    out << ',';
                    out.write(buf, formatValue(v, buf));
                }
                out << '\n';
            }
        out.flush();
        return;
    }
    nlohmann::json doc = meta.is_object() ? meta : nlohmann::json::object();
    doc["methods"] = nlohmann::json::array();
    auto number = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); };
    for (const MethodCurve& c : curves) {
        nlohmann::json points = nlohmann::json::array();
        for (const EvalPoint& p : c.points) {
            nlohmann::json point{{"length", p.length},
                                 {"loss", number(p.loss)},
                                 {"perplexity", number(p.perplexity)},
                                 {"bits_per_" + unit, number(p.bitsPerByte)},
                                 {unit + "s", p.tokens}};
            if (!p.supported)
                point["unsupported"] = p.note;
            points.push_back(std::move(point));
        }
        nlohmann::json params = nlohmann::json::object();
        for (const auto& [name, value] : c.params)
            params[name] = value;
        doc["methods"].push_back({{"method", c.choice.method},
                                  {"label", c.label},
                                  {"settings", c.choice.settings},
                                  {"params", params},
                                  {"points", std::move(points)}});
    }
    out << doc.dump(1) << '\n';
    out.flush();
}

} // namespace plab
