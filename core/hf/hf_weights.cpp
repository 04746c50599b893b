// Opening a model folder's safetensors (one file or shards through the index) and taking tensors by name and shape.
#include "hf/hf_weights.h"

#include "base/errors.h"
#include "base/json_input.h"
#include "hf/hf_config.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <set>

namespace plab {

namespace {

std::string shapeString(const std::vector<int64_t>& shape)
{
    std::string s = "(";
    for (size_t i = 0; i < shape.size(); ++i)
        s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + (shape.size() == 1 ? ",)" : ")");
}

} // namespace

bool hfFolderHasWeights(const std::string& folder)
{
    namespace fs = std::filesystem;
    std::error_code ec;
    return fs::exists(fs::path(folder) / "model.safetensors", ec) ||
           fs::exists(fs::path(folder) / "model.safetensors.index.json", ec);
}

HfWeights::HfWeights(const std::string& folder, Use use) : m_folder(folder), m_use(use)
{
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path single = fs::path(folder) / "model.safetensors";
    const fs::path index = fs::path(folder) / "model.safetensors.index.json";
    if (fs::exists(single, ec)) {
        m_files.push_back(std::make_unique<MappedSafetensors>(single.string()));
        m_sourceText = single.string();
        return;
    }
    if (!fs::exists(index, ec))
        throw InputError("model folder " + folder +
                         " has no weights: neither model.safetensors nor model.safetensors.index.json (only the "
                         "safetensors format is read; convert pytorch_model.bin first)");
    const nlohmann::json root = readUntrustedJsonFile(index.string());
    if (!root.is_object() || !root.contains("weight_map") || !root["weight_map"].is_object())
        throw InputError(index.string() + " is not a JSON object with a 'weight_map' object");
    std::set<std::string> shards;
    for (const auto& [tensor, file] : root["weight_map"].items()) {
        if (!file.is_string() || file.get<std::string>().find('/') != std::string::npos)
            throw InputError(index.string() + ": the shard of tensor '" + tensor +
                             "' is not a file name in the folder");
        const std::string name = file.get<std::string>();
        if (!fs::exists(fs::path(folder) / name, ec))
            throw InputError(index.string() + " names shard " + name + " (for tensor '" + tensor +
                             "'), which is not in the folder " + folder);
        shards.insert(name);
    }
    if (shards.empty())
        throw InputError(index.string() + " names no shards (its weight_map is empty)");
    for (const std::string& name : shards)
        m_files.push_back(std::make_unique<MappedSafetensors>((fs::path(folder) / name).string()));
    m_sourceText = "the " + std::to_string(shards.size()) + " shards of " + index.string();
}

const MappedTensor* HfWeights::find(const std::string& name, const MappedSafetensors** file) const
{
    for (const auto& f : m_files) {
        const auto it = f->tensors().find(name);
        if (it != f->tensors().end()) {
            *file = f.get();
            return &it->second;
        }
    }
    return nullptr;
}

bool HfWeights::has(const std::string& name) const
{
    const MappedSafetensors* file = nullptr;
    return find(name, &file) != nullptr;
}

const MappedTensor& HfWeights::checked(const std::string& name, const std::vector<int64_t>& shape) const
{
    const MappedSafetensors* file = nullptr;
    const MappedTensor* t = find(name, &file);
    if (!t)
        throw InputError("model folder " + m_folder + ": tensor '" + name + "' is missing (looked in " + m_sourceText +
                         ")");
    if (t->shape != shape && m_use == Use::Load)
        throw InputError("model folder " + m_folder + ": tensor '" + name + "' in " + file->path() + " has shape " +
                         t->shapeText() + "; config.json implies " + shapeString(shape));
    if (!t->converts())
        throw InputError("model folder " + m_folder + ": tensor '" + name + "' in " + file->path() + " has dtype " +
                         t->dtype + ", and the forward reads it; allowed: " + kSafetensorsConvertedDtypes);
    m_read.insert(name);
    return *t;
}

std::vector<float> HfWeights::take(const std::string& name, const std::vector<int64_t>& shape) const
{
    const MappedTensor& t = checked(name, shape);
    if (m_use == Use::NamesOnly) {
        int64_t count = 1;
        for (const int64_t d : shape)
            count *= d;
        return std::vector<float>(static_cast<size_t>(count));
    }
    std::vector<float> out(t.count);
    t.toFloat(out.data());
    return out;
}

const uint16_t* HfWeights::mappedBf16(const std::string& name, const std::vector<int64_t>& shape) const
{
    const MappedTensor& t = checked(name, shape);
    if (m_use == Use::NamesOnly)
        return nullptr;
    // A writer that did not pad the header to an even size leaves BF16 values unaligned: those are copied instead.
    const bool aligned = reinterpret_cast<uintptr_t>(t.bytes) % alignof(uint16_t) == 0;
    return t.dtype == "BF16" && aligned ? reinterpret_cast<const uint16_t*>(t.bytes) : nullptr;
}

void HfWeights::refuseOutOfScopeTensors() const
{
    for (const auto& f : m_files)
        for (const auto& [name, tensor] : f->tensors())
            if (const std::optional<std::string> reason = hfOutOfScopeTensorReason(name))
                throw InputError("model folder " + m_folder + ": tensor '" + name + "' in " + f->path() +
                                 " is not supported: " + *reason);
}

std::vector<std::string> HfWeights::unreadNames() const
{
    std::vector<std::string> unread;
    for (const std::string& name : names())
        if (!m_read.count(name))
            unread.push_back(name);
    std::sort(unread.begin(), unread.end());
    return unread;
}

std::vector<std::string> HfWeights::names() const
{
    std::vector<std::string> all;
    for (const auto& f : m_files)
        for (const auto& [name, tensor] : f->tensors())
            all.push_back(name);
    return all;
}

} // namespace plab
