// positionlab.schemes, bias, frequencies, dot, entropy and attention: the core calls the CLI's verbs make
// (app/cli/verbs_schemes.cpp, verbs_attention.cpp), with NumPy arrays in place of files.
#include "arrays.h"

#include "attention/attention.h"
#include "base/errors.h"
#include "base/limits.h"
#include "schemes/position_bias.h"
#include "schemes/rotary_scaling.h"
#include "views/bias_views.h"
#include "views/entropy.h"

#include <nlohmann/json.hpp>

#include <cmath>

namespace plab::python {

namespace {

py::object jsonToPython(const nlohmann::json& j)
{
    return py::module_::import("json").attr("loads")(j.dump());
}

// The spec of a scheme word with the shared keywords, as the CLI's schemeSpecFromArgs builds it from its options;
// headDim > 0: for q and k of that head dim (rope/xpos dim follows it).
SchemeSpec specOf(const std::string& scheme, int heads, bool bidirectional, int context, bool logn,
                  const py::object& scaling, const py::kwargs& params, int headDim = 0,
                  const std::string& headDimName = {})
{
    const SchemeWord word = schemeWord(scheme, scaling);
    const std::vector<std::string> settings = settingsFromKwargs(params);
    if (headDim > 0)
        return makeSchemeSpecForHeadDim(word.scheme, heads, bidirectional, settings, headDim, headDimName, context,
                                        logn, word.scaling);
    return makeSchemeSpec(word.scheme, heads, bidirectional, settings, context, logn, word.scaling);
}

void checkLength(const char* name, long long length)
{
    checkIntegerRange(name, length, 1, kMaxLength);
}

py::array_t<float> bias(const std::string& scheme, long long length, int heads, bool bidirectional, int context,
                        bool logn, const py::object& scaling, const py::object& threads, const py::kwargs& params)
{
    checkLength("length", length);
    const SchemeSpec spec = specOf(scheme, heads, bidirectional, context, logn, scaling, params);
    const int N = static_cast<int>(length), H = spec.heads;
    checkMemoryEstimate(4.0 * H * double(N) * N, "a " + std::to_string(H) + " x " + std::to_string(N) + " x " +
                                                     std::to_string(N) + " bias stack");
    std::vector<float> out;
    {
        ThreadScope scope(threads); // core's tables open OpenMP regions even for small N: threads=1 for tiny calls
        py::gil_scoped_release release;
        const PositionBias positions(spec, N);
        out.resize(static_cast<size_t>(H) * N * N);
        for (int h = 0; h < H; ++h)
            positions.fillView(h, N, 0, N, out.data() + static_cast<size_t>(h) * N * N); // the CLI's `bias` call
    }
    return toNumpy(std::move(out), {H, N, N});
}

py::dict frequencies(int dim, double base, const std::string& scaling, int context, const py::object& length,
                     const py::kwargs& params)
{
    std::vector<std::string> settings = settingsFromKwargs(params);
    for (const std::string& s : settings) {
        const std::string name = s.substr(0, s.find('='));
        if (name == "dim" || name == "base")
            throw py::value_error(name + " is an argument of frequencies(); give it as " + name + "=..., once");
    }
    settings.push_back("dim=" + std::to_string(dim));
    settings.push_back("base=" + exactText(base));
    if (context != 0)
        checkLength("context", context);
    const SchemeSpec spec = makeSchemeSpec("rope", 1, false, settings, context, false, scaling);
    const long long n = length.is_none() ? scalingContext(spec) : length.cast<long long>();
    checkLength("length", n);
    const RotaryScaling r = rotaryScaling(spec, static_cast<int>(n));
    py::dict d;
    d["method"] = rotaryMethodInfo(spec.scaling).name;
    d["context"] = r.context;
    d["length"] = n;
    d["theta"] = toNumpy(r.theta);
    d["theta_scaled"] = toNumpy(r.thetaScaled);
    d["wavelength"] = toNumpy(rotaryWavelengths(r.theta));
    d["wavelength_scaled"] = toNumpy(rotaryWavelengths(r.thetaScaled));
    d["ramp"] = toNumpy(r.ramp);
    d["rotated_dims"] = r.rotatedDims;
    d["kept_pairs"] = r.keptPairs;
    d["scaled_base"] = r.scaledBase;
    d["attention_factor"] = r.attentionFactor;
    d["logit_scale"] = r.logitScale;
    if (r.remapsPositions()) {
        d["window"] = r.window;
        if (r.group > 0)
            d["group"] = r.group;
        else if (std::isfinite(r.leak))
            d["leak"] = r.leak;
    }
    return d;
}

py::dict dot(int dim, double base, int maxDistance)
{
    const DotCurve curve = sinusoidalDotCurve(dim, base, maxDistance);
    py::dict d;
    d["distance"] = toNumpy(std::vector<long long>(curve.distance.begin(), curve.distance.end()));
    d["dot"] = toNumpy(curve.dot);
    d["half_dim"] = curve.halfDim();
    return d;
}

py::dict entropy(const std::string& scheme, const py::object& lengthsArg, int heads, const std::string& qk,
                 unsigned long long seed, int headDim, bool bidirectional, int context, bool logn,
                 const py::object& scaling, const py::object& threads, const py::kwargs& params)
{
    std::vector<int> lengths = defaultEntropyLengths(4096); // the CLI's --lengths default
    if (!lengthsArg.is_none()) {
        lengths.clear();
        for (const py::handle& n : lengthsArg) {
            const long long v = n.cast<long long>();
            checkLength("lengths", v);
            lengths.push_back(static_cast<int>(v));
        }
        if (lengths.empty())
            throw py::value_error("lengths: the list is empty; allowed: one or more lengths in [1, 1048576]");
    }
    if (qk != "zero" && qk != "random")
        throw py::value_error("qk = '" + qk + "' is not allowed; allowed: zero (the bias alone) or random");
    checkIntegerRange("head_dim", headDim, 1, 4096);
    const SchemeSpec spec = specOf(scheme, heads, bidirectional, context, logn, scaling, params,
                                   qk == "random" ? headDim : 0, "head_dim");
    std::vector<EntropyPoint> points;
    {
        ThreadScope scope(threads);
        py::gil_scoped_release release;
        QkProvider provider;
        if (qk == "random")
            provider = randomQkProvider(spec, headDim, seed);
        points = entropyCurve(spec, lengths, provider);
    }
    return entropyColumns(points);
}

py::object attention(const py::object& qArg, const py::object& kArg, const py::object& vArg, const std::string& scheme,
                     bool causal, const py::object& scaling, bool probs, int context, bool logn, bool copy,
                     const py::object& threads, const py::kwargs& params)
{
    const std::string expected = "(H, N, D) or (B, H, N, D)";
    const FloatInput q = floatInput(qArg, "q", {3, 4}, expected, copy);
    const FloatInput k = floatInput(kArg, "k", {3, 4}, expected, copy);
    const FloatInput v = floatInput(vArg, "v", {3, 4}, expected, copy);
    if (k.shape != q.shape || v.shape != q.shape)
        throw py::value_error("k, v: q, k and v must have the same shape " + expected + "; got q " +
                              std::string(py::str(qArg.attr("shape"))) + ", k " +
                              std::string(py::str(kArg.attr("shape"))) + ", v " +
                              std::string(py::str(vArg.attr("shape"))));
    const size_t r = q.shape.size();
    AttentionDims dims;
    dims.batch = r == 4 ? static_cast<int>(q.shape[0]) : 1;
    checkIntegerRange("q's heads H", q.shape[r - 3], 1, kMaxHeads);
    checkIntegerRange("q's length N", q.shape[r - 2], 1, kMaxLength);
    checkIntegerRange("q's head dim D", q.shape[r - 1], 1, 4096);
    dims.heads = static_cast<int>(q.shape[r - 3]);
    dims.length = static_cast<int>(q.shape[r - 2]);
    dims.headDim = static_cast<int>(q.shape[r - 1]);
    const SchemeSpec spec = specOf(scheme, dims.heads, !causal, context, logn, scaling, params, dims.headDim,
                                   "head dim D of q");
    const double N = dims.length;
    if (probs)
        checkMemoryEstimate(4.0 * dims.batch * dims.heads * N * N, "probabilities (B, H, N, N)");
    AttentionForward result;
    {
        ThreadScope scope(threads);
        py::gil_scoped_release release;
        AttentionOptions options;
        options.wantProbabilities = probs;
        const PositionBias bias(spec, dims.length); // the CLI's writeAttentionOutputs
        attentionForward(bias, dims, q.data(), k.data(), v.data(), result, options);
    }
    py::array_t<float> out = toNumpy(std::move(result.out), q.shape);
    if (!probs)
        return out;
    std::vector<long> pshape(q.shape.begin(), q.shape.end() - 1);
    pshape.push_back(dims.length);
    return py::make_tuple(out, toNumpy(std::move(result.probabilities), pshape));
}

} // namespace

void bindSchemes(py::module_& m)
{
    m.def(
        "schemes", [] { return jsonToPython(schemeCatalogJson()); },
        "The catalogue of schemes and modifiers (as `positionlab-cli schemes --json`): a dict with 'schemes' (name, "
        "title, formula, explanation, parameters with defaults and ranges, flags) and 'modifiers'.");
    m.def("bias", &bias, py::arg("scheme"), py::arg("length") = 16, py::kw_only(), py::arg("heads") = 8,
          py::arg("bidirectional") = false, py::arg("context") = 0, py::arg("logn") = false,
          py::arg("scaling") = py::none(), py::arg("threads") = py::none(),
          "The bias matrices (H, N, N) float32 of a scheme, rows = query m, columns = key n, masked cells -inf (as "
          "`positionlab-cli bias`). Keyword parameters are the scheme's and its method's (num_buckets=32 is "
          "num-buckets=32).");
    m.def("frequencies", &frequencies, py::kw_only(), py::arg("dim") = 64, py::arg("base") = 10000.0,
          py::arg("scaling") = "none", py::arg("context") = 0, py::arg("length") = py::none(),
          "Rotary frequencies θ_i and θ'_i of a length-extension method, their wavelengths, ramp and logit scale (as "
          "`positionlab-cli frequencies --json`).");
    m.def("dot", &dot, py::kw_only(), py::arg("dim") = 128, py::arg("base") = 10000.0, py::arg("max_distance") = 256,
          "dot(p_m, p_n) of sinusoidal position embeddings against the distance m - n (as `positionlab-cli dot`).");
    m.def("entropy", &entropy, py::arg("scheme"), py::kw_only(), py::arg("lengths") = py::none(),
          py::arg("heads") = 8, py::arg("qk") = "zero", py::arg("seed") = 0, py::arg("head_dim") = 64,
          py::arg("bidirectional") = false, py::arg("context") = 0, py::arg("logn") = false,
          py::arg("scaling") = py::none(), py::arg("threads") = py::none(),
          "Attention entropy (nats) against sequence length: the last row's and the rows' mean per (length, head) (as "
          "`positionlab-cli entropy`).");
    m.def("attention", &attention, py::arg("q"), py::arg("k"), py::arg("v"), py::arg("scheme"),
          py::arg("causal") = true, py::arg("scaling") = py::none(), py::arg("probs") = false, py::kw_only(),
          py::arg("context") = 0, py::arg("logn") = false, py::arg("copy") = true, py::arg("threads") = py::none(),
          "Multi-head attention of unrotated q, k, v ((H, N, D) or (B, H, N, D) float32) under a scheme, in the fused "
          "kernel (as `positionlab-cli attention`): out, or (out, probabilities) with probs=True.");
}

} // namespace plab::python
