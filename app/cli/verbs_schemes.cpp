// CLI verbs over the scheme library: schemes, bias, dot, entropy.
#include "views/bias_views.h"
#include "base/limits.h"
#include "cli.h"
#include "views/entropy.h"
#include "schemes/rotary_scaling.h"
#include "base/errors.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <iomanip>

namespace plab::cli {

namespace {

int runSchemes(const ParsedArgs& args, VerbContext& ctx)
{
    if (args.has("json")) {
        ctx.out << schemeCatalogJson().dump(2) << '\n';
        return 0;
    }
    for (const SchemeInfo& s : schemeCatalog()) {
        ctx.out << s.name << std::string(14 - std::min<size_t>(13, s.name.size()), ' ') << s.title
                << (s.bidirectionalAllowed ? "" : "  [causal only]") << (s.dataDependent ? "  [data-dependent]" : "")
                << '\n';
        ctx.out << "    " << s.formula << '\n';
        for (const ParamInfo& p : s.params)
            ctx.out << "    --set " << p.name << "=" << p.defaultValue << "   allowed " << p.rangeText() << "  ("
                    << p.description << ")\n";
    }
    ctx.out << "modifiers (any scheme)\n";
    for (const ParamInfo& p : modifierParams())
        ctx.out << "    --set " << p.name << "=" << p.defaultValue << "   allowed " << p.rangeText() << "  ("
                << p.description << ")\n";
    return 0;
}

int runBias(const ParsedArgs& args, VerbContext& ctx)
{
    const std::string scheme = schemeFromArgs(args, 0, "bias");
    const SchemeSpec spec = schemeSpecFromArgs(scheme, args);
    refuseUnreadContext("bias", {scheme}, args);
    const int length = static_cast<int>(args.integer("length", 16, 1, kMaxLength));
    const std::string headText = args.text("head", "all");
    const bool allHeads = headText == "all";
    const int head = allHeads ? 0 : static_cast<int>(parseInteger(headText, "head", 0, spec.heads - 1));
    const bool buckets = args.has("buckets");
    if (buckets)
        checkBucketMapScheme(spec); // before the picture path, which would refuse it only after building the bias
    checkMemoryEstimate(4.0 * length * length,
                        "a " + std::to_string(length) + " x " + std::to_string(length) + " matrix");

    if (args.has("o") && isImagePath(args.text("o"))) {
        exportImage("bias", args, args.text("o"));
        return 0;
    }
    const PositionBias bias(spec, length);
    writeDataOutput(args, ctx, true, [&](std::ostream& out, DataFormat format) {
        const int first = allHeads ? 0 : head;
        const int last = allHeads ? spec.heads : head + 1;
        std::vector<int> headList;
        for (int h = first; h < last; ++h)
            headList.push_back(h);
        const nlohmann::json meta = biasMatrixMeta(spec, length, buckets, headList);
        MatrixStackWriter writer(out, format, last - first, length, length, allHeads, meta,
                                 buckets && format != DataFormat::Npy);
        std::vector<float> matrix(static_cast<size_t>(length) * length);
        std::vector<int32_t> bucketIndex;
        if (buckets)
            bucketIndex = t5BucketMatrix(spec, length);
        for (int h = first; h < last; ++h) {
            if (buckets)
                std::copy(bucketIndex.begin(), bucketIndex.end(), matrix.begin());
            else
                bias.fillView(h, length, 0, length, matrix.data());
            writer.write(h, matrix.data());
        }
        writer.finish();
    });
    return 0;
}

Table dotTable(const DotCurve& curve)
{
    Table t;
    t.columns = {"distance", "dot", "dot_minus_half_dim"};
    t.meta = {{"dim", curve.dim}, {"base", curve.base}};
    for (size_t i = 0; i < curve.distance.size(); ++i)
        t.rows.push_back({double(curve.distance[i]), curve.dot[i], curve.dot[i] - curve.halfDim()});
    t.integerColumns = 1; // distance
    return t;
}

int runDot(const ParsedArgs& args, VerbContext& ctx)
{
    const int dim = static_cast<int>(args.integer("dim", 128, 2, 4096));
    const double base = args.number("base", 10000);
    const int maxDistance = static_cast<int>(args.integer("max-distance", 256, 0, 10000000));
    const DotCurve curve = sinusoidalDotCurve(dim, base, maxDistance);
    if (args.has("o") && isImagePath(args.text("o"))) {
        exportImage("dot", args, args.text("o"));
        return 0;
    }
    writeDataOutput(args, ctx, true, [&](std::ostream& out, DataFormat f) { writeTable(out, f, dotTable(curve)); });
    return 0;
}

int runEntropy(const ParsedArgs& args, VerbContext& ctx)
{
    if (args.has("checkpoint") && isModelFolder(args.text("checkpoint"))) // a real model's layer (verbs_folder.cpp)
        return runFolderEntropy(args, ctx);
    refuseScalingLayers(args, args.has("checkpoint") ? args.text("checkpoint") : std::string("entropy's input"));
    const std::string scheme = schemeFromArgs(args, 0, "entropy");
    if (args.has("checkpoint"))
        return runEntropyWithCheckpoint(scheme, args, ctx);
    const std::vector<int> lengths = entropyLengthsFromArgs(args, kMaxLength);
    const std::string qk = qkFromArgs("entropy", args, scheme);
    const int headDim = static_cast<int>(args.integer("head-dim", 64, 1, 4096));
    const SchemeSpec spec = schemeSpecFromArgs(scheme, args, 8, headDim, "head dim --head-dim");
    refuseUnreadContext("entropy", {scheme}, args);
    const auto seed = static_cast<uint64_t>(args.integer("seed", 0, 0, (1LL << 62)));
    // Bias-only entropy (--qk zero) has no q.k products, but its softmax per pair costs kMinWorkDim dims anyway.
    checkWork(
        args, attentionWork(spec, lengths, qk == "random" ? headDim : 0),
        "entropy of " + std::to_string(spec.heads) + " heads over --lengths " + args.text("lengths", "16,...,4096"),
        "fewer or shorter --lengths, fewer --heads" + std::string(qk == "random" ? ", a smaller --head-dim" : ""));
    if (args.has("o") && isImagePath(args.text("o"))) {
        exportImage("entropy", args, args.text("o"));
        return 0;
    }
    QkProvider provider;
    if (qk == "random")
        provider = randomQkProvider(spec, headDim, seed);
    const std::vector<EntropyPoint> points = entropyCurve(spec, lengths, provider);
    Table t;
    t.columns = {"length", "head", "entropy_last", "entropy_mean"};
    t.meta = schemeSpecJson(spec);
    t.meta["qk"] = qk;
    if (qk == "random") {
        t.meta["seed"] = seed;
        t.meta["head_dim"] = headDim;
    }
    for (const EntropyPoint& p : points)
        t.rows.push_back({double(p.length), double(p.head), p.entropyLast, p.entropyMean});
    t.integerColumns = 2; // length, head
    writeDataOutput(args, ctx, true, [&](std::ostream& out, DataFormat f) { writeTable(out, f, t); });
    return 0;
}

// frequencies --model DIR: each layer type's rotary positions (core's hfLayerTypeTables under --scaling and
// --scaling-layers); empty without --model.
std::vector<HfLayerTypeTable> folderFrequencyTables(const ParsedArgs& args)
{
    if (!args.has("model"))
        return {};
    const HfConfig config = readHfConfig(args.text("model"));
    return hfLayerTypeTables(config, folderPositionsFromArgs(config, args, std::nullopt, nullptr));
}

// "full", "sliding", "chunked": a layer type in column names.
std::string shortTypeName(HfLayerType type)
{
    const std::string name = hfLayerTypeName(type);
    return name.substr(0, name.find('_'));
}

// The frequency table of a rope scheme under a method: one core call (rotaryScaling), written as the design says.
// A model folder with several layer types: the first type's table, then each type's (JSON layer_types, CSV columns
// theta_TYPE and theta_scaled_TYPE for the types after the first).
int runFrequencies(const ParsedArgs& args, VerbContext& ctx)
{
    SchemeSpec spec = frequenciesSpecFromArgs(args);
    const std::vector<HfLayerTypeTable> tables = folderFrequencyTables(args);
    if (!tables.empty())
        spec = tables.front().spec;
    const int length = frequenciesLengthFromArgs(args, spec);
    const RotaryScaling scaling = rotaryScaling(spec, length);
    std::vector<RotaryScaling> byType;
    for (const HfLayerTypeTable& t : tables)
        byType.push_back(rotaryScaling(t.spec, length));
    if (args.has("o") && isImagePath(args.text("o"))) {
        exportImage("frequencies", args, args.text("o"));
        return 0;
    }
    const std::vector<double> wavelength = rotaryWavelengths(scaling.theta),
                              wavelengthScaled = rotaryWavelengths(scaling.thetaScaled);
    auto write = [&](std::ostream& out, DataFormat format) {
        if (format == DataFormat::Json) {
            nlohmann::json j = schemeSpecJson(spec); // whole numbers as integers, as every output's metadata
            j.erase("heads");
            j.erase("bidirectional");
            j["method"] = rotaryMethodInfo(spec.scaling).name;
            j["context"] = scaling.context;
            j["length"] = length;
            j["theta"] = scaling.theta;
            j["theta_scaled"] = scaling.thetaScaled;
            j["wavelength"] = wavelength;
            j["wavelength_scaled"] = wavelengthScaled;
            j["ramp"] = scaling.ramp;
            j["rotated_dims"] = scaling.rotatedDims; // rotary-fraction's r = ⌊f d⌋
            j["kept_pairs"] = scaling.keptPairs;     // keep's round(p r/2): the other pairs have θ = 0
            j["scaled_base"] = scaling.scaledBase;
            j["attention_factor"] = scaling.attentionFactor;
            j["logit_scale"] = scaling.logitScale;
            if (scaling.remapsPositions()) {
                j["window"] = scaling.window;
                if (scaling.group > 0)
                    j["group"] = scaling.group; // self-extend
                else if (std::isfinite(scaling.leak))
                    j["leak"] = scaling.leak;
            }
            if (!tables.empty()) {
                j["layer_types"] = nlohmann::json::array();
                for (size_t k = 0; k < tables.size(); ++k)
                    j["layer_types"].push_back({{"layer_type", hfLayerTypeName(tables[k].type)},
                                                {"layers", tables[k].layers},
                                                {"positions", hfPositionText(tables[k].spec)},
                                                {"base", tables[k].spec.param("base")},
                                                {"theta", byType[k].theta},
                                                {"theta_scaled", byType[k].thetaScaled},
                                                {"kept_pairs", byType[k].keptPairs},
                                                {"attention_factor", byType[k].attentionFactor}});
            }
            out << j.dump(2) << '\n';
            return;
        }
        Table t;
        t.columns = {"pair", "theta", "theta_scaled", "wavelength", "wavelength_scaled"};
        for (size_t k = 1; k < tables.size(); ++k)
            for (const char* c : {"theta_", "theta_scaled_"})
                t.columns.push_back(c + shortTypeName(tables[k].type));
        for (size_t i = 0; i < scaling.theta.size(); ++i) {
            t.rows.push_back({double(i), scaling.theta[i], scaling.thetaScaled[i], wavelength[i], wavelengthScaled[i]});
            for (size_t k = 1; k < tables.size(); ++k)
                t.rows.back().insert(t.rows.back().end(), {byType[k].theta[i], byType[k].thetaScaled[i]});
        }
        writeTable(out, format, t);
    };
    if (args.has("json") && !args.has("o"))
        write(ctx.out, DataFormat::Json);
    else
        writeDataOutput(args, ctx, false, write);
    return 0;
}

std::vector<OptionDef> withSchemeOptions(std::vector<OptionDef> own)
{
    std::vector<OptionDef> all = schemeOptions();
    all.insert(all.end(), own.begin(), own.end());
    return all;
}

// The verb's own options, the picture options and -o FILE with the extensions it writes (its OutputDef's list).
std::vector<OptionDef> withPictureOptions(std::vector<OptionDef> own, const std::vector<std::string>& extensions)
{
    for (const OptionDef& o : pictureOptions())
        own.push_back(o);
    std::string list;
    for (const std::string& e : extensions)
        list += (list.empty() ? "" : " ") + e;
    own.push_back({"o", OptionKind::Value, "output file: " + list + " (default: CSV on stdout)", "FILE"});
    return own;
}

// The names of `options` less `except`: a usage form's option list.
std::vector<std::string> names(const std::vector<OptionDef>& options, const std::vector<std::string>& except = {})
{
    std::vector<std::string> out;
    for (const OptionDef& o : options)
        if (std::find(except.begin(), except.end(), o.name) == except.end())
            out.push_back(o.name);
    return out;
}

void registerEntropy()
{
    // Without --checkpoint the scheme's q and k are zero or random; with it they are the model's (which fixes the
    // scheme and sizes): each form reads its own options and refuses the other's.
    std::vector<OptionDef> own = {
        {"lengths", OptionKind::Value,
         "comma-separated lengths (default 16,32,...,4096; a model folder: tokens, default 16,32,... up to its "
         "context, at most 4096)",
         "N,N,..."},
        {"qk", OptionKind::Value, "zero (bias alone, default) or random (seeded Gaussian q, k); not with --checkpoint",
         "zero|random"},
        {"seed", OptionKind::Value, "seed of --qk random (default 0)", "S"},
        {"head-dim", OptionKind::Value, "head dimension D of q, k (default 64); rope/xpos dim follows it", "D"}};
    for (const OptionDef& o : checkpointOptions("the model's real q and k on the corpus's validation text"))
        own.push_back(o);
    own.push_back(threadsOption("with --checkpoint"));
    own.push_back(scalingLayersOption());
    own.push_back(allowLongOption());
    own.push_back(jsonOption());
    const std::vector<std::string> outputs = dataAndPictureExtensions(); // -o's help and its check
    const std::vector<OptionDef> options = withSchemeOptions(withPictureOptions(own, outputs));
    const std::vector<std::string> modelOnly = {"checkpoint", "layer", "corpus", "threads", "scaling-layers"};
    // --scaling and --set stay: the model under a length-extension method (its parameters), as `eval` reads them.
    const std::vector<std::string> fixedByModel = {"heads", "bidirectional", "context", "logn",
                                                   "qk",    "seed",          "head-dim"};
    const std::vector<std::string> withModel = names(options, fixedByModel);
    registerVerb(
        {"entropy",
         "SCHEME",
         "attention entropy (nats) against sequence length: last row and mean over rows",
         options,
         0,
         1,
         runEntropy,
         {{"SCHEME", names(options, modelOnly), {}, {}},
          {"SCHEME --checkpoint MODEL.safetensors", withModel, {}, "checkpoint"}},
         {{"o", outputs}},
         "SCHEME may also be given as --scheme S. With --checkpoint the model fixes the scheme and sizes: "
         "--heads, --context and the like are refused; --scaling METHOD (or SCHEME rope+METHOD) and --set "
         "(the method's parameters) evaluate it under a length-extension method, as eval does. --checkpoint DIR, a "
         "Hugging Face model folder: SCHEME may be left out (the folder fixes it); each length is a window of "
         "the --corpus's validation split in the folder's tokens (repeated when shorter), each head's row "
         "entropies from the kernel; a learned-position model (gpt2) refuses lengths past its context."});
}

} // namespace

void registerSchemeVerbs()
{
    // -o of bias and dot: one list for its help and its check. frequencies writes no .npy (its JSON has more than the
    // table).
    const std::vector<std::string> outputs = dataAndPictureExtensions();
    const std::vector<std::string> frequenciesOutputs = dataAndPictureExtensions(false);
    registerVerb({"schemes",
                  "",
                  "list every scheme with its parameters, defaults and ranges",
                  {{"json", OptionKind::Flag, "machine-readable output"}},
                  0,
                  0,
                  runSchemes});
    registerVerb(
        {"bias",
         "SCHEME",
         "the bias matrix (or rotary probe score) of a scheme, rows = query m, columns = key n",
         withSchemeOptions(withPictureOptions(
             {{"length", OptionKind::Value, "sequence length N (default 16)", "N"},
              {"head", OptionKind::Value, "head index h = 0..H-1 or 'all' (default all; a picture shows head 0)",
               "h|all"},
              {"buckets", OptionKind::Flag, "t5: write bucket indices instead of values"},
              jsonOption(),
              {"colormap", OptionKind::Value, "picture output: viridis, magma, cividis, diverging", "NAME", true}},
             outputs)),
         0,
         1,
         runBias,
         {},
         {{"o", outputs}},
         "SCHEME may also be given as --scheme S."});
    registerVerb(
        {"dot",
         "",
         "dot(p_m, p_n) of sinusoidal position embeddings against distance",
         withPictureOptions({{"dim", OptionKind::Value, "embedding dimension, even, 2..4096 (default 128)", "D"},
                             {"base", OptionKind::Value, "wavelength base > 1 (default 10000)", "B"},
                             {"max-distance", OptionKind::Value, "largest distance (default 256)", "R"},
                             jsonOption(),
                             {"log-x", OptionKind::Flag, "picture output: logarithmic distance axis", {}, true}},
                            outputs),
         0,
         0,
         runDot,
         {},
         {{"o", outputs}}});
    registerEntropy();
    registerVerb(
        {"frequencies",
         "",
         "rotary frequencies θ_i and θ'_i of a length-extension method, with wavelengths and the logit scale",
         withPictureOptions(
             {{"dim", OptionKind::Value, "rotary dimension d, even, 2..4096 (default 64)", "D"},
              {"base", OptionKind::Value, "base b > 1 (default 10000)", "B"},
              scalingOption(),
              {"set", OptionKind::Repeated,
               "rope's keep or rotary-fraction, or a parameter of the method (e.g. keep=0.75, factor=4)", "NAME=VALUE"},
              {"context", OptionKind::Value, "original (training) context L (default 16)", "L"},
              {"length", OptionKind::Value, "current sequence length n, for dynamic-ntk and longrope (default L)", "n"},
              {"model", OptionKind::Value,
               "a Hugging Face model folder: its rope (dims, theta, its own scaling, longrope's lists) instead of "
               "--dim, --base and --context; one table per layer type (gemma3's sliding layers have their own)",
               "DIR"},
              scalingLayersOption(),
              jsonOption(),
              {"log-x", OptionKind::Flag, "picture output: logarithmic pair axis", {}, true}},
             frequenciesOutputs),
         0,
         0,
         runFrequencies,
         {},
         {{"o", frequenciesOutputs}}});
}

} // namespace plab::cli
