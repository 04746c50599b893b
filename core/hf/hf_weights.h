// The weights of a Hugging Face model folder: model.safetensors or its shards, memory-mapped, looked up by name.
#pragma once

#include "base/safetensors.h"

#include <memory>
#include <set>
#include <string>
#include <vector>

namespace plab {

// True when FOLDER holds model.safetensors or model.safetensors.index.json (what HfWeights opens).
bool hfFolderHasWeights(const std::string& folder);

class HfWeights {
public:
    // Opens FOLDER/model.safetensors, or every shard model.safetensors.index.json names. InputError naming the file
    // for a folder without either, an index that is not JSON or names a missing shard, or a shard that fails the
    // safetensors checks (truncated, an unknown dtype: named with its tensor).
    // NamesOnly: for HfModel::unreadTensors, take and mappedBf16 check a tensor's presence and dtype, record it and
    // return zeros of the asked shape (a miniature config's), whatever the stored shape; no value is read.
    enum class Use { Load, NamesOnly };
    explicit HfWeights(const std::string& folder, Use use = Use::Load);

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
    // The one rule of which tensors the forward reads: those a loader took (take, mappedBf16). A tensor of a dtype that
    // is not read as numbers (BOOL, integers, F8) opens with its file and is refused, naming it, only when taken; the
    // others are skipped whatever their dtype (Pythia's old attention.bias masks). Sorted names, after loading.
    std::vector<std::string> unreadNames() const;
    // InputError naming the first tensor of a part the lab does not run (hfOutOfScopeTensorReason: a vision tower).
    void refuseOutOfScopeTensors() const;

private:
    const MappedTensor* find(const std::string& name, const MappedSafetensors** file) const;
    // find, with InputError naming the tensor when it is missing or its shape is not `shape`.
    const MappedTensor& checked(const std::string& name, const std::vector<int64_t>& shape) const;
    std::string m_folder;
    Use m_use = Use::Load;
    std::string m_sourceText;
    std::vector<std::unique_ptr<MappedSafetensors>> m_files;
    mutable std::set<std::string> m_read; // names taken so far
};

} // namespace plab
