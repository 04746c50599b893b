// Reading and writing NumPy .npy files (float32 little-endian, C order), strictly validated.
#pragma once

#include <cstdint>
#include <istream>
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

// Where the data of an .npy file starts and what it holds, from its magic and header alone.
struct NpyLayout {
    std::vector<int64_t> shape;
    uint64_t count = 0;   // product of shape
    size_t itemSize = 4;  // 4 for '<f4', 8 for '<f8'
    size_t dataStart = 0; // byte offset of the data
    std::string shapeText() const;
};
// Parses magic and header; `bytes` must hold at least the whole header. Throws InputError like parseNpy.
NpyLayout parseNpyLayout(std::string_view bytes, const std::string& source);

// Parses the bytes of an .npy file (versions 1-3). Accepts '<f4' and '<f8' (converted to float32) in C order.
// Throws InputError naming `source` and the problem: bad magic, unsupported dtype/endianness/order,
// truncated or oversized data, non-finite values when `requireFinite`.
NpyArray parseNpy(std::string_view bytes, const std::string& source, bool requireFinite = true);
NpyArray readNpy(const std::string& path, bool requireFinite = true);
// Reads from a stream only as many bytes as the header declares (+1 to detect trailing data), refusing an
// absurd shape with a memory estimate before allocating: safe on pipes and devices.
NpyArray readNpy(std::istream& in, const std::string& source, bool requireFinite = true);

// The .npy header (version 1.0, '<f4', C order) for an array of `shape`, padded to 64 bytes.
std::string npyHeader(const std::vector<int64_t>& shape);
// Writes a float32 array atomically.
void writeNpy(const std::string& path, const std::vector<int64_t>& shape, const float* data);

} // namespace plab
