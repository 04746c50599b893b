// The catalogue of positional schemes (names, parameters, ranges, texts) and the validated SchemeSpec value.
#pragma once

#include "schemes/fire.h"

#include <nlohmann/json_fwd.hpp>

#include <cmath>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace plab {

enum class SchemeKind {
    None,
    Sinusoidal,
    Learned,
    Rope,
    Xpos,
    T5,
    Alibi,
    KerplePower,
    KerpleLog,
    Sandwich,
    Local,
    Bca,
    Fire,
    Fox,
    Cope,
};

// Length-extension methods of rotary schemes (core/schemes/rotary_scaling.h has their catalogue and formulas).
enum class RotaryMethod {
    None,
    Pi,
    Ntk,
    DynamicNtk,
    Yarn,
    Llama3,
    Rerope,
    LeakyRerope,
    SelfExtend,
    Longrope,
};

// One tunable parameter of a scheme, with its default and allowed range.
struct ParamInfo {
    std::string name; // as in --set NAME=VALUE
    double defaultValue = 0;
    double minValue = 0;
    double maxValue = 0;
    bool minExclusive = false;
    bool maxExclusive = false;
    bool integer = false;
    bool even = false;
    std::string description;

    bool accepts(double value) const;
    std::string rangeText() const; // e.g. "(0, 2]" or "even integers in [2, 4096]"
};

// Everything the UI and `schemes --json` show about a scheme.
struct SchemeInfo {
    std::string name;
    SchemeKind kind;
    std::string title;       // human title, e.g. "ALiBi (linear biases)"
    std::string formula;     // plain-text formula of the bias (or probe) as a function of m, n, h
    std::string explanation; // one paragraph for the UI
    std::vector<ParamInfo> params;
    bool bidirectionalAllowed = true;
    bool rotary = false;    // rotates q and k (rope, xpos); bias view is a probe score
    bool absolute = false;  // added to the token embedding (sinusoidal, learned)
    bool additive = false;  // adds a bias to the attention scores
    bool trainable = false; // has per-head parameters a model learns (t5, kerple)
    bool hasWindow = false; // masks keys outside a window (local, bca)
    // The bias depends on the input (cope): no static bias view; a view of it needs a model and a text.
    bool dataDependent = false;
};

constexpr int kMaxHeads = 1024;

const std::vector<SchemeInfo>& schemeCatalog();
const SchemeInfo& schemeInfo(SchemeKind kind);
// Throws InputError naming the unknown scheme and listing the known ones.
const SchemeInfo& schemeByName(std::string_view name);

// Llama 4's attention temperature on its NoPE layers (Hugging Face Llama4TextConfig: attn_temperature_tuning,
// floor_scale, attn_scale): the query at position m is multiplied by 1 + attn_scale ln(1 + ⌊(m + 1)/floor_scale⌋),
// so row m's scores are multiplied by it (a row scale, like logn). The one home of the formula.
struct AttentionTemperature {
    bool tuning = false;      // attn_temperature_tuning
    double floorScale = 8192; // floor_scale F: the factor grows one step every F positions
    double attnScale = 0.1;   // attn_scale β
    // The allowed ranges (validateAttentionTemperature; the GUI's fields take theirs from here).
    static constexpr double kMinFloorScale = 1, kMaxFloorScale = 1e9;
    static constexpr double kMinAttnScale = 0, kMaxAttnScale = 100;
    double factor(int m) const
    {
        return tuning ? 1.0 + attnScale * std::log1p(std::floor((m + 1.0) / floorScale)) : 1.0;
    }
    bool operator==(const AttentionTemperature&) const = default;
};
// Throws InputError naming floor_scale or attn_scale, its value and the allowed range.
void validateAttentionTemperature(const AttentionTemperature& temperature);

struct SchemeSpec;

// Modifiers usable with any scheme and any length-extension method, set like a parameter (NAME=VALUE): logit-c, the
// test-time logit scaling of DroPE (Gelberg et al. 2025), and the layer-type modifiers of shipped models: window (a
// sliding window, Mistral, Gemma 2/3, gpt-oss), chunk (Llama 4's chunked attention), sinks (attention sinks beside a
// window or chunk) and softcap (Gemma 2's c tanh(s/c)). Their names, defaults (0: off) and ranges, in this order.
const std::vector<ParamInfo>& modifierParams();
// Whether NAME=VALUE names a modifier (its value is checked where the spec is built). A scheme's or a method's own
// parameter of the same name wins where the spec is built (local's window and sinks, rerope's window).
bool isModifierSetting(std::string_view setting);
// Whether NAME=VALUE names a modifier a length-extension method's settings may carry (eval --set, --methods M:S,
// sweep --vary): logit-c, a test-time scale. The layer-type modifiers change which keys a model sees, so they belong
// to the scheme's settings (train --set, recorded in the checkpoint), as local's window does.
bool isMethodModifierSetting(std::string_view setting);
// Sets the modifier NAME of `spec` to `value` (modifierParams' names), refusing a value outside the modifier's range
// with a message naming it, its value and the allowed range. The one place a NAME=VALUE modifier is read.
void setModifier(SchemeSpec& spec, std::string_view name, double value); // throws InputError
// DroPE's logit scale for a sequence of n positions of a model trained at context L: 1 + c ln(n/L) past L, else 1;
// every score of the sequence is multiplied by it. The one home of the formula.
inline double logitLengthScale(double c, int length, int context)
{
    return c > 0 && context > 0 && length > context ? 1.0 + c * std::log(static_cast<double>(length) / context) : 1.0;
}

// A complete, validated description of one positional scheme configuration.
struct SchemeSpec {
    SchemeKind kind = SchemeKind::None;
    int heads = 8;
    bool bidirectional = false;
    bool logn = false;                // scale row m's scores by log(m+1)/log(context) past the context
    AttentionTemperature temperature; // Llama 4's NoPE-layer temperature, another row scale
    double logitC = 0; // logit-c: scores times logitLengthScale(logitC, n, context) for sequences of n > context
    // The layer-type modifiers of a causal scheme (--set window=W, chunk=C, sinks=S, softcap=c); 0: off. The mask's
    // rule lives in core/schemes/position_bias.h (clipToLayerMask), the cap's in the kernel's score formula.
    int window = 0;     // sliding window: key n visible to query m iff m - W < n <= m (local and bca: their own param)
    int chunk = 0;      // chunked attention: key n visible iff ⌊n/C⌋ = ⌊m/C⌋ and n <= m
    int sinks = 0;      // with window or chunk: keys n < S stay visible to every query m >= n (local, bca: own param)
    double softcap = 0; // every score s becomes c tanh(s/c), after the bias and the row scales, before the softmax
    int context = 0;    // training context length, 0 when there is no model
    std::map<std::string, double> params;        // every parameter of the scheme, defaults filled in
    RotaryMethod scaling = RotaryMethod::None;   // rope/xpos length extension (--scaling)
    std::map<std::string, double> scalingParams; // every parameter of the method, defaults filled in
    // longrope's per-pair rescale factors (Hugging Face's short_factor and long_factor, one per rotated pair); empty:
    // every factor 1. Only longrope reads them; they come from a model's config, not from NAME=VALUE settings.
    std::vector<double> shortFactors, longFactors;
    // yarn's correction range rounded outward to whole pairs (floor lo, ceil hi), as the paper and Hugging Face's
    // default; false: the exact range (transformers' truncate: false, gpt-oss). From a model's config only.
    bool yarnTruncate = true;

    // Learned per-head values; empty means "derive from params" (the untrained prior).
    std::vector<double> t5Values; // (num-buckets, heads) row-major: [bucket * heads + h]
    std::vector<double> kerpleR1; // (heads)
    std::vector<double> kerpleR2; // (heads)
    FireParams fire;              // fire's MLP, c and threshold multiplier (core/schemes/fire.h)
    // cope's position embeddings E of one layer (head dim, npos-max) row-major (core/schemes/cope.h); empty: the
    // reference's initialisation, all 0.
    std::vector<double> copeEmbeddings;
    // Softmax-side modifiers of any scheme. SSMax (scalable softmax): row m's scores times s_h ln(n_m), n_m the keys
    // row m sees. A sink logit (gpt-oss): one more softmax column of logit z_h in every row, dropped after it.
    bool ssmax = false;
    std::vector<double> ssmaxScales; // (heads) learned s_h; empty: the prior 1 / ln(context) (context 0: 1)
    bool sinkLogit = false;
    std::vector<double> sinkLogits; // (heads) learned z_h; empty: 0

    const SchemeInfo& info() const { return schemeInfo(kind); }
    double param(std::string_view name) const; // throws std::logic_error when the scheme has no such parameter
    int intParam(std::string_view name) const { return static_cast<int>(param(name)); }
    std::string name() const { return info().name; }
};

// Builds a spec from a scheme name and NAME=VALUE strings, validating everything. The window of
// `local`/`bca` defaults to the context when one is given (the super baseline), else to 16.
// Throws InputError with a one-line message naming the parameter, its value and the allowed range.
// `scaling` names a rotary length-extension method ("none": none; an empty or unknown name is refused, listing the
// known ones); assignments naming one of its parameters set that parameter, any other name must be the scheme's.
SchemeSpec makeSchemeSpec(std::string_view name, int heads, bool bidirectional,
                          const std::vector<std::string>& assignments = {}, int context = 0, bool logn = false,
                          std::string_view scaling = "none");

// Checks every parameter and cross-parameter constraint of a spec; throws InputError.
void validateSchemeSpec(const SchemeSpec& spec); // throws InputError

// Scheme, heads, mask, every resolved parameter, context and logn of a spec: the metadata of every JSON output
// (CLI files and GUI exports alike), e.g. {"scheme": "alibi", "heads": 8, "bidirectional": false, "parameters": {}}.
nlohmann::json schemeSpecJson(const SchemeSpec& spec);

// The whole catalogue as `schemes --json` writes it and Python's positionlab.schemes() returns it: {"schemes": [each
// scheme's name, title, formula, explanation, parameters (name, default, min, max, range, ...), flags], "modifiers":
// [the modifier parameters]}.
nlohmann::json schemeCatalogJson();

// The value of NAME in NAME=VALUE assignments (the last one wins, as in makeSchemeSpec); false when absent.
bool findAssignment(const std::vector<std::string>& assignments, std::string_view name, std::string& value);

// Fixes a scheme's `dim` to `required` (a rotary scheme's head dim, sinusoidal's d_model inside a model): returns
// `assignments` with dim=REQUIRED appended when they set no dim; an explicit other dim is refused with
// "scheme S: dim = V must equal the MEANING (REQUIRED)REASON".
std::vector<std::string> withRequiredDim(std::string_view scheme, std::vector<std::string> assignments, int required,
                                         const std::string& meaning, const std::string& reason);

// The one rule for a scheme applied to q and k of head dim D (attention, entropy, bench, the GUI's entropy view):
// rope and xpos rotate whole heads, so their `dim` defaults to D, an explicit different `dim` is refused (a
// partial rotary is rope's rotary-fraction) and an odd D is refused; other schemes ignore D. `headDimName` says where D
// comes from in the messages, e.g. "--head-dim" or "the head dim D of --q".
SchemeSpec makeSchemeSpecForHeadDim(std::string_view name, int heads, bool bidirectional,
                                    const std::vector<std::string>& assignments, int headDim,
                                    const std::string& headDimName, int context = 0, bool logn = false,
                                    std::string_view scaling = "none");
// The same rule for a spec built already (e.g. by the GUI's panel): refuses rope/xpos whose dim differs from D.
void checkRotaryHeadDim(const SchemeSpec& spec, int headDim, const std::string& headDimName);

// A number written with every digit it needs to read back exactly (%.17g), for messages and metadata.
std::string exactText(double value);
// Parses a whole string as a finite number; throws InputError naming `what` otherwise.
double parseNumber(std::string_view text, std::string_view what);
// Parses a whole string as an integer in [lo, hi]; throws InputError naming `what` and the range otherwise.
long long parseInteger(std::string_view text, std::string_view what, long long lo, long long hi);

// Official ALiBi slopes (ofirpress/attention_with_linear_biases), also for non-powers of two.
std::vector<double> alibiSlopes(int heads);

// T5 / HF `_relative_position_bucket` of rel = key - query.
int t5Bucket(int rel, bool bidirectional, int numBuckets, int maxDistance);

// The untrained prior of the T5 table: -log(1 + smallest |rel| that falls in the bucket), same for each head.
std::vector<double> t5DefaultValues(int heads, bool bidirectional, int numBuckets, int maxDistance);

// sum_i cos(r * w_i): dot(p_m, p_n) of sinusoidal embeddings with frequencies w_i (rotaryFrequency: base^(-2i/d),
// i < d/2) at distance r = m - n. With `logDecay`, term i is weighted by exp(logDecay_i * r / decayScale) (XPOS's
// zeta_i^(r/s)). The one home of this sum: the dot view, the sinusoidal and sandwich biases, the rotary probe.
double sinusoidalDot(double distance, const std::vector<double>& frequencies, const std::vector<double>& logDecay = {},
                     double decayScale = 1);

} // namespace plab
