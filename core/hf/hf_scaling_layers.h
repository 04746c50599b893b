// Where a rope method applied zero-shot goes in a folder that mixes layer types (--scaling-layers full|sliding|all):
// the one rule, the positions each layer type reads, and each type's rotary table (frequencies --model).
#pragma once

#include "hf/hf_config.h"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace plab {

// The layer types a method applied zero-shot reaches: full (the default: where Gemma 3's own scaling lives), sliding
// (sliding_attention and chunked_attention layers) or all.
enum class HfScalingLayers { Full, Sliding, All };
// "full", "sliding", "all".
const char* hfScalingLayersName(HfScalingLayers layers);
// InputError naming the value and the allowed words for anything else.
HfScalingLayers hfScalingLayersByName(std::string_view name);

// The positions of a forward of a folder's model: `spec` (hfPositionSpec: the config's own rope or a method applied
// zero-shot) on the layer types `layers` names; the other layers keep the config's own rope. Implicit from a spec:
// the default, full.
struct HfPositions {
    SchemeSpec spec;
    HfScalingLayers layers = HfScalingLayers::Full;
    HfPositions(SchemeSpec s, HfScalingLayers l = HfScalingLayers::Full) : spec(std::move(s)), layers(l) {}
};

// Whether `layers` reaches the layers of `type` in `config`. A window or chunk of at least the model's context hides
// nothing the model was trained on (Phi-3.5's sliding_window 262144 past its 131072 positions), so such a layer counts
// as full. The one home of the rule (forward, checks, tables, docs).
bool hfScalingReaches(const HfConfig& config, HfScalingLayers layers, HfLayerType type);

// The positions the layers of `type` read: positions.spec where the rule reaches them (a sliding layer with a table of
// its own reads it with that table's base and keep), else the config's own rope of that type (hfSlidingPositionSpec
// for sliding layers, hfPositionSpec for the others). Non-rotary positions (alibi, learned) are the same everywhere.
SchemeSpec hfLayerTypePositions(const HfConfig& config, const HfPositions& positions, HfLayerType type);

// InputError when `layers` reaches no layer with rotary positions in `config`, so that a method applied zero-shot
// would change nothing: names the layer pattern and the values that would reach one. Called where a method is applied
// (CLI --scaling, the GUI's Positions chooser and Evaluate under methods).
void checkHfScalingReach(const HfConfig& config, HfScalingLayers layers);
// The same for a list of methods applied zero-shot (eval --compare and --task, sweep --model, the app's Evaluate under
// methods and Retrieval pages), the one rule of when it applies: a method other than the config's own (empty: the
// config's own) must reach a rotary layer (checkHfScalingReach); a list with none such and `layers` other than full
// would change nothing, and is refused too.
void checkHfMethodsReach(const HfConfig& config, const std::vector<std::string>& methods, HfScalingLayers layers);

// One layer type of a folder with the rotary positions its layers read: `frequencies --model` and the Rotary
// frequencies data of a folder, one entry per type present (full, sliding, chunked), NoPE layers left out.
struct HfLayerTypeTable {
    HfLayerType type = HfLayerType::Full;
    int layers = 0;  // how many rotary layers of the type
    SchemeSpec spec; // hfLayerTypePositions
};
std::vector<HfLayerTypeTable> hfLayerTypeTables(const HfConfig& config, const HfPositions& positions);

} // namespace plab
