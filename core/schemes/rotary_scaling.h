// Rotary frequencies and their length-extension methods (PI, NTK, dynamic NTK, YaRN, Llama 3, ReRoPE, leaky ReRoPE,
// Self-Extend, LongRoPE).
#pragma once

#include "schemes/schemes.h"

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace plab {

// One length-extension method of a rotary scheme: its name (as in --scaling), texts and parameters.
struct RotaryMethodInfo {
    std::string name;
    RotaryMethod method = RotaryMethod::None;
    std::string title;
    std::string formula;
    std::string explanation;
    std::vector<ParamInfo> params;
    bool remapsPositions = false; // rerope, leaky-rerope, self-extend: P(m, n) replaces m - n
    bool usesContext = false;     // reads the original (training) context L
};

// Every method, `none` first.
const std::vector<RotaryMethodInfo>& rotaryMethodCatalog();
const RotaryMethodInfo& rotaryMethodInfo(RotaryMethod method);
// Throws InputError naming the unknown method and listing the known ones.
const RotaryMethodInfo& rotaryMethodByName(std::string_view name);

// Names of a scheme with a method, as the compare view and lessons write them: "rope+yarn" is rope under yarn;
// a name without '+' has the method "none". schemeLabel is the inverse ("rope" when the method is none).
// InputError for a '+' with no method after it ("rope+"), listing the known methods.
std::pair<std::string, std::string> splitSchemeLabel(std::string_view label);
std::string schemeLabel(const SchemeSpec& spec);

// The parameters `scheme` takes under `method` ("none": none): the scheme's, then the method's.
std::vector<std::string> parametersUnderMethod(std::string_view scheme, std::string_view method);
// The NAME=VALUE settings among `settings` whose NAME is one of parametersUnderMethod(scheme, method): how one list of
// settings given to several schemes at once is shared among them (render train's --set, ui's schemeModelConfig).
std::vector<std::string> settingsTakenBy(std::string_view scheme, std::string_view method,
                                         const std::vector<std::string>& settings);

// A NAME=VALUE setting of `method` (a model's scaling settings, `eval --set`, a compared method's settings): InputError
// for a malformed one or a NAME the method does not take, naming the setting and listing the method's parameters.
// A modifier (logit-c) is taken under every method, `none` included.
void checkMethodSetting(const RotaryMethodInfo& method, const std::string& setting);

// The original context L a method reads when the spec has no model context (like local's window without a model).
constexpr int kScalingContextWithoutModel = 16;
// L of a spec: its method's original-context when set, else its context, else kScalingContextWithoutModel.
int scalingContext(const SchemeSpec& spec);
// Whether the biases of `schemes` (names such as "rope+yarn"; `scaling` is a method given apart from them) read the
// training context L: logn's threshold, a windowed scheme's (local, bca) default window unless `settings` (NAME=VALUE)
// set the window, a method that reads L (RotaryMethodInfo::usesContext; also when original-context is set, since L
// must not exceed the context). The one rule behind refusing a context nothing would read (CLI --context, the
// commands lessons show).
bool schemesReadContext(const std::vector<std::string>& schemes, bool logn, std::string_view scaling = "none",
                        const std::vector<std::string>& settings = {});

// Which part of a head turns: rope's `rotary-fraction` (GPT-NeoX's rotary_pct) and `keep` (p-RoPE's p); 1 and 1 for
// xpos, which has neither.
struct RotaryShape {
    double keep = 1;           // the fraction of the rotated pairs that keep their θ, highest frequencies first
    double rotaryFraction = 1; // the fraction f of the head's dims that rotate: r = ⌊f d⌋
};
RotaryShape rotaryShape(const SchemeSpec& spec);
// r = ⌊f d⌋, as GPT-NeoX's rotary_ndims = int(head_dim * rotary_pct) (validateSchemeSpec refuses an odd r or r < 2).
int rotatedDims(int dim, double rotaryFraction);
// How many pairs keep their θ: round(p r/2), halves rounded up.
int keptPairs(int rotatedDims, double keep);

// Everything a method does to a rotary scheme of `dim` dims: frequencies, logit scale and position remapping.
struct RotaryScaling {
    RotaryMethod method = RotaryMethod::None;
    int dim = 0;
    RotaryShape shape;
    int rotatedDims = 0; // r: the methods' d (Hugging Face scales a partial rotary over its rotated dims)
    int keptPairs = 0;   // pairs i >= keptPairs have θ_i = θ'_i = 0
    double base = 0;
    int context = 0;                  // L
    int length = 0;                   // n, the sequence length (dynamic-ntk)
    std::vector<double> theta;        // θ_i = base^(-2i/r) for i < keptPairs, else 0; d/2 of them
    std::vector<double> thetaScaled;  // θ'_i
    std::vector<double> ramp;         // yarn: γ_i; llama3: 0 high-frequency band, 1 low, t in between; else 0
    double scaledBase = 0;            // b' of ntk / dynamic-ntk (= base otherwise)
    double rampLow = 0, rampHigh = 0; // yarn's lo and hi (after the lo = hi nudge)
    double attentionFactor = 1;       // multiplies cos and sin of q and of k (Hugging Face's convention)
    double logitScale = 1;            // attentionFactor^2: what the scores are multiplied by
    int window = 0;                   // rerope / leaky-rerope / self-extend: w
    double leak = 0;                  // leaky-rerope: k (rerope: infinity)
    int group = 0;                    // self-extend: G (0 for the other methods)

    bool remapsPositions() const { return window > 0; }
    // The relative position P of distance r = m - n >= 0: r inside the window, w + (r - w) / k past it. Self-Extend's
    // P depends on m too; this is its mean over the query's phase m mod G, w - ⌊w/G⌋ + r/G (the probe's curve).
    double position(double distance) const
    {
        if (window <= 0 || distance < window)
            return distance;
        if (group > 0)
            return window - window / group + distance / group;
        return leak > 0 && leak < 1e300 ? window + (distance - window) / leak : window;
    }
    // Self-Extend past the window: query m is rotated at ⌊m/G⌋ + w - ⌊w/G⌋ and key n at ⌊n/G⌋, so that their
    // difference is P(m, n) = ⌊m/G⌋ - ⌊n/G⌋ + w - ⌊w/G⌋. The one home of the formula (kernel passes and plain twin).
    double groupedQueryPosition(int m) const { return m / group + window - window / group; }
    double groupedKeyPosition(int n) const { return n / group; }
};

// The scaled frequencies of `spec` (rope or xpos; otherwise InputError) for sequences of `length` positions.
RotaryScaling rotaryScaling(const SchemeSpec& spec, int length);
// The same from plain numbers: the one home of θ_i and of every method's formula. `params` must hold every parameter
// of the method (validateRotaryScaling fills and checks them); longrope reads its per-pair factors from the lists
// (SchemeSpec::shortFactors, longFactors; empty: 1); yarn rounds its correction range outward unless `yarnTruncate`
// is false (SchemeSpec::yarnTruncate).
RotaryScaling rotaryScaling(int dim, double base, const RotaryShape& shape, RotaryMethod method,
                            const std::map<std::string, double>& params, int context, int length,
                            const std::vector<double>& shortFactors = {}, const std::vector<double>& longFactors = {},
                            bool yarnTruncate = true);

// Checks a spec's method and parameters (ranges and cross-parameter rules: window < L, original-context <= the
// context when there is one, high > low, beta-fast >= beta-slow, ntk and dynamic-ntk need dim > 2, scaling only on
// rotary schemes, remapping methods causal only); throws InputError naming the parameter, its value and what is
// allowed. validateSchemeSpec calls it.
void validateRotaryScaling(const SchemeSpec& spec);

// The wavelength 2π/θ of each angle θ (a kept-out pair's θ = 0 gives infinity): `frequencies`' wavelength columns,
// in the CLI and in Python alike.
std::vector<double> rotaryWavelengths(const std::vector<double>& theta);

// Rotary angle of frequency i for head dimension d: base^(-2i/d). The one formula of the frequency table (rope, xpos,
// sinusoidal and sandwich all read it).
double rotaryFrequency(int i, int dim, double base);
// All d/2 of them.
std::vector<double> rotaryFrequencies(int dim, double base);
// The d/2 frequencies of a head of which only part turns: base^(-2i/r) for the first keptPairs pairs (r = rotatedDims),
// 0 for the rest (a pair turned by 0 is not rotated). The one home of p-RoPE and of partial rotary.
std::vector<double> rotaryFrequencies(int dim, double base, const RotaryShape& shape);

// The probe score of a (scaled) rotary scheme at distance r: logitScale * sum_i 2 cos(P(r) θ'_i), times XPOS's decay
// ζ_i^(P(r)/s) when `logZeta` is not empty (scaleBase s).
double rotaryProbe(const RotaryScaling& scaling, double distance, const std::vector<double>& logZeta = {},
                   double scaleBase = 1);
// The same at relative position P itself (no remapping): what Self-Extend's exact P(m, n) scores.
double rotaryProbeAtPosition(const RotaryScaling& scaling, double position, const std::vector<double>& logZeta = {},
                             double scaleBase = 1);

} // namespace plab
