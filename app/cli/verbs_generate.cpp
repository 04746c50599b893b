// `positionlab-cli generate`: a folder's model or a lab checkpoint continues a prompt, the text streamed as it comes.
#include "cli.h"

#include "base/errors.h"
#include "hf/hf_model.h"
#include "hf/tokenizer.h"
#include "model/checkpoint.h"
#include "runs/generation.h"
#include "schemes/rotary_scaling.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <memory>
#include <optional>

namespace plab::cli {

namespace {

// The prompt: --ids as given, or --text (a folder: its tokenizer.json, special tokens added as HF's encode adds them;
// a checkpoint: the text's bytes).
std::vector<int> promptFromArgs(const ParsedArgs& args, const hf::Tokenizer* tokenizer)
{
    if (args.has("ids") == args.has("text"))
        throw InputError("generate: give one of --ids I,J,K (token ids) or --text T (the prompt)");
    if (args.has("ids"))
        return args.integerList("ids", {}, -(1ll << 31), (1ll << 31) - 1); // range checked against the vocabulary
    const std::string text = args.text("text");
    if (tokenizer)
        return tokenizer->encode(text).ids;
    return std::vector<int>(reinterpret_cast<const uint8_t*>(text.data()),
                            reinterpret_cast<const uint8_t*>(text.data()) + text.size()); // the text's bytes
}

GenerateOptions optionsFromArgs(const ParsedArgs& args)
{
    GenerateOptions options;
    options.maxNew = static_cast<int>(args.integer("max-new", 0, -(1ll << 31), (1ll << 31) - 1)); // checked by core
    options.temperature = args.number("temperature", 0);
    options.topK = static_cast<int>(args.integer("top-k", 0, 0, (1ll << 31) - 1));
    options.seed = static_cast<uint64_t>(args.integer("seed", 0, 0, (1ll << 62)));
    options.scaling = args.text("scaling");
    options.settings = args.all("set");
    if (args.has("scaling-layers")) {
        options.scalingLayers = args.text("scaling-layers");
        if (options.scaling.empty())
            throw InputError("--scaling-layers names the layers a method given with --scaling reaches; without one "
                             "every layer keeps the config's own rope; allowed: add --scaling METHOD");
    }
    if (!options.settings.empty() && options.scaling.empty())
        throw InputError("--set needs --scaling METHOD: the method whose parameters it sets");
    for (const std::string& s : options.settings)
        checkScalingSet(rotaryMethodByName(options.scaling), s);
    return options;
}

// Prints the text of the new ids as it grows: each token's text is what decoding all new ids adds, held back while it
// ends in an unfinished character (a byte-level token may carry half of one).
class Streamer {
public:
    Streamer(std::ostream& out, std::function<std::string(const std::vector<int>&)> decode)
        : m_out(out), m_decode(std::move(decode))
    {
    }
    void add(int id)
    {
        m_ids.push_back(id);
        const std::string text = m_decode(m_ids);
        if (text.size() < m_printed || text.compare(0, m_printed, m_shown) != 0 || endsUnfinished(text))
            return; // a merge changed earlier text or a character is unfinished: wait for the next token
        m_out << text.substr(m_printed) << std::flush;
        m_shown = text;
        m_printed = text.size();
    }
    void finish()
    {
        const std::string text = m_decode(m_ids);
        if (text.size() >= m_printed && text.compare(0, m_printed, m_shown) == 0)
            m_out << text.substr(m_printed);
        m_out << '\n' << std::flush;
    }

private:
    static bool endsUnfinished(const std::string& text)
    {
        return text.size() >= 3 && text.compare(text.size() - 3, 3, "\xEF\xBF\xBD") == 0; // U+FFFD
    }
    std::ostream& m_out;
    std::function<std::string(const std::vector<int>&)> m_decode;
    std::vector<int> m_ids;
    std::string m_shown;
    size_t m_printed = 0;
};

void report(const ParsedArgs& args, VerbContext& ctx, const GenerateResult& result, const nlohmann::json& text)
{
    if (args.has("json")) {
        const nlohmann::json doc{{"ids", result.ids},
                                 {"text", text},
                                 {"prefill_ms", result.prefillMs},
                                 {"decode_tokens_per_s", result.decodeTokensPerSecond},
                                 {"decode_cpu_seconds", result.decodeCpuSeconds},
                                 {"cache_bytes", result.cacheBytes},
                                 {"positions", result.positions},
                                 {"canceled", result.canceled}};
        ctx.out << doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
        return;
    }
    char line[160];
    std::snprintf(line, sizeof line, "%zu tokens; prefill %.1f ms, decode %.1f tokens/s\n", result.ids.size(),
                  result.prefillMs, result.decodeTokensPerSecond);
    ctx.err << line;
}

int runGenerate(const ParsedArgs& args, VerbContext& ctx)
{
    const std::string source = args.positional.at(0);
    GenerateOptions options = optionsFromArgs(args);
    checkGenerateOptions(options);
    applyThreadsOption(args);
    const bool json = args.has("json");
    if (isModelFolder(source)) {
        // Without tokenizer.json (a folder of weights only) --ids still runs: the ids are printed, the text is null.
        std::optional<hf::Tokenizer> tokenizer;
        if (args.has("text") || std::filesystem::exists(std::filesystem::path(source) / "tokenizer.json"))
            tokenizer.emplace(hf::Tokenizer::fromFolder(source));
        const std::vector<int> prompt = promptFromArgs(args, tokenizer ? &*tokenizer : nullptr);
        const HfModel model(source, precisionFromArgs(args));
        auto decode = [&](const std::vector<int>& ids) {
            if (tokenizer)
                return tokenizer->decode(ids);
            std::string text;
            for (const int id : ids)
                text += std::to_string(id) + ' ';
            return text;
        };
        Streamer stream(ctx.out, decode);
        const GenerateResult result = generate(model, prompt, options, [&](int id) {
            if (!json)
                stream.add(id);
            return true;
        });
        if (!json) {
            stream.finish();
            ctx.err << "using positions " << result.positions << '\n';
        }
        report(args, ctx, result, tokenizer ? nlohmann::json(tokenizer->decode(result.ids)) : nlohmann::json());
        return 0;
    }
    refuseOptions("generate", args, {"precision", "scaling-layers"}, "they apply only to a Hugging Face model folder");
    const std::vector<int> prompt = promptFromArgs(args, nullptr);
    LoadedCheckpoint loaded = loadCheckpoint(source);
    auto bytes = [](const std::vector<int>& ids) { return std::string(ids.begin(), ids.end()); };
    Streamer stream(ctx.out, bytes);
    const GenerateResult result = generate(*loaded.model, prompt, options, [&](int id) {
        if (!json)
            stream.add(id);
        return true;
    });
    if (!json)
        stream.finish();
    report(args, ctx, result, nlohmann::json(bytes(result.ids)));
    return 0;
}

} // namespace

void registerGenerateVerbs()
{
    registerVerb(
        {"generate",
         "DIR|CHECKPOINT",
         "continue a prompt with a Hugging Face model folder (key/value cache) or a lab checkpoint, streaming the text",
         {{"text", OptionKind::Value,
           "the prompt (a folder: tokenized with its tokenizer.json; a checkpoint: its bytes) (or --ids)", "T"},
          {"ids", OptionKind::Value, "the prompt as token ids, comma-separated (or --text)", "I,J,K"},
          {"max-new", OptionKind::Value, "new tokens to generate, at least 1 (required)", "N", false, true},
          scalingOption(),
          {"set", OptionKind::Repeated, "a parameter of the --scaling method", "NAME=VALUE"},
          scalingLayersOption(),
          precisionOption(),
          {"temperature", OptionKind::Value, "0 (default): greedy; above 0: sample softmax(logits / t)", "t"},
          {"top-k", OptionKind::Value, "sample among the k most likely tokens only (default 0: all; 1: greedy)", "k"},
          {"seed", OptionKind::Value, "the sampler's seed (default 0): the same seed gives the same text", "s"},
          {"json", OptionKind::Flag,
           "print {\"ids\", \"text\", \"prefill_ms\", \"decode_tokens_per_s\", \"cache_bytes\", \"positions\"} "
           "instead of streaming (text null for a folder without tokenizer.json)"},
          threadsOption()},
         1,
         1,
         runGenerate,
         {},
         {},
         "A folder's keys and values are cached once per layer (rotated, as transformers caches them); each method\n"
         "turns a new key at its position by the table of the current length (dynamic-ntk and longrope change it as\n"
         "the text grows, cached keys are not turned again). rerope, leaky-rerope and self-extend are refused: a "
         "cached\n"
         "key has no single placement under them. A checkpoint reruns its forward over the whole text per token.\n"});
}

} // namespace plab::cli
