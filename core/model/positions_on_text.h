// The per-input view of a model's positions: the bias matrix and the contextual positions of one layer and head on
// a text, for every scheme (data-dependent ones from the text, static ones their ordinary bias).
#pragma once

#include "model/model.h"

#include <Eigen/Core>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace plab {

// One head's view of a text of T bytes. Cells a query cannot see are PositionBias::kMasked (-inf) in both.
struct TextPositions {
    Eigen::MatrixXf bias;      // (T, T) [query m, key n]: what the scheme adds to the logit q·k/√d
    Eigen::MatrixXf positions; // (T, T) cope's p_mn; empty (0 x 0) when the scheme has no contextual positions
};

// What a view of a model on a text shows: the attention weights, the positional bias, or the contextual positions.
// Named "weights", "bias", "positions" (the CLI's --show, a lesson's `show`, the GUI's saved state).
enum class TextView { Weights, Bias, Positions };
const std::vector<std::string>& textViewNames();
// InputError "show = NAME is not allowed; allowed: weights, bias, positions" for another name.
TextView textViewByName(std::string_view name);
std::string textViewName(TextView view);

// Whether the scheme has positions that depend on the text (cope): the "contextual positions" view is meaningful.
bool hasContextualPositions(SchemeKind kind);
// InputError "show = positions needs a scheme with contextual positions (cope); SCHEME has none; allowed: weights,
// bias" when `view` asks for positions the scheme does not have.
void checkTextView(TextView view, SchemeKind kind);

// Runs the model on `text` (every byte, T <= the model's maxLength()) and returns layer `layer`'s view of head
// `head`. InputError for an empty or too long text, or a layer or head out of range.
TextPositions positionsOnText(Model& model, const std::vector<uint8_t>& text, int layer, int head);

// The same from the model's last forward (one sequence of `length` bytes: batch 1), without running it again: what a
// caller that already ran the text (the attention view, for its probabilities) asks for each head.
TextPositions positionsOfLastForward(const Model& model, int length, int layer, int head);

} // namespace plab
