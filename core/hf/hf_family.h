// The family table: one row per Hugging Face model_type (layout, tensor names, norms, activation, flags and the
// reader of its config fields). Adding a family is one row here plus its tests (docs/adding-a-family.md).
#pragma once

#include "hf/hf_config.h"

#include <string>
#include <string_view>
#include <vector>

namespace plab {

namespace hf_detail {
struct ConfigReader;
}

// Bits of HfFamilyRow::flags: what the family's blocks do besides its norms.
enum HfFamilyFlag : unsigned {
    kHfFusedQkv = 1u << 0,        // phi3's qkv_proj
    kHfFusedGateUp = 1u << 1,     // phi3's gate_up_proj
    kHfSharedNorm = 1u << 2,      // cohere: attention and MLP in parallel, both reading input_layernorm
    kHfInterleavedRope = 1u << 3, // cohere: rotary pairs (2i, 2i + 1)
    kHfQkvBias = 1u << 4,         // qwen2: q, k and v carry a bias (o_proj none)
    kHfEmbedSqrtHidden = 1u << 5, // gemma: embeddings x sqrt(hidden)
    kHfTiedDefault = 1u << 6,     // tie_word_embeddings defaults to true
    kHfRopeOnSlidingOnly = 1u << 7, // cohere2: full layers are NoPE
    kHfTextConfig = 1u << 8,      // gemma3: the language model's fields sit in text_config
};

struct HfFamilyRow {
    const char* modelType;   // config.json's model_type
    HfFamily layout;         // how the tensors are laid out (hf_model.cpp's loader of that layout)
    const char* layoutName;  // "llama": what inspect says the layout is
    HfNormKind norm;         // the family's norm
    HfNormPlace normPlace;   // where a decoder block's norms sit
    HfQkNorm qkNorm;         // q/k norms before rotary
    unsigned flags;          // HfFamilyFlag bits
    const char* activationKey; // the config field naming the activation, and its default
    const char* activationDefault;
    // Reads the family's own fields into `c` (dims, rope, layer types, multipliers) after the row's flags are set.
    void (*read)(const hf_detail::ConfigReader& r, HfConfig& c);
    const char* differs; // what sets it apart, for docs and messages
};

// Every row, in the order messages list them.
const std::vector<HfFamilyRow>& hfFamilyTable();
// The row of `modelType`, or null.
const HfFamilyRow* hfFamilyRow(std::string_view modelType);
// "llama", "gpt2", "bloom", "gpt_neox": the layout name of a family enum (inspect's "family" field).
const char* hfLayoutName(HfFamily family);

} // namespace plab
