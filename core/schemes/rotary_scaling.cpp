// The rotary frequency table and every length-extension method's formula, with their parameter checks.
#include "schemes/rotary_scaling.h"

#include "schemes/catalog_table.h"
#include "base/errors.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <sstream>

namespace plab {

namespace {

using catalog::ParamRow;
using catalog::Range;

// One method's texts and flags; its parameters are the rows of kMethodParamRows that name it.
struct MethodRow {
    std::string_view name;
    RotaryMethod method;
    std::string_view title;
    std::string_view formula;
    std::string_view explanation;
    bool remapsPositions; // rerope, leaky-rerope
    bool usesContext;     // reads the original context L
};

// Every method, `none` first: {name, method, title, formula, explanation, remapsPositions, usesContext}.
constexpr MethodRow kMethodRows[] = {
    {"none", RotaryMethod::None, "No length extension", "θ'_i = θ_i", "Plain rotary frequencies.", false, false},
    {"pi", RotaryMethod::Pi, "Position interpolation", "θ'_i = θ_i / s",
     "Chen et al. (2023): squeeze every position by the factor s, so s times the training context maps onto angles "
     "seen in training. Meant to be followed by a short fine-tune.",
     false, false},
    {"ntk", RotaryMethod::Ntk, "NTK-aware base scaling", "b' = b s^(d/(d-2)),  θ'_i = b'^(-2i/d)",
     "Raise the base so the lowest frequency is interpolated by s while the highest stays as it was: nearby tokens "
     "keep their sharp resolution.",
     false, false},
    {"dynamic-ntk", RotaryMethod::DynamicNtk, "Dynamic NTK", "b' = b (s n/L - (s-1))^(d/(d-2)) when n > L, else b",
     "NTK scaling that grows with the current sequence length n: nothing changes up to the training context L. With "
     "s = 1 the base follows n/L.",
     false, true},
    {"yarn", RotaryMethod::Yarn, "YaRN",
     "γ_i = clamp((i - lo)/(hi - lo), 0, 1), θ'_i = γ_i θ_i/s + (1-γ_i) θ_i, logits × (0.1 ln s + 1)²",
     "Peng et al. (2023): frequencies that turn more than beta-fast times over the training context are kept, those "
     "that turn less than beta-slow times are interpolated, a linear ramp in between; the logits are sharpened by the "
     "attention factor.",
     false, true},
    {"llama3", RotaryMethod::Llama3, "Llama 3 band-wise scaling",
     "λ_i < L/high: θ_i;  λ_i > L/low: θ_i/s;  else (1-t) θ_i/s + t θ_i, t = (L/λ_i - low)/(high - low)",
     "Meta (2024): short wavelengths are kept, wavelengths longer than L/low are interpolated by s, and a smooth band "
     "joins them.",
     false, true},
    {"rerope", RotaryMethod::Rerope, "ReRoPE", "P(m, n) = min(m - n, w)",
     "Su (2023): distances inside the window keep their rotary position, every longer distance is treated as w, so no "
     "score ever sees a position it was not trained on. Causal only.",
     true, true},
    {"leaky-rerope", RotaryMethod::LeakyRerope, "Leaky ReRoPE", "P(m, n) = m - n if m - n < w, else w + (m - n - w)/k",
     "ReRoPE whose positions keep growing past the window, k times slower. Causal only.", true, true},
    {"self-extend", RotaryMethod::SelfExtend, "Self-Extend",
     "P(m, n) = m - n if m - n < w, else ⌊m/G⌋ - ⌊n/G⌋ + w - ⌊w/G⌋",
     "Jin et al. (ICML 2024): neighbours inside the window keep their positions; farther tokens are grouped G at a "
     "time (floor division of both positions), shifted so the two regions meet at w. Causal only.",
     true, true},
    {"longrope", RotaryMethod::Longrope, "LongRoPE",
     "θ'_i = θ_i / f_i, f = long factors when n > L, else short factors; cos, sin × √(1 + ln s / ln L)",
     "Ding et al. (2024), as in Phi-3: every rotary pair has its own rescale factor, searched for the model, one list "
     "for sequences within the original context L and one for longer ones; the attention factor sharpens the logits. "
     "The lists come from the model's config; without them every factor is 1.",
     false, true},
};

constexpr std::string_view kFactorText = "s: how many times longer than the training context";
constexpr ParamRow factorRow(std::string_view method, double def)
{
    return {method, "factor", def, 1, 1e6, Range::Real, kFactorText};
}
// The window default: 0 stands for "half the training context", resolved by rotaryScaling.
constexpr ParamRow windowRow(std::string_view method)
{
    return {method,
            "window",
            0,
            0,
            1000000,
            Range::Integer,
            "w: distances below it keep their position (0: half the training context; must be < L)"};
}

// L of the methods that read it: 0 stands for "the model's training context". A model fine-tuned at a longer
// context (train --init) keeps the context it was first trained at, as Hugging Face's original_max_position_embeddings.
constexpr ParamRow originalContextRow(std::string_view method)
{
    return {method,
            "original-context",
            0,
            0,
            1000000,
            Range::Integer,
            "L: the context the model was first trained at (0: its training context)"};
}

// Every method's parameters, in the order --help and the GUI's method editor list them; one row each.
constexpr ParamRow kMethodParamRows[] = {
    // {method, name, default, min, max, range, description}
    factorRow("pi", 4),
    factorRow("ntk", 4),
    factorRow("dynamic-ntk", 1),
    originalContextRow("dynamic-ntk"),
    factorRow("yarn", 4),
    {"yarn", "beta-fast", 32, 0, 1e6, Range::RealAboveMin, "rotations over L above which a frequency is kept"},
    {"yarn", "beta-slow", 1, 0, 1e6, Range::RealAboveMin, "rotations over L below which a frequency is interpolated"},
    {"yarn", "attention-factor", 0, 0, 100, Range::Real,
     "multiplies cos and sin of q and k (0: 0.1 ln s + 1); logits scale by its square"},
    originalContextRow("yarn"),
    factorRow("llama3", 4),
    {"llama3", "low-freq-factor", 1, 0, 1e6, Range::RealAboveMin, "wavelengths above L/low are interpolated"},
    {"llama3", "high-freq-factor", 4, 0, 1e6, Range::RealAboveMin, "wavelengths below L/high are kept"},
    originalContextRow("llama3"),
    windowRow("rerope"),
    originalContextRow("rerope"),
    windowRow("leaky-rerope"),
    {"leaky-rerope", "leak", 16, 0, 1e6, Range::RealAboveMin, "k: positions past the window grow 1/k as fast"},
    originalContextRow("leaky-rerope"),
    {"self-extend", "group", 4, 1, 1e6, Range::Integer, "G: positions past the window are grouped G at a time"},
    windowRow("self-extend"),
    originalContextRow("self-extend"),
    factorRow("longrope", 4),
    {"longrope", "attention-factor", 0, 0, 100, Range::Real,
     "multiplies cos and sin of q and k (0: √(1 + ln s / ln L), 1 when s <= 1); logits scale by its square"},
    originalContextRow("longrope"),
};

RotaryMethodInfo methodFromRow(const MethodRow& row)
{
    RotaryMethodInfo m;
    m.name = row.name;
    m.method = row.method;
    m.title = row.title;
    m.formula = row.formula;
    m.explanation = row.explanation;
    m.params = catalog::paramsOf(kMethodParamRows, row.name);
    m.remapsPositions = row.remapsPositions;
    m.usesContext = row.usesContext;
    return m;
}

// The window a remapping method uses: its parameter, or half the context when the parameter is 0.
int resolvedWindow(const std::map<std::string, double>& params, int context)
{
    const double w = params.at("window");
    return w > 0 ? static_cast<int>(w) : std::max(1, context / 2);
}

} // namespace

const std::vector<RotaryMethodInfo>& rotaryMethodCatalog()
{
    static const std::vector<RotaryMethodInfo> entries = catalog::entriesFrom(kMethodRows, methodFromRow);
    return entries;
}

const RotaryMethodInfo& rotaryMethodInfo(RotaryMethod method)
{
    return catalog::entryWithKey(rotaryMethodCatalog(), &RotaryMethodInfo::method, method);
}

const RotaryMethodInfo& rotaryMethodByName(std::string_view name)
{
    if (const RotaryMethodInfo* m = catalog::entryNamed(rotaryMethodCatalog(), name))
        return *m;
    throw InputError("scaling = '" + std::string(name) +
                         "' is not a known method; known methods: " + catalog::namesOf(rotaryMethodCatalog()),
                     "scaling");
}

std::pair<std::string, std::string> splitSchemeLabel(std::string_view label)
{
    const size_t plus = label.find('+');
    if (plus == std::string_view::npos)
        return {std::string(label), "none"};
    if (plus + 1 == label.size())
        throw InputError("'" + std::string(label) +
                         "' names no method after '+'; allowed: SCHEME+METHOD with a known "
                         "method: " +
                         catalog::namesOf(rotaryMethodCatalog()));
    return {std::string(label.substr(0, plus)), std::string(label.substr(plus + 1))};
}

std::vector<std::string> parametersUnderMethod(std::string_view scheme, std::string_view method)
{
    std::vector<std::string> names;
    for (const ParamInfo& p : schemeByName(scheme).params)
        names.push_back(p.name);
    for (const ParamInfo& p : rotaryMethodByName(method).params)
        names.push_back(p.name);
    return names;
}

std::vector<std::string> settingsTakenBy(std::string_view scheme, std::string_view method,
                                         const std::vector<std::string>& settings)
{
    const std::vector<std::string> names = parametersUnderMethod(scheme, method);
    std::vector<std::string> taken;
    for (const std::string& s : settings)
        if (std::find(names.begin(), names.end(), s.substr(0, s.find('='))) != names.end())
            taken.push_back(s);
    return taken;
}

void checkMethodSetting(const RotaryMethodInfo& method, const std::string& setting)
{
    const size_t eq = setting.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == setting.size())
        throw InputError("method " + method.name + ": setting '" + setting + "' is not NAME=VALUE");
    const std::string name = setting.substr(0, eq);
    if (!catalog::entryNamed(method.params, name) && !isMethodModifierSetting(setting)) {
        const std::string names = catalog::namesOf(method.params);
        throw InputError(
            "method " + method.name + " has no parameter '" + name + "' (" + setting + "); its parameters: " +
            (method.method == RotaryMethod::None ? "none (length-extension parameters need a method)" : names));
    }
}

std::string schemeLabel(const SchemeSpec& spec)
{
    return spec.scaling == RotaryMethod::None ? spec.name() : spec.name() + "+" + rotaryMethodInfo(spec.scaling).name;
}

int scalingContext(const SchemeSpec& spec)
{
    auto original = spec.scalingParams.find("original-context");
    if (original != spec.scalingParams.end() && original->second > 0)
        return static_cast<int>(original->second);
    return spec.context > 0 ? spec.context : kScalingContextWithoutModel;
}

bool schemesReadContext(const std::vector<std::string>& schemes, bool logn, std::string_view scaling,
                        const std::vector<std::string>& settings)
{
    if (logn || rotaryMethodByName(scaling).usesContext)
        return true;
    std::string window;
    const bool windowSet = findAssignment(settings, "window", window);
    for (const std::string& name : schemes) {
        const auto [scheme, method] = splitSchemeLabel(name);
        if ((schemeByName(scheme).hasWindow && !windowSet) || rotaryMethodByName(method).usesContext)
            return true;
    }
    return false;
}

std::vector<double> rotaryWavelengths(const std::vector<double>& theta)
{
    std::vector<double> out;
    out.reserve(theta.size());
    for (double t : theta)
        out.push_back(2 * 3.14159265358979323846 / t);
    return out;
}

double rotaryFrequency(int i, int dim, double base)
{
    return std::pow(base, -2.0 * i / dim);
}

std::vector<double> rotaryFrequencies(int dim, double base)
{
    return rotaryFrequencies(dim, base, RotaryShape{});
}

RotaryShape rotaryShape(const SchemeSpec& spec)
{
    RotaryShape shape;
    if (spec.params.count("keep"))
        shape.keep = spec.params.at("keep");
    if (spec.params.count("rotary-fraction"))
        shape.rotaryFraction = spec.params.at("rotary-fraction");
    return shape;
}

int rotatedDims(int dim, double rotaryFraction)
{
    return static_cast<int>(std::floor(dim * rotaryFraction));
}

int keptPairs(int rotatedDims, double keep)
{
    return static_cast<int>(std::floor(keep * (rotatedDims / 2) + 0.5));
}

std::vector<double> rotaryFrequencies(int dim, double base, const RotaryShape& shape)
{
    const int r = rotatedDims(dim, shape.rotaryFraction);
    const int kept = std::min(keptPairs(r, shape.keep), dim / 2);
    std::vector<double> theta(dim / 2, 0.0);
    for (int i = 0; i < kept; ++i)
        theta[i] = rotaryFrequency(i, r, base);
    return theta;
}

void validateRotaryScaling(const SchemeSpec& spec)
{
    if (spec.scaling == RotaryMethod::None) {
        if (!spec.scalingParams.empty())
            throw InputError("scheme " + spec.name() + " has no parameter '" + spec.scalingParams.begin()->first +
                                 "' without a length-extension method",
                             "scaling");
        return;
    }
    const RotaryMethodInfo& info = rotaryMethodInfo(spec.scaling);
    if (!spec.info().rotary)
        throw InputError("scaling = " + info.name + " is not allowed for scheme " + spec.name() +
                             "; allowed: rotary schemes (rope, xpos)",
                         "scaling");
    const std::string where = "scaling " + info.name + ": ";
    catalog::checkParamValues(info.params, spec.scalingParams, "scaling " + info.name, where + "no parameter ");
    const int L = scalingContext(spec);
    // L is the context the model was first trained at: never past the context it has now (train --init at a longer
    // context keeps the shorter one), else a window "below L" could reach past every position seen.
    if (spec.context > 0 && L > spec.context)
        throw InputError(where + "original-context = " + std::to_string(L) + " must not exceed the context " +
                         std::to_string(spec.context) + "; allowed: integers in [0, " + std::to_string(spec.context) +
                         "] (0: the context)");
    const int rotated = rotatedDims(spec.intParam("dim"), rotaryShape(spec).rotaryFraction);
    if ((spec.scaling == RotaryMethod::Ntk || spec.scaling == RotaryMethod::DynamicNtk) && rotated <= 2)
        throw InputError(where + (rotated == spec.intParam("dim") ? "dim = " : "rotated dims ⌊f d⌋ = ") +
                         std::to_string(rotated) +
                         " is not allowed; allowed: even dims >= 4 (the base grows as s^(d/(d-2)))");
    if (info.remapsPositions) {
        if (spec.bidirectional)
            throw InputError(where + "bidirectional attention is not allowed; the position remapping is causal only",
                             "bidirectional");
        const double w = spec.scalingParams.at("window");
        const bool original =
            spec.scalingParams.count("original-context") && spec.scalingParams.at("original-context") > 0;
        const std::string contextName = original ? "original-context L" : "training context L";
        if (w > 0 && w >= L)
            throw InputError(where + "window = " + catalog::shortNumberText(w) + " must be below the " + contextName +
                             " = " + std::to_string(L) + "; allowed: integers in [1, " + std::to_string(L - 1) +
                             "] (0: L/2)");
        if (w == 0 && L < 2)
            throw InputError(where + "the default window L/2 needs a " + contextName + " >= 2 (got " +
                             std::to_string(L) + ")");
    }
    const bool lists = !spec.shortFactors.empty() || !spec.longFactors.empty();
    if (lists && spec.scaling != RotaryMethod::Longrope)
        throw InputError(where + "per-pair short and long factors are longrope's; allowed: none for " + info.name,
                         "scaling");
    for (const auto* list : {&spec.shortFactors, &spec.longFactors}) {
        const std::string listName = list == &spec.shortFactors ? "short factors" : "long factors";
        if (!list->empty() && static_cast<int>(list->size()) != rotated / 2)
            throw InputError(where + "the " + listName + " hold " + std::to_string(list->size()) +
                             " values; allowed: one per rotated pair, " + std::to_string(rotated / 2));
        for (size_t i = 0; i < list->size(); ++i)
            if (!((*list)[i] > 0) || !std::isfinite((*list)[i]))
                throw InputError(where + "value " + std::to_string(i) + " of the " + listName + " = " +
                                 catalog::shortNumberText((*list)[i]) + " is not allowed; allowed: positive numbers");
    }
    // beta-fast = beta-slow is allowed, as in Hugging Face: the ramp is one step wide (hi += 0.001 when lo = hi).
    if (spec.scaling == RotaryMethod::Yarn &&
        !(spec.scalingParams.at("beta-fast") >= spec.scalingParams.at("beta-slow")))
        throw InputError(
            where + "beta-fast = " + catalog::shortNumberText(spec.scalingParams.at("beta-fast")) +
            " must be at least beta-slow = " + catalog::shortNumberText(spec.scalingParams.at("beta-slow")) +
            "; allowed: beta-fast >= beta-slow (more rotations over L than beta-slow, or as many)");
    if (spec.scaling == RotaryMethod::Llama3 &&
        !(spec.scalingParams.at("high-freq-factor") > spec.scalingParams.at("low-freq-factor")))
        throw InputError(
            where + "high-freq-factor = " + catalog::shortNumberText(spec.scalingParams.at("high-freq-factor")) +
            " must exceed low-freq-factor = " + catalog::shortNumberText(spec.scalingParams.at("low-freq-factor")));
}

namespace {

// Each method's formula, applied to `out` (θ, θ' = θ, ramp 0, base, context and length filled in).
using MethodParams = std::map<std::string, double>;

void applyPi(RotaryScaling& out, const MethodParams& params)
{
    const double s = params.at("factor");
    for (double& t : out.thetaScaled)
        t /= s;
}

// NTK raises the base by s; dynamic NTK by s n/L - (s-1) once the sequence n is past the context L.
void applyNtk(RotaryScaling& out, const MethodParams& params)
{
    const double s = params.at("factor");
    const double d = out.rotatedDims;
    double grow = s;
    if (out.method == RotaryMethod::DynamicNtk)
        grow = out.length > out.context ? s * out.length / static_cast<double>(out.context) - (s - 1) : 1.0;
    out.scaledBase = out.base * std::pow(grow, d / (d - 2));
    out.thetaScaled = rotaryFrequencies(out.dim, out.scaledBase, out.shape);
}

// Hugging Face's _compute_yarn_parameters: lo and hi from the correction dims of beta-fast and beta-slow rotations,
// floored and ceiled unless `truncate` is false (its truncate: false keeps the exact range), then clamped to [0, d-1].
void applyYarn(RotaryScaling& out, const MethodParams& params, bool truncate)
{
    const double s = params.at("factor");
    const double d = out.rotatedDims;
    const double L = out.context;
    auto correction = [&](double rotations) {
        return d * std::log(L / (2 * std::numbers::pi * rotations)) / (2 * std::log(out.base));
    };
    double lo = correction(params.at("beta-fast"));
    double hi = correction(params.at("beta-slow"));
    if (truncate) {
        lo = std::floor(lo);
        hi = std::ceil(hi);
    }
    lo = std::max(lo, 0.0);
    hi = std::min(hi, d - 1);
    if (lo == hi)
        hi += 0.001;
    out.rampLow = lo;
    out.rampHigh = hi;
    for (size_t i = 0; i < out.theta.size(); ++i) {
        const double gamma = std::clamp((static_cast<double>(i) - lo) / (hi - lo), 0.0, 1.0);
        out.ramp[i] = gamma;
        out.thetaScaled[i] = gamma * out.theta[i] / s + (1 - gamma) * out.theta[i];
    }
    const double given = params.at("attention-factor");
    out.attentionFactor = given > 0 ? given : (s > 1 ? 0.1 * std::log(s) + 1 : 1.0);
}

void applyLlama3(RotaryScaling& out, const MethodParams& params)
{
    const double s = params.at("factor");
    const double low = params.at("low-freq-factor"), high = params.at("high-freq-factor");
    const double L = out.context;
    for (size_t i = 0; i < out.theta.size(); ++i) {
        const double wavelength = 2 * std::numbers::pi / out.theta[i];
        if (wavelength < L / high) {
            out.ramp[i] = 0;
        } else if (wavelength > L / low) {
            out.ramp[i] = 1;
            out.thetaScaled[i] = out.theta[i] / s;
        } else {
            const double t = (L / wavelength - low) / (high - low);
            out.ramp[i] = 1 - t;
            out.thetaScaled[i] = (1 - t) * out.theta[i] / s + t * out.theta[i];
        }
    }
}

// LongRoPE (Hugging Face's _compute_longrope_parameters): θ'_i = θ_i / f_i with the long factors once the sequence n
// is past L, else the short ones (1 when the model gave none); attention factor √(1 + ln s / ln L) unless given.
void applyLongrope(RotaryScaling& out, const MethodParams& params, const std::vector<double>& shortFactors,
                   const std::vector<double>& longFactors)
{
    const std::vector<double>& factors = out.length > out.context ? longFactors : shortFactors;
    for (size_t i = 0; i < out.thetaScaled.size() && i < factors.size(); ++i)
        out.thetaScaled[i] = out.theta[i] / factors[i];
    const double s = params.at("factor");
    const double given = params.at("attention-factor");
    out.attentionFactor =
        given > 0 ? given : (s > 1 && out.context > 1 ? std::sqrt(1 + std::log(s) / std::log(out.context)) : 1.0);
}

// ReRoPE is leaky ReRoPE with an infinite leak: positions past the window all read w.
void applyRerope(RotaryScaling& out, const MethodParams& params)
{
    out.window = resolvedWindow(params, out.context);
    out.leak = out.method == RotaryMethod::Rerope ? std::numeric_limits<double>::infinity() : params.at("leak");
}

// Self-Extend: the window as ReRoPE's, the group G past it.
void applySelfExtend(RotaryScaling& out, const MethodParams& params)
{
    out.window = resolvedWindow(params, out.context);
    out.group = static_cast<int>(params.at("group"));
}

} // namespace

RotaryScaling rotaryScaling(int dim, double base, const RotaryShape& shape, RotaryMethod method,
                            const std::map<std::string, double>& params, int context, int length,
                            const std::vector<double>& shortFactors, const std::vector<double>& longFactors,
                            bool yarnTruncate)
{
    RotaryScaling out;
    out.method = method;
    out.dim = dim;
    out.shape = shape;
    out.rotatedDims = rotatedDims(dim, shape.rotaryFraction);
    out.keptPairs = std::min(keptPairs(out.rotatedDims, shape.keep), dim / 2);
    out.base = base;
    out.context = context;
    out.length = length;
    out.theta = rotaryFrequencies(dim, base, shape);
    out.thetaScaled = out.theta;
    out.ramp.assign(out.theta.size(), 0.0);
    out.scaledBase = base;
    switch (method) {
    case RotaryMethod::None:
        break;
    case RotaryMethod::Pi:
        applyPi(out, params);
        break;
    case RotaryMethod::Ntk:
    case RotaryMethod::DynamicNtk:
        applyNtk(out, params);
        break;
    case RotaryMethod::Yarn:
        applyYarn(out, params, yarnTruncate);
        break;
    case RotaryMethod::Llama3:
        applyLlama3(out, params);
        break;
    case RotaryMethod::Rerope:
    case RotaryMethod::LeakyRerope:
        applyRerope(out, params);
        break;
    case RotaryMethod::SelfExtend:
        applySelfExtend(out, params);
        break;
    case RotaryMethod::Longrope:
        applyLongrope(out, params, shortFactors, longFactors);
        break;
    }
    out.logitScale = out.attentionFactor * out.attentionFactor;
    return out;
}

RotaryScaling rotaryScaling(const SchemeSpec& spec, int length)
{
    if (!spec.info().rotary)
        throw InputError("scheme " + spec.name() + " is not rotary; rotary frequencies exist for rope and xpos only");
    return rotaryScaling(spec.intParam("dim"), spec.param("base"), rotaryShape(spec), spec.scaling, spec.scalingParams,
                         scalingContext(spec), length, spec.shortFactors, spec.longFactors, spec.yarnTruncate);
}

double rotaryProbe(const RotaryScaling& scaling, double distance, const std::vector<double>& logZeta, double scaleBase)
{
    return rotaryProbeAtPosition(scaling, scaling.position(distance), logZeta, scaleBase);
}

double rotaryProbeAtPosition(const RotaryScaling& scaling, double position, const std::vector<double>& logZeta,
                             double scaleBase)
{
    // Each pair contributes 2 cos: cos p θ'_i from q·k's two components alike.
    return scaling.logitScale * (2.0 * sinusoidalDot(position, scaling.thetaScaled, logZeta, scaleBase));
}

} // namespace plab
