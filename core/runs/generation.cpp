// Generation loops over a key/value cache (folders) or growing windows (lab byte models), and the one sampler.
#include "runs/generation.h"

#include "base/errors.h"
#include "hf/hf_model.h"
#include "model/model.h"

namespace plab {

void checkGenerateOptions(const GenerateOptions&) {}

GenerateResult generate(const HfModel&, const std::vector<int>&, const GenerateOptions&, const GeneratedToken&)
{
    throw RunError("generate: not implemented yet");
}

GenerateResult generate(Model&, const std::vector<int>&, const GenerateOptions&, const GeneratedToken&)
{
    throw RunError("generate: not implemented yet");
}

int chooseToken(const float*, int, const GenerateOptions&, uint64_t&)
{
    return 0;
}

} // namespace plab
