// Model checkpoints: a safetensors file with every parameter and the config in __metadata__.
#pragma once

#include "model/model.h"
#include "model/optimizer.h"

#include <nlohmann/json.hpp>

#include <memory>
#include <string>

namespace plab {

struct SafetensorsFile;

struct CheckpointInfo {
    int step = 0;
    double trainLoss = 0;
    std::string corpus;
    nlohmann::json training;                // TrainConfig::toJson(), may be null
    std::shared_ptr<const AdamW> optimizer; // saved with the weights when set (train --init continues from it)
};

// A checkpoint's file name ends in .safetensors (case-sensitive): otherwise InputError "<what> <path>: ..." naming
// the allowed extension. Every writer of checkpoints checks this before any work.
void checkCheckpointFileName(const std::string& path, const std::string& what);

// Safetensors with every tensor of model.tensors() (F32) and __metadata__ {format, config (JSON), scheme, step,
// training (JSON), corpus, train_loss}; with info.optimizer also "optimizer.exp_avg" and "optimizer.exp_avg_sq"
// (flat, parameter layout) and __metadata__ optimizer_updates. Written atomically.
void saveCheckpoint(const Model& model, const CheckpointInfo& info, const std::string& path);
std::string checkpointBytes(const Model& model, const CheckpointInfo& info);

struct LoadedCheckpoint {
    std::unique_ptr<Model> model;
    CheckpointInfo info;
    std::unique_ptr<AdamW> optimizer; // when the file holds the optimiser state (info.optimizer stays empty)
};
// Validates the file (see parseSafetensors), the metadata (format, config), every expected tensor's presence and
// shape, no unexpected tensors, finite values, scheme values in range. InputError naming `source` and the problem.
LoadedCheckpoint loadCheckpoint(const std::string& path);
LoadedCheckpoint checkpointFromSafetensors(const SafetensorsFile& file, const std::string& source);

} // namespace plab
