// `positionlab-cli eval CHECKPOINT --task NAME`: exact-match accuracy of a lab checkpoint's greedy answers per length.
#include "verbs_model.h"

#include "cli.h"

#include "base/atomic_file.h"
#include "base/errors.h"
#include "base/limits.h"
#include "model/checkpoint.h"
#include "model/model.h"
#include "runs/task_runs.h"
#include "schemes/schemes.h"
#include "tasks/task_accuracy.h"
#include "tasks/tasks.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

namespace plab::cli {

namespace {

std::atomic<bool>& g_interrupted = interruptFlag();

TaskKind taskKindFromName(const std::string& text)
{
    try {
        return taskByName(text).kind;
    } catch (const InputError& e) {
        throw InputError("--task: " + std::string(e.what()));
    }
}

// --lengths (default: multiples of the training length L), --depths (passkey only), --examples and --seed, checked
// by core against the model's longest length; the messages name the option.
TaskEvalOptions taskEvalOptionsFromArgs(const ParsedArgs& args, TaskKind kind, int trainLength, int maxLength)
{
    TaskEvalOptions options;
    options.lengths = args.integerList("lengths", defaultTaskLengths(trainLength), 1, kMaxLength);
    if (args.has("depths")) {
        if (kind != TaskKind::Passkey)
            throw InputError("--depths " + args.text("depths") + " applies only to --task passkey, not to --task " +
                             taskInfo(kind).name + "; allowed: leave --depths out");
        options.depths = depthsOption(args);
    }
    options.examples = static_cast<int>(args.integer("examples", 100, 1, 1000000));
    options.seed = static_cast<uint64_t>(args.integer("seed", 1, 0, 1LL << 62));
    options.maxLength = maxLength;
    try {
        checkTaskEvalOptions(kind, options);
    } catch (const InputError& e) {
        throw InputError((args.has("depths") ? "--depths " + args.text("depths") + ": " : "--lengths: ") +
                         std::string(e.what()));
    }
    return options;
}

// One row per length (and depth, for passkey), each also a line on stderr unless `quiet`; the lengths the model cannot
// take are added to `unsupported` with the reason.
Table taskAccuracyTable(const std::vector<TaskAccuracyPoint>& points, bool passkey, bool quiet,
                        nlohmann::json& unsupported, std::ostream& err)
{
    Table table;
    table.columns = {"length", "examples", "correct"};
    if (passkey)
        table.columns.push_back("depth");
    table.columns.push_back("accuracy");
    table.integerColumns = 3;
    for (const TaskAccuracyPoint& p : points) {
        std::vector<double> row = {double(p.length), double(p.examples), p.supported ? double(p.correct) : NAN};
        if (passkey)
            row.push_back(p.depth);
        row.push_back(p.supported ? p.accuracy : NAN);
        table.rows.push_back(row);
        const std::string cell =
            "length " + std::to_string(p.length) + (passkey ? " depth " + exactText(p.depth) : std::string());
        if (!p.supported)
            unsupported.push_back({{"length", p.length}, {"reason", p.note}});
        if (quiet)
            continue;
        if (!p.supported) {
            err << cell << ": unsupported (" << p.note << ")" << std::endl;
            continue;
        }
        char line[200];
        std::snprintf(line, sizeof line, "%s: accuracy %.3f (%d of %d)", cell.c_str(), p.accuracy, p.correct,
                      p.examples);
        err << line << std::endl;
    }
    return table;
}

} // namespace

// eval MODEL --task NAME: exact-match accuracy of the model's greedy answers per length (and depth), CSV or JSON.
int runTaskEval(const ParsedArgs& args, VerbContext& ctx)
{
    LoadedCheckpoint loaded = loadCheckpoint(args.positional[0]);
    Model& model = *loaded.model;
    const std::optional<std::string> method = args.has("scaling") ? std::optional(args.text("scaling")) : std::nullopt;
    const std::string note = applyScalingOptions(model, args, method);
    const TaskKind kind = taskKindFromName(args.text("task"));
    const std::string name = taskInfo(kind).name;
    // The training length L the default lengths are multiples of: the checkpoint's own task's, else the context's.
    TaskSpec trained;
    const bool trainedOnTask = TaskSpec::fromJson(loaded.info.training, trained);
    const int trainLength = taskEvalTrainLength(kind, loaded.info.training, model.config().context);
    TaskEvalOptions options = taskEvalOptionsFromArgs(args, kind, trainLength, model.maxLength());
    printScalingNote(note, args, ctx.err);
    const bool quiet = args.has("quiet");
    if (!quiet && trainedOnTask && trained.kind != kind)
        ctx.err << "note: the checkpoint was trained on task " << taskInfo(trained.kind).name << ", not " << name
                << std::endl;
    else if (!quiet && !trainedOnTask)
        ctx.err << "note: the checkpoint was trained on text, not on a task" << std::endl;

    InterruptGuard guard;
    options.progress = [](double) { return !g_interrupted; };
    std::string exampleLines; // --examples-out: one JSON line per example (verbs_retrieval.cpp)
    if (args.has("examples-out"))
        options.exampleDone = taskExampleWriter(args, model, exampleLines);
    model.setCancelFlag(&g_interrupted);
    std::vector<TaskAccuracyPoint> points;
    try {
        points = evaluateTask(kind, modelPredictor(model), options);
        if (args.has("examples-out"))
            writeFileAtomically(args.text("examples-out"), exampleLines);
    } catch (const RunError&) {
        model.setCancelFlag(nullptr);
        if (!g_interrupted)
            throw;
        printInterrupted(args, ctx, "during --task " + name);
        return 130;
    }
    model.setCancelFlag(nullptr);

    nlohmann::json unsupported = nlohmann::json::array();
    Table table = taskAccuracyTable(points, kind == TaskKind::Passkey, quiet, unsupported, ctx.err);
    table.meta = {{"checkpoint", args.positional[0]},
                  {"config", model.config().toJson()},
                  {"step", loaded.info.step},
                  {"task", name},
                  {"length_means", taskInfo(kind).length},
                  {"train_length", trainLength},
                  {"trained_on", trainedOnTask ? taskInfo(trained.kind).name : std::string("text")},
                  {"seed", options.seed},
                  {"decoding", "greedy, exact match of the answer and its terminator"}};
    if (!unsupported.empty())
        table.meta["unsupported"] = unsupported;
    writeDataOutput(args, ctx, false, [&](std::ostream& out, DataFormat f) { writeTable(out, f, table); });
    return 0;
}

} // namespace plab::cli
