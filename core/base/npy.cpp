// .npy parser and writer.
#include "base/npy.h"

#include "base/atomic_file.h"
#include "base/limits.h"
#include "base/errors.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

namespace plab {

std::string NpyArray::shapeText() const
{
    std::string s = "(";
    for (size_t i = 0; i < shape.size(); ++i)
        s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + (shape.size() == 1 ? ",)" : ")");
}

namespace {

// Finds `'key':` in the header dict and returns the text after the colon (trimmed).
std::string_view valueAfterKey(std::string_view header, std::string_view key)
{
    for (char quote : {'\'', '"'}) {
        std::string pattern = std::string(1, quote) + std::string(key) + std::string(1, quote);
        size_t pos = header.find(pattern);
        if (pos == std::string_view::npos)
            continue;
        pos = header.find(':', pos + pattern.size());
        if (pos == std::string_view::npos)
            return {};
        std::string_view rest = header.substr(pos + 1);
        while (!rest.empty() && rest.front() == ' ')
            rest.remove_prefix(1);
        return rest;
    }
    return {};
}

} // namespace

NpyLayout parseNpyLayout(std::string_view bytes, const std::string& source)
{
    auto fail = [&](const std::string& why) { return InputError(source + ": not a usable .npy file: " + why); };
    if (bytes.size() < 10 || std::memcmp(bytes.data(), "\x93NUMPY", 6) != 0)
        throw fail("missing the \\x93NUMPY magic");
    const unsigned major = static_cast<unsigned char>(bytes[6]);
    size_t headerLength = 0;
    size_t headerStart = 0;
    if (major == 1) {
        headerLength = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
        headerStart = 10;
    } else if (major == 2 || major == 3) {
        if (bytes.size() < 12)
            throw fail("truncated header");
        headerLength = 0;
        for (int i = 0; i < 4; ++i)
            headerLength |= static_cast<size_t>(static_cast<unsigned char>(bytes[8 + i])) << (8 * i);
        headerStart = 12;
    } else {
        throw fail("unsupported format version " + std::to_string(major) + " (allowed: 1, 2, 3)");
    }
    if (headerLength > bytes.size() - headerStart)
        throw fail("header length " + std::to_string(headerLength) + " runs past the end of the file");
    const std::string_view header = bytes.substr(headerStart, headerLength);

    NpyLayout layout;
    layout.dataStart = headerStart + headerLength;
    const std::string_view descr = valueAfterKey(header, "descr");
    if (descr.substr(0, 5) == "'<f4'" || descr.substr(0, 5) == "\"<f4\"")
        layout.itemSize = 4;
    else if (descr.substr(0, 5) == "'<f8'" || descr.substr(0, 5) == "\"<f8\"")
        layout.itemSize = 8;
    else if (descr.substr(0, 5) == "'>f4'" || descr.substr(0, 5) == "'>f8'" || descr.substr(0, 5) == "\">f4\"" ||
             descr.substr(0, 5) == "\">f8\"")
        throw fail("big-endian data (" + std::string(descr.substr(0, 5)) +
                   "); allowed: little-endian float32 '<f4' or float64 '<f8'");
    else if (descr.empty())
        throw fail("missing or malformed descr (dtype)");
    else
        throw fail("dtype " + std::string(descr.substr(0, std::min<size_t>(descr.find_first_of(",}"), 40))) +
                   " is not supported; allowed: float32 '<f4' (or float64 '<f8')");

    const std::string_view order = valueAfterKey(header, "fortran_order");
    if (order.substr(0, 4) == "True")
        throw fail("Fortran-order arrays are not supported; save with np.ascontiguousarray");
    if (order.substr(0, 5) != "False")
        throw fail("missing or malformed fortran_order");

    std::string_view shapeText = valueAfterKey(header, "shape");
    if (shapeText.empty() || shapeText.front() != '(')
        throw fail("missing or malformed shape");
    const size_t close = shapeText.find(')');
    if (close == std::string_view::npos)
        throw fail("malformed shape");
    shapeText = shapeText.substr(1, close - 1);

    uint64_t count = 1;
    size_t pos = 0;
    while (pos < shapeText.size()) {
        while (pos < shapeText.size() && (shapeText[pos] == ' ' || shapeText[pos] == ','))
            ++pos;
        if (pos >= shapeText.size())
            break;
        size_t end = pos;
        while (end < shapeText.size() && shapeText[end] >= '0' && shapeText[end] <= '9')
            ++end;
        if (end == pos || end - pos > 12)
            throw fail("malformed shape entry '" + std::string(shapeText.substr(pos, 12)) + "'");
        if (layout.shape.size() == 8)
            throw fail("more than 8 dimensions");
        const int64_t dim = std::stoll(std::string(shapeText.substr(pos, end - pos)));
        layout.shape.push_back(dim);
        if (dim != 0 && count > std::numeric_limits<uint64_t>::max() / 8 / static_cast<uint64_t>(dim))
            throw fail("shape overflows");
        count *= static_cast<uint64_t>(dim);
        pos = end;
    }
    layout.count = count;
    return layout;
}

std::string NpyLayout::shapeText() const
{
    return NpyArray{shape, {}}.shapeText();
}

NpyArray parseNpy(std::string_view bytes, const std::string& source, bool requireFinite)
{
    const NpyLayout layout = parseNpyLayout(bytes, source);
    const uint64_t count = layout.count;
    const size_t itemSize = layout.itemSize;
    const size_t available = bytes.size() - layout.dataStart;
    if (count > available / itemSize)
        throw InputError(source + ": not a usable .npy file: truncated: shape " + layout.shapeText() + " needs " +
                         std::to_string(count * itemSize) + " bytes of data, the file has " +
                         std::to_string(available));
    if (count * itemSize != available)
        throw InputError(source + ": not a usable .npy file: " + std::to_string(available - count * itemSize) +
                         " unexpected bytes after the data");

    NpyArray array;
    array.shape = layout.shape;
    array.data.resize(count);
    const char* raw = bytes.data() + layout.dataStart;
    if (itemSize == 8) {
        for (uint64_t i = 0; i < count; ++i) {
            double v;
            std::memcpy(&v, raw + i * 8, 8);
            // A finite double beyond float range would silently become inf; report it as such below.
            array.data[i] = static_cast<float>(v);
        }
    } else if (count) {
        std::memcpy(array.data.data(), raw, count * 4);
    }
    if (requireFinite) {
        for (uint64_t i = 0; i < count; ++i)
            if (!std::isfinite(array.data[i]))
                throw InputError(source + ": element " + std::to_string(i) + " is " +
                                 (std::isnan(array.data[i]) ? "NaN" : "infinite (or beyond float32 range)") +
                                 "; inputs must be finite");
    }
    return array;
}

NpyArray readNpy(std::istream& in, const std::string& source, bool requireFinite)
{
    // Read only what the header declares (plus one byte to detect trailing data), so a device, a pipe or a
    // file with an absurd shape is refused with an estimate instead of being slurped into memory.
    std::string bytes(12, '\0');
    in.read(bytes.data(), 12);
    bytes.resize(static_cast<size_t>(in.gcount()));
    if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0)
        return parseNpy(bytes, source, requireFinite); // throws the precise message
    const unsigned major = static_cast<unsigned char>(bytes[6]);
    size_t headerEnd = 0;
    if (major == 1)
        headerEnd = 10 + (static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8));
    else if ((major == 2 || major == 3) && bytes.size() == 12)
        headerEnd = 12 + (static_cast<size_t>(static_cast<unsigned char>(bytes[8])) |
                          static_cast<size_t>(static_cast<unsigned char>(bytes[9])) << 8 |
                          static_cast<size_t>(static_cast<unsigned char>(bytes[10])) << 16 |
                          static_cast<size_t>(static_cast<unsigned char>(bytes[11])) << 24);
    else
        return parseNpy(bytes, source, requireFinite);
    // Grows in chunks, so a short file whose header claims gigabytes never makes us allocate them.
    auto readMore = [&](size_t upTo) {
        constexpr size_t kChunk = size_t(1) << 20;
        while (bytes.size() < upTo && in) {
            const size_t have = bytes.size();
            const size_t want = std::min(kChunk, upTo - have);
            bytes.resize(have + want);
            in.read(bytes.data() + have, static_cast<std::streamsize>(want));
            bytes.resize(have + static_cast<size_t>(in.gcount()));
        }
    };
    // A header of megabytes is not a header: refuse it before reading it.
    if (headerEnd > (size_t(1) << 20))
        throw InputError(source + ": not a usable .npy file: header length " +
                         std::to_string(headerEnd - (major == 1 ? 10 : 12)) + " is absurd (more than 1 MiB)");
    readMore(headerEnd);
    if (bytes.size() < headerEnd)
        return parseNpy(bytes, source, requireFinite);
    const NpyLayout layout = parseNpyLayout(std::string_view(bytes).substr(0, headerEnd), source);
    // The file's bytes and the float32 copy are both in memory while converting.
    checkMemoryEstimate(static_cast<double>(layout.count) * (layout.itemSize + 4.0),
                        source + ": an array of shape " + layout.shapeText());
    const size_t dataBytes = layout.count * layout.itemSize;
    readMore(headerEnd + dataBytes + 1);
    if (bytes.size() > headerEnd + dataBytes) // the +1 byte arrived: there is more than the shape accounts for
        throw InputError(source + ": not a usable .npy file: unexpected bytes after the data (shape " +
                         layout.shapeText() + " accounts for " + std::to_string(dataBytes) + " bytes)");
    return parseNpy(bytes, source, requireFinite);
}

NpyArray readNpy(const std::string& path, bool requireFinite)
{
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
        throw InputError("cannot read " + path + ": it is a directory, not an .npy file");
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw InputError("cannot open " + path + ": " + std::strerror(errno));
    return readNpy(in, path, requireFinite);
}

std::string npyHeader(const std::vector<int64_t>& shape)
{
    std::string shapeText;
    for (size_t i = 0; i < shape.size(); ++i)
        shapeText += (i ? ", " : "") + std::to_string(shape[i]);
    if (shape.size() == 1)
        shapeText += ",";
    std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + shapeText + "), }";
    size_t total = 10 + dict.size() + 1;
    const size_t padded = (total + 63) / 64 * 64;
    dict.append(padded - total, ' ');
    dict += '\n';
    std::string header = "\x93NUMPY";
    header += '\x01';
    header += '\x00';
    const size_t len = dict.size();
    header += static_cast<char>(len & 0xff);
    header += static_cast<char>((len >> 8) & 0xff);
    return header + dict;
}

void writeNpy(const std::string& path, const std::vector<int64_t>& shape, const float* data)
{
    size_t count = 1;
    for (int64_t d : shape)
        count *= static_cast<size_t>(d);
    AtomicFile file(path);
    const std::string header = npyHeader(shape);
    file.stream().write(header.data(), static_cast<std::streamsize>(header.size()));
    file.stream().write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(count * sizeof(float)));
    file.commit();
}

} // namespace plab
