// `positionlab-cli inspect` and `logits`: a Hugging Face model folder's summary card and its float32 logits (products
// in float32 or, with --precision bf16, BF16).
#include "cli.h"

#include "base/errors.h"
#include "base/npy.h"
#include "hf/hf_config.h"
#include "hf/hf_family.h"
#include "hf/hf_model.h"
#include "hf/hf_weights.h"
#include "hf/tokenizer.h"
#include "schemes/rotary_scaling.h"

#include <nlohmann/json.hpp>

#include <cstdio>

namespace plab::cli {

namespace {

// The summary card of issue 19 §4, from config.json (and, with --json, the weights' headers: skipped_tensors).
int runInspect(const ParsedArgs& args, VerbContext& ctx)
{
    const HfConfig c = readHfConfig(args.positional.at(0));
    const SchemeSpec positions = hfPositionSpec(c);
    const HfPrecision precision = precisionFromArgs(args);
    const double memory = hfModelMemoryBytes(c, precision);
    if (args.has("json")) {
        ctx.out << hfSummaryJson(c, precision).dump(2) << '\n';
        return 0;
    }
    char memoryText[64];
    std::snprintf(memoryText, sizeof memoryText, "%.2f GiB", memory / (1ull << 30));
    ctx.out << "model       " << c.folder << '\n'
            << "family      " << c.modelType << " (" << hfLayoutName(c.family) << " layout)\n"
            << "layers      " << c.layers << '\n'
            << "heads       " << c.heads << " query, " << c.kvHeads << " key/value, head dim " << c.headDim << '\n'
            << "hidden      " << c.hidden << ", MLP " << c.intermediate << ", vocab " << c.vocab << '\n'
            << "context     " << c.context << '\n'
            << "positions   " << hfPositionText(positions);
    if (c.scheme == "rope")
        ctx.out << ", theta " << exactText(c.ropeTheta) << ", " << c.rotaryDim << " of " << c.headDim
                << " dims rotate (" << (c.interleavedRope ? "interleaved" : "rotate_half") << " pairing)";
    ctx.out << '\n';
    if (c.slidingWindow > 0 || c.chunkSize > 0 || c.attnSoftcap > 0 || c.finalSoftcap > 0) {
        ctx.out << "layer types " << hfLayerStrip(c) << " (S sliding";
        if (c.slidingWindow > 0)
            ctx.out << ", window " << c.slidingWindow;
        if (c.chunkSize > 0)
            ctx.out << "; C chunked, chunk " << c.chunkSize;
        ctx.out << "; F full)";
        if (c.attnSoftcap > 0)
            ctx.out << ", attention soft cap " << exactText(c.attnSoftcap);
        if (c.finalSoftcap > 0)
            ctx.out << ", final soft cap " << exactText(c.finalSoftcap);
        ctx.out << '\n';
        if (c.slidingRopeTheta > 0)
            ctx.out << "sliding     " << hfPositionText(hfSlidingPositionSpec(c)) << ", theta "
                    << exactText(c.slidingRopeTheta) << " (the sliding layers' own rotary table)\n";
    }
    if (!c.notRead.empty())
        ctx.out << "not read    " << c.notRead << '\n';
    ctx.out << "parameters  " << static_cast<long long>(c.parameterCount()) << '\n'
            << "memory      " << memoryText << " (" << (precision == HfPrecision::BFloat16 ? "BF16" : "float32")
            << " weights and one forward's activations; --precision "
            << (precision == HfPrecision::BFloat16 ? "bf16" : "f32") << ")\n";
    return 0;
}

// The ids logits reads: --ids as given, or --text through the folder's tokenizer.json (special tokens added as HF's
// encode adds them, so the ids equal `tokenize DIR --text T`).
std::vector<int> logitsInput(const ParsedArgs& args)
{
    if (args.has("ids") == args.has("text"))
        throw InputError("logits: give one of --ids I,J,K (token ids) or --text T (tokenized with the folder's "
                         "tokenizer.json)");
    if (args.has("text"))
        return hf::Tokenizer::fromFolder(args.positional.at(0)).encode(args.text("text")).ids;
    const std::vector<int> ids = args.integerList("ids", {}, 0, (1ll << 31) - 1);
    if (ids.empty())
        throw InputError("logits: --ids is empty; allowed: comma-separated token ids, e.g. --ids 1,2,3");
    return ids;
}

// logits: one forward over --ids (or the tokens of --text) at positions 0..T-1, written as float32 (T, vocab).
int runLogits(const ParsedArgs& args, VerbContext& ctx)
{
    const std::vector<int> ids = logitsInput(args);
    if (ids.empty())
        throw InputError("logits: --text gives no tokens; allowed: a text with at least one token");
    const int threads = applyThreadsOption(args);
    (void)threads;
    const HfModel model(args.positional.at(0), precisionFromArgs(args));
    std::string note;
    const HfPositions positions = folderPositionsFromArgs(model.config(), args, std::nullopt, &note);
    if (const auto& skipped = model.skippedTensors(); !skipped.empty())
        ctx.err << "skipped " << skipped.size() << " tensor" << (skipped.size() == 1 ? "" : "s")
                << " the forward never reads (e.g. " << skipped.front() << ")\n";
    ctx.err << note << '\n';
    const HfMatrix logits = model.logits(ids, positions);
    writeNpy(args.text("o"), {logits.rows(), logits.cols()}, logits.data());
    return 0;
}

} // namespace

void registerHfVerbs()
{
    registerVerb({"inspect",
                  "DIR",
                  "a Hugging Face model folder's summary: family, layers, heads, context, positions, parameters",
                  {{"json", OptionKind::Flag,
                    "machine-readable: family, layers, heads, kv_heads, head_dim, vocab, context, scheme, rope_theta, "
                    "scaling, parameters, skipped_tensors (tensors the forward never reads), ..."},
                   precisionOption()},
                  1,
                  1,
                  runInspect});
    registerVerb(
        {"logits",
         "DIR",
         "float32 logits (T, vocab) of a Hugging Face model folder on token ids or a text, at positions 0..T-1",
         {{"ids", OptionKind::Value, "the token ids, comma-separated (or --text)", "I,J,K"},
          {"text", OptionKind::Value, "a text, tokenized with the folder's tokenizer.json (or --ids)", "T"},
          {"o", OptionKind::Value, "the logits as .npy float32 (T, vocab) (required)", "FILE.npy", false, true},
          scalingOption(),
          {"set", OptionKind::Repeated, "a parameter of the method (or of the config's own scaling)", "NAME=VALUE"},
          scalingLayersOption(),
          threadsOption(),
          precisionOption()},
         1,
         1,
         runLogits,
         {},
         {{"o", {".npy"}}}});
}

} // namespace plab::cli
