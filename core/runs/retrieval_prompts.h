// Retrieval prompts read back from JSON lines (eval DIR --examples-in): the prompts of an earlier run, or of a lab
// checkpoint's own task, scored again through a model folder under methods.
#pragma once

#include "tasks/retrieval.h"

#include <cstddef>
#include <string>
#include <vector>

namespace plab {

// The prompts of one (length, depth) cell of a run. `length` and `depth` are what the file says: a folder run's prompt
// tokens, a lab task's length (payload letters, filler letters for passkey) and needle depth.
struct RetrievalPromptCell {
    int length = 0;
    double depth = 0;
    std::vector<RetrievalExample> examples;
};

// Bounds on a prompts file: what a file from elsewhere may ask before anything is built.
constexpr size_t kMaxPromptFileBytes = size_t{1} << 30; // 1 GiB
constexpr size_t kMaxPromptExamples = 1000000;

// Each non-empty line one JSON object with "prompt_ids" (a non-empty array of token ids), "answer_ids" (likewise),
// "length" (an integer >= 1) and "depth" (a number in [0, 1], or -1 for a task without a needle), and optionally
// "needle_span" ([start, end) within prompt_ids) and "answer"; other fields (method, output_ids, correct, ...: what
// --examples-out writes) are ignored. The same prompt written under several methods (an --examples-out of a
// --compare run) counts once. Cells come sorted by length, then depth; examples keep the file's order.
// InputError naming `source`, the line and the field: not JSON, nested deeper than kMaxJsonDepth, a field missing
// or of the wrong kind, an id outside [0, vocab), an empty file, more than kMaxPromptExamples examples.
std::vector<RetrievalPromptCell> parseRetrievalPrompts(const std::string& text, const std::string& source, int vocab);
// The file at `path` read (InputError when it cannot be, or is larger than kMaxPromptFileBytes) and parsed as above.
std::vector<RetrievalPromptCell> readRetrievalPrompts(const std::string& path, int vocab);

// The most tokens one of `cells`' examples is read as: prompt + answer - 1 (the last answer token is never input).
int longestPromptRead(const std::vector<RetrievalPromptCell>& cells);

} // namespace plab
