// The sweep's results: a result line's JSON, the crash-safe JSON-lines results file and the sweep folder (see sweep.h).
#include "runs/sweep.h"
#include "runs/sweep_internal.h"

#include "base/atomic_file.h"
#include "base/errors.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace plab {

namespace fs = std::filesystem;
using sweep_internal::JsonReader;

namespace {

// A result's numbers: NaN (unsupported length) is null in JSON.
nlohmann::json numbersJson(const std::vector<double>& values)
{
    nlohmann::json a = nlohmann::json::array();
    for (double v : values)
        a.push_back(std::isfinite(v) ? nlohmann::json(v) : nlohmann::json());
    return a;
}

std::vector<double> numbersFrom(const JsonReader& r, const char* key, size_t count)
{
    const nlohmann::json& v = r.field(key);
    if (!v.is_array() || v.size() != count)
        throw r.fail(std::string("'") + key + "' is not a list of " + std::to_string(count) + " numbers");
    std::vector<double> out;
    for (const nlohmann::json& e : v) {
        if (e.is_null())
            out.push_back(std::nan(""));
        else if (e.is_number())
            out.push_back(e.get<double>());
        else
            throw r.fail(std::string("'") + key + "' holds " + e.dump() + "; allowed: numbers or null");
    }
    return out;
}

} // namespace

// ---------------------------------------------------------------- results

nlohmann::json SweepResult::toJson() const
{
    nlohmann::json j{{"cell", cell},
                     {"key", key},
                     {"scheme", scheme},
                     {"seed", seed},
                     {"variant", variant},
                     {"context", context},
                     {"lengths", lengths},
                     {"loss", numbersJson(loss)},
                     {"perplexity", numbersJson(perplexity)},
                     {"steps", steps},
                     {"train_loss", trainLoss},
                     {"train_seconds", trainSeconds},
                     {"eval_seconds", evalSeconds},
                     {"threads", threads},
                     {"grid", gridHash},
                     {"version", version}};
    if (!scaling.empty())
        j["scaling"] = scaling;
    if (!settings.empty())
        j["settings"] = settings;
    if (!scalingLayers.empty())
        j["scaling_layers"] = scalingLayers;
    if (!model.empty()) {
        j["model"] = model;
        j["model_type"] = modelType;
        j["tokens"] = nlohmann::json::array();
        for (double t : tokens) // counts: written as integers
            j["tokens"].push_back(static_cast<long long>(t));
    }
    if (!method.empty()) {
        j["method"] = method;
        j["method_settings"] = methodSettings;
    }
    if (!evaluations.empty()) {
        j["evaluations"] = nlohmann::json::array();
        for (const SweepResult& e : evaluations)
            j["evaluations"].push_back(e.toJson());
    }
    if (!task.empty()) {
        j["task"] = task;
        j["accuracy"] = numbersJson(accuracy);
        if (!depths.empty()) {
            j["depths"] = depths;
            j["depth_accuracy"] = nlohmann::json::array();
            for (const std::vector<double>& row : depthAccuracy)
                j["depth_accuracy"].push_back(numbersJson(row));
        }
    }
    return j;
}

SweepResult SweepResult::fromJson(const nlohmann::json& j, const std::string& source)
{
    const JsonReader r{j, source};
    if (!j.is_object())
        throw r.fail("is not a JSON object");
    SweepResult s;
    s.cell = static_cast<size_t>(r.integer("cell", 0, 1LL << 40));
    s.key = r.text("key");
    s.scheme = r.text("scheme");
    s.seed = static_cast<uint64_t>(r.integer("seed", 0, 1LL << 62));
    s.variant = r.text("variant");
    s.scaling = j.contains("scaling") ? r.text("scaling") : std::string();
    s.settings = j.contains("settings") ? r.text("settings") : std::string();
    s.scalingLayers = j.contains("scaling_layers") ? r.text("scaling_layers") : std::string();
    s.model = j.contains("model") ? r.text("model") : std::string();
    s.modelType = j.contains("model_type") ? r.text("model_type") : std::string();
    s.context = static_cast<int>(r.integer("context", 1, 1 << 20));
    const nlohmann::json& lengths = r.field("lengths");
    if (!lengths.is_array())
        throw r.fail("'lengths' is not a list");
    for (const nlohmann::json& l : lengths) {
        if (!l.is_number_integer())
            throw r.fail("'lengths' holds " + l.dump() + "; allowed: integers");
        s.lengths.push_back(l.get<int>());
    }
    s.loss = numbersFrom(r, "loss", s.lengths.size());
    s.perplexity = numbersFrom(r, "perplexity", s.lengths.size());
    if (j.contains("tokens"))
        s.tokens = numbersFrom(r, "tokens", s.lengths.size());
    if (j.contains("task")) {
        s.task = r.text("task");
        s.accuracy = numbersFrom(r, "accuracy", s.lengths.size());
        if (j.contains("depths")) { // passkey lines (written since the depth x length heatmap)
            const nlohmann::json& depths = r.field("depths");
            if (!depths.is_array() ||
                !std::all_of(depths.begin(), depths.end(), [](const nlohmann::json& d) { return d.is_number(); }))
                throw r.fail("'depths' is not a list of numbers");
            s.depths = depths.get<std::vector<double>>();
            const nlohmann::json& rows = r.field("depth_accuracy");
            if (!rows.is_array() || rows.size() != s.lengths.size())
                throw r.fail("'depth_accuracy' is not a list of " + std::to_string(s.lengths.size()) +
                             " rows (one per length)");
            for (const nlohmann::json& row : rows)
                s.depthAccuracy.push_back(numbersFrom(
                    JsonReader{nlohmann::json{{"row", row}}, r.source + " depth_accuracy"}, "row", s.depths.size()));
        }
    }
    s.steps = static_cast<int>(r.integer("steps", 0, 100000000));
    s.trainLoss = r.number("train_loss");
    s.trainSeconds = r.number("train_seconds");
    s.evalSeconds = r.number("eval_seconds");
    s.threads = static_cast<int>(r.integer("threads", 0, 1 << 20));
    s.gridHash = r.text("grid");
    s.version = r.text("version");
    if (j.contains("method")) {
        s.method = r.text("method");
        s.methodSettings = r.text("method_settings");
    }
    if (j.contains("evaluations")) {
        const nlohmann::json& added = r.field("evaluations");
        if (!added.is_array())
            throw r.fail("'evaluations' is not a list");
        for (size_t i = 0; i < added.size(); ++i) {
            SweepResult e = fromJson(added[i], source + " evaluation " + std::to_string(i + 1));
            if (e.method.empty() || !e.evaluations.empty() || e.cell != s.cell)
                throw r.fail("evaluation " + std::to_string(i + 1) +
                             " is not an added evaluation of this cell (a method, the same cell, none nested)");
            s.evaluations.push_back(std::move(e));
        }
    }
    return s;
}

namespace {

// Splits text into lines; `torn` is set when the text does not end with a newline (the last piece is then torn).
std::vector<std::string> splitLines(const std::string& text, bool& torn)
{
    std::vector<std::string> lines;
    size_t start = 0;
    while (start < text.size()) {
        const size_t end = text.find('\n', start);
        if (end == std::string::npos) {
            lines.push_back(text.substr(start));
            torn = true;
            return lines;
        }
        lines.push_back(text.substr(start, end - start));
        start = end + 1;
    }
    torn = false;
    return lines;
}

std::string readWholeFd(int fd, const std::string& path)
{
    std::string text;
    char buf[65536];
    if (::lseek(fd, 0, SEEK_SET) < 0)
        throw RunError(path + ": cannot seek: " + std::strerror(errno));
    for (;;) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            throw RunError(path + ": cannot read: " + std::strerror(errno));
        }
        if (n == 0)
            return text;
        text.append(buf, static_cast<size_t>(n));
    }
}

// Parses the lines of a results file (the torn tail already removed).
std::vector<SweepResult> parseResultLines(const std::vector<std::string>& lines, const std::string& path,
                                          const SweepGrid* grid)
{
    std::vector<SweepResult> results;
    std::set<size_t> seen;
    const std::string gridHash = grid ? grid->hash() : std::string();
    for (size_t i = 0; i < lines.size(); ++i) {
        const std::string where = path + " line " + std::to_string(i + 1);
        auto bad = [&](const std::string& why) {
            return InputError(where + " is not a good result (" + why + "); the other " +
                              std::to_string(lines.size() - 1) + " lines are kept as they are: remove or repair line " +
                              std::to_string(i + 1) + " and run again");
        };
        nlohmann::json j;
        try {
            j = nlohmann::json::parse(lines[i]);
        } catch (const nlohmann::json::exception& e) {
            throw bad(std::string("not JSON: ") + e.what());
        }
        SweepResult r;
        try {
            r = SweepResult::fromJson(j, "the line");
        } catch (const InputError& e) {
            throw bad(e.what());
        }
        if (grid) {
            if (r.gridHash != gridHash)
                throw InputError(where + " is a result of another grid (hash " + r.gridHash +
                                 ", this folder's grid is " + gridHash +
                                 "); a results file belongs to the sweep.json beside it: use a new folder");
            if (r.cell >= grid->cellCount() || sweepCell(*grid, r.cell).key() != r.key)
                throw bad("cell " + std::to_string(r.cell) + " '" + r.key + "' is not a cell of this grid");
        }
        if (seen.insert(r.cell).second)
            results.push_back(std::move(r));
    }
    return results;
}

} // namespace

SweepResultsRead readSweepResults(const std::string& path, const SweepGrid* grid)
{
    SweepResultsRead out;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        // No file yet is no result yet. Decided by this open's own errno: a check afterwards could find the file a
        // writer created meanwhile and report the failed open as an error (seen under --jobs).
        if (errno == ENOENT)
            return out;
        throw InputError(path + ": cannot be read: " + std::strerror(errno));
    }
    std::string text;
    try {
        text = readWholeFd(fd, path);
    } catch (const RunError& e) { // e.g. a folder where the file should be: the user's input, not a failed run
        ::close(fd);
        throw InputError(e.what());
    }
    ::close(fd);
    std::vector<std::string> lines = splitLines(text, out.tornTail);
    if (out.tornTail)
        lines.pop_back();
    out.results = parseResultLines(lines, path, grid);
    return out;
}

bool appendSweepResult(const std::string& path, const SweepResult& result)
{
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0)
        throw RunError(path + ": cannot be opened for appending: " + std::strerror(errno));
    struct Closer {
        int fd;
        ~Closer() { ::close(fd); } // also releases the lock
    } closer{fd};
    while (::flock(fd, LOCK_EX) != 0)
        if (errno != EINTR)
            throw RunError(path + ": cannot be locked: " + std::strerror(errno));
    // Under the lock nobody else writes: a tail without its newline is a killed writer's, cut it off.
    const std::string text = readWholeFd(fd, path);
    bool torn = false;
    std::vector<std::string> lines = splitLines(text, torn);
    if (torn) {
        lines.pop_back();
        const size_t keep = text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1;
        if (::ftruncate(fd, static_cast<off_t>(keep)) != 0)
            throw RunError(path + ": cannot drop the torn last line: " + std::strerror(errno));
    }
    for (const std::string& line : lines) {
        // Only the cell index matters here: a corrupt line is the reader's business, never a reason to lose a result.
        try {
            const nlohmann::json j = nlohmann::json::parse(line);
            if (j.is_object() && j.contains("cell") && j["cell"] == result.cell && j.contains("grid") &&
                j["grid"] == result.gridHash)
                return false;
        } catch (const nlohmann::json::exception&) {
        }
    }
    const std::string line = result.toJson().dump() + "\n";
    size_t written = 0;
    while (written < line.size()) {
        const ssize_t n = ::write(fd, line.data() + written, line.size() - written);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            throw RunError(path + ": cannot append: " + std::strerror(errno));
        }
        written += static_cast<size_t>(n);
    }
    if (::fsync(fd) != 0)
        throw RunError(path + ": cannot sync: " + std::strerror(errno));
    return true;
}

// ---------------------------------------------------------------- the folder

SweepGrid loadSweepGrid(const std::string& dir)
{
    const std::string path = (fs::path(dir) / kSweepGridFile).string();
    if (!fs::is_directory(dir))
        throw InputError(dir + " is not a sweep folder (no such folder)");
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw InputError(path + ": cannot be read; a sweep folder holds the sweep.json its sweep wrote");
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception& e) {
        throw InputError(path + ": not JSON: " + e.what());
    }
    SweepGrid grid = SweepGrid::fromJson(j, path);
    if (j.contains("hash") && j["hash"] != grid.hash())
        throw InputError(path + ": its hash " + j["hash"].dump() + " does not match its grid (" + grid.hash() +
                         "); the file was edited: restore it or start a new folder");
    return grid;
}

void prepareSweepFolder(const std::string& dir, const SweepGrid& grid)
{
    std::error_code ec;
    if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
        throw InputError("-o " + dir + " is a file; allowed: a folder (new, or one this sweep wrote)");
    fs::create_directories(dir, ec);
    if (ec)
        throw InputError("-o " + dir + ": the folder cannot be created: " + ec.message());
    if (::access(dir.c_str(), W_OK | X_OK) != 0)
        throw InputError("-o " + dir + ": the folder cannot be written: " + std::strerror(errno));
    const std::string path = (fs::path(dir) / kSweepGridFile).string();
    if (fs::exists(path, ec)) {
        const SweepGrid stored = loadSweepGrid(dir);
        const std::string difference = sweepGridDifference(grid, stored);
        if (!difference.empty())
            throw InputError(path + " holds another grid; " + difference +
                             ". Allowed: the same command to resume, or a new -o folder for a new grid");
        return;
    }
    nlohmann::json j = grid.toJson();
    j["hash"] = grid.hash();
    writeFileAtomically(path, j.dump(2) + "\n");
}

} // namespace plab
