// Evaluation lengths against the text they score.
#include "runs/eval_check.h"

#include "base/errors.h"
#include "model/model_config.h"
#include "schemes/position_bias.h"

#include <algorithm>

namespace plab {

size_t evalScoredBytes(size_t textBytes, size_t maxTokens)
{
    const size_t used = maxTokens ? std::min(textBytes, maxTokens + 1) : textBytes;
    return used > 0 ? used - 1 : 0;
}

std::vector<int> evalLengthsPastText(const std::vector<int>& lengths, int maxModelLength, size_t textBytes,
                                     size_t maxTokens)
{
    const size_t scored = evalScoredBytes(textBytes, maxTokens);
    std::vector<int> past;
    for (int length : lengths)
        if (length <= maxModelLength && static_cast<size_t>(length) > scored)
            past.push_back(length);
    return past;
}

void checkEvalLengthsFit(const std::vector<int>& lengths, int maxModelLength, size_t textBytes, size_t maxTokens,
                         const std::string& textName, const std::string& unit)
{
    const size_t scored = evalScoredBytes(textBytes, maxTokens);
    std::string tooLong;
    for (int length : evalLengthsPastText(lengths, maxModelLength, textBytes, maxTokens))
        tooLong += (tooLong.empty() ? "" : ",") + std::to_string(length);
    if (tooLong.empty())
        return;
    throw InputError(
        "lengths " + tooLong + " exceed the text scored: " + textName + " has " + std::to_string(textBytes) + " " +
        unit + "s" +
        (maxTokens && maxTokens + 1 < textBytes ? " (at most " + std::to_string(maxTokens) + " scored)" : "") +
        ", so " + std::to_string(scored) +
        " are scored and a longer window cannot be filled; allowed: "
        "lengths up to " +
        std::to_string(scored) + ", or a longer text");
}


} // namespace plab
