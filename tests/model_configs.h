// Small transformer configurations for the GUI tests: fast to build, save and run, with every field spelled out.
#pragma once

#include "model/model.h"

#include <string>

inline plab::ModelConfig smallModelConfig(const std::string& scheme, int layers, int dModel = 16, int heads = 2,
                                          int dFf = 32, int context = 16)
{
    plab::ModelConfig config;
    config.scheme = scheme;
    config.layers = layers;
    config.dModel = dModel;
    config.heads = heads;
    config.dFf = dFf;
    config.context = context;
    return config;
}
