// The preset table and its lookup.
#include "model/presets.h"

#include "base/errors.h"

namespace plab {

const std::vector<Preset>& presets()
{
    // One row per preset; every training entry point (CLI train, the GUI's Train tab, lessons) reads this table.
    static const std::vector<Preset> table = {
        // name, summary, layers, d_model, heads, d_ff, context, batch, steps, lr, min lr, warmup, eval bytes
        // Tuned so sinusoidal and rope degrade (ppl(16L)/ppl(L) 2.5-2.9x and 3.0-4.6x) while alibi and local stay flat
        // (0.98-1.03x) for seeds 1, 2, 3, 7, 11, 23 and 42, in about 15 s a scheme on 2 cores.
        {"demo",
         "Figure 1 of the ALiBi paper in about 15 s a scheme: 2 layers, d_model 128, 8 heads, d_ff 256, context 32", 2,
         128, 8, 256, 32, 16, 1200, 3e-3, 3e-4, 100, 16384},
        {"tiny", "seconds: 1 layer, d_model 64, 4 heads, context 32 (too small to show extrapolation)", 1, 64, 4, 256,
         32, 8, 1500, 2e-3, 2e-4, 100, 16384},
        {"quick", "minutes: 2 layers, d_model 128, 8 heads, context 64", 2, 128, 8, 512, 64, 16, 1500, 2e-3, 2e-4, 100,
         65536},
        {"large", "the throughput benchmark: 4 layers, d_model 512, 8 heads, context 256", 4, 512, 8, 2048, 256, 8,
         2000, 6e-4, 6e-5, 200, 65536},
    };
    return table;
}

std::vector<std::string> presetNames()
{
    std::vector<std::string> names;
    for (const Preset& p : presets())
        names.push_back(p.name);
    return names;
}

const Preset& presetByName(std::string_view name)
{
    for (const Preset& p : presets())
        if (p.name == name)
            return p;
    std::string allowed;
    for (const Preset& p : presets())
        allowed += (allowed.empty() ? "" : ", ") + p.name;
    throw InputError("preset '" + std::string(name) + "' is unknown; allowed: " + allowed);
}

void applyPreset(std::string_view name, ModelConfig& m, TrainConfig& t)
{
    const Preset& p = presetByName(name);
    m.layers = p.layers;
    m.dModel = p.dModel;
    m.heads = p.heads;
    m.dFf = p.dFf;
    m.context = p.context;
    t.batch = p.batch;
    t.steps = p.steps;
    t.learningRate = p.learningRate;
    t.minLearningRate = p.minLearningRate;
    t.warmup = p.warmup;
}

} // namespace plab
