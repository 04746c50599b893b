// The rule that an evaluation length must fit the text it scores: checked before any work, never clamped silently.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace plab {

// The bytes evaluateModel scores in `textBytes` of text with `maxTokens` (0: all): every byte after the first.
size_t evalScoredBytes(size_t textBytes, size_t maxTokens);

// The lengths a model of `maxModelLength` supports (longer ones are reported as unsupported) that exceed the scored
// bytes, in their order: empty when every window can be filled. The GUI builds its translated message from it.
std::vector<int> evalLengthsPastText(const std::vector<int>& lengths, int maxModelLength, size_t textBytes,
                                     size_t maxTokens);

// InputError when a length the model supports (<= maxModelLength; longer ones are reported as unsupported) exceeds
// the scored bytes: one window could not be filled, so the row would be a shorter window under a longer name.
// The message names the lengths, `textName` (e.g. "the validation split of corpus.txt") and its size.
// `unit` names what the text is counted in ("byte", or "token" for a tokenized text).
void checkEvalLengthsFit(const std::vector<int>& lengths, int maxModelLength, size_t textBytes, size_t maxTokens,
                         const std::string& textName, const std::string& unit = "byte");

} // namespace plab
