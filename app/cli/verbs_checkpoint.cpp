// A lab checkpoint's learned insides: fire-curve, and attention and entropy from its real queries and keys.
#include "verbs_model.h"

#include "cli.h"

#include "base/limits.h"
#include "base/npy.h"
#include "model/checkpoint.h"
#include "model/corpus.h"
#include "model/fox_bias.h"
#include "model/model.h"
#include "views/entropy.h"
#include "views/fire_curves.h"

#include <Eigen/Dense>

#include <string>
#include <vector>

namespace plab::cli {

namespace {

// fire-curve: a FIRE checkpoint's learned bias function of the distance at one query row, beside its untrained prior.
int runFireCurve(const ParsedArgs& args, VerbContext& ctx)
{
    const LoadedCheckpoint loaded = loadCheckpoint(args.positional[0]);
    const int context = loaded.model->config().context;
    const int row = static_cast<int>(args.integer("row", context - 1, 0, kMaxLength - 1));
    const FireCurves curves = fireCurves(loaded.model->schemeSpec(), row); // refuses other schemes
    Table t = fireCurvesTable(curves);
    t.meta["checkpoint"] = args.positional[0];
    t.meta["context"] = context;
    writeDataOutput(args, ctx, true, [&](std::ostream& out, DataFormat f) { writeTable(out, f, t); });
    return 0;
}

} // namespace

int runEntropyWithCheckpoint(const std::string& scheme, const ParsedArgs& args, VerbContext& ctx)
{
    // The options the model fixes (--heads, --qk ...) are refused by the verb's usage form (registerEntropy in
    // verbs_schemes.cpp); --scaling and --set are read: the model under a length-extension method.
    applyThreadsOption(args);
    std::string note;
    LoadedCheckpoint loaded = checkpointOfScheme("entropy", scheme, args, &note); // SCHEME's method or --scaling
    Model& model = *loaded.model;
    const int layer = layerFromArgs(args, model.config());
    const std::vector<int> lengths = entropyLengthsFromArgs(args, model.maxLength());
    checkWork(args, modelForwardWork(model.config(), lengths),
              "entropy of the model's layer " + std::to_string(layer) + " over --lengths " +
                  args.text("lengths", "16,...,4096"),
              "fewer or shorter --lengths");
    const Corpus corpus = corpusFromArgs(args);
    printScalingNote(note, args, ctx.err);
    if (args.has("o") && isImagePath(args.text("o"))) {
        exportImage("entropy", args, args.text("o"));
        return 0;
    }
    const ModelEntropyCurve curve = modelEntropyCurve(model, corpus.validation, layer, lengths);
    const SchemeSpec& spec = curve.spec; // a NoPE layer of --nope-every attends without the scheme
    const std::vector<EntropyPoint>& points = curve.points;
    Table t;
    t.columns = {"length", "head", "entropy_last", "entropy_mean"};
    t.integerColumns = 2;
    t.meta = {{"scheme", spec.name()},
              {"heads", spec.heads},
              {"qk", "model"},
              {"checkpoint", args.text("checkpoint")},
              {"layer", layer},
              {"corpus", corpus.source},
              {"config", model.config().toJson()}};
    for (const EntropyPoint& p : points)
        t.rows.push_back({double(p.length), double(p.head), p.entropyLast, p.entropyMean});
    writeDataOutput(args, ctx, true, [&](std::ostream& out, DataFormat f) { writeTable(out, f, t); });
    return 0;
}

int runAttentionWithCheckpoint(const std::string& scheme, const ParsedArgs& args, VerbContext& ctx)
{
    // --q/--k/--v and the scheme's options are refused by the verb's usage form (registerAttentionVerbs in
    // verbs_attention.cpp): the model supplies them; --scaling (or SCHEME's method, "rope+yarn") and --set evaluate it
    // under a length-extension method, as eval does.
    std::string note;
    LoadedCheckpoint loaded = checkpointOfScheme("attention", scheme, args, &note);
    Model& model = *loaded.model;
    const int layer = layerFromArgs(args, model.config());
    const int N = static_cast<int>(args.integer("length", model.config().context, 1, model.maxLength()));
    const int H = model.config().heads, D = model.config().headDim();
    if (args.has("probs") || args.has("fox-bias"))
        checkMemoryEstimate(4.0 * H * double(N) * N, "probabilities or bias (H, N, N)");
    checkWork(args, modelForwardWork(model.config(), {N}), "the model's forward over --length " + std::to_string(N),
              "a shorter --length");
    const Corpus corpus = corpusFromArgs(args);
    const std::vector<uint8_t> tokens = repeatedText(corpus.validation, N); // the validation text's first N bytes
    printScalingNote(note, args, ctx.err);
    model.forward(tokens.data(), nullptr, 1, N);
    AttentionDims dims{1, H, N, D};
    if (!model.layerLogForget(layer).empty()) // fox: this text's forget gates, as the model's forward used them
        dims.logForget = model.layerLogForget(layer).data();
    writeAttentionOutputs(args, model.layerSchemeSpec(layer), dims, model.layerQueries(layer).data(),
                          model.layerKeys(layer).data(), model.layerValues(layer).data());
    if (args.has("fox-bias")) { // the per-input view's matrix, head by head
        std::vector<float> bias(static_cast<size_t>(H) * N * N);
        for (int h = 0; h < H; ++h) {
            // Row-major (N, N): Eigen's default is column-major.
            const Eigen::MatrixXf head = foxBiasOnText(model, tokens, layer, h);
            Eigen::Map<Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(
                bias.data() + static_cast<size_t>(h) * N * N, N, N) = head;
        }
        writeNpy(args.text("fox-bias"), {H, N, N}, bias.data());
    }
    return 0;
}

void registerFireCurveVerb()
{
    registerVerb({"fire-curve",
                  "MODEL.safetensors",
                  "a FIRE checkpoint's learned bias against distance at one query row, beside its untrained prior",
                  {{"row", OptionKind::Value, "query row m (default: the training context - 1)", "M"},
                   {"o", OptionKind::Value, "output .csv, .json or .npy (default: CSV on stdout)", "FILE"},
                   jsonOption()},
                  1,
                  1,
                  runFireCurve,
                  {},
                  {{"o", dataExtensions()}}});
}

} // namespace plab::cli
