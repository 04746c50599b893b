// The named starting points of a training run (demo, tiny, quick, large): one table every entry point reads.
#pragma once

#include "model/model_config.h"

#include <string>
#include <string_view>
#include <vector>

namespace plab {

// A named starting point for a training run: the model's size and the optimisation schedule, plus how many held-out
// bytes a quick evaluation scores per length. "demo" is the Train tab's default (Figure 1 in about 15 s a scheme
// on 2 cores), "tiny" a seconds-long run, "quick" the CLI's default, "large" the throughput benchmark.
struct Preset {
    std::string name;
    std::string summary;
    int layers, dModel, heads, dFf, context;
    int batch, steps;
    double learningRate, minLearningRate;
    int warmup;
    size_t evalBytes; // held-out bytes scored per evaluation length by the Train tab and lessons
};
const std::vector<Preset>& presets();
std::vector<std::string> presetNames();
const Preset& presetByName(std::string_view name); // InputError naming the allowed presets
// Sets the preset's sizes in `model` and its schedule in `train`; other fields are left as they are.
void applyPreset(std::string_view name, ModelConfig& model, TrainConfig& train);

} // namespace plab
