// Memory and compute-time guards: one message form for every refused size, in one place.
#include "base/limits.h"

#include "base/errors.h"

#include <cstdio>
#include <fstream>
#include <sstream>

namespace plab {

void checkMemoryEstimate(double bytes, const std::string& what)
{
    if (bytes > kMemoryBudgetBytes) {
        char buf[160];
        std::snprintf(buf, sizeof buf, " would need about %.1f GiB of memory; the limit is %.0f GiB",
                      bytes / (1ull << 30), kMemoryBudgetBytes / (1ull << 30));
        throw InputError(what + buf);
    }
}

double availableMemoryBytes()
{
    std::ifstream in("/proc/meminfo");
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("MemAvailable:", 0) == 0) {
            std::istringstream fields(line.substr(13));
            double kib = 0;
            if (fields >> kib)
                return kib * 1024.0;
        }
    }
    return 0;
}

void checkFitsInMemory(double bytes, const std::string& what)
{
    const double available = availableMemoryBytes();
    if (available > 0 && bytes > available) {
        char buf[200];
        std::snprintf(buf, sizeof buf, " needs about %.2f GiB of memory; this machine has %.2f GiB available",
                      bytes / (1ull << 30), available / (1ull << 30));
        throw InputError(what + buf);
    }
}

double estimatedSeconds(double flops)
{
    return flops / kWorkFlopsPerSecond;
}

namespace {
std::string durationText(double seconds)
{
    char buf[64];
    if (seconds < 120)
        std::snprintf(buf, sizeof buf, "%.0f s", seconds);
    else if (seconds < 2 * 3600)
        std::snprintf(buf, sizeof buf, "%.0f min", seconds / 60);
    else if (seconds < 72 * 3600)
        std::snprintf(buf, sizeof buf, "%.1f h", seconds / 3600);
    else
        std::snprintf(buf, sizeof buf, "%.0f days", seconds / 86400);
    return buf;
}
} // namespace

void checkWorkEstimate(double flops, const std::string& what, const std::string& howToProceed)
{
    const double seconds = estimatedSeconds(flops);
    if (!(seconds > kWorkLimitSeconds)) // also lets NaN through: nothing to estimate
        return;
    char buf[200];
    std::snprintf(
        buf, sizeof buf, " would take about %s (%.2g flops at a conservative %.0f GFLOP/s); the limit is %s; ",
        durationText(seconds).c_str(), flops, kWorkFlopsPerSecond * 1e-9, durationText(kWorkLimitSeconds).c_str());
    throw InputError(what + buf + howToProceed);
}

void checkEstimatedSeconds(double seconds, const std::string& what, const std::string& howToProceed)
{
    if (!(seconds > kWorkLimitSeconds))
        return;
    throw InputError(what + " would take about " + durationText(seconds) + " by its estimate; the limit is " +
                     durationText(kWorkLimitSeconds) + "; " + howToProceed);
}

} // namespace plab
