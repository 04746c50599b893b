// .npy parser and writer.
#include "npy.h"

#include "atomic_file.h"
#include "errors.h"

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

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

NpyArray parseNpy(std::string_view bytes, const std::string& source, bool requireFinite)
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

    const std::string_view descr = valueAfterKey(header, "descr");
    bool isDouble = false;
    if (descr.substr(0, 5) == "'<f4'" || descr.substr(0, 5) == "\"<f4\"")
        isDouble = false;
    else if (descr.substr(0, 5) == "'<f8'" || descr.substr(0, 5) == "\"<f8\"")
        isDouble = true;
    else if (descr.substr(0, 5) == "'>f4'" || descr.substr(0, 5) == "'>f8'")
        throw fail("big-endian data (" + std::string(descr.substr(0, 5)) + "); allowed: little-endian float32 '<f4' or float64 '<f8'");
    else
        throw fail("dtype " + std::string(descr.substr(0, descr.find_first_of(",}"))) +
                   " is not supported; allowed: float32 '<f4' (or float64 '<f8')");

    const std::string_view order = valueAfterKey(header, "fortran_order");
    if (order.substr(0, 5) == "True")
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

    NpyArray array;
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
        const int64_t dim = std::stoll(std::string(shapeText.substr(pos, end - pos)));
        array.shape.push_back(dim);
        if (dim != 0 && count > std::numeric_limits<uint64_t>::max() / static_cast<uint64_t>(dim))
            throw fail("shape overflows");
        count *= static_cast<uint64_t>(dim);
        pos = end;
    }
    if (array.shape.size() > 8)
        throw fail("more than 8 dimensions");

    const size_t itemSize = isDouble ? 8 : 4;
    const size_t dataStart = headerStart + headerLength;
    const size_t available = bytes.size() - dataStart;
    if (count > available / itemSize)
        throw fail("truncated: shape " + array.shapeText() + " needs " + std::to_string(count * itemSize) +
                   " bytes of data, the file has " + std::to_string(available));
    if (count * itemSize != available)
        throw fail(std::to_string(available - count * itemSize) + " unexpected bytes after the data");

    array.data.resize(count);
    const char* raw = bytes.data() + dataStart;
    if (isDouble) {
        for (uint64_t i = 0; i < count; ++i) {
            double v;
            std::memcpy(&v, raw + i * 8, 8);
            array.data[i] = static_cast<float>(v);
        }
    } else if (count) {
        std::memcpy(array.data.data(), raw, count * 4);
    }
    if (requireFinite) {
        for (uint64_t i = 0; i < count; ++i)
            if (!std::isfinite(array.data[i]))
                throw InputError(source + ": element " + std::to_string(i) + " is " +
                                 (std::isnan(array.data[i]) ? "NaN" : "infinite") + "; inputs must be finite");
    }
    return array;
}

NpyArray readNpy(const std::string& path, bool requireFinite)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw InputError("cannot open " + path + ": " + std::strerror(errno));
    std::ostringstream buffer;
    buffer << in.rdbuf();
    const std::string bytes = buffer.str();
    return parseNpy(bytes, path, requireFinite);
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
