// AtomicFile: write to a temporary file beside the target and rename it into place only on commit().
#pragma once

#include <fstream>
#include <string>

namespace plab {

// Nothing the user had is lost: until commit() the target is untouched, and a destroyed, uncommitted
// AtomicFile removes its temporary; so does SIGINT/SIGTERM/SIGHUP (Ctrl-C) while it is open, unless the
// application installed its own handler for that signal first.
// Opening fails with InputError naming the path and the reason.
class AtomicFile {
public:
    explicit AtomicFile(std::string path);
    ~AtomicFile();
    AtomicFile(const AtomicFile&) = delete;
    AtomicFile& operator=(const AtomicFile&) = delete;

    std::ostream& stream() { return m_stream; }
    const std::string& path() const { return m_path; }
    // Flushes, checks for write errors (RunError), and renames the temporary over the target.
    void commit();

private:
    std::string m_path;
    std::string m_tempPath;
    std::ofstream m_stream;
    bool m_committed = false;
    int m_slot = -1; // registration for removal on SIGINT/SIGTERM/SIGHUP
};

// Checks, before any work, that AtomicFile(path) could be opened: throws the same InputError it would (a missing or
// read-only directory, a directory in the way) and leaves nothing behind.
void checkWritable(const std::string& path);

// The handler that removes every open AtomicFile's temporary and then ends the process by the signal, as the default
// action would. An application with its own graceful stop installs it for the signal's second delivery, so a second
// Ctrl-C that lands in the middle of a save leaves nothing half-written behind.
using SignalHandler = void (*)(int);
SignalHandler removeTemporariesAndDieHandler();

// Writes a whole buffer atomically.
void writeFileAtomically(const std::string& path, const std::string& bytes);

} // namespace plab
