// CLI verbs for experiments with error bars: sweep (a grid run locally, resumable, or emitted for Slurm / GNU
// parallel) and collect (mean, sd, min, max over seeds). The grid, cells, results file and statistics are core's.
#include "base/atomic_file.h"
#include "cli.h"
#include "base/errors.h"
#include "model/presets.h"
#include "runs/sweep.h"
#include "hf/hf_model.h"
#include "runs/language_model.h"
#include "runs/retrieval_runs.h"
#include "tasks/task_accuracy.h"

#include <nlohmann/json.hpp>

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace plab::cli {

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start)
{
    return std::chrono::duration<double>(Clock::now() - start).count();
}

std::vector<std::string> splitList(const std::string& text)
{
    std::vector<std::string> items;
    size_t start = 0;
    while (start <= text.size()) {
        const size_t comma = text.find(',', start);
        const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        if (!item.empty())
            items.push_back(item);
        if (comma == std::string::npos)
            break;
        start = comma + 1;
    }
    return items;
}

// --vary NAME=V1,V2 (repeatable): the variants are every combination, each a list of NAME=VALUE settings.
std::vector<std::vector<std::string>> variantsFromArgs(const ParsedArgs& args)
{
    std::vector<std::vector<std::string>> variants{{}};
    std::set<std::string> names;
    for (const std::string& vary : args.all("vary")) {
        const size_t eq = vary.find('=');
        if (eq == std::string::npos || eq == 0 || eq + 1 == vary.size())
            throw InputError("--vary " + vary + ": allowed: NAME=V1,V2,... (a scheme parameter and its values)");
        const std::string name = vary.substr(0, eq);
        if (!names.insert(name).second)
            throw InputError("--vary names " + name + " twice; allowed: each parameter once");
        const std::vector<std::string> values = splitList(vary.substr(eq + 1));
        std::vector<std::vector<std::string>> next;
        for (const auto& base : variants)
            for (const std::string& value : values) {
                std::vector<std::string> v = base;
                v.push_back(name + "=" + value);
                next.push_back(std::move(v));
            }
        variants = std::move(next);
    }
    return variants;
}

// sweep --model DIR: a Hugging Face folder under --methods x --vary at --lengths tokens, nothing trained. Options of a
// training grid are refused by the form (registerSweepVerbs).
SweepGrid modelGridFromArgs(const ParsedArgs& args)
{
    SweepGrid grid;
    const std::string dir = args.text("model");
    if (!isModelFolder(dir))
        throw InputError("--model " + dir + ": not a folder; allowed: a Hugging Face model folder (config.json, the "
                         "weights, tokenizer.json)");
    grid.modelFolder = fs::absolute(dir).lexically_normal().string(); // Slurm tasks and parallel lines run elsewhere
    if (!grid.modelFolder.empty() && grid.modelFolder.back() == '/')
        grid.modelFolder.pop_back();
    const HfConfig config = readHfConfig(grid.modelFolder);
    if (!args.has("methods"))
        throw InputError("sweep --model: --methods M,M,... is required (e.g. none,pi,yarn; see positionlab-cli "
                         "schemes)");
    grid.methods = splitList(args.text("methods"));
    if (args.has("scaling-layers"))
        grid.scalingLayers = hfScalingLayersByName(args.text("scaling-layers"));
    grid.variants = variantsFromArgs(args);
    grid.corpus = args.has("corpus") ? fs::absolute(args.text("corpus")).string() : std::string();
    grid.evalLengths = args.integerList("lengths", {}, 1, kMaxLength);
    if (!args.has("lengths")) { // the context and its double, as far as the model reads
        for (int length : {config.context / 2, config.context, 2 * config.context})
            if (length >= 1 && length <= hfMaxLength(config))
                grid.evalLengths.push_back(length);
    }
    grid.evalMode = evalModeFromName(args.text("mode", "nonoverlapping"));
    grid.evalBytes = static_cast<size_t>(args.integer("eval-tokens", 16384, 0, 1LL << 40));
    if (args.has("task")) { // a retrieval task in the folder's tokens per cell (core/runs/retrieval_runs)
        SweepRetrieval r;
        r.task = args.text("task");
        if (args.has("depths"))
            r.depths = depthsOption(args);
        r.examples = static_cast<int>(args.integer("examples", 1, 1, 1000000));
        r.score = args.text("score", "exact");
        checkSweepRetrieval(r);
        grid.retrieval = r;
    } else
        for (const char* option : {"depths", "score", "examples"})
            if (args.has(option))
                throw InputError(std::string("sweep --model: --") + option + " applies only with --task NAME");
    validateSweepGrid(grid);
    return grid;
}

SweepGrid gridFromArgs(const ParsedArgs& args)
{
    if (args.has("model"))
        return modelGridFromArgs(args);
    SweepGrid grid;
    if (!args.has("schemes"))
        throw InputError("sweep: --schemes A,B,... is required (see positionlab-cli schemes)");
    grid.schemes = splitList(args.text("schemes"));
    if (!args.has("seeds"))
        throw InputError("sweep: --seeds 1,2,3 is required");
    for (const std::string& s : splitList(args.text("seeds")))
        grid.seeds.push_back(static_cast<uint64_t>(parseInteger(s, "seeds", 0, 1LL << 62)));
    grid.preset = args.text("preset", "quick");
    refuseOptions("sweep", args, {"init"}, "every cell trains from scratch (train --init continues one checkpoint)");
    modelAndTrainingFromArgs(args, grid.model, grid.train);
    grid.variants = variantsFromArgs(args);
    grid.corpus = args.has("corpus") ? fs::absolute(args.text("corpus")).string() : std::string();
    grid.task = taskFromArgs(args, grid.model.context);
    if (grid.task) {
        refuseOptions("sweep", args, {"corpus", "mode", "eval-bytes"},
                      "--task trains and scores generated examples, not text");
        grid.taskExamples = static_cast<int>(args.integer("examples", grid.taskExamples, 1, 1000000));
    } else if (args.has("examples"))
        throw InputError("--examples " + args.text("examples") + " applies only with --task; allowed: leave it out");
    grid.evalLengths = args.integerList(
        "lengths", grid.task ? defaultTaskLengths(grid.task->trainLength) : extrapolationLengths(grid.model.context), 1,
        kMaxLength);
    for (const std::string& method : splitList(args.text("eval-scaling")))
        if (method != "none") // every cell is evaluated as trained anyway
            grid.evalScalings.push_back(method);
    if (args.has("drope")) {
        SweepDrope drope;
        drope.fraction = args.number("drope", drope.fraction);
        if (args.has("drope-logit-c")) {
            drope.logitC.clear();
            for (const std::string& c : splitList(args.text("drope-logit-c")))
                drope.logitC.push_back(parseNumber(c, "drope-logit-c"));
        }
        grid.drope = drope;
    } else if (args.has("drope-logit-c"))
        throw InputError("--drope-logit-c " + args.text("drope-logit-c") +
                         " applies only with --drope FRACTION; allowed: add --drope, or leave it out");
    grid.evalMode = evalModeFromName(args.text("mode", "nonoverlapping"));
    grid.evalBytes = static_cast<size_t>(
        args.integer("eval-bytes", static_cast<long long>(presetByName(grid.preset).evalBytes), 0, 1LL << 40));
    validateSweepGrid(grid);
    return grid;
}

std::string resultsPath(const std::string& dir)
{
    return (fs::path(dir) / kSweepResultsFile).string();
}

// "ppl 3.12 at 32, 3.40 at 512": the first and last evaluated lengths of a finished cell.
std::string resultText(const SweepResult& r)
{
    char buf[160];
    if (!r.task.empty()) {
        std::snprintf(buf, sizeof buf, "accuracy %.2f at %d, %.2f at %d; %.1f s", r.accuracy.front(), r.lengths.front(),
                      r.accuracy.back(), r.lengths.back(), r.trainSeconds + r.evalSeconds);
        return buf;
    }
    std::snprintf(buf, sizeof buf, "ppl %.3f at %d, %.3f at %d; %.1f s", r.perplexity.front(), r.lengths.front(),
                  r.perplexity.back(), r.lengths.back(), r.trainSeconds + r.evalSeconds);
    return buf;
}

// Progress and ETA over the cells this run does: what the finished ones took, times the cells left, over the jobs.
class SweepProgress {
public:
    SweepProgress(size_t total, size_t alreadyDone, size_t toRun, std::ostream& err, bool quiet)
        : m_total(total), m_done(alreadyDone), m_toRun(toRun), m_err(err), m_quiet(quiet)
    {
    }
    void finished(const std::string& line)
    {
        ++m_done;
        ++m_ran;
        if (m_quiet)
            return;
        const double elapsed = secondsSince(m_start);
        const size_t left = m_toRun - m_ran;
        // Cells run side by side: the wall time per finished cell already includes the parallelism.
        const double eta = elapsed / m_ran * left;
        m_err << "[" << m_done << "/" << m_total << "] " << line << "; elapsed " << clockText(elapsed) << ", ETA "
              << clockText(eta) << std::endl;
    }
    double elapsed() const { return secondsSince(m_start); }

private:
    size_t m_total, m_done, m_toRun, m_ran = 0;
    std::ostream& m_err;
    bool m_quiet;
    Clock::time_point m_start = Clock::now();
};

// The path of this executable, for the emitted scripts. (Cell processes exec /proc/self/exe instead: a rebuild that
// replaces the file while a sweep runs must not turn the remaining cells into failures, nor mix two builds.)
std::string selfExecutable()
{
    std::error_code ec;
    std::string p = fs::read_symlink("/proc/self/exe", ec).string();
    if (ec)
        throw RunError("cannot find this program's path (/proc/self/exe): " + ec.message());
    const std::string deleted = " (deleted)";
    if (p.size() > deleted.size() && p.compare(p.size() - deleted.size(), deleted.size(), deleted) == 0)
        p.resize(p.size() - deleted.size());
    return p;
}

// Runs one cell in this process and appends its line; false when interrupted.
bool runCellHere(const SweepGrid& grid, size_t index, const Corpus& corpus, const std::string& dir, SweepResult* out)
{
    TrainingHooks hooks;
    hooks.interrupt = &interruptFlag();
    std::optional<SweepResult> r = runSweepCell(grid, index, corpus, hooks);
    if (!r)
        return false;
    appendSweepResult(resultsPath(dir), *r);
    if (out)
        *out = *r;
    return true;
}

int runCellVerb(const ParsedArgs& args, VerbContext& ctx)
{
    if (args.positional.size() != 1)
        throw InputError("sweep --cell I DIR: give exactly one sweep folder");
    const std::string dir = args.positional[0];
    for (const char* option : {"schemes", "seeds", "vary", "o", "emit", "jobs"})
        if (args.has(option))
            throw InputError(std::string("sweep --cell: --") + option +
                             " cannot be combined with --cell (DIR/sweep.json fixes the grid)");
    const SweepGrid grid = loadSweepGrid(dir);
    const long long index = args.integer("cell", 0, 0, std::numeric_limits<long long>::max());
    const SweepCell cell = sweepCell(grid, static_cast<size_t>(index)); // InputError when out of range
    applyThreadsOption(args);
    const SweepResultsRead read = readSweepResults(resultsPath(dir), &grid);
    for (const SweepResult& r : read.results)
        if (r.cell == cell.index) {
            if (!args.has("quiet"))
                ctx.err << "cell " << index << " (" << cell.key() << ") is already done" << std::endl;
            return 0;
        }
    const Corpus corpus = loadSweepCorpus(grid);
    InterruptGuard guard;
    SweepResult r;
    if (!runCellHere(grid, cell.index, corpus, dir, &r)) {
        ctx.err << "cell " << index << " (" << cell.key() << ") interrupted; nothing written" << std::endl;
        return 130;
    }
    if (!args.has("quiet"))
        ctx.err << "cell " << index << " (" << cell.key() << "): " << resultText(r) << std::endl;
    return 0;
}

int threadsPerCell(const ParsedArgs& args, int jobs)
{
    const int total = static_cast<int>(args.integer("threads", omp_get_num_procs(), 1, 1024));
    return std::max(1, total / jobs);
}

// Each cell in a child `positionlab-cli sweep --cell I DIR`, N at a time. Children die with the parent
// (PR_SET_PDEATHSIG), so a killed sweep leaves no orphan appending later.
struct ChildRun {
    size_t cell;
    Clock::time_point start;
};

int runWithChildren(const SweepGrid& grid, const std::string& dir, const std::vector<size_t>& todo, int jobs,
                    int threads, SweepProgress& progress, VerbContext& ctx, double& childWallSeconds)
{
    const std::string exe = "/proc/self/exe";   // the child's own image: this very build, even if its file was replaced
    const std::string argv0 = selfExecutable(); // what ps shows
    const pid_t parent = ::getpid();
    std::map<pid_t, ChildRun> running;
    size_t next = 0;
    int failures = 0;
    bool forwarded = false;
    std::atomic<bool>& interrupted = interruptFlag();
    while (next < todo.size() || !running.empty()) {
        while (!interrupted && next < todo.size() && static_cast<int>(running.size()) < jobs) {
            const size_t cell = todo[next++];
            const std::vector<std::string> argv = {
                argv0, "sweep", "--cell", std::to_string(cell), "--threads", std::to_string(threads), "--quiet", dir};
            const pid_t pid = ::fork();
            if (pid < 0)
                throw RunError(std::string("cannot start a cell process: ") + std::strerror(errno));
            if (pid == 0) {
                ::prctl(PR_SET_PDEATHSIG, SIGKILL);
                if (::getppid() != parent)
                    ::_exit(137);
                std::vector<char*> cargv;
                for (const std::string& a : argv)
                    cargv.push_back(const_cast<char*>(a.c_str()));
                cargv.push_back(nullptr);
                ::execv(exe.c_str(), cargv.data());
                const std::string message = "positionlab-cli: error: cannot start the cell process (" + exe +
                                            "): " + std::strerror(errno) + "\n";
                [[maybe_unused]] const ssize_t ignored = ::write(2, message.data(), message.size());
                ::_exit(127);
            }
            running[pid] = {cell, Clock::now()};
        }
        if (running.empty())
            break;
        int status = 0;
        const pid_t pid = ::waitpid(-1, &status, WNOHANG);
        if (pid < 0) {
            if (errno == EINTR)
                continue;
            throw RunError(std::string("waiting for a cell process: ") + std::strerror(errno));
        }
        if (pid == 0) {
            // Polled, so a SIGTERM to this process alone reaches the cells too (Ctrl-C reaches them directly).
            if (interrupted && !forwarded) {
                for (const auto& [child, run] : running)
                    ::kill(child, SIGTERM);
                forwarded = true;
            }
            ::usleep(20000);
            continue;
        }
        auto it = running.find(pid);
        if (it == running.end())
            continue;
        const ChildRun child = it->second;
        running.erase(it);
        childWallSeconds += secondsSince(child.start);
        const SweepCell cell = sweepCell(grid, child.cell);
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
            std::string line = "cell " + std::to_string(child.cell) + " " + cell.key();
            for (const SweepResult& r : readSweepResults(resultsPath(dir), &grid).results)
                if (r.cell == child.cell)
                    line += ": " + resultText(r);
            progress.finished(line);
        } else if (!interrupted) {
            ++failures;
            ctx.err << "cell " << child.cell << " (" << cell.key() << ") failed ("
                    << (WIFEXITED(status) ? "exit " + std::to_string(WEXITSTATUS(status))
                                          : "signal " + std::to_string(WTERMSIG(status)))
                    << "); its error is above; run the same command again to retry it" << std::endl;
        }
    }
    return failures;
}

double sumComputeSeconds(const std::vector<SweepResult>& results, const std::set<size_t>& cells)
{
    double sum = 0;
    for (const SweepResult& r : results)
        if (cells.count(r.cell)) {
            sum += r.trainSeconds + r.evalSeconds;
            // Zero-shot and DroPE scoring, and DroPE's recalibration once: each DroPE row (one per logit-c) carries
            // the same recalibration seconds.
            double recalibration = 0;
            for (const SweepResult& e : r.evaluations) {
                sum += e.evalSeconds;
                recalibration = std::max(recalibration, e.trainSeconds);
            }
            sum += recalibration;
        }
    return sum;
}

// ---- --emit ----

// Slurm resources of a cell from its preset's sizes: memory from the model's own estimate, time from the work.
struct SlurmResources {
    int cpus = 2;
    long long memoryMb = 1024;
    int minutes = 10;
};

// A model grid's task: the float32 model and one window of the longest length; the work of every length's windows
// over the tokens scored (prefillFlops), at the same pessimistic 1 GFLOP/s per CPU, doubled.
SlurmResources modelSlurmResources(const SweepGrid& grid, const ParsedArgs& args)
{
    SlurmResources res;
    const HfConfig config = readHfConfig(grid.modelFolder);
    const int longest = *std::max_element(grid.evalLengths.begin(), grid.evalLengths.end());
    const double bytes = hfModelMemoryBytes(config, HfPrecision::Float32) +
                         hfForwardBytes(config, longest, HfPrecision::Float32, HfForwardOutput::Losses) + 512.0 * (1 << 20);
    res.memoryMb = static_cast<long long>(std::ceil(bytes * 1.5 / (1 << 20) / 256.0)) * 256;
    res.cpus = static_cast<int>(args.integer("cpus-per-task", config.hidden >= 1024 ? 8 : 4, 1, 1024));
    const double scored = grid.evalBytes ? static_cast<double>(grid.evalBytes) : 1e6;
    double flops = 0;
    for (int n : grid.evalLengths)
        flops += std::ceil(scored / n) * config.prefillFlops(n);
    res.minutes = std::max(10, static_cast<int>(std::ceil(2.0 * flops / (1e9 * res.cpus) / 60)));
    if (args.has("slurm-mem"))
        res.memoryMb = args.integer("slurm-mem", 0, 64, 1LL << 24);
    if (args.has("slurm-minutes"))
        res.minutes = static_cast<int>(args.integer("slurm-minutes", 0, 1, 525600));
    return res;
}

SlurmResources slurmResources(const SweepGrid& grid, const ParsedArgs& args)
{
    if (grid.modelGrid())
        return modelSlurmResources(grid, args);
    SlurmResources res;
    const SweepCell cell = sweepCell(grid, 0);
    const Model probe(cell.model);
    const double params = static_cast<double>(probe.parameterCount());
    const int L = cell.model.context;
    int longest = *std::max_element(grid.evalLengths.begin(), grid.evalLengths.end());
    // Training: activations and their gradients, weights, gradients and AdamW moments; evaluation: one batch of
    // windows at the longest length (evaluateModel batches up to 16384 tokens); plus the program and the corpus.
    const double trainBytes = 2.0 * probe.activationBytes(grid.train.batch, L) + 16.0 * params;
    const double evalBytes = probe.activationBytes(std::max(1, 16384 / longest), longest);
    const double bytes = std::max(trainBytes, evalBytes) + 256.0 * (1 << 20);
    res.memoryMb = static_cast<long long>(std::ceil(bytes * 1.5 / (1 << 20) / 256.0)) * 256;
    res.cpus = static_cast<int>(args.integer("cpus-per-task", grid.model.dModel >= 512 ? 4 : 2, 1, 1024));
    // Work: three forwards' worth per training token, one per scored token; at a pessimistic 1 GFLOP/s per CPU,
    // doubled, and never under ten minutes (a queue's smallest useful slot).
    const double trainFlops = 3.0 * grid.train.steps * grid.train.batch * modelForwardWork(cell.model, {L});
    double evalFlops = 0;
    const double scored = grid.evalBytes ? static_cast<double>(grid.evalBytes) : 4e6;
    for (int n : grid.evalLengths)
        evalFlops += scored / n * modelForwardWork(cell.model, {n});
    // A cell's added evaluations: each zero-shot method and DroPE logit-c scores again; DroPE trains its fraction more.
    const double evaluations = 1.0 + static_cast<double>(grid.evalScalings.size()) +
                               (grid.drope ? static_cast<double>(grid.drope->logitC.size()) : 0.0);
    const double training = 1.0 + (grid.drope ? grid.drope->fraction : 0.0);
    const double seconds = 2.0 * (training * trainFlops + evaluations * evalFlops) / (1e9 * res.cpus);
    res.minutes = std::max(10, static_cast<int>(std::ceil(seconds / 60)));
    if (args.has("slurm-mem"))
        res.memoryMb = args.integer("slurm-mem", 0, 64, 1LL << 24);
    if (args.has("slurm-minutes"))
        res.minutes = static_cast<int>(args.integer("slurm-minutes", 0, 1, 525600));
    return res;
}

std::string shellQuoted(const std::string& s)
{
    std::string q = "'";
    for (char c : s)
        q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

int emit(const std::string& how, const SweepGrid& grid, const std::string& dir, const ParsedArgs& args,
         VerbContext& ctx)
{
    const std::string exe = selfExecutable();
    const std::string absDir = fs::absolute(dir).lexically_normal().string();
    const size_t cells = grid.cellCount();
    // A model grid's folder, as every cell reads it from sweep.json: absolute, for nodes that start elsewhere. The job
    // script names it in a comment; the parallel commands file holds commands only, so the message names it there.
    const std::string modelLine = grid.modelGrid() ? "# Model: " + grid.modelFolder + "\n" : std::string();
    if (how == "slurm") {
        const SlurmResources res = slurmResources(grid, args);
        fs::create_directories(fs::path(dir) / "logs");
        char time[32];
        std::snprintf(time, sizeof time, "%d:%02d:00", res.minutes / 60, res.minutes % 60);
        std::string script = "#!/bin/bash\n"
                             "# A PositionLab sweep as a Slurm job array: one task per cell of " +
                             absDir +
                             "/sweep.json.\n"
                             "# Submit with: sbatch " +
                             absDir +
                             "/sweep.sbatch   (tasks of finished cells exit at once)\n" + modelLine +
                             "#SBATCH --job-name=positionlab-sweep\n"
                             "#SBATCH --array=0-" +
                             std::to_string(cells - 1) +
                             "\n"
                             "#SBATCH --cpus-per-task=" +
                             std::to_string(res.cpus) +
                             "\n"
                             "#SBATCH --mem=" +
                             std::to_string(res.memoryMb) +
                             "M\n"
                             "#SBATCH --time=" +
                             time +
                             "\n"
                             "#SBATCH --output=" +
                             absDir +
                             "/logs/cell-%a.out\n"
                             "exec " +
                             shellQuoted(exe) +
                             " sweep --cell \"$SLURM_ARRAY_TASK_ID\" --threads \"${SLURM_CPUS_PER_TASK:-" +
                             std::to_string(res.cpus) + "}\" " + shellQuoted(absDir) + "\n";
        const std::string path = (fs::path(dir) / "sweep.sbatch").string();
        writeFileAtomically(path, script);
        ctx.err << "wrote " << path << ": " << cells << " tasks, " << res.cpus << " CPUs, " << res.memoryMb
                << " MB and " << time << " each; submit with: sbatch " << path << std::endl;
        return 0;
    }
    if (how == "parallel") {
        const int threads = static_cast<int>(args.integer("threads", 1, 1, 1024));
        std::string lines; // commands only: parallel and xargs would run a comment line as a job of its own
        for (size_t i = 0; i < cells; ++i)
            lines += shellQuoted(exe) + " sweep --cell " + std::to_string(i) + " --threads " + std::to_string(threads) +
                     " --quiet " + shellQuoted(absDir) + "\n";
        const std::string path = (fs::path(dir) / "sweep.commands").string();
        writeFileAtomically(path, lines);
        ctx.err << "wrote " << path << ": " << cells << " commands"
                << (grid.modelGrid() ? " on the model folder " + grid.modelFolder : std::string())
                << "; run them with: parallel -j N < " << path << "   (or xargs -P N -I{} sh -c {} < " << path << ")"
                << std::endl;
        return 0;
    }
    throw InputError("--emit " + how + " is not allowed; allowed: slurm, parallel");
}

// The sweep's first line: the grid's cells, how many are done, and how the rest run (or that none is left).
void printSweepStart(const SweepGrid& grid, const std::string& dir, size_t done, size_t todo, bool tornTail, int jobs,
                     int threads, std::ostream& err)
{
    if (todo == 0) {
        err << "sweep " << grid.hash() << ": all " << grid.cellCount() << " cells done (" << done
            << " done, 0 to run); collect them with: positionlab-cli collect " << dir << std::endl;
        return;
    }
    err << "sweep " << grid.hash() << ": " << grid.cellCount() << " cells ("
        << (grid.modelGrid() ? std::to_string(grid.methods.size()) + " methods x " +
                                   std::to_string(grid.variants.size()) + " variants of " + grid.modelFolder
                             : std::to_string(grid.schemes.size()) + " schemes x " + std::to_string(grid.seeds.size()) +
                                   " seeds x " + std::to_string(grid.variants.size()) + " variants")
        << "), " << done << " done" << (tornTail ? " (a torn last line is dropped)" : "") << ", " << todo << " to run, "
        << std::min<size_t>(jobs, todo) << " at a time with " << threads << " threads each" << std::endl;
}

int runSweep(const ParsedArgs& args, VerbContext& ctx)
{
    if (args.has("cell"))
        return runCellVerb(args, ctx);
    if (!args.positional.empty())
        throw InputError("sweep: unexpected argument " + args.positional[0] +
                         "; the folder is -o DIR (a folder as argument only with --cell I)");
    if (!args.has("o"))
        throw InputError("sweep: -o DIR is required (the folder for sweep.json and results.jsonl)");
    const auto start = Clock::now();
    const std::string dir = args.text("o");
    const int jobs = static_cast<int>(args.integer("jobs", 1, 1, 256));
    if (args.has("emit") && args.has("jobs"))
        throw InputError("sweep: --jobs cannot be combined with --emit (the scheduler decides what runs side by side)");
    const SweepGrid grid = gridFromArgs(args);
    checkSweepEvalLengths(grid, loadSweepCorpus(grid)); // every cell, before the folder or any cell
    prepareSweepFolder(dir, grid);
    if (args.has("emit"))
        return emit(args.text("emit"), grid, dir, args, ctx);

    const SweepResultsRead read = readSweepResults(resultsPath(dir), &grid);
    std::set<size_t> done;
    for (const SweepResult& r : read.results)
        done.insert(r.cell);
    std::vector<size_t> todo;
    for (size_t i = 0; i < grid.cellCount(); ++i)
        if (!done.count(i))
            todo.push_back(i);
    const bool quiet = args.has("quiet");
    const int threads = threadsPerCell(args, std::min<int>(jobs, std::max<size_t>(1, todo.size())));
    if (!quiet)
        printSweepStart(grid, dir, done.size(), todo.size(), read.tornTail, jobs, threads, ctx.err);
    if (todo.empty())
        return 0;

    SweepProgress progress(grid.cellCount(), done.size(), todo.size(), ctx.err, quiet);
    InterruptGuard guard;
    std::set<size_t> ranHere;
    double childWall = 0;
    int failures = 0;
    // Every cell in a fresh process, even with --jobs 1: a cell's numbers then do not depend on what ran before it in
    // the same process (memory layout changes the last bits of the sums), so a resumed, a parallel and a Slurm run
    // give exactly the numbers of an uninterrupted one.
    failures = runWithChildren(grid, dir, todo, jobs, threads, progress, ctx, childWall);
    for (size_t cell : todo)
        ranHere.insert(cell);
    if (interruptFlag()) {
        ctx.err << "interrupted; finished cells are kept in " << resultsPath(dir)
                << ", run the same command again to resume" << std::endl;
        return 130;
    }
    // The sweep's own cost: the cell processes' wall time minus their training and evaluation (process start, corpus
    // load, reading and appending the results file), as a share of the cells' compute.
    const std::vector<SweepResult> all = readSweepResults(resultsPath(dir), &grid).results;
    const double compute = sumComputeSeconds(all, ranHere);
    const double total = childWall;
    if (!quiet && compute > 0) {
        char line[240];
        std::snprintf(line, sizeof line,
                      "done: %zu cells in %s; cells' compute %.2f s, sweep overhead %.3f s (%.2f%% of the compute)",
                      ranHere.size(), clockText(secondsSince(start)).c_str(), compute, total - compute,
                      100.0 * (total - compute) / compute);
        ctx.err << line << std::endl;
    }
    if (failures) {
        ctx.err << failures << " cell(s) failed; the others are in " << resultsPath(dir) << std::endl;
        return 1;
    }
    return 0;
}

int runCollect(const ParsedArgs& args, VerbContext& ctx)
{
    const std::vector<std::string>& dirs = args.positional;
    if (args.has("o") && isImagePath(args.text("o"))) {
        collectSweepResults(dirs); // bad folders refused before a picture
        exportImage("collect", args, args.text("o"));
        return 0;
    }
    const std::vector<SweepSummaryRow> rows = summarizeSweep(collectSweepResults(dirs));
    if (!args.has("o")) {
        ctx.out << (args.has("json") ? sweepSummaryJson(rows, dirs).dump(2) + "\n" : sweepSummaryCsv(rows));
        return 0;
    }
    const std::string path = args.text("o");
    const DataFormat format = dataFormatForPath(path, false);

    writeFileAtomically(path, format == DataFormat::Json ? sweepSummaryJson(rows, dirs).dump(2) + "\n"
                                                         : sweepSummaryCsv(rows));
    return 0;
}

// sweep's options: the grid (schemes, seeds, variants), the model and schedule of train, a model folder's methods,
// the evaluation, and how cells run (jobs, a cell, Slurm or parallel lines).
std::vector<OptionDef> sweepOptions()
{
    std::vector<OptionDef> options = {
        {"schemes", OptionKind::Value, "comma-separated schemes of the grid (see `schemes`); required", "A,B,..."},
        {"seeds", OptionKind::Value, "comma-separated distinct seeds (model and data order); required", "S,S,..."},
        {"vary", OptionKind::Repeated, "also vary a scheme parameter (every combination)", "NAME=V1,V2,..."},
        corpusOption({}, "last 10% held out"),
    };
    for (const OptionDef& o : modelOptions())
        if (o.name != "seed")
            options.push_back(o);
    for (const OptionDef& o : scheduleOptions())
        options.push_back(o);
    for (
        const OptionDef& o : std::vector<OptionDef>{
            {"model", OptionKind::Value,
             "a Hugging Face model folder evaluated zero-shot under --methods (x --vary) instead of training a grid",
             "DIR"},
            {"methods", OptionKind::Value,
             "with --model: the methods, as eval --compare reads them (none,pi,yarn:factor=8,...; the config's own "
             "method keeps the config's settings); --vary NAME=V1,V2 applies to the methods that have NAME",
             "M,M,..."},
            {"scaling-layers", OptionKind::Value,
             "with --model: the layer types the methods reach, in every cell: full (default; full_attention layers), "
             "sliding (sliding_attention and chunked_attention layers), all",
             "full|sliding|all"},
            {"eval-tokens", OptionKind::Value, "with --model: tokens scored per length (default 16384; 0: all)", "N"},
            {"lengths", OptionKind::Value,
             "evaluation lengths (default L,2L,4L,8L,16L; with --task the task's lengths L/2, L, ..., 4L; with --model "
             "tokens, default L/2, L, 2L of its context as far as it reads)",
             "N,N,..."},
            taskOptions()[0],
            taskOptions()[1],
            {"examples", OptionKind::Value,
             "with --task: test examples per length (and passkey depth; default 100; with --model: per method, "
             "length and depth, default 1)",
             "N"},
            {"depths", OptionKind::Value, "with --model and --task: needle depths in [0, 1] (default 0,0.5,1)",
             "D,D,..."},
            {"score", OptionKind::Value,
             "with --model and --task: exact (default; the greedy answer) or loglik (rank among 10 candidates)",
             "exact|loglik"},
            {"eval-scaling", OptionKind::Value,
             "also score every rotary cell zero-shot under each method, factor = the longest scored sequence over L "
             "(rounded up); none: only as trained",
             "none,yarn,..."},
            {"drope", OptionKind::Value,
             "the DroPE recipe: continue every rope cell with its positions dropped for this share of its steps, then "
             "score it",
             "FRACTION"},
            {"drope-logit-c", OptionKind::Value,
             "with --drope: score the dropped model at each test-time logit-c (default 0.25; 0: unscaled)", "C,C,..."},
            {"mode", OptionKind::Value, "evaluation: nonoverlapping (default) or sliding", "nonoverlapping|sliding"},
            {"eval-bytes", OptionKind::Value, "held-out bytes scored per length (default from the preset; 0: all)",
             "N"},
            {"jobs", OptionKind::Value, "cells run side by side, each in its own process (default 1)", "N"},
            threadsOption({}, "in all, split among the jobs"),
            {"cell", OptionKind::Value, "run only cell I of the grid in DIR/sweep.json (Slurm array tasks, parallel)",
             "I"},
            {"emit", OptionKind::Value, "slurm: write DIR/sweep.sbatch; parallel: write DIR/sweep.commands",
             "slurm|parallel"},
            {"cpus-per-task", OptionKind::Value, "--emit slurm: CPUs of a task (default 2; 4 for d_model >= 512)", "N"},
            {"slurm-mem", OptionKind::Value, "--emit slurm: memory of a task in MB (default: estimated)", "MB"},
            {"slurm-minutes", OptionKind::Value, "--emit slurm: time limit of a task (default: estimated, >= 10)",
             "MIN"},
            {"quiet", OptionKind::Flag, "no progress on stderr"},
            {"o", OptionKind::Value, "the sweep folder: sweep.json, results.jsonl (created; resumed when it exists)",
             "DIR"}})
        options.push_back(o);
    return options;
}

std::vector<OptionDef> collectOptions()
{
    std::vector<OptionDef> options = {{"o", OptionKind::Value,
                                       "output: .csv (default, stdout), .json, or a picture .png .svg .pdf",
                                       "summary.csv|summary.json|plot.png|plot.svg"},
                                      jsonOption()};
    for (const std::vector<OptionDef>& picture : {pictureOptions(), pictureStyleOptions()})
        options.insert(options.end(), picture.begin(), picture.end());
    return options;
}

} // namespace

void registerSweepVerbs()
{
    std::vector<std::string> gridOptions;
    const std::vector<OptionDef> options = sweepOptions();
    for (const OptionDef& o : options)
        if (o.name != "cell" && o.name != "model" && o.name != "methods" && o.name != "eval-tokens" &&
            o.name != "depths" && o.name != "score" && o.name != "scaling-layers")
            gridOptions.push_back(o.name);
    const std::vector<std::string> modelGridOptions = {
        "model", "methods", "vary",   "corpus",        "lengths",   "mode",          "eval-tokens",
        "jobs",  "threads", "emit",   "cpus-per-task", "slurm-mem", "slurm-minutes", "quiet",
        "o",     "task",    "depths", "examples",      "score",     "scaling-layers"};
    registerVerb(
        {"sweep",
         "",
         "train and evaluate a grid of schemes x seeds (x variants); resumable: the same command again skips "
         "finished cells",
         options,
         0,
         1,
         runSweep,
         {{"", gridOptions, {}, {}},
          {"--model DIR --methods M,M,...", modelGridOptions, {}, "model"},
          {"--cell I DIR", {"cell", "threads", "quiet"}, {}, "cell"}},
         {},
         "The grid's folder is -o DIR; `--cell I DIR` runs one cell of a folder's grid (what Slurm array tasks "
         "and `--emit parallel` lines run). With --model DIR each cell is one method (and variant) of the folder's "
         "model evaluated at every --lengths on the --corpus's validation split in its tokens; `collect` draws "
         "perplexity against length, one curve per method and setting. With --model DIR --task NAME each cell scores a "
         "retrieval task (passkey, niah-single, niah-multikey, niah-multivalue, variable-tracking) in the folder's "
         "tokens at every --lengths and --depths, the --corpus as haystack (as eval DIR --task does)."});
    registerVerb({"collect",
                  "DIR [DIR...]",
                  "mean, sd, min, max and n over seeds of each scheme's perplexity and ppl(length)/ppl(L) (of a task "
                  "sweep: accuracy), from sweep folders",
                  collectOptions(),
                  1,
                  64,
                  runCollect,
                  {},
                  {{"o", dataAndPictureExtensions(false)}}});
}

} // namespace plab::cli
