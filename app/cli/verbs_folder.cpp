// A Hugging Face model folder where the lab's checkpoint is read: `attention --checkpoint DIR` and
// `entropy --checkpoint DIR` (lengths and positions in the folder's tokens; every number from core/hf/hf_attention).
#include "cli.h"

#include "base/errors.h"
#include "base/npy.h"
#include "hf/hf_attention.h"
#include "hf/tokenizer.h"
#include "model/corpus.h"
#include "runs/language_model.h"
#include "schemes/rotary_scaling.h"

#include <algorithm>
#include <memory>

namespace plab::cli {

void checkFolderLength(const std::string& option, const HfConfig& config, int length)
{
    try {
        checkHfLength(config, length);
    } catch (const InputError& e) {
        throw InputError(e.what(), option); // cliMessage puts --OPTION before it
    }
}

OptionDef scalingLayersOption()
{
    return {"scaling-layers", OptionKind::Value,
            "model folder: the layer types the --scaling method (each --compare method) reaches: full (default; "
            "full_attention layers, where "
            "Gemma 3's own scaling lives), sliding (sliding_attention and chunked_attention layers; a window spanning "
            "the context counts as full), all",
            "full|sliding|all"};
}

void refuseScalingLayers(const ParsedArgs& args, const std::string& what)
{
    if (args.has("scaling-layers"))
        throw InputError("--scaling-layers " + args.text("scaling-layers") + ": " + what +
                         " is not a Hugging Face model folder; --scaling-layers picks among a folder's layer types");
}

HfPositions folderPositionsFromArgs(const HfConfig& config, const ParsedArgs& args,
                                    const std::optional<std::string>& method, std::string* note)
{
    const std::string scaling = method.value_or(args.text("scaling"));
    HfScalingLayers layers = HfScalingLayers::Full;
    if (args.has("scaling-layers")) {
        layers = hfScalingLayersByName(args.text("scaling-layers"));
        if (scaling.empty() && !args.has("set"))
            throw InputError("--scaling-layers names the layers a method given with --scaling reaches; without one "
                             "every layer keeps the config's own rope; allowed: add --scaling METHOD");
    }
    if (!scaling.empty())
        checkHfScalingReach(config, layers);
    const std::vector<std::string>& settings = args.all("set");
    if (!settings.empty() && config.scheme == "rope") {
        const RotaryMethodInfo& info = rotaryMethodByName(scaling.empty() ? config.scaling : scaling);
        for (const std::string& s : settings)
            checkScalingSet(info, s);
    }
    const SchemeSpec spec =
        scaling.empty() && settings.empty()
            ? hfPositionSpec(config)
            : hfPositionSpec(config, scaling.empty() ? (config.scheme == "rope" ? config.scaling : "none") : scaling,
                             settings);
    const bool mixed = std::any_of(config.layerTypes.begin(), config.layerTypes.end(),
                                   [&](HfLayerType t) { return t != config.layerTypes.front(); });
    if (note)
        *note = "using positions " + hfPositionText(spec) +
                (scaling.empty() || scaling == config.scaling ? " (the config's own" : " (zero-shot") +
                (settings.empty() ? ")" : ", with --set)") +
                (mixed && (!scaling.empty() || !settings.empty())
                     ? " on the " + std::string(hfScalingLayersName(layers)) + " layers (--scaling-layers)"
                     : "");
    return HfPositions(spec, layers);
}

namespace {

// What attention and entropy read from a folder: the model, its positions under --scaling/--set (or SCHEME's method),
// the layer (--layer, default the last) and the --corpus's validation text in the folder's tokens.
struct FolderView {
    std::unique_ptr<HfModel> model;
    HfPositions positions{SchemeSpec{}};
    std::string note;
    int layer = 0;
    std::string corpusSource;
    std::vector<int> text; // the validation split's tokens
};

FolderView folderViewFromArgs(const std::string& verb, const ParsedArgs& args)
{
    const std::string dir = args.text("checkpoint");
    const HfConfig config = readHfConfig(dir); // config.json first: a directory that is no model folder is named
    std::optional<std::string> method;
    if (!args.positional.empty() || args.has("scheme")) {
        // A SCHEME word is the folder's own scheme, perhaps with a method ("rope+yarn", as --scaling yarn).
        const SchemeWord word = schemeWordFromArgs(schemeFromArgs(args, 0, verb), args);
        if (word.scheme != config.scheme)
            throw InputError(verb + ": the model in " + dir + " uses " + config.scheme + " positions, not " +
                             word.scheme + "; allowed: leave SCHEME out (the folder fixes it) or give " +
                             config.scheme);
        method = word.method;
    }
    FolderView v;
    v.positions = folderPositionsFromArgs(config, args, method, &v.note);
    v.layer = static_cast<int>(args.integer("layer", config.layers - 1, 0, config.layers - 1));
    const hf::Tokenizer tokenizer = hf::Tokenizer::fromFolder(dir);
    const Corpus corpus = corpusFromArgs(args);
    v.corpusSource = corpus.source;
    const std::vector<int32_t> tokens =
        folderTextTokens(tokenizer, corpus.validation, "the validation split of " + corpus.source);
    if (tokens.empty())
        throw InputError("the validation split of " + corpus.source +
                             " gives no tokens; allowed: a text of at least "
                             "one token",
                         "corpus");
    v.text.assign(tokens.begin(), tokens.end());
    v.model = std::make_unique<HfModel>(dir);
    return v;
}

// The text's first `length` tokens, repeated from its start when it has fewer (as the lab's checkpoints read
// repeatedText of their bytes).
std::vector<int> firstTokens(const std::vector<int>& text, int length)
{
    std::vector<int> ids(static_cast<size_t>(length));
    for (int i = 0; i < length; ++i)
        ids[i] = text[static_cast<size_t>(i) % text.size()];
    return ids;
}

nlohmann::json folderMeta(const ParsedArgs& args, const FolderView& v)
{
    const HfConfig& c = v.model->config();
    return {{"model", args.text("checkpoint")},
            {"model_type", c.modelType},
            {"context", c.context},
            {"positions", hfPositionText(v.positions.spec)},
            {"scaling_layers", hfScalingLayersName(v.positions.layers)},
            {"layer", v.layer},
            {"corpus", v.corpusSource},
            {"lengths_in", "tokens"}};
}

} // namespace

int runFolderAttention(const ParsedArgs& args, VerbContext& ctx)
{
    FolderView v = folderViewFromArgs("attention", args);
    const HfConfig& c = v.model->config();
    // A real model's context can be 32k tokens: by default at most 2048 of them (a forward and its maps stay small).
    const int length = static_cast<int>(args.integer("length", std::min(c.context, 2048), 1, kMaxLength));
    checkFolderLength("length", c, length);
    printScalingNote(v.note, args, ctx.err);
    const HfLayerAttentionResult r =
        hfLayerAttention(*v.model, firstTokens(v.text, length), v.positions, v.layer, args.has("probs"));
    if (args.has("probs"))
        writeNpy(args.text("probs"), {r.heads, r.length, r.length}, r.probabilities.data());
    writeNpy(args.text("o"), {r.heads, r.length, r.headDim}, r.out.data());
    return 0;
}

int runFolderEntropy(const ParsedArgs& args, VerbContext& ctx)
{
    if (args.has("o") && isImagePath(args.text("o")))
        throw InputError("-o " + args.text("o") +
                         ": a model folder's entropy is written as data (.csv, .json); its "
                         "picture by position is `positionlab-cli render model --model DIR --page entropy`");
    applyThreadsOption(args);
    FolderView v = folderViewFromArgs("entropy", args);
    const HfConfig& c = v.model->config();
    const std::vector<int> lengths =
        args.integerList("lengths", defaultEntropyLengths(std::min(c.context, 4096)), 1, kMaxLength);
    for (int n : lengths)
        checkFolderLength("lengths", c, n);
    const int longest = *std::max_element(lengths.begin(), lengths.end());
    printScalingNote(v.note, args, ctx.err);
    const std::vector<EntropyPoint> points =
        hfEntropyCurve(*v.model, firstTokens(v.text, longest), v.positions, v.layer, lengths);
    Table t;
    t.columns = {"length", "head", "entropy_last", "entropy_mean"};
    t.integerColumns = 2;
    t.meta = folderMeta(args, v);
    t.meta["heads"] = c.heads;
    t.meta["qk"] = "model";
    for (const EntropyPoint& p : points)
        t.rows.push_back({double(p.length), double(p.head), p.entropyLast, p.entropyMean});
    writeDataOutput(args, ctx, true, [&](std::ostream& out, DataFormat f) { writeTable(out, f, t); });
    return 0;
}

} // namespace plab::cli
