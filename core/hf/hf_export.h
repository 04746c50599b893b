// Lab models as Hugging Face folders: the family whose forward is exactly the lab model's, its config.json, weights and
// a byte-level tokenizer.json whose ids are the lab's bytes (`positionlab-cli export`).
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace plab {

class Model;
struct ModelConfig;

// The schemes `export` writes and the family of each, for messages and docs: "rope, none (gpt_neox); learned,
// sinusoidal (gpt2)".
const char* hfExportableSchemesText();

// The Hugging Face family whose forward is exactly the lab model's: "gpt_neox" for rope (rotate_half pairs are the
// lab's interleaved pairs permuted inside q and k; p-RoPE's keep becomes fewer rotated dims with the base that gives
// the same θ) and none (rotary_pct 0); "gpt2" for learned (the table is wpe) and sinusoidal (the table written as wpe,
// the embedding's sqrt(d_model) folded into wte and its inverse into ln_f). InputError naming the scheme, option or
// setting no family computes (a method other than pi, dynamic-ntk, yarn and llama3, which become rope_scaling;
// nope-every, logn, a temperature, ssmax, a sink logit, logit-c, a window, chunk or soft cap) and the schemes that
// export.
std::string hfExportFamily(const ModelConfig& config);

struct HfExportOptions {
    bool force = false; // write into a non-empty folder, replacing the export's files one by one (atomically each)
    int positions = 0;  // sinusoidal: rows of the wpe table written (0: 16 x context, at most kMaxLength)
};

// The rows of wpe a sinusoidal model's export writes: options.positions or 16 x context (capped at kMaxLength).
// InputError for --positions on another scheme or outside [1, kMaxLength].
int hfExportPositions(const ModelConfig& config, const HfExportOptions& options);

// The files of the folder, in memory: config.json, model.safetensors (F32, __metadata__ format "pt" and the lab's
// scheme), tokenizer.json, tokenizer_config.json, generation_config.json.
struct HfExportFiles {
    std::string family;
    std::vector<std::pair<std::string, std::string>> files; // (name, bytes)
};
HfExportFiles hfExportFiles(const Model& model, const HfExportOptions& options = {});

// tokenizer.json of a byte-level model of `vocab` = 256 ids: BPE with no merges over a ByteLevel pre-tokenizer (no
// regex) and decoder, byte b's ByteLevel character mapped to id b; Hugging Face's tokenizers and core/hf's reader
// both turn a text into its UTF-8 bytes.
std::string byteTokenizerJson();

// Writes the folder. `folder` missing or empty: built in a fresh folder beside it and renamed into place, so a
// failure leaves nothing; non-empty: InputError naming it unless options.force. Returns what was written.
HfExportFiles exportHfFolder(const Model& model, const std::string& folder, const HfExportOptions& options = {});

} // namespace plab
