// Lessons: Markdown pages whose ```json blocks are states of the app (resources/lessons/FORMAT.md), parsed and checked.
#pragma once

#include "schemes/schemes.h"

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace plab {

// The views a lesson state can show; names as in `render VIEW` and the session's view ids.
// Model: the "Your model" tab, a real model folder the user opens (lesson 12); its states name no model.
// Frequencies: the Rotary frequencies view of rope (with its keep, rotary-fraction, dim, base and a method).
enum class LessonView { Bias, Compare, Dot, Entropy, Attention, Train, Model, Frequencies };
// "bias", "compare", "dot", "entropy", "attention", "train", "model", "frequencies"
const std::vector<std::string>& lessonViewNames();
std::string lessonViewName(LessonView view);

// One ```json block: a figure. Every key is checked and resolved (defaults filled in); `json` keeps it as written.
struct LessonState {
    int line = 0; // 1-based line of the block's first JSON line in its file
    LessonView view = LessonView::Bias;
    std::string caption;
    nlohmann::json json;

    std::vector<std::string> schemes;     // bias: one; compare: 2..4; entropy, train: 1+; attention: the model's
    std::map<std::string, double> params; // for the first scheme, as NAME=VALUE
    int heads = 8;
    int head = 0; // 0-based
    int length = 32;
    bool bidirectional = false;
    int context = 0; // 0: none
    bool logn = false;
    bool buckets = false;
    bool curve = false; // bias, fire: the learned curve of the demo fire model beside the untrained one
    bool difference = false;
    bool separateScales = false; // compare: one colour scale per panel
    std::vector<std::pair<int, double>> curves{{128, 10000}, {64, 10000}, {128, 500}}; // dot: (dim, base)
    int maxDistance = 256;
    bool logX = false;
    std::vector<int> lengths{16, 32, 64, 128, 256, 512, 1024, 2048};
    std::string qk = "zero";
    long long seed = 0;
    std::string measure = "last";
    std::string text;             // attention
    std::optional<int> layer;     // attention: the last layer when absent
    int repeatTo = 0;             // attention: 0 = no repeat
    std::string show = "weights"; // attention: "weights", "bias" or "positions" (core's textViewNames)
    std::string preset = "demo";  // train, and the demo model of attention
    std::string task;             // train: a task name (core/tasks), empty: text and perplexity
    int taskLength = 0;           // train with a task: its training length L, 0: the longest the context holds
    double recalibration = 0;     // train with a task: > 0 runs the DroPE recipe with this recalibration percent
    // train: the Train tab's model options, as its session keys name them (nope_every, attn_temperature_tuning,
    // floor_scale, attn_scale, ssmax, sink_logit), checked by validateModelConfig on the preset's model of each scheme.
    int nopeEvery = 0;
    AttentionTemperature temperature;
    bool ssmax = false;
    bool sinkLogit = false;
    // train: a hybrid model's layer types (layer_types, sliding_window, attention_chunk_size, full_scheme,
    // full_settings: modelShapeJson's names), the same check.
    std::vector<std::string> layerTypes;
    int window = 0, chunk = 0;
    std::string fullScheme;
    std::vector<std::string> fullSettings;
    std::string page = "attention"; // model: "attention", "entropy" or "sinks"

    std::vector<std::string> settings() const; // params as NAME=VALUE, for makeSchemeSpec and --set
};

// The page in reading order: prose (Markdown) and the states between it.
struct LessonSegment {
    std::string markdown; // empty for a state segment
    int state = -1;       // index into Lesson::states, or -1 for prose
};

struct Lesson {
    std::string file; // the name it was read under (a path or a file name)
    int number = 0;   // NN of NN-slug.md
    std::string slug;
    std::string language; // "en" or e.g. "zh_CN" (NN-slug.zh_CN.md)
    std::string title;    // the first line's "# Title"
    std::vector<LessonSegment> segments;
    std::vector<LessonState> states;
};

// A lesson file's name and its text.
struct LessonSource {
    std::string name;
    std::string text;
};

// Parses and checks one lesson. `name` gives the number, slug and language (NN-slug.md, NN-slug.LANG.md) and starts
// every message: InputError "NAME:LINE: what is wrong; what is allowed".
Lesson parseLesson(const LessonSource& source);

// A folder's lessons in one language: per number the LANG twin when there is one, else the English file. Broken
// files do not stop the others: each is reported in `errors` ("NAME:LINE: ...", sorted by name).
struct LessonSet {
    std::vector<Lesson> lessons; // by number
    std::vector<std::string> errors;
    std::vector<std::string> brokenFiles; // the names of the files behind `errors`, in the same order
};
LessonSet readLessons(const std::vector<LessonSource>& sources, const std::string& language);
// The *.md files of a folder (not FORMAT.md, README.md or files not named NN-slug[.LANG].md). InputError when the
// folder cannot be read or holds no lesson file.
std::vector<LessonSource> lessonSourcesInFolder(const std::string& folder);
// The lessons that ship with PositionLab (resources/lessons, compiled in).
const std::vector<LessonSource>& builtinLessonSources();
// The languages of the app, its pictures and its lessons: "en" and "zh_CN".
const std::vector<std::string>& supportedLanguages();
// `code` when it is one of them; InputError "--lang CODE is not allowed; allowed: en, zh_CN" otherwise.
std::string checkLanguage(const std::string& code);

// The `positionlab-cli render` arguments (after `render`) that draw a state: e.g. {"bias", "alibi", "--length",
// "32", "--heads", "8", "--head", "0"}. An attention state (and a bias state with "curve") needs the checkpoint of
// its model; a model state takes the model folder there (none: the picture says that it needs one).
std::vector<std::string> lessonRenderArguments(const LessonState& state, const std::string& checkpoint = {});

} // namespace plab
