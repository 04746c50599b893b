// Checkpoints: writing and validating safetensors files of a model.
#include "model/checkpoint.h"

#include "base/atomic_file.h"
#include "base/errors.h"
#include "base/safetensors.h"

#include <cmath>
#include <string>

namespace plab {

namespace {
constexpr const char* kFormatName = "positionlab-model";
constexpr const char* kFormatVersion = "1";
constexpr const char* kFileSuffix = ".safetensors";
} // namespace

void checkCheckpointFileName(const std::string& path, const std::string& what)
{
    if (!path.ends_with(kFileSuffix))
        throw InputError(what + " " + path + ": a checkpoint is written as MODEL" + kFileSuffix +
                         "; the file name must end in " + kFileSuffix + " (the only allowed extension)");
}

std::string checkpointBytes(const Model& model, const CheckpointInfo& info)
{
    std::vector<TensorView> views;
    for (const ParameterTensor& t : model.tensors())
        views.push_back({t.name, t.shape, model.parameters().data() + t.offset});
    std::map<std::string, std::string> meta;
    meta["format"] = kFormatName;
    meta["format_version"] = kFormatVersion;
    meta["config"] = model.config().toJson().dump();
    meta["scheme"] = model.config().scheme;
    meta["step"] = std::to_string(info.step);
    meta["train_loss"] = exactText(info.trainLoss);
    if (info.optimizer) {
        const int64_t count = static_cast<int64_t>(model.parameterCount());
        views.push_back({"optimizer.exp_avg", {count}, info.optimizer->firstMoment().data()});
        views.push_back({"optimizer.exp_avg_sq", {count}, info.optimizer->secondMoment().data()});
        meta["optimizer_updates"] = std::to_string(info.optimizer->updates());
    }
    if (!info.corpus.empty())
        meta["corpus"] = info.corpus;
    if (!info.training.is_null())
        meta["training"] = info.training.dump();
    return serializeSafetensors(views, meta);
}

void saveCheckpoint(const Model& model, const CheckpointInfo& info, const std::string& path)
{
    writeFileAtomically(path, checkpointBytes(model, info));
}

namespace {

// The file being read: its refusals name it, and a missing required metadata key says what the file may be.
struct CheckpointReader {
    const SafetensorsFile& file;
    const std::string& source;

    InputError fail(const std::string& what) const { return InputError("checkpoint " + source + ": " + what); }
    const std::string& required(const char* key) const
    {
        auto it = file.metadata.find(key);
        if (it == file.metadata.end())
            throw fail(std::string("__metadata__ has no '") + key + "' (not a PositionLab model checkpoint?)");
        return it->second;
    }
    const std::string* optional(const char* key) const
    {
        auto it = file.metadata.find(key);
        return it == file.metadata.end() ? nullptr : &it->second;
    }
};

// The format marker, its version and the model config of the metadata.
ModelConfig readConfig(const CheckpointReader& r)
{
    if (r.required("format") != kFormatName)
        throw r.fail("__metadata__ format is '" + r.required("format") + "', expected '" + kFormatName + "'");
    if (r.required("format_version") != kFormatVersion)
        throw r.fail("format_version " + r.required("format_version") + " is not supported (this build reads " +
                     kFormatVersion + ")");
    nlohmann::json configJson;
    try {
        configJson = nlohmann::json::parse(r.required("config"));
    } catch (const nlohmann::json::exception& e) {
        throw r.fail(std::string("the config in __metadata__ is not valid JSON: ") + e.what());
    }
    const ModelConfig config = ModelConfig::fromJson(configJson, "checkpoint " + r.source);
    if (const std::string* scheme = r.optional("scheme"); scheme && *scheme != config.scheme)
        throw r.fail("__metadata__ scheme '" + *scheme + "' disagrees with the config's '" + config.scheme + "'");
    return config;
}

// Every tensor the config implies is in the file with its shape and finite values, and no other is: checked before a
// model of that size is allocated.
// AdamW's moments, saved since rotary length extension's `train --init` (older checkpoints have none).
bool hasOptimizerState(const SafetensorsFile& file)
{
    return file.tensors.count("optimizer.exp_avg") && file.tensors.count("optimizer.exp_avg_sq");
}

std::unique_ptr<AdamW> readOptimizer(const CheckpointReader& r, const Model& model)
{
    if (!hasOptimizerState(r.file))
        return nullptr;
    const auto it = r.file.metadata.find("optimizer_updates");
    try {
        const int updates = static_cast<int>(
            parseInteger(it == r.file.metadata.end() ? "" : it->second, "optimizer_updates", 0, 2000000000));
        auto optimizer = std::make_unique<AdamW>(model.parameterCount());
        optimizer->restore(r.file.tensors.at("optimizer.exp_avg").data, r.file.tensors.at("optimizer.exp_avg_sq").data,
                           updates);
        return optimizer;
    } catch (const InputError& e) {
        throw r.fail(e.what());
    }
}

void checkTensors(const CheckpointReader& r, const ModelConfig& config, const std::vector<ParameterTensor>& layout)
{
    for (const ParameterTensor& t : layout) {
        auto it = r.file.tensors.find(t.name);
        if (it == r.file.tensors.end())
            throw r.fail("tensor '" + t.name + "' is missing");
        if (it->second.shape != t.shape) {
            Tensor expected;
            expected.shape = t.shape;
            throw r.fail("tensor '" + t.name + "' has shape " + it->second.shapeText() + ", the config needs " +
                         expected.shapeText());
        }
        for (float v : it->second.data)
            if (!std::isfinite(v))
                throw r.fail("tensor '" + t.name + "' holds a non-finite value");
    }
    const bool hasOptimizer = hasOptimizerState(r.file);
    for (const auto& [name, tensor] : r.file.tensors) {
        (void)tensor;
        bool known = hasOptimizer && (name == "optimizer.exp_avg" || name == "optimizer.exp_avg_sq");
        for (const ParameterTensor& t : layout)
            known = known || t.name == name;
        if (!known)
            throw r.fail("unexpected tensor '" + name + "' for a " + config.scheme + " model of " +
                         std::to_string(config.layers) + " layers");
    }
}

// Step, training loss, corpus and training settings; only the step is required.
CheckpointInfo readInfo(const CheckpointReader& r)
{
    CheckpointInfo info;
    const std::string& stepText = r.required("step");
    try {
        info.step = static_cast<int>(parseInteger(stepText, "step", 0, 2000000000));
    } catch (const InputError&) {
        throw r.fail("__metadata__ step '" + stepText + "' is not a non-negative integer");
    }
    if (const std::string* loss = r.optional("train_loss")) {
        try {
            info.trainLoss = parseNumber(*loss, "train_loss");
        } catch (const InputError&) {
            info.trainLoss = std::nan("");
        }
    }
    if (const std::string* corpus = r.optional("corpus"))
        info.corpus = *corpus;
    if (const std::string* training = r.optional("training"))
        info.training = nlohmann::json::parse(*training, nullptr, false);
    if (info.training.is_discarded())
        info.training = nullptr;
    return info;
}

} // namespace

LoadedCheckpoint checkpointFromSafetensors(const SafetensorsFile& file, const std::string& source)
{
    const CheckpointReader reader{file, source};
    const ModelConfig config = readConfig(reader);
    checkTensors(reader, config, modelTensorLayout(config));
    LoadedCheckpoint loaded;
    loaded.model = std::make_unique<Model>(config, ConfigCheck::Validated); // readConfig's fromJson validated it
    Model& model = *loaded.model;
    for (const ParameterTensor& t : model.tensors()) {
        const Tensor& src = file.tensors.at(t.name);
        std::copy(src.data.begin(), src.data.end(), model.parameters().begin() + t.offset);
    }
    model.parametersChanged();
    try {
        validateSchemeSpec(model.schemeSpec());
    } catch (const InputError& e) {
        throw reader.fail(e.what());
    }
    loaded.info = readInfo(reader);
    loaded.optimizer = readOptimizer(reader, model);
    return loaded;
}

LoadedCheckpoint loadCheckpoint(const std::string& path)
{
    return checkpointFromSafetensors(readSafetensors(path), path);
}

} // namespace plab
