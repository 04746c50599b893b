// Safetensors serialisation and strict parsing (every offset, size and dtype checked before use).
#include "base/safetensors.h"

#include "base/atomic_file.h"
#include "base/json_input.h"
#include "base/limits.h"
#include "base/errors.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace plab {

namespace {

static_assert(std::endian::native == std::endian::little, "safetensors I/O assumes a little-endian host");

std::string shapeString(const std::vector<int64_t>& shape)
{
    std::string s = "(";
    for (size_t i = 0; i < shape.size(); ++i)
        s += (i ? ", " : "") + std::to_string(shape[i]);
    if (shape.size() == 1)
        s += ",";
    return s + ")";
}

float halfToFloat(uint16_t h)
{
    const uint32_t sign = (h & 0x8000u) << 16;
    const uint32_t exponent = (h >> 10) & 0x1f;
    uint32_t mantissa = h & 0x3ffu;
    uint32_t bits;
    if (exponent == 0) {
        if (mantissa == 0) {
            bits = sign;
        } else { // subnormal: normalise
            int e = -1;
            do {
                ++e;
                mantissa <<= 1;
            } while (!(mantissa & 0x400u));
            bits = sign | static_cast<uint32_t>(127 - 15 - e) << 23 | (mantissa & 0x3ffu) << 13;
        }
    } else if (exponent == 31) {
        bits = sign | 0x7f800000u | mantissa << 13;
    } else {
        bits = sign | (exponent + 127 - 15) << 23 | mantissa << 13;
    }
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}

} // namespace

std::string Tensor::shapeText() const
{
    return shapeString(shape);
}

std::string serializeSafetensors(const std::vector<TensorView>& tensors,
                                 const std::map<std::string, std::string>& metadata)
{
    nlohmann::ordered_json header = nlohmann::ordered_json::object();
    if (!metadata.empty())
        header["__metadata__"] = metadata;
    std::set<std::string> names;
    uint64_t offset = 0;
    for (const TensorView& t : tensors) {
        if (t.name.empty() || t.name == "__metadata__")
            throw InputError("safetensors: invalid tensor name '" + t.name + "'");
        if (!names.insert(t.name).second)
            throw InputError("safetensors: duplicate tensor name '" + t.name + "'");
        uint64_t count = 1;
        for (int64_t d : t.shape) {
            if (d < 0)
                throw InputError("safetensors: negative dimension in the shape of " + t.name);
            count *= static_cast<uint64_t>(d);
        }
        if (count && !t.data)
            throw InputError("safetensors: tensor " + t.name + " has no data");
        header[t.name] = {{"dtype", "F32"}, {"shape", t.shape}, {"data_offsets", {offset, offset + 4 * count}}};
        offset += 4 * count;
    }
    std::string json = header.dump();
    json.append((8 - json.size() % 8) % 8, ' '); // the data buffer starts 8-byte aligned
    std::string bytes;
    bytes.reserve(8 + json.size() + offset);
    const uint64_t headerLength = json.size();
    bytes.append(reinterpret_cast<const char*>(&headerLength), 8);
    bytes += json;
    for (const TensorView& t : tensors) {
        uint64_t count = 1;
        for (int64_t d : t.shape)
            count *= static_cast<uint64_t>(d);
        if (count)
            bytes.append(reinterpret_cast<const char*>(t.data), 4 * count);
    }
    return bytes;
}

void writeSafetensors(const std::string& path, const std::vector<TensorView>& tensors,
                      const std::map<std::string, std::string>& metadata)
{
    writeFileAtomically(path, serializeSafetensors(tensors, metadata));
}

namespace {

// Refusals of one file name the file: "checkpoint SOURCE: what".
struct FileProblem {
    const std::string& source;
    InputError operator()(const std::string& what) const { return InputError("checkpoint " + source + ": " + what); }
};

// The JSON header after the 8-byte length, and where the data buffer starts.
nlohmann::json parseHeader(std::string_view bytes, const FileProblem& fail, size_t& bufferStart)
{
    if (bytes.size() < 8)
        throw fail("file is " + std::to_string(bytes.size()) + " bytes, too short for a safetensors header length");
    uint64_t headerLength = 0;
    std::memcpy(&headerLength, bytes.data(), 8);
    if (headerLength > kMaxSafetensorsHeader)
        throw fail("header length " + std::to_string(headerLength) + " exceeds the limit of " +
                   std::to_string(kMaxSafetensorsHeader) + " bytes (not a safetensors file?)");
    if (headerLength > bytes.size() - 8)
        throw fail("header length " + std::to_string(headerLength) + " runs past the end of the file (" +
                   std::to_string(bytes.size()) + " bytes; truncated?)");
    const std::string_view headerText = bytes.substr(8, headerLength);
    if (headerText.empty() || headerText.front() != '{')
        throw fail("header does not start with '{' (not a safetensors file?)");
    nlohmann::json header;
    try {
        header = parseUntrustedJson(headerText, "header");
    } catch (const InputError& e) {
        throw fail(e.what());
    }
    if (!header.is_object())
        throw fail("header is not a JSON object");
    bufferStart = 8 + headerLength;
    return header;
}

void readMetadata(const nlohmann::json& entry, const FileProblem& fail, std::map<std::string, std::string>& metadata)
{
    if (!entry.is_object())
        throw fail("__metadata__ is not an object of strings");
    for (const auto& [key, value] : entry.items()) {
        if (!value.is_string())
            throw fail("__metadata__ value of '" + key + "' is not a string");
        metadata[key] = value.get<std::string>();
    }
}

// Bytes per value of a dtype this reader converts; refuses the others.
size_t dtypeSize(const std::string& dtype, const std::string& what, const FileProblem& fail)
{
    if (dtype == "F32")
        return 4;
    if (dtype == "F64")
        return 8;
    if (dtype == "F16" || dtype == "BF16")
        return 2;
    throw fail(what + " has dtype " + dtype + "; allowed: " + kSafetensorsConvertedDtypes);
}

// Bytes per value of the other dtypes safetensors defines (0 for a name it does not define): a memory-mapped file may
// hold them in tensors nobody reads (transformers' BOOL attention masks), refused only when a tensor is read.
size_t opaqueDtypeSize(const std::string& dtype)
{
    if (dtype == "BOOL" || dtype == "U8" || dtype == "I8" || dtype == "F8_E4M3" || dtype == "F8_E5M2" ||
        dtype == "F8_E8M0")
        return 1;
    if (dtype == "I16" || dtype == "U16")
        return 2;
    if (dtype == "I32" || dtype == "U32")
        return 4;
    if (dtype == "I64" || dtype == "U64")
        return 8;
    return 0;
}

// `count` values of `dtype` at `src` as floats.
void convertToFloat(const char* src, uint64_t count, const std::string& dtype, float* out)
{
    if (dtype == "F32") {
        if (count)
            std::memcpy(out, src, 4 * count);
    } else if (dtype == "F64") {
        for (uint64_t i = 0; i < count; ++i) {
            double v;
            std::memcpy(&v, src + 8 * i, 8);
            out[i] = static_cast<float>(v);
        }
    } else {
        for (uint64_t i = 0; i < count; ++i) {
            uint16_t h;
            std::memcpy(&h, src + 2 * i, 2);
            if (dtype == "F16") {
                out[i] = halfToFloat(h);
            } else { // BF16: the top half of a float
                const uint32_t bits = static_cast<uint32_t>(h) << 16;
                std::memcpy(&out[i], &bits, 4);
            }
        }
    }
}

// Where a tensor's bytes lie in the data buffer.
struct Span {
    uint64_t begin, end;
    std::string name;
};

// One header entry checked field by field (dtype, shape, data_offsets inside the buffer and of the right size): the
// one validation behind the float32 reader and the memory-mapped one.
struct CheckedEntry {
    std::string dtype;
    std::vector<int64_t> shape;
    uint64_t count = 0;
    Span span;
};

CheckedEntry checkEntry(const std::string& name, const nlohmann::json& entry, uint64_t bufferSize,
                        const FileProblem& fail, bool opaqueAllowed)
{
    const std::string what = "tensor '" + name + "'";
    if (!entry.is_object())
        throw fail(what + " is not an object");
    for (const auto& [key, value] : entry.items()) {
        (void)value;
        if (key != "dtype" && key != "shape" && key != "data_offsets")
            throw fail(what + " has an unknown field '" + key + "'");
    }
    if (!entry.contains("dtype") || !entry["dtype"].is_string())
        throw fail(what + " has no dtype string");
    CheckedEntry checked;
    checked.dtype = entry["dtype"].get<std::string>();
    const size_t opaqueSize = opaqueAllowed ? opaqueDtypeSize(checked.dtype) : 0;
    const size_t itemSize = opaqueSize ? opaqueSize : dtypeSize(checked.dtype, what, fail);
    if (!entry.contains("shape") || !entry["shape"].is_array())
        throw fail(what + " has no shape array");
    uint64_t count = 1;
    for (const auto& d : entry["shape"]) {
        if (!d.is_number_integer() || d.get<int64_t>() < 0)
            throw fail(what + " has a shape entry that is not a non-negative integer");
        const auto dim = d.get<int64_t>();
        if (dim > 0 && count > (uint64_t(1) << 40) / static_cast<uint64_t>(dim))
            throw fail(what + " has an absurd shape");
        count *= static_cast<uint64_t>(dim);
        checked.shape.push_back(dim);
    }
    const nlohmann::json* offsets = entry.contains("data_offsets") ? &entry["data_offsets"] : nullptr;
    if (!offsets || !offsets->is_array() || offsets->size() != 2 || !(*offsets)[0].is_number_unsigned() ||
        !(*offsets)[1].is_number_unsigned())
        throw fail(what + " needs data_offsets [begin, end] of non-negative integers");
    const auto begin = (*offsets)[0].get<uint64_t>();
    const auto end = (*offsets)[1].get<uint64_t>();
    if (begin > end || end > bufferSize)
        throw fail(what + " has data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
                   "] outside the data buffer of " + std::to_string(bufferSize) + " bytes (truncated file?)");
    if (end - begin != count * itemSize)
        throw fail(what + (opaqueSize ? " has dtype " + checked.dtype + " and" : "") + " has " +
                   std::to_string(end - begin) + " data bytes but shape " + shapeString(checked.shape) + " of " +
                   checked.dtype + " needs " + std::to_string(count * itemSize));
    checked.count = count;
    checked.span = {begin, end, name};
    return checked;
}

// The tensors' spans tile the buffer exactly: no overlap, no hole, nothing after the last.
void checkSpansTileBuffer(std::vector<Span> spans, uint64_t bufferSize, const FileProblem& fail)
{
    std::sort(spans.begin(), spans.end(),
              [](const Span& a, const Span& b) { return a.begin != b.begin ? a.begin < b.begin : a.end < b.end; });
    uint64_t covered = 0;
    for (const Span& s : spans) {
        if (s.begin < covered)
            throw fail("tensor '" + s.name + "' overlaps the data of another tensor");
        if (s.begin > covered)
            throw fail("the data buffer has a hole before tensor '" + s.name + "' (bytes " + std::to_string(covered) +
                       ".." + std::to_string(s.begin) + " belong to no tensor)");
        covered = s.end;
    }
    if (covered != bufferSize)
        throw fail("the data buffer has " + std::to_string(bufferSize - covered) +
                   " trailing bytes that belong to no tensor");
}

} // namespace

SafetensorsFile parseSafetensors(std::string_view bytes, const std::string& source)
{
    const FileProblem fail{source};
    size_t bufferStart = 0;
    const nlohmann::json header = parseHeader(bytes, fail, bufferStart);
    const std::string_view buffer = bytes.substr(bufferStart);
    SafetensorsFile file;
    std::vector<Span> spans;
    for (const auto& [name, entry] : header.items()) {
        if (name == "__metadata__") {
            readMetadata(entry, fail, file.metadata);
            continue;
        }
        CheckedEntry checked = checkEntry(name, entry, buffer.size(), fail, false);
        Tensor& tensor = file.tensors[name];
        tensor.shape = checked.shape;
        tensor.data.resize(checked.count);
        convertToFloat(buffer.data() + checked.span.begin, checked.count, checked.dtype, tensor.data.data());
        spans.push_back(std::move(checked.span));
    }
    checkSpansTileBuffer(std::move(spans), buffer.size(), fail);
    return file;
}

SafetensorsFile readSafetensors(const std::string& path)
{
    std::error_code ec;
    if (!std::filesystem::exists(path, ec))
        throw InputError("checkpoint " + path + " does not exist");
    if (std::filesystem::is_directory(path, ec))
        throw InputError("checkpoint " + path + " is a directory");
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw InputError("cannot read checkpoint " + path + ": " + std::strerror(errno));
    // Read only what the header declares (plus one byte to detect trailing data), in chunks, so a device, a pipe
    // or a crafted header is refused with an estimate instead of being slurped into memory.
    std::string bytes;
    auto readUpTo = [&](uint64_t upTo) {
        constexpr uint64_t kChunk = uint64_t(1) << 20;
        while (bytes.size() < upTo && in) {
            const size_t have = bytes.size();
            const auto want = static_cast<size_t>(std::min<uint64_t>(kChunk, upTo - have));
            bytes.resize(have + want);
            in.read(bytes.data() + have, static_cast<std::streamsize>(want));
            bytes.resize(have + static_cast<size_t>(in.gcount()));
        }
    };
    readUpTo(8);
    if (bytes.size() < 8)
        return parseSafetensors(bytes, path); // throws the precise message
    uint64_t headerLength = 0;
    std::memcpy(&headerLength, bytes.data(), 8);
    if (headerLength > kMaxSafetensorsHeader)
        return parseSafetensors(bytes, path);
    readUpTo(8 + headerLength);
    uint64_t dataEnd = 0;
    if (bytes.size() == 8 + headerLength) {
        nlohmann::json header;
        try {
            header = parseUntrustedJson(std::string_view(bytes).substr(8), "header");
        } catch (const InputError&) {
            // parseSafetensors below gives the message
        }
        if (header.is_object())
            for (const auto& [name, entry] : header.items())
                if (name != "__metadata__" && entry.is_object() && entry.contains("data_offsets") &&
                    entry["data_offsets"].is_array() && entry["data_offsets"].size() == 2 &&
                    entry["data_offsets"][1].is_number_unsigned())
                    dataEnd = std::max(dataEnd, entry["data_offsets"][1].get<uint64_t>());
    }
    // The file's bytes and the float32 copies are both in memory while parsing.
    checkMemoryEstimate(2.0 * static_cast<double>(dataEnd), "checkpoint " + path + " (its header declares " +
                                                                std::to_string(dataEnd) + " bytes of tensors)");
    readUpTo(8 + headerLength + dataEnd + 1);
    return parseSafetensors(bytes, path);
}

std::string MappedTensor::shapeText() const
{
    return shapeString(shape);
}

bool MappedTensor::converts() const
{
    return dtype == "F32" || dtype == "F64" || dtype == "F16" || dtype == "BF16";
}

void MappedTensor::toFloat(float* out) const
{
    if (!converts())
        throw InputError("a tensor of dtype " + dtype + " cannot be read as numbers; allowed: " +
                         kSafetensorsConvertedDtypes);
    convertToFloat(bytes, count, dtype, out);
}

MappedSafetensors::MappedSafetensors(const std::string& path) : m_path(path)
{
    std::error_code ec;
    if (!std::filesystem::exists(path, ec))
        throw InputError("checkpoint " + path + " does not exist");
    if (!std::filesystem::is_regular_file(path, ec))
        throw InputError("checkpoint " + path + " is not a regular file");
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        throw InputError("cannot read checkpoint " + path + ": " + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        const int err = errno;
        ::close(fd);
        throw InputError("cannot read checkpoint " + path + ": " + std::strerror(err));
    }
    m_size = static_cast<size_t>(st.st_size);
    if (m_size > 0) {
        m_map = ::mmap(nullptr, m_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m_map == MAP_FAILED) {
            const int err = errno;
            m_map = nullptr;
            ::close(fd);
            throw InputError("cannot map checkpoint " + path + ": " + std::strerror(err));
        }
    }
    ::close(fd); // the mapping keeps the file
    try {
        const std::string_view bytes(static_cast<const char*>(m_map), m_map ? m_size : 0);
        const FileProblem fail{m_path};
        size_t bufferStart = 0;
        const nlohmann::json header = parseHeader(bytes, fail, bufferStart);
        const std::string_view buffer = bytes.substr(bufferStart);
        std::vector<Span> spans;
        for (const auto& [name, entry] : header.items()) {
            if (name == "__metadata__") {
                readMetadata(entry, fail, m_metadata);
                continue;
            }
            CheckedEntry checked = checkEntry(name, entry, buffer.size(), fail, true);
            m_tensors[name] = {checked.dtype, checked.shape, buffer.data() + checked.span.begin, checked.count};
            spans.push_back(std::move(checked.span));
        }
        checkSpansTileBuffer(std::move(spans), buffer.size(), fail);
    } catch (...) {
        release();
        throw;
    }
}

void MappedSafetensors::release()
{
    if (m_map)
        ::munmap(m_map, m_size);
    m_map = nullptr;
    m_tensors.clear();
}

MappedSafetensors::~MappedSafetensors()
{
    release();
}

} // namespace plab
