// Loading, validating and splitting text corpora; the default corpus from the Debian fortunes files.
#include "model/corpus.h"

#include "base/limits.h"
#include "base/errors.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace plab {

namespace fs = std::filesystem;

size_t findInvalidUtf8(std::string_view text)
{
    const auto* s = reinterpret_cast<const unsigned char*>(text.data());
    const size_t n = text.size();
    size_t i = 0;
    while (i < n) {
        const unsigned c = s[i];
        if (c < 0x80) {
            ++i;
            continue;
        }
        int extra = 0;
        unsigned lo = 0x80, hi = 0xBF; // allowed range of the second byte (tightened against overlongs/surrogates)
        if (c >= 0xC2 && c <= 0xDF) {
            extra = 1;
        } else if (c >= 0xE0 && c <= 0xEF) {
            extra = 2;
            if (c == 0xE0)
                lo = 0xA0;
            if (c == 0xED)
                hi = 0x9F;
        } else if (c >= 0xF0 && c <= 0xF4) {
            extra = 3;
            if (c == 0xF0)
                lo = 0x90;
            if (c == 0xF4)
                hi = 0x8F;
        } else {
            return i;
        }
        if (i + extra >= n)
            return i; // truncated sequence at the end
        for (int k = 1; k <= extra; ++k) {
            const unsigned b = s[i + k];
            const unsigned bl = k == 1 ? lo : 0x80, bh = k == 1 ? hi : 0xBF;
            if (b < bl || b > bh)
                return i;
        }
        i += static_cast<size_t>(extra) + 1;
    }
    return std::string_view::npos;
}

Corpus makeCorpus(std::string text, const std::string& source)
{
    if (text.empty())
        throw InputError("corpus " + source + " is empty; a UTF-8 text file of at least " +
                         std::to_string(kMinCorpusBytes) + " bytes is needed");
    if (const size_t nul = text.find('\0'); nul != std::string::npos)
        throw InputError("corpus " + source + " looks binary (NUL byte at offset " + std::to_string(nul) +
                         "); a UTF-8 text file is needed");
    if (const size_t bad = findInvalidUtf8(text); bad != std::string_view::npos)
        throw InputError("corpus " + source + " is not valid UTF-8 (byte offset " + std::to_string(bad) +
                         "); convert it to UTF-8 first, e.g. iconv -f latin1 -t utf-8");
    if (text.size() < kMinCorpusBytes)
        throw InputError("corpus " + source + " is too short (" + std::to_string(text.size()) + " bytes); at least " +
                         std::to_string(kMinCorpusBytes) + " bytes are needed");
    Corpus corpus;
    corpus.source = source;
    const size_t validation = text.size() / 10;
    const size_t trainBytes = text.size() - validation;
    corpus.train.assign(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(trainBytes));
    corpus.validation.assign(text.begin() + static_cast<std::ptrdiff_t>(trainBytes), text.end());
    return corpus;
}

Corpus loadCorpusFile(const std::string& path)
{
    std::error_code ec;
    if (!fs::exists(path, ec))
        throw InputError("corpus " + path + " does not exist");
    if (fs::is_directory(path, ec))
        throw InputError("corpus " + path + " is a directory; a UTF-8 text file is needed");
    if (!fs::is_regular_file(path, ec))
        throw InputError("corpus " + path +
                         " is not a regular file (a device or a pipe?); a UTF-8 text file is needed");
    // The text, its split copies and the validation pass are in memory at once.
    checkMemoryEstimate(3.0 * static_cast<double>(fs::file_size(path, ec)), "corpus " + path);
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw InputError("cannot read corpus " + path + ": " + std::strerror(errno));
    std::ostringstream buffer;
    buffer << in.rdbuf();
    if (in.bad())
        throw InputError("cannot read corpus " + path + ": I/O error");
    return makeCorpus(std::move(buffer).str(), path);
}

std::string defaultCorpusText(const std::string& dir, int* fileCount)
{
    std::error_code ec;
    std::vector<fs::path> files;
    if (fs::is_directory(dir, ec)) {
        for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
            // Only regular text files: skip the .dat indexes, the .u8 symlinks (duplicates) and subdirectories.
            if (e.is_symlink() || !e.is_regular_file())
                continue;
            const std::string ext = e.path().extension().string();
            if (ext == ".dat" || ext == ".u8")
                continue;
            files.push_back(e.path());
        }
    }
    std::sort(files.begin(), files.end()); // directory order is unspecified; the split must be deterministic
    if (files.empty())
        throw InputError("no fortunes text files in " + dir +
                             "; install the Debian package (apt-get install fortunes) or give a corpus file",
                         "corpus");
    std::string text;
    for (const fs::path& file : files) {
        std::ifstream in(file, std::ios::binary);
        if (!in)
            throw InputError("cannot read " + file.string() + ": " + std::strerror(errno));
        std::string line;
        while (std::getline(in, line)) {
            if (line == "%")
                continue; // the fortune separator carries no text
            text += line;
            text += '\n';
        }
    }
    if (fileCount)
        *fileCount = static_cast<int>(files.size());
    return text;
}

Corpus loadDefaultCorpus(const std::string& dir)
{
    int count = 0;
    std::string text = defaultCorpusText(dir, &count);
    return makeCorpus(std::move(text), "fortunes (" + std::to_string(count) + " files in " + dir + ")");
}

std::vector<uint8_t> repeatedText(const std::vector<uint8_t>& text, size_t bytes)
{
    if (text.empty())
        return {};
    std::vector<uint8_t> out(bytes);
    for (size_t i = 0; i < bytes; ++i)
        out[i] = text[i % text.size()];
    return out;
}

} // namespace plab
