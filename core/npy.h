// Reading and writing NumPy .npy files (float32 little-endian, C order), strictly validated.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace plab {

struct NpyArray {
    std::vector<int64_t> shape;
    std::vector<float> data; // row-major

    size_t elementCount() const { return data.size(); }
    std::string shapeText() const; // e.g. "(2, 33, 16)"
};

// Parses the bytes of an .npy file (versions 1-3). Accepts '<f4' and '<f8' (converted to float32) in C order.
// Throws InputError naming `source` and the problem: bad magic, unsupported dtype/endianness/order,
// truncated or oversized data, non-finite values when `requireFinite`.
NpyArray parseNpy(std::string_view bytes, const std::string& source, bool requireFinite = true);
NpyArray readNpy(const std::string& path, bool requireFinite = true);

// The .npy header (version 1.0, '<f4', C order) for an array of `shape`, padded to 64 bytes.
std::string npyHeader(const std::vector<int64_t>& shape);
// Writes a float32 array atomically.
void writeNpy(const std::string& path, const std::vector<int64_t>& shape, const float* data);

} // namespace plab
