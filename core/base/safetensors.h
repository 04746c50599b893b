// Reading and writing safetensors files (float32 tensors + string metadata), strictly validated; also memory-mapped.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace plab {

// Format (https://github.com/huggingface/safetensors): 8-byte little-endian header length N, N bytes of JSON
// {"name": {"dtype": "F32", "shape": [...], "data_offsets": [begin, end]}, ..., "__metadata__": {str: str}},
// then the data buffer; offsets are relative to the buffer, which the tensors cover exactly (no holes, no overlaps).

struct Tensor {
    std::vector<int64_t> shape;
    std::vector<float> data;       // row-major, product(shape) elements
    std::string shapeText() const; // e.g. "(2, 3)"
};

struct SafetensorsFile {
    std::map<std::string, std::string> metadata;
    std::map<std::string, Tensor> tensors;
};

// A tensor to write: a view of float32 data owned by the caller.
struct TensorView {
    std::string name;
    std::vector<int64_t> shape;
    const float* data = nullptr; // product(shape) elements
};

// The dtypes read as numbers, for messages.
constexpr const char* kSafetensorsConvertedDtypes = "F32 (F64, F16, BF16 are converted)";

// Largest header accepted (the reference implementation's limit is 100 MB).
constexpr uint64_t kMaxSafetensorsHeader = 100'000'000;

// The bytes of a safetensors file: tensors in the given order, F32, header padded with spaces to 8 bytes.
// Throws InputError on an empty or duplicate name, a name "__metadata__", or a null data pointer.
std::string serializeSafetensors(const std::vector<TensorView>& tensors,
                                 const std::map<std::string, std::string>& metadata);
// Writes atomically (nothing is left behind on failure).
void writeSafetensors(const std::string& path, const std::vector<TensorView>& tensors,
                      const std::map<std::string, std::string>& metadata);

// Parses and validates a whole file: header length within the file, JSON object, every entry with a known
// dtype (F32; F64, F16 and BF16 are converted to float32), non-negative shape, offsets in range and matching the
// shape, no overlaps, no holes, metadata values strings. Throws InputError naming `source` and the problem.
SafetensorsFile parseSafetensors(std::string_view bytes, const std::string& source);
SafetensorsFile readSafetensors(const std::string& path);

// A tensor inside a memory-mapped file, in its stored dtype; valid while the file is open. Besides F32, F64, F16 and BF16
// a mapped file may hold safetensors' other dtypes (BOOL, integers, F8): their sizes are checked, their values are
// never read (toFloat refuses them), so a buffer the model does not use does not stop the file from opening.
struct MappedTensor {
    std::string dtype;
    std::vector<int64_t> shape;
    const char* bytes = nullptr;
    uint64_t count = 0; // product(shape)
    std::string shapeText() const;
    bool converts() const;          // F32, F64, F16 or BF16
    void toFloat(float* out) const; // the count values as float32; InputError unless converts()
};

// A safetensors file memory-mapped, validated as parseSafetensors does (same messages; other dtypes kept, see
// MappedTensor), read on demand: a
// large model's weights are paged in as they are converted, never copied whole. Not copyable.
class MappedSafetensors {
public:
    explicit MappedSafetensors(const std::string& path);
    ~MappedSafetensors();
    MappedSafetensors(const MappedSafetensors&) = delete;
    MappedSafetensors& operator=(const MappedSafetensors&) = delete;

    const std::string& path() const { return m_path; }
    const std::map<std::string, MappedTensor>& tensors() const { return m_tensors; }
    const std::map<std::string, std::string>& metadata() const { return m_metadata; }

private:
    void release();
    std::string m_path;
    void* m_map = nullptr;
    size_t m_size = 0;
    std::map<std::string, MappedTensor> m_tensors;
    std::map<std::string, std::string> m_metadata;
};

} // namespace plab
