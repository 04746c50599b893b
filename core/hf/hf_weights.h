// The weights of a Hugging Face model folder: model.safetensors or its shards, memory-mapped, looked up by name.
#pragma once

#include "base/safetensors.h"

#include <memory>
#include <string>
#include <vector>

namespace plab {

class HfWeights {
public:
    // Opens FOLDER/model.safetensors, or every shard model.safetensors.index.json names. InputError naming the file
    // for a folder without either, an index that is not JSON or names a missing shard, or a shard that fails the
    // safetensors checks (truncated, unsupported dtype such as I8 or F8_E4M3: named with its tensor).
    explicit HfWeights(const std::string& folder);

    bool has(const std::string& name) const;
    // The tensor `name` converted to float32, checked against `shape`: InputError naming the tensor, its file and
    // both shapes when they differ, or naming the tensor and where it was looked for when it is missing.
    std::vector<float> take(const std::string& name, const std::vector<int64_t>& shape) const;
    // The tensor's bytes in the mapping when it is stored as BF16 (the same checks as take), else null: weights kept in
    // BF16 read them in place, valid while this object lives.
    const uint16_t* mappedBf16(const std::string& name, const std::vector<int64_t>& shape) const;
    // Where tensors were looked for, for messages: "model.safetensors" or "the 2 shards of
    // model.safetensors.index.json".
    const std::string& sourceText() const { return m_sourceText; }
    // Every tensor's name.
    std::vector<std::string> names() const;

private:
    const MappedTensor* find(const std::string& name, const MappedSafetensors** file) const;
    // find, with InputError naming the tensor when it is missing or its shape is not `shape`.
    const MappedTensor& checked(const std::string& name, const std::vector<int64_t>& shape) const;
    std::string m_folder;
    std::string m_sourceText;
    std::vector<std::unique_ptr<MappedSafetensors>> m_files;
};

} // namespace plab
