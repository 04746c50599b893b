// `positionlab-cli export`: a lab checkpoint written as a Hugging Face folder (gpt_neox or gpt2, byte tokenizer.json).
#include "cli.h"

#include "hf/hf_export.h"
#include "model/checkpoint.h"
#include "schemes/position_bias.h"

#include <nlohmann/json.hpp>

namespace plab::cli {

namespace {

int runExport(const ParsedArgs& args, VerbContext& ctx)
{
    const std::string folder = args.text("o");
    HfExportOptions options;
    options.force = args.has("force");
    options.positions = static_cast<int>(args.integer("positions", 0, 1, kMaxLength));
    const LoadedCheckpoint loaded = loadCheckpoint(args.positional[0]);
    const HfExportFiles files = exportHfFolder(*loaded.model, folder, options);
    std::vector<std::string> names;
    for (const auto& file : files.files)
        names.push_back(file.first);
    if (args.has("json")) {
        ctx.out << nlohmann::json{{"folder", folder},
                                  {"family", files.family},
                                  {"scheme", loaded.model->config().scheme},
                                  {"files", names}}
                       .dump()
                << '\n';
        return 0;
    }
    ctx.out << "wrote " << folder << ": a " << files.family << " folder of the " << loaded.model->config().scheme
            << " model " << args.positional[0] << " (";
    for (size_t i = 0; i < names.size(); ++i)
        ctx.out << (i ? ", " : "") << names[i];
    ctx.out << ")\n";
    return 0;
}

} // namespace

void registerExportVerbs()
{
    registerVerb(
        {"export",
         "CHECKPOINT",
         "a lab checkpoint as a Hugging Face folder (gpt_neox or gpt2) with a byte-level tokenizer.json",
         {{"o", OptionKind::Value, "the folder to write (missing or empty, or with --force); required", "DIR", false,
           true},
          {"force", OptionKind::Flag, "write into a non-empty folder: the export's files replaced, others left"},
          {"positions", OptionKind::Value,
           "sinusoidal models: rows of the position table written as gpt2's wpe (default 16 x context)", "N"},
          {"json", OptionKind::Flag, "machine-readable output: {\"folder\", \"family\", \"scheme\", \"files\"}"}},
         1,
         1,
         runExport,
         {},
         {},
         std::string("Schemes that export: ") + hfExportableSchemesText() +
             ".\nThe folder's forward is the lab model's exactly:\n"
             "gpt_neox with use_parallel_residual false, hidden_act gelu_new (the lab's tanh GELU), the lab's rotary\n"
             "pairs (2i, 2i+1) permuted into rotate_half's inside q and k, rotary_pct 0 for NoPE, tied embeddings;\n"
             "gpt2 for learned positions (n_positions = the context), and for sinusoidal with the table written as\n"
             "wpe (--positions rows). A rope checkpoint's pi, dynamic-ntk, yarn or llama3 becomes rope_scaling.\nOther "
             "schemes, methods and options (ntk, self-extend, nope-every, logn, ssmax, windows, ...)\n"
             "exit 2 naming them. tokenizer.json maps each byte to its id (the lab's 256 byte ids), no merges.\n"
             "A missing or empty DIR is built beside it and renamed into place; a non-empty one needs --force."});
}

} // namespace plab::cli
