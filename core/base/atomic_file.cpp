// Write-then-rename file output.
#include "base/atomic_file.h"

#include "base/errors.h"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <system_error>

#include <unistd.h>

namespace plab {

namespace fs = std::filesystem;

namespace {

// Temporaries alive right now, in static storage so a signal handler may read them: Ctrl-C or a kill in the
// middle of writing must not leave a half-written ".name.tmp..." beside the user's file.
constexpr int kTempSlots = 64;
constexpr size_t kTempPathMax = 4096;
struct TempSlot {
    std::atomic<bool> claimed{false};
    std::atomic<bool> live{false};
    char path[kTempPathMax];
};
TempSlot g_tempSlots[kTempSlots];

extern "C" void removeTemporariesAndDie(int sig)
{
    for (TempSlot& slot : g_tempSlots)
        if (slot.live.load())
            ::unlink(slot.path); // async-signal-safe
    std::signal(sig, SIG_DFL);
    std::raise(sig); // delivered when the handler returns: the process ends as the signal intends
}

// Installs the cleanup for SIGINT, SIGTERM and SIGHUP, only where nobody else has a handler (an application
// with its own graceful stop keeps it; an ignored signal stays ignored).
void installInterruptCleanup()
{
    static std::once_flag once;
    std::call_once(once, [] {
        for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
            struct sigaction old {};
            if (::sigaction(sig, nullptr, &old) == 0 && !(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_DFL) {
                struct sigaction action {};
                action.sa_handler = removeTemporariesAndDie;
                sigemptyset(&action.sa_mask);
                ::sigaction(sig, &action, nullptr);
            }
        }
    });
}

// Returns the slot index, or -1 when the path is too long or all slots are taken (cleanup is best effort).
int registerTemporary(const std::string& path)
{
    if (path.size() >= kTempPathMax)
        return -1;
    for (int i = 0; i < kTempSlots; ++i) {
        bool expected = false;
        if (g_tempSlots[i].claimed.compare_exchange_strong(expected, true)) {
            std::memcpy(g_tempSlots[i].path, path.c_str(), path.size() + 1);
            g_tempSlots[i].live.store(true);
            return i;
        }
    }
    return -1;
}

void unregisterTemporary(int slot)
{
    if (slot < 0)
        return;
    g_tempSlots[slot].live.store(false);
    g_tempSlots[slot].claimed.store(false);
}

} // namespace

SignalHandler removeTemporariesAndDieHandler()
{
    return removeTemporariesAndDie;
}

AtomicFile::AtomicFile(std::string path) : m_path(std::move(path))
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
    installInterruptCleanup();
    m_slot = registerTemporary(m_tempPath); // before the file exists, so no moment leaves it unregistered
    m_stream.open(m_tempPath, std::ios::binary | std::ios::trunc);
    if (!m_stream) {
        const int error = errno;
        unregisterTemporary(m_slot);
        throw InputError("cannot write " + m_path + ": " + std::strerror(error));
    }
}

AtomicFile::~AtomicFile()
{
    if (!m_committed) {
        m_stream.close();
        std::error_code ec;
        fs::remove(m_tempPath, ec);
    }
    unregisterTemporary(m_slot);
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
    unregisterTemporary(m_slot);
    m_slot = -1;
}

void checkWritable(const std::string& path)
{
    AtomicFile probe(path); // opened and, uncommitted, removed again: the real open's checks and messages
}

void writeFileAtomically(const std::string& path, const std::string& bytes)
{
    AtomicFile file(path);
    file.stream().write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    file.commit();
}

} // namespace plab
