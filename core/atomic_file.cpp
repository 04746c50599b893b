// Write-then-rename file output.
#include "atomic_file.h"

#include "errors.h"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <system_error>

namespace plab {

namespace fs = std::filesystem;

AtomicFile::AtomicFile(std::string path)
    : m_path(std::move(path))
{
    if (m_path.empty())
        throw InputError("output path is empty");
    const fs::path target(m_path);
    std::error_code ec;
    if (fs::is_directory(target, ec))
        throw InputError("cannot write " + m_path + ": it is a directory");
    static std::atomic<unsigned> counter{0};
    const auto stamp = std::chrono::steady_clock::now().time_since_epoch().count();
    const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
    m_tempPath = (dir / ("." + target.filename().string() + ".tmp" + std::to_string(stamp % 1000000007) + "-" +
                         std::to_string(counter++)))
                     .string();
    m_stream.open(m_tempPath, std::ios::binary | std::ios::trunc);
    if (!m_stream)
        throw InputError("cannot write " + m_path + ": " + std::strerror(errno));
}

AtomicFile::~AtomicFile()
{
    if (!m_committed) {
        m_stream.close();
        std::error_code ec;
        fs::remove(m_tempPath, ec);
    }
}

void AtomicFile::commit()
{
    m_stream.flush();
    const bool ok = static_cast<bool>(m_stream);
    m_stream.close();
    if (!ok || m_stream.fail())
        throw RunError("writing " + m_path + " failed (disk full or I/O error); the previous file is unchanged");
    std::error_code ec;
    fs::rename(m_tempPath, m_path, ec);
    if (ec)
        throw RunError("cannot replace " + m_path + ": " + ec.message() + "; the previous file is unchanged");
    m_committed = true;
}

void writeFileAtomically(const std::string& path, const std::string& bytes)
{
    AtomicFile file(path);
    file.stream().write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    file.commit();
}

} // namespace plab
