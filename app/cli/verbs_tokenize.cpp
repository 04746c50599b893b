// `positionlab-cli tokenize`: a Hugging Face model folder's tokenizer.json run on a text, ids and token strings out.
#include "cli.h"

#include "base/errors.h"
#include "hf/tokenizer.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

namespace plab::cli {

namespace {

// The text of --text or --file (exactly one of them).
std::string textFromArgs(const ParsedArgs& args)
{
    if (args.has("text") == args.has("file"))
        throw InputError("tokenize: give exactly one of --text T and --file F" +
                         std::string(args.has("text") ? " (both were given)" : ""));
    if (args.has("text"))
        return args.text("text");
    const std::string path = args.text("file");
    std::ifstream file(path, std::ios::binary);
    if (!file)
        throw InputError("--file " + path + ": cannot be read");
    std::ostringstream text;
    text << file.rdbuf();
    return text.str();
}

// A token on one line of the plain output: its control characters written as \n, \r and \t.
std::string printable(const std::string& token)
{
    std::string out;
    for (const char c : token)
        out += c == '\n' ? "\\n" : c == '\r' ? "\\r" : c == '\t' ? "\\t" : std::string(1, c);
    return out;
}

int runTokenize(const ParsedArgs& args, VerbContext& ctx)
{
    const std::string text = textFromArgs(args);
    const hf::Tokenizer tokenizer = hf::Tokenizer::fromFolder(args.positional[0]);
    hf::Encoding encoding;
    try {
        encoding = tokenizer.encode(text);
    } catch (const InputError& e) {
        throw InputError((args.has("text") ? "--text: " : "--file " + args.text("file") + ": ") + e.what());
    }
    if (args.has("json")) {
        ctx.out << nlohmann::json{{"ids", encoding.ids}, {"tokens", encoding.tokens}}.dump() << '\n';
        return 0;
    }
    for (size_t i = 0; i < encoding.ids.size(); ++i)
        ctx.out << encoding.ids[i] << '\t' << printable(encoding.tokens[i]) << '\n';
    return 0;
}

} // namespace

void registerTokenizeVerbs()
{
    registerVerb({"tokenize",
                  "DIR",
                  "a model folder's tokenizer.json on a text: one `id<TAB>token` line per token, or --json",
                  {{"text", OptionKind::Value, "the text to tokenize (or --file)", "T"},
                   {"file", OptionKind::Value, "a UTF-8 file to tokenize (or --text)", "F"},
                   {"json", OptionKind::Flag, "machine-readable output: {\"ids\": [...], \"tokens\": [...]}"}},
                  1,
                  1,
                  runTokenize,
                  {},
                  {},
                  "DIR is a Hugging Face model folder holding tokenizer.json (BPE: byte-level as GPT-2, Llama 3, "
                  "Qwen2,\nor Metaspace with byte fallback as Llama 2, Mistral). Special tokens are added as Hugging "
                  "Face's\nencode adds them (Llama's <s> first). In the plain output a token's newline, return and "
                  "tab are\nwritten \\n, \\r and \\t."});
}

} // namespace plab::cli
