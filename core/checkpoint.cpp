// Checkpoints: writing and validating safetensors files of a model.
#include "checkpoint.h"

#include "atomic_file.h"
#include "errors.h"
#include "safetensors.h"

#include <cmath>

namespace plab {

namespace {
constexpr const char* kFormatName = "positionlab-model";
constexpr const char* kFormatVersion = "1";
} // namespace

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

LoadedCheckpoint checkpointFromSafetensors(const SafetensorsFile& file, const std::string& source)
{
    auto fail = [&](const std::string& what) { return InputError("checkpoint " + source + ": " + what); };
    auto metaValue = [&](const char* key) -> const std::string& {
        auto it = file.metadata.find(key);
        if (it == file.metadata.end())
            throw fail(std::string("__metadata__ has no '") + key + "' (not a PositionLab model checkpoint?)");
        return it->second;
    };
    if (metaValue("format") != kFormatName)
        throw fail("__metadata__ format is '" + metaValue("format") + "', expected '" + kFormatName + "'");
    if (metaValue("format_version") != kFormatVersion)
        throw fail("format_version " + metaValue("format_version") + " is not supported (this build reads " +
                   kFormatVersion + ")");
    nlohmann::json configJson;
    try {
        configJson = nlohmann::json::parse(metaValue("config"));
    } catch (const nlohmann::json::exception& e) {
        throw fail(std::string("the config in __metadata__ is not valid JSON: ") + e.what());
    }
    const ModelConfig config = ModelConfig::fromJson(configJson, "checkpoint " + source);
    if (const auto it = file.metadata.find("scheme"); it != file.metadata.end() && it->second != config.scheme)
        throw fail("__metadata__ scheme '" + it->second + "' disagrees with the config's '" + config.scheme + "'");
    // Every tensor the config implies must be in the file with its shape before a model of that size is allocated.
    const std::vector<ParameterTensor> layout = modelTensorLayout(config);
    for (const ParameterTensor& t : layout) {
        auto it = file.tensors.find(t.name);
        if (it == file.tensors.end())
            throw fail("tensor '" + t.name + "' is missing");
        if (it->second.shape != t.shape) {
            Tensor expected;
            expected.shape = t.shape;
            throw fail("tensor '" + t.name + "' has shape " + it->second.shapeText() + ", the config needs " +
                       expected.shapeText());
        }
        for (float v : it->second.data)
            if (!std::isfinite(v))
                throw fail("tensor '" + t.name + "' holds a non-finite value");
    }
    LoadedCheckpoint loaded;
    loaded.model = std::make_unique<Model>(config);
    Model& model = *loaded.model;
    for (const ParameterTensor& t : model.tensors()) {
        const Tensor& src = file.tensors.at(t.name);
        std::copy(src.data.begin(), src.data.end(), model.parameters().begin() + t.offset);
    }
    const bool hasOptimizer = file.tensors.count("optimizer.exp_avg") && file.tensors.count("optimizer.exp_avg_sq");
    for (const auto& [name, tensor] : file.tensors) {
        (void)tensor;
        bool known = hasOptimizer && (name == "optimizer.exp_avg" || name == "optimizer.exp_avg_sq");
        for (const ParameterTensor& t : model.tensors())
            known = known || t.name == name;
        if (!known)
            throw fail("unexpected tensor '" + name + "' for a " + config.scheme + " model of " +
                       std::to_string(config.layers) + " layers");
    }
    model.parametersChanged();
    try {
        validateSchemeSpec(model.schemeSpec());
    } catch (const InputError& e) {
        throw fail(e.what());
    }
    const std::string& stepText = metaValue("step");
    try {
        loaded.info.step = static_cast<int>(parseInteger(stepText, "step", 0, 2000000000));
    } catch (const InputError&) {
        throw fail("__metadata__ step '" + stepText + "' is not a non-negative integer");
    }
    if (auto it = file.metadata.find("train_loss"); it != file.metadata.end()) {
        try {
            loaded.info.trainLoss = parseNumber(it->second, "train_loss");
        } catch (const InputError&) {
            loaded.info.trainLoss = std::nan("");
        }
    }
    if (auto it = file.metadata.find("corpus"); it != file.metadata.end())
        loaded.info.corpus = it->second;
    if (auto it = file.metadata.find("training"); it != file.metadata.end())
        loaded.info.training = nlohmann::json::parse(it->second, nullptr, false);
    if (loaded.info.training.is_discarded())
        loaded.info.training = nullptr;
    if (hasOptimizer) {
        const auto it = file.metadata.find("optimizer_updates");
        int updates = 0;
        try {
            updates = static_cast<int>(parseInteger(it == file.metadata.end() ? "" : it->second, "optimizer_updates", 0,
                                                    2000000000));
            loaded.optimizer = std::make_unique<AdamW>(model.parameterCount());
            loaded.optimizer->restore(file.tensors.at("optimizer.exp_avg").data,
                                      file.tensors.at("optimizer.exp_avg_sq").data, updates);
        } catch (const InputError& e) {
            throw fail(e.what());
        }
    }
    return loaded;
}

LoadedCheckpoint loadCheckpoint(const std::string& path)
{
    return checkpointFromSafetensors(readSafetensors(path), path);
}

} // namespace plab
