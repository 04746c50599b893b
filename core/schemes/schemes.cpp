// Scheme catalogue, parameter validation, and the small closed-form helpers (ALiBi slopes, T5 buckets, dot).
#include "schemes/schemes.h"

#include "schemes/catalog_table.h"
#include "base/errors.h"
#include "base/matrix_output.h"
#include "schemes/rotary_scaling.h"
#include "schemes/softmax_modifiers.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace plab {

namespace {

using catalog::ParamRow;
using catalog::Range;

// Which of SchemeInfo's flags a scheme sets (the rest stay false; bidirectionalAllowed stays true unless CausalOnly).
enum Trait : unsigned {
    NoTraits = 0,
    Rotary = 1,        // rotates q and k; the bias view is a probe score
    Absolute = 2,      // added to the token embedding
    Additive = 4,      // adds a bias to the attention scores
    Trainable = 8,     // has per-head values a model learns
    Window = 16,       // masks keys outside a window
    CausalOnly = 32,   // refuses --bidirectional
    DataDependent = 64 // the bias depends on the input
};

// One scheme's texts and traits; its parameters are the rows of kParamRows that name it.
struct SchemeRow {
    std::string_view name;
    SchemeKind kind;
    std::string_view title;
    std::string_view formula;
    std::string_view explanation;
    unsigned traits;
};

// Every scheme, in the order `schemes` and the GUI list them: {name, kind, title, formula, explanation, traits}.
constexpr SchemeRow kSchemeRows[] = {
    {"none", SchemeKind::None, "NoPE (no positional encoding)", "b(m, n) = 0   (causal mask only)",
     "No position information at all. A causal decoder can still infer position from how many tokens it sees, which "
     "is why NoPE extrapolates better than one might expect.",
     NoTraits},
    {"sinusoidal", SchemeKind::Sinusoidal, "Sinusoidal (absolute)",
     "p[m,2i] = sin(m w_i), p[m,2i+1] = cos(m w_i), w_i = base^(-2i/d); "
     "view: dot(p_m, p_n) - d/2 = sum_{i<d/2} cos((m-n) w_i) - d/2",
     "The original Transformer's absolute encoding, added to the token embedding. The dot product of two position "
     "vectors depends only on their distance and oscillates as it decays; past the training length the model meets "
     "position vectors it has never seen.",
     Absolute},
    {"learned", SchemeKind::Learned, "Learned absolute",
     "x_m = e(token_m) + P[m],  P a trained table of `context` rows",
     "A trained table of position vectors (GPT-2, BERT). It has no row for positions past the training context, so it "
     "cannot extrapolate at all: such positions are reported as unsupported.",
     Absolute},
    {"rope", SchemeKind::Rope, "RoPE (rotary)",
     "rotate pair (2i, 2i+1) of q_m and k_n by m θ_i, n θ_i; θ_i = base^(-2i/r) for i < round(p r/2), else 0; "
     "r = ⌊f d⌋ (f: rotary-fraction, p: keep); probe (q = k = 1): sum_{i<d/2} 2 cos((m-n) θ_i)",
     "Rotary embeddings rotate queries and keys so that their dot product depends only on the relative distance. The "
     "probe shows the score of an all-ones query and key: a slowly decaying oscillation. Unseen rotation angles past "
     "the training length hurt extrapolation. keep < 1 is p-RoPE (Barbero et al. 2025): only the highest frequencies "
     "turn, the lowest are set to 0. rotary-fraction < 1 is GPT-NeoX's rotary_pct: only the first dims turn, over a "
     "full ladder of frequencies of their own.",
     Rotary},
    {"xpos", SchemeKind::Xpos, "XPOS (rotary with exponential decay)",
     "rope, then q_m *= ζ_i^(m/s), k_n *= ζ_i^(-n/s), ζ_i = (2i + γd)/((1+γ)d); "
     "probe: sum_i 2 cos((m-n) θ_i) ζ_i^((m-n)/s)",
     "XPOS multiplies the rotary score by a per-frequency exponential decay in distance, making long-range scores "
     "smaller and steadier. It is causal only; with blockwise causal attention (bca) it extrapolates further.",
     Rotary | CausalOnly},
    {"t5", SchemeKind::T5, "T5 relative buckets",
     "b_h(m, n) = B[bucket(n - m), h]; exact buckets below num-buckets/2, log-spaced up to max-distance",
     "A learned scalar per (bucket, head). Near distances get their own bucket, far ones share log-spaced buckets, "
     "everything past max-distance the last one. Without a trained model the table shows its untrained prior "
     "-log(1 + distance).",
     Additive | Trainable},
    {"alibi", SchemeKind::Alibi, "ALiBi (linear biases)",
     "b_h(m, n) = -slope_h (m - n); slope_h = 2^(-8(h+1)/H) for H a power of two",
     "Attention with Linear Biases: a fixed penalty proportional to distance, with a geometric sequence of slopes "
     "across heads. No position embedding at all; trains short and tests long.",
     Additive},
    {"kerple-power", SchemeKind::KerplePower, "KERPLE (power kernel)",
     "b_h(m, n) = -r1 |m - n|^r2,  r1 > 0, 0 < r2 <= 2",
     "KERPLE derives relative biases from conditionally positive definite kernels. The power variant generalises "
     "ALiBi (r2 = 1); r1 and r2 are trained per head.",
     Additive | Trainable},
    {"kerple-log", SchemeKind::KerpleLog, "KERPLE (logarithmic kernel)",
     "b_h(m, n) = -r1 log(1 + r2 |m - n|),  r1, r2 > 0",
     "The logarithmic KERPLE variant: the penalty grows only logarithmically with distance, so far tokens stay "
     "reachable. r1 and r2 are trained per head.",
     Additive | Trainable},
    {"sandwich", SchemeKind::Sandwich, "Sandwich",
     "b_h(m, n) = (sum_{i<d/2} cos((m-n) w_i) - d/2) H / (8 (h+1)),  w_i = base^(-2i/d)",
     "Sandwich uses the sinusoidal dot product itself as a relative bias, scaled per head like ALiBi's slopes: it "
     "decays roughly logarithmically and oscillates a little.",
     Additive},
    {"local", SchemeKind::Local, "Local attention (super baseline)",
     "b(m, n) = 0 if 0 <= m - n < window (bidirectional: |m - n| < window), else -inf",
     "The 'super baseline' of the length-extrapolation literature: each query sees only the last `window` keys, its "
     "training context. It can never meet a distance it was not trained on. In a model the windows chain through the "
     "layers (a token reaches layers x (window - 1) back), so a model's default window keeps that whole reach inside "
     "the training context.",
     Additive | Window},
    {"bca", SchemeKind::Bca, "Blockwise causal attention",
     "blocks of window/2; query m sees keys n <= m in its own block and the previous one",
     "XPOS's blockwise causal attention: a sliding window made of blocks, so every query sees between window/2 and "
     "window keys, all at distances seen in training.",
     Additive | Window | CausalOnly},
    {"fire", SchemeKind::Fire, "FIRE (learned function of the normalised distance)",
     "b_h(m, n) = MLP_h(ψ(m - n) / ψ(max(m, T))),  ψ(t) = ln(c t + 1),  MLP 1 -> 32 -> H (ReLU), c and T learned",
     "FIRE (Li et al., ICLR 2024) learns the bias as a function of the distance divided by the query's position (its "
     "'progressive interpolation'): inputs stay in [0, 1] at any length, and the log transform ψ keeps near distances "
     "apart. Rows m <= T use T instead of m, so short sequences see a plain function of distance. It contains ALiBi "
     "and KERPLE as special cases. Without a trained model the view shows its untrained prior (the reference code's "
     "random initialisation, from a fixed seed).",
     Additive | Trainable | CausalOnly},
    {"fox", SchemeKind::Fox, "FoX (forgetting gate, data-dependent)",
     "b_h(m, n) = F_m - F_n,  F_t = sum_{l<=t} ln σ(w_h . x_l + b_h),  x_l the layer's normed input; no other "
     "position; view (w = 0): -(m - n) ln(1 + e^(-b))",
     "The Forgetting Transformer (Lin et al., ICLR 2025) gives every head a forget gate f_t = σ(w_h . x_t + b_h) "
     "computed from the token itself: key n's score drops by -ln f_l for every later token l up to the query. The "
     "decay is learned and depends on the text (a gate near 1 keeps the past, near 0 wipes it); nothing else encodes "
     "position. "
     "Without a model the view shows the untrained gate (w = 0): an ALiBi line of slope ln(1 + e^(-b)) per token; a "
     "trained model's bias depends on the text it reads (the per-input view).",
     Additive | Trainable | CausalOnly},
    {"cope", SchemeKind::Cope, "CoPE (contextual positions)",
     "b(m, n) = z_m(p_mn) interpolated between ⌊p⌋ and ⌈p⌉,  z_m(p) = q_m · E[:, p],  "
     "p_mn = min(Σ_{t=n..m} σ(q_m · k_t / √d), npos-max - 1),  E learned (d x npos-max, shared by the heads)",
     "CoPE (Golovneva et al. 2024) makes a position a count: each key t between n and the query m adds its gate "
     "σ(q_m · k_t / √d), a number between 0 and 1, so a head can count words or sentences instead of tokens. The "
     "position p_mn is looked up in a learned table of position embeddings (interpolated between integers) and its "
     "score against the query is added to the logit. The bias depends on the text, so it has no static view: the "
     "Attention on text tab shows a trained model's positions and bias on your text. The lab's path is exact and not "
     "fused: it costs more than the fused schemes.",
     Trainable | CausalOnly | DataDependent},
};

// The rows every sinusoid or rotation shares (dim, base) and every windowed scheme's attention sinks.
constexpr std::string_view kDimText = "dimension of the sinusoid / rotation (number of frequencies x 2)";
constexpr std::string_view kBaseText = "wavelength base: frequencies are base^(-2i/dim)";
constexpr ParamRow dimRow(std::string_view scheme, double def)
{
    return {scheme, "dim", def, 2, 4096, Range::EvenInteger, kDimText};
}
constexpr ParamRow baseRow(std::string_view scheme)
{
    return {scheme, "base", 10000, 1, 1e12, Range::RealAboveMin, kBaseText};
}
// StreamingLLM's attention sinks: the first keys stay visible to every query past the window.
constexpr std::string_view kSinksText =
    "keys n < sinks stay visible to every query m >= n (attention sinks); positions stay the original ones (no rolling "
    "re-index as in StreamingLLM)";
constexpr ParamRow sinksRow(std::string_view scheme)
{
    return {scheme, "sinks", 0, 0, 1000000, Range::Integer, kSinksText};
}

// Every scheme's parameters, in the order `schemes`, --help and the GUI's panel list them; one row each.
constexpr ParamRow kParamRows[] = {
    // {scheme, name, default, min, max, range, description}
    dimRow("sinusoidal", 128),
    baseRow("sinusoidal"),
    dimRow("rope", 64),
    baseRow("rope"),
    {"rope", "keep", 1, 0, 1, Range::RealAboveMin,
     "p-RoPE's p: the fraction of the pairs that turn, highest frequencies first; the others get θ = 0"},
    {"rope", "rotary-fraction", 1, 0, 1, Range::RealAboveMin,
     "GPT-NeoX's rotary_pct f: only the first ⌊f d⌋ dims turn, with θ_i = base^(-2i/⌊f d⌋)"},
    dimRow("xpos", 64),
    baseRow("xpos"),
    {"xpos", "gamma", 0.4, 0, 10, Range::RealAboveMin, "decay offset γ: larger means weaker decay"},
    {"xpos", "scale-base", 512, 1, 1e9, Range::Real, "scale s: the distance over which ζ acts"},
    {"t5", "num-buckets", 32, 2, 1024, Range::Integer, "number of buckets (halved per direction when bidirectional)"},
    {"t5", "max-distance", 128, 2, 1000000, Range::Integer, "distance from which all keys share the last bucket"},
    {"kerple-power", "r1", 1, 0, 1000, Range::RealAboveMin, "scale of the penalty"},
    {"kerple-power", "r2", 1, 0, 2, Range::RealAboveMin, "power of the distance (1 = ALiBi-like)"},
    {"kerple-log", "r1", 1, 0, 1000, Range::RealAboveMin, "scale of the penalty"},
    {"kerple-log", "r2", 1, 0, 1000, Range::RealAboveMin, "distance scale inside the logarithm"},
    dimRow("sandwich", 128),
    baseRow("sandwich"),
    {"local", "window", 16, 1, 1000000, Range::Integer,
     "number of visible keys (default: the training context; in a model of L layers the largest W with L (W - 1) + 1 "
     "<= context)"},
    sinksRow("local"),
    {"bca", "window", 16, 2, 1000000, Range::EvenInteger, "window (two blocks of window/2 keys)"},
    sinksRow("bca"),
    {"fire", "c", 0.1, 0, 1000, Range::RealAboveMin, "initial scale c of ψ(t) = ln(c t + 1) (learned in a model)"},
    {"fire", "threshold", 512, 0, 1e7, Range::RealAboveMin,
     "initial threshold T: rows m <= T are normalised by ψ(T) (learned in a model as a multiple of it)"},
    {"fox", "gate-bias", 0, -20, 20, Range::Real,
     "initial forget-gate bias b of every head (learned in a model; 0, the reference code's, starts at f ≈ 1/2)"},
    {"cope", "npos-max", 64, 1, 1000000, Range::Integer,
     "positions are clamped to npos-max - 1; E has npos-max columns (default: the training context in a model)"},
};

SchemeInfo schemeFromRow(const SchemeRow& row)
{
    SchemeInfo s;
    s.name = row.name;
    s.kind = row.kind;
    s.title = row.title;
    s.formula = row.formula;
    s.explanation = row.explanation;
    s.params = catalog::paramsOf(kParamRows, row.name);
    s.bidirectionalAllowed = !(row.traits & CausalOnly);
    s.rotary = row.traits & Rotary;
    s.absolute = row.traits & Absolute;
    s.additive = row.traits & Additive;
    s.trainable = row.traits & Trainable;
    s.hasWindow = row.traits & Window;
    s.dataDependent = row.traits & DataDependent;
    return s;
}

} // namespace

bool ParamInfo::accepts(double v) const
{
    if (!std::isfinite(v))
        return false;
    if (minExclusive ? v <= minValue : v < minValue)
        return false;
    if (maxExclusive ? v >= maxValue : v > maxValue)
        return false;
    if (integer && v != std::floor(v))
        return false;
    if (even && std::fmod(v, 2.0) != 0)
        return false;
    return true;
}

std::string ParamInfo::rangeText() const
{
    std::string interval = std::string(minExclusive ? "(" : "[") + catalog::shortNumberText(minValue) + ", " +
                           catalog::shortNumberText(maxValue) + (maxExclusive ? ")" : "]");
    if (even)
        return "even integers in " + interval;
    if (integer)
        return "integers in " + interval;
    return interval;
}

const std::vector<SchemeInfo>& schemeCatalog()
{
    static const std::vector<SchemeInfo> entries = catalog::entriesFrom(kSchemeRows, schemeFromRow);
    return entries;
}

const SchemeInfo& schemeInfo(SchemeKind kind)
{
    return catalog::entryWithKey(schemeCatalog(), &SchemeInfo::kind, kind);
}

const SchemeInfo& schemeByName(std::string_view name)
{
    if (const SchemeInfo* s = catalog::entryNamed(schemeCatalog(), name))
        return *s;
    throw InputError("unknown scheme '" + std::string(name) + "'; known schemes: " + catalog::namesOf(schemeCatalog()));
}

double SchemeSpec::param(std::string_view name) const
{
    auto it = params.find(std::string(name));
    if (it == params.end())
        throw std::logic_error("scheme " + info().name + " has no parameter " + std::string(name));
    return it->second;
}

std::string exactText(double value)
{
    char buffer[40];
    std::snprintf(buffer, sizeof buffer, "%.17g", value);
    return buffer;
}

double parseNumber(std::string_view text, std::string_view what)
{
    double value = 0;
    const char* first = text.data();
    const char* last = text.data() + text.size();
    if (!text.empty() && *first == '+')
        ++first;
    auto [ptr, ec] = std::from_chars(first, last, value);
    if (text.empty() || ec != std::errc() || ptr != last || !std::isfinite(value))
        throw InputError(std::string(what) + ": '" + std::string(text) + "' is not a finite number");
    return value;
}

long long parseInteger(std::string_view text, std::string_view what, long long lo, long long hi)
{
    long long value = 0;
    const char* first = text.data();
    const char* last = text.data() + text.size();
    if (!text.empty() && *first == '+')
        ++first;
    auto [ptr, ec] = std::from_chars(first, last, value);
    const std::string range = "[" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
    if (text.empty() || ptr != last || (ec != std::errc() && ec != std::errc::result_out_of_range))
        throw InputError(std::string(what) + ": '" + std::string(text) + "' is not an integer; allowed: integers in " +
                         range);
    if (ec == std::errc::result_out_of_range || value < lo || value > hi)
        throw InputError(std::string(what) + " = " + std::string(text) + " is out of range; allowed: integers in " +
                         range);
    return value;
}

void validateAttentionTemperature(const AttentionTemperature& t)
{
    if (!t.tuning)
        return;
    using T = AttentionTemperature;
    if (!(t.floorScale >= T::kMinFloorScale && t.floorScale <= T::kMaxFloorScale))
        throw InputError("attention temperature: floor_scale = " + catalog::shortNumberText(t.floorScale) +
                         " is out of range; allowed: [" + catalog::shortNumberText(T::kMinFloorScale) + ", " +
                         catalog::shortNumberText(T::kMaxFloorScale) + "]");
    if (!(t.attnScale >= T::kMinAttnScale && t.attnScale <= T::kMaxAttnScale))
        throw InputError("attention temperature: attn_scale = " + catalog::shortNumberText(t.attnScale) +
                         " is out of range; allowed: [" + catalog::shortNumberText(T::kMinAttnScale) + ", " +
                         catalog::shortNumberText(T::kMaxAttnScale) + "]");
}

const std::vector<ParamInfo>& modifierParams()
{
    static const std::vector<ParamInfo> params = {
        {"logit-c", 0, 0, 100, false, false, false, false,
         "DroPE's test-time logit scaling: the scores of a sequence of n > L positions times 1 + c ln(n/L) (L: the "
         "training context; 0: off)"},
        {"window", 0, 1, 1000000, false, false, true, false,
         "sliding window W: query m sees keys m - W < n <= m, W keys with its own (causal only; unset: off)"},
        {"chunk", 0, 1, 1000000, false, false, true, false,
         "chunked attention C (Llama 4): query m sees keys n <= m of its own chunk, ⌊n/C⌋ = ⌊m/C⌋ (causal only; "
         "unset: off)"},
        {"sinks", 0, 0, 1000000, false, false, true, false,
         "with window or chunk: keys n < S stay visible to every query m >= n (attention sinks; 0: none)"},
        {"softcap", 0, 0, 1e6, true, false, false, false,
         "soft cap c (Gemma 2): every score s becomes c tanh(s/c), after the bias and scale, before the softmax "
         "(unset: off)"},
    };
    return params;
}

bool isModifierSetting(std::string_view setting)
{
    const std::string_view name = setting.substr(0, setting.find('='));
    return catalog::entryNamed(modifierParams(), std::string(name)) != nullptr;
}

bool isMethodModifierSetting(std::string_view setting)
{
    return setting.substr(0, setting.find('=')) == modifierParams()[0].name; // logit-c
}

void setModifier(SchemeSpec& spec, std::string_view name, double value)
{
    const ParamInfo* p = catalog::entryNamed(modifierParams(), std::string(name));
    if (!p)
        throw std::logic_error("setModifier: no modifier " + std::string(name));
    if (!p->accepts(value))
        throw InputError(
            p->name + " = " + catalog::shortNumberText(value) + " is out of range; allowed: " + p->rangeText(), "set");
    if (name == "logit-c")
        spec.logitC = value;
    else if (name == "window")
        spec.window = static_cast<int>(value);
    else if (name == "chunk")
        spec.chunk = static_cast<int>(value);
    else if (name == "sinks")
        spec.sinks = static_cast<int>(value);
    else
        spec.softcap = value;
}

namespace {

// The layer-type modifiers (window, chunk, sinks, softcap) of a built spec: each 0 (off) or in its range, and only
// where they mean something. Throws InputError naming the modifier, its value and what is allowed.
void validateLayerModifiers(const SchemeSpec& spec)
{
    const std::vector<ParamInfo>& params = modifierParams();
    const SchemeInfo& info = spec.info();
    auto check = [&](size_t index, double value) {
        if (value != 0 && !params[index].accepts(value))
            throw InputError(params[index].name + " = " + catalog::shortNumberText(value) +
                             " is out of range; allowed: " + params[index].rangeText() + " (or unset: off)");
    };
    check(1, spec.window);
    check(2, spec.chunk);
    check(3, spec.sinks);
    check(4, spec.softcap);
    const bool masked = spec.window > 0 || spec.chunk > 0;
    if (masked && spec.bidirectional)
        throw InputError(std::string(spec.window > 0 ? "window = " + std::to_string(spec.window)
                                                     : "chunk = " + std::to_string(spec.chunk)) +
                         " needs causal attention: a bidirectional view has no sliding window or chunk of keys n <= "
                         "m; allowed: without --bidirectional (or scheme local, whose bidirectional window is |m - n| "
                         "< window)");
    if (spec.window > 0 && info.hasWindow)
        throw InputError("window = " + std::to_string(spec.window) + ": scheme " + info.name +
                         " has a window of its own; allowed: its parameter window (--set window=W sets it)");
    if (spec.sinks > 0 && info.hasWindow)
        throw InputError("sinks = " + std::to_string(spec.sinks) + ": scheme " + info.name +
                         " has sinks of its own; allowed: its parameter sinks (--set sinks=S sets it)");
    if (spec.sinks > 0 && !masked)
        throw InputError("sinks = " + std::to_string(spec.sinks) +
                         " needs a window or a chunk (every key is visible without one); allowed: with window=W or "
                         "chunk=C");
    if (spec.softcap > 0 && spec.ssmax)
        throw InputError("softcap = " + catalog::shortNumberText(spec.softcap) +
                         " does not combine with ssmax (its scale is learned through the uncapped scores); allowed: "
                         "one of them");
}

// cope's own checks: the modifiers its separate, non-fused path does not apply, and its learned embeddings.
void validateCope(const SchemeSpec& spec)
{
    // The non-fused path scores rows with CoPE alone: refuse the row modifiers rather than ignore them.
    const char* modifier = spec.logn                 ? "logn"
                           : spec.temperature.tuning ? "the NoPE-layer temperature"
                           : spec.logitC > 0         ? "logit-c"
                           : spec.ssmax              ? "ssmax"
                           : spec.sinkLogit          ? "sink-logit"
                           : spec.window > 0         ? "window"
                           : spec.chunk > 0          ? "chunk"
                           : spec.softcap > 0        ? "softcap"
                                                     : nullptr;
    if (modifier)
        throw InputError(std::string("scheme cope does not combine with ") + modifier +
                         "; allowed: cope alone (its attention is a separate, non-fused path)");
    const size_t npos = static_cast<size_t>(spec.intParam("npos-max"));
    if (!spec.copeEmbeddings.empty() && spec.copeEmbeddings.size() % npos != 0)
        throw InputError("scheme cope: learned embeddings hold " + std::to_string(spec.copeEmbeddings.size()) +
                         " values; expected head dim x npos-max (npos-max = " + std::to_string(npos) + ")");
    for (double e : spec.copeEmbeddings)
        if (!std::isfinite(e))
            throw InputError("scheme cope: a learned position embedding is not finite; allowed: finite numbers");
}

// t5's buckets: an even count >= 4 when bidirectional, a max-distance past the exact buckets, a learned table of
// num-buckets x heads values.
void validateT5(const SchemeSpec& spec)
{
    const int nb = spec.intParam("num-buckets");
    const int maxd = spec.intParam("max-distance");
    if (spec.bidirectional && (nb < 4 || nb % 2 != 0))
        throw InputError("scheme t5: num-buckets = " + std::to_string(nb) +
                         " must be an even integer >= 4 when bidirectional (it is halved per direction)");
    const int maxExact = (spec.bidirectional ? nb / 2 : nb) / 2;
    if (maxd <= maxExact)
        throw InputError("scheme t5: max-distance = " + std::to_string(maxd) + " must exceed num-buckets" +
                         (spec.bidirectional ? "/4" : "/2") + " = " + std::to_string(maxExact));
    if (!spec.t5Values.empty() && spec.t5Values.size() != static_cast<size_t>(nb) * spec.heads)
        throw InputError("scheme t5: learned table has " + std::to_string(spec.t5Values.size()) +
                         " values, expected num-buckets x heads = " + std::to_string(nb * spec.heads));
}

// KERPLE's learned per-head r1 and r2 (when given): one per head, each in its parameter's range.
void validateKerpleValues(const SchemeSpec& spec)
{
    const SchemeInfo& info = spec.info();
    const ParamInfo& r1 = info.params[0];
    const ParamInfo& r2 = info.params[1];
    auto checkVector = [&](const std::vector<double>& values, const ParamInfo& p) {
        if (values.empty())
            return;
        if (values.size() != static_cast<size_t>(spec.heads))
            throw InputError("scheme " + info.name + ": " + std::to_string(values.size()) + " per-head values of " +
                             p.name + ", expected " + std::to_string(spec.heads));
        for (size_t h = 0; h < values.size(); ++h)
            if (!p.accepts(values[h]))
                throw InputError("scheme " + info.name + ": " + p.name + " of head " + std::to_string(h) + " = " +
                                 catalog::shortNumberText(values[h]) + " is out of range; allowed: " + p.rangeText());
    };
    checkVector(spec.kerpleR1, r1);
    checkVector(spec.kerpleR2, r2);
}

// FIRE's learned MLP (when given): its shapes, and a finite, non-zero c and threshold multiplier.
void validateFireValues(const SchemeSpec& spec)
{
    const FireParams& f = spec.fire;
    const size_t width = kFireWidth, heads = spec.heads;
    if (f.w1.size() != width || f.b1.size() != width || f.w2.size() != heads * width || f.b2.size() != heads)
        throw InputError("scheme fire: learned MLP has shapes w1 " + std::to_string(f.w1.size()) + ", b1 " +
                         std::to_string(f.b1.size()) + ", w2 " + std::to_string(f.w2.size()) + ", b2 " +
                         std::to_string(f.b2.size()) + "; expected 32, 32, heads x 32 = " +
                         std::to_string(heads * width) + ", heads = " + std::to_string(heads));
    if (!std::isfinite(f.c) || f.c == 0)
        throw InputError("scheme fire: learned c = " + catalog::shortNumberText(f.c) +
                         " is out of range; allowed: finite and not 0");
    if (!std::isfinite(f.lMultiplier) || f.lMultiplier == 0)
        throw InputError("scheme fire: learned threshold multiplier = " + catalog::shortNumberText(f.lMultiplier) +
                         " is out of range; allowed: finite and not 0");
}

} // namespace

void validateSchemeSpec(const SchemeSpec& spec)
{
    const SchemeInfo& info = spec.info();
    if (spec.heads < 1 || spec.heads > kMaxHeads)
        throw InputError("heads = " + std::to_string(spec.heads) + " is out of range; allowed: integers in [1, " +
                         std::to_string(kMaxHeads) + "]");
    if (spec.bidirectional && !info.bidirectionalAllowed)
        throw InputError("scheme " + info.name + " is causal only; bidirectional attention is not allowed with it",
                         "bidirectional");
    if (spec.context < 0)
        throw InputError("context = " + std::to_string(spec.context) + " must be >= 1 (or 0 for no model)");
    if (spec.logn && spec.context < 2)
        throw InputError("the logn modifier needs a training context >= 2 (got " + std::to_string(spec.context) + ")");
    validateAttentionTemperature(spec.temperature);
    const ParamInfo& logitC = modifierParams()[0];
    if (!logitC.accepts(spec.logitC))
        throw InputError("logit-c = " + catalog::shortNumberText(spec.logitC) +
                         " is out of range; allowed: " + logitC.rangeText());
    if (spec.logitC > 0 && spec.context < 1)
        throw InputError("logit-c = " + catalog::shortNumberText(spec.logitC) +
                         " needs a training context L (the scores of sequences longer than L are scaled)");
    validateLayerModifiers(spec);
    catalog::checkParamValues(info.params, spec.params, "scheme " + info.name,
                              "scheme " + info.name + " has no parameter ");
    if (spec.params.count("rotary-fraction")) {
        // Rotation acts on pairs: the rotated part ⌊f d⌋ must be a whole number of pairs.
        const int d = spec.intParam("dim");
        const double f = spec.param("rotary-fraction");
        const int r = rotatedDims(d, f);
        if (r < 2 || r % 2 != 0)
            throw InputError("scheme " + info.name + ": rotary-fraction = " + catalog::shortNumberText(f) +
                             " rotates ⌊f × dim⌋ = ⌊" + catalog::shortNumberText(f) + " × " + std::to_string(d) +
                             "⌋ = " + std::to_string(r) + " dims; allowed: fractions in (0, 1] that rotate an even " +
                             "number of dims >= 2 (rotation acts on pairs)");
    }
    validateRotaryScaling(spec);
    if (spec.kind == SchemeKind::T5)
        validateT5(spec);
    if (spec.kind == SchemeKind::KerplePower || spec.kind == SchemeKind::KerpleLog)
        validateKerpleValues(spec);
    validateSoftmaxModifiers(spec);
    if (spec.kind == SchemeKind::Cope)
        validateCope(spec);
    if (spec.kind == SchemeKind::Fire && !spec.fire.empty())
        validateFireValues(spec);
}

SchemeSpec makeSchemeSpec(std::string_view name, int heads, bool bidirectional,
                          const std::vector<std::string>& assignments, int context, bool logn, std::string_view scaling)
{
    const SchemeInfo& info = schemeByName(name);
    const RotaryMethodInfo& method = rotaryMethodByName(scaling); // "" is no method: refused, listing the known ones
    SchemeSpec spec;
    spec.kind = info.kind;
    spec.heads = heads;
    spec.bidirectional = bidirectional;
    spec.context = context;
    spec.logn = logn;
    for (const ParamInfo& p : info.params)
        spec.params[p.name] = p.defaultValue;
    if (info.hasWindow && context > 0)
        spec.params["window"] = (info.kind == SchemeKind::Bca && context % 2) ? context + 1 : context;
    if (info.kind == SchemeKind::Cope && context > 0) // the reference sizes E by the context
        spec.params["npos-max"] = context;
    spec.scaling = method.method;
    if (method.method != RotaryMethod::None && !info.rotary)
        throw InputError("scaling = " + method.name + " is not allowed for scheme " + info.name +
                             "; allowed: rotary schemes (rope, xpos)",
                         "scaling");
    for (const ParamInfo& p : method.params)
        spec.scalingParams[p.name] = p.defaultValue;

    for (const std::string& a : assignments) {
        const auto eq = a.find('=');
        if (eq == std::string::npos || eq == 0)
            throw InputError("a setting is NAME=VALUE, got '" + a + "'", "set");
        const std::string pname = a.substr(0, eq);
        const std::string text = a.substr(eq + 1);
        auto it =
            std::find_if(info.params.begin(), info.params.end(), [&](const ParamInfo& p) { return p.name == pname; });
        auto methodIt = std::find_if(method.params.begin(), method.params.end(),
                                     [&](const ParamInfo& p) { return p.name == pname; });
        const bool ofMethod = it == info.params.end() && methodIt != method.params.end();
        // Any scheme, any method; a scheme's or a method's own parameter of the same name wins (local's window).
        if (it == info.params.end() && !ofMethod && isModifierSetting(a)) {
            setModifier(spec, pname, parseNumber(text, pname));
            continue;
        }
        if (it == info.params.end() && !ofMethod) {
            const std::string names = catalog::namesOf(info.params);
            const std::string methodNames = catalog::namesOf(method.params);
            if (method.method != RotaryMethod::None)
                throw InputError("scheme " + info.name + " with scaling " + method.name + " has no parameter '" +
                                     pname + "'; its parameters: " + (names.empty() ? "none" : names) + "; " +
                                     method.name + "'s parameters: " + (methodNames.empty() ? "none" : methodNames),
                                 "set");
            throw InputError("scheme " + info.name + " has no parameter '" + pname +
                             "'; its parameters: " + (names.empty() ? "none" : names) +
                             (info.rotary ? " (length-extension parameters need a method)" : ""));
        }
        const ParamInfo& param = ofMethod ? *methodIt : *it;
        const std::string owner = ofMethod ? "scaling " + method.name : "scheme " + info.name;
        double value = 0;
        try {
            value = parseNumber(text, pname);
        } catch (const InputError&) {
            throw InputError(owner + ": " + pname + " = '" + text + "' is not a number; allowed: " + param.rangeText());
        }
        (ofMethod ? spec.scalingParams : spec.params)[pname] = value;
    }
    validateSchemeSpec(spec);
    return spec;
}

nlohmann::json schemeSpecJson(const SchemeSpec& spec)
{
    nlohmann::json j{{"scheme", spec.name()}, {"heads", spec.heads}, {"bidirectional", spec.bidirectional}};
    j["parameters"] = nlohmann::json::object();
    for (const auto& [k, v] : spec.params)
        j["parameters"][k] = v;
    if (spec.context)
        j["context"] = spec.context;
    if (spec.logn)
        j["logn"] = true;
    if (spec.logitC > 0)
        j["logit_c"] = spec.logitC;
    if (spec.window > 0)
        j["window"] = spec.window;
    if (spec.chunk > 0)
        j["chunk"] = spec.chunk;
    if (spec.sinks > 0)
        j["sinks"] = spec.sinks;
    if (spec.softcap > 0)
        j["softcap"] = spec.softcap;
    if (spec.ssmax)
        j["ssmax"] = true;
    if (spec.sinkLogit)
        j["sink_logit"] = true;
    if (spec.temperature.tuning) // Llama 4's names
        j["attn_temperature_tuning"] = {{"floor_scale", spec.temperature.floorScale},
                                        {"attn_scale", spec.temperature.attnScale}};
    if (spec.scaling != RotaryMethod::None) {
        j["scaling"] = rotaryMethodInfo(spec.scaling).name;
        j["scaling_parameters"] = nlohmann::json::object();
        for (const auto& [k, v] : spec.scalingParams)
            j["scaling_parameters"][k] = v;
    }
    return wholeNumbersAsIntegers(std::move(j)); // "dim": 64, not 64.0, in every output that names a scheme
}

namespace {

nlohmann::json paramsJson(const std::vector<ParamInfo>& list)
{
    nlohmann::json params = nlohmann::json::array();
    for (const ParamInfo& p : list) {
        params.push_back({{"name", p.name},
                          {"default", wholeNumbersAsIntegers(p.defaultValue)},
                          {"min", wholeNumbersAsIntegers(p.minValue)},
                          {"max", wholeNumbersAsIntegers(p.maxValue)},
                          {"min_exclusive", p.minExclusive},
                          {"max_exclusive", p.maxExclusive},
                          {"integer", p.integer},
                          {"even", p.even},
                          {"range", p.rangeText()},
                          {"description", p.description}});
    }
    return params;
}

nlohmann::json schemeInfoJson(const SchemeInfo& s)
{
    const nlohmann::json params = paramsJson(s.params);
    nlohmann::json json = {{"name", s.name},         {"title", s.title},
                           {"formula", s.formula},   {"explanation", s.explanation},
                           {"parameters", params},   {"bidirectional", s.bidirectionalAllowed},
                           {"rotary", s.rotary},     {"absolute", s.absolute},
                           {"additive", s.additive}, {"trainable", s.trainable}};
    json["data_dependent"] = s.dataDependent; // cope: no static bias view
    return json;
}

} // namespace

nlohmann::json schemeCatalogJson()
{
    nlohmann::json list = nlohmann::json::array();
    for (const SchemeInfo& s : schemeCatalog())
        list.push_back(schemeInfoJson(s));
    return {{"schemes", list}, {"modifiers", paramsJson(modifierParams())}};
}

bool findAssignment(const std::vector<std::string>& assignments, std::string_view name, std::string& value)
{
    bool found = false;
    for (const std::string& a : assignments)
        if (a.size() > name.size() && a.compare(0, name.size(), name) == 0 && a[name.size()] == '=') {
            value = a.substr(name.size() + 1);
            found = true;
        }
    return found;
}

std::vector<std::string> withRequiredDim(std::string_view scheme, std::vector<std::string> assignments, int required,
                                         const std::string& meaning, const std::string& reason)
{
    const SchemeInfo& info = schemeByName(scheme);
    std::string value;
    if (findAssignment(assignments, "dim", value)) {
        if (parseNumber(value, "dim") != required)
            throw InputError("scheme " + info.name + ": dim = " + value + " must equal the " + meaning + " (" +
                             std::to_string(required) + ")" + reason);
    }
    assignments.push_back("dim=" + std::to_string(required));
    return assignments;
}

namespace {
// A partial rotary is rope's rotary-fraction of the whole head, never a smaller dim.
const char* const kWholeHeads = "; rope and xpos rotate whole heads: leave dim unset and it follows the head dim";
} // namespace

SchemeSpec makeSchemeSpecForHeadDim(std::string_view name, int heads, bool bidirectional,
                                    const std::vector<std::string>& assignments, int headDim,
                                    const std::string& headDimName, int context, bool logn, std::string_view scaling)
{
    const SchemeInfo& info = schemeByName(name);
    if (!info.rotary)
        return makeSchemeSpec(name, heads, bidirectional, assignments, context, logn, scaling);
    if (headDim < 2 || headDim % 2 != 0)
        throw InputError(headDimName + " = " + std::to_string(headDim) + " is not allowed for the rotary scheme " +
                         info.name + "; allowed: even head dims (rotation acts on pairs of dimensions)");
    return makeSchemeSpec(name, heads, bidirectional,
                          withRequiredDim(name, assignments, headDim, headDimName, kWholeHeads), context, logn,
                          scaling);
}

void checkRotaryHeadDim(const SchemeSpec& spec, int headDim, const std::string& headDimName)
{
    if (!spec.info().rotary || spec.intParam("dim") == headDim)
        return;
    throw InputError("scheme " + spec.name() + ": dim = " + std::to_string(spec.intParam("dim")) + " must equal the " +
                     headDimName + " (" + std::to_string(headDim) + ")" + kWholeHeads);
}

std::vector<double> alibiSlopes(int heads)
{
    if (heads < 1)
        throw InputError("heads = " + std::to_string(heads) + " must be >= 1");
    auto powerOfTwoSlopes = [](int n) {
        const double start = std::pow(2.0, -std::pow(2.0, -(std::log2(static_cast<double>(n)) - 3)));
        std::vector<double> out(n);
        double v = start;
        for (int i = 0; i < n; ++i, v *= start)
            out[i] = v;
        return out;
    };
    int closest = 1;
    while (closest * 2 <= heads)
        closest *= 2;
    std::vector<double> slopes = powerOfTwoSlopes(closest);
    if (closest != heads) {
        const std::vector<double> extra = alibiSlopes(2 * closest);
        for (int i = 0; static_cast<int>(slopes.size()) < heads; i += 2)
            slopes.push_back(extra[i]);
    }
    return slopes;
}

int t5Bucket(int rel, bool bidirectional, int numBuckets, int maxDistance)
{
    int bucket = 0;
    long long n = -static_cast<long long>(rel);
    int nb = numBuckets;
    if (bidirectional) {
        nb /= 2;
        if (n < 0)
            bucket += nb;
        n = n < 0 ? -n : n;
    } else {
        n = std::max<long long>(n, 0);
    }
    const int maxExact = nb / 2;
    if (n < maxExact)
        return bucket + static_cast<int>(n);
    // Same float arithmetic as the reference: log(n / max_exact) / log(max_distance / max_exact) * (nb - max_exact).
    const double scaled = std::log(static_cast<double>(n) / maxExact) /
                          std::log(static_cast<double>(maxDistance) / maxExact) * (nb - maxExact);
    const long long large = maxExact + static_cast<long long>(scaled);
    return bucket + static_cast<int>(std::min<long long>(large, nb - 1));
}

std::vector<double> t5DefaultValues(int heads, bool bidirectional, int numBuckets, int maxDistance)
{
    std::vector<double> smallest(numBuckets, -1);
    const int reach = 2 * maxDistance + 2;
    for (int d = 0; d <= reach; ++d) {
        for (int rel : {-d, d}) {
            const int b = t5Bucket(rel, bidirectional, numBuckets, maxDistance);
            if (smallest[b] < 0)
                smallest[b] = d;
        }
    }
    std::vector<double> values(static_cast<size_t>(numBuckets) * heads);
    for (int b = 0; b < numBuckets; ++b)
        for (int h = 0; h < heads; ++h)
            values[static_cast<size_t>(b) * heads + h] = smallest[b] < 0 ? 0.0 : -std::log1p(smallest[b]);
    return values;
}

double sinusoidalDot(double distance, const std::vector<double>& frequencies, const std::vector<double>& logDecay,
                     double decayScale)
{
    double sum = 0;
    for (size_t i = 0; i < frequencies.size(); ++i) {
        double term = std::cos(distance * frequencies[i]);
        if (!logDecay.empty())
            term *= std::exp(logDecay[i] * distance / decayScale);
        sum += term;
    }
    return sum;
}

} // namespace plab
