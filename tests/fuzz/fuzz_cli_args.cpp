// libFuzzer target for the CLI: NUL-separated arguments through runCli; only exit codes 0/1/2, never a crash.
#include "cli.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <ostream>
#include <set>
#include <sstream>
#include <streambuf>
#include <string>
#include <system_error>
#include <vector>

#include <unistd.h>

namespace fs = std::filesystem;

namespace {

class NullBuffer : public std::streambuf {
protected:
    int overflow(int c) override { return c == EOF ? 0 : c; }
    std::streamsize xsputn(const char*, std::streamsize n) override { return n; }
};

fs::path g_scratch;

// The fuzzer looks for crashes, not for long legitimate runs: numbers stay small (exponents and fractions are
// free), verbs that train or benchmark are skipped, entropy needs explicit --lengths, and no argument may name
// a path outside the scratch directory.
bool worthRunning(const std::vector<std::string>& args)
{
    if (args.empty())
        return true;
    if (args[0] == "train" || args[0] == "sweep" || args[0] == "bench" || args[0] == "render")
        return false;
    bool hasLengths = false;
    for (const std::string& a : args) {
        if (a.find('/') != std::string::npos)
            return false;
        if (a.rfind("--lengths", 0) == 0)
            hasLengths = true;
        for (size_t i = 0; i < a.size();) {
            if (a[i] < '0' || a[i] > '9') {
                ++i;
                continue;
            }
            size_t j = i;
            while (j < a.size() && a[j] >= '0' && a[j] <= '9')
                ++j;
            const bool exempt = i > 0 && (a[i - 1] == '.' || a[i - 1] == 'e' || a[i - 1] == 'E');
            size_t k = i;
            while (k + 1 < j && a[k] == '0')
                ++k; // leading zeros
            if (!exempt && (j - k > 2 || std::stoi(a.substr(k, j - k)) > 64))
                return false;
            i = j;
        }
    }
    return args[0] != "entropy" || hasLengths;
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***)
{
    // Outputs (-o name.csv) land in a private scratch directory, emptied after every input. (So corpus and
    // artifact paths given to this fuzzer must be absolute; scripts/fuzz.sh passes them so.)
    std::error_code ec;
    g_scratch = fs::temp_directory_path() / ("positionlab-fuzz-cli-" + std::to_string(::getpid()));
    fs::create_directories(g_scratch, ec);
    fs::current_path(g_scratch, ec);
    if (ec)
        std::abort();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    std::vector<std::string> args(1);
    for (size_t i = 0; i < size; ++i) {
        if (data[i] == 0) {
            if (args.size() == 32)
                return 0;
            args.emplace_back();
        } else {
            args.back() += static_cast<char>(data[i]);
        }
    }
    if (size == 0)
        args.clear();
    if (!worthRunning(args))
        return -1; // not added to the corpus
    NullBuffer null;
    std::ostream out(&null);
    std::ostringstream err;
    const int code = plab::cli::runCli(args, out, err);
    if (code != 0 && code != 1 && code != 2)
        std::abort();
    // Exit 1 means a failure while running valid input; on these tiny inputs it usually means an unexpected
    // exception type (logic_error, out_of_range...) that should have been an InputError. Show each once;
    // with PLAB_FUZZ_STRICT=1 it is a finding.
    if (code == 1) {
        static std::set<std::string> seen;
        if (seen.insert(err.str()).second)
            std::fprintf(stderr, "exit 1: %s", err.str().c_str());
        if (std::getenv("PLAB_FUZZ_STRICT"))
            std::abort();
    }
    std::error_code ec;
    for (const fs::directory_entry& e : fs::directory_iterator(g_scratch, ec))
        fs::remove_all(e.path(), ec);
    return 0;
}
