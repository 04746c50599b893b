// The positionlab-cli command line: verb registry, argument parsing and dispatch (no Qt; `render` plugs in from ui/).
#pragma once

#include "attention/attention.h"
#include "lessons/lessons.h"
#include "base/errors.h"
#include "base/matrix_output.h"
#include "hf/hf_products.h"
#include "hf/hf_config.h"
#include "hf/hf_scaling_layers.h"
#include "runs/method_comparison.h"
#include "runs/retrieval_runs.h"
#include "hf/hf_model.h"
#include "hf/tokenizer.h"
#include "schemes/schemes.h"
#include "tasks/tasks.h"

#include <functional>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <atomic>
#include <memory>

namespace plab {
struct ModelConfig;
struct TrainConfig;
struct Corpus;
struct LoadedCheckpoint;
class Model;
} // namespace plab

namespace plab::cli {

enum class OptionKind { Flag, Value, Repeated };

struct OptionDef {
    std::string name; // long name without dashes, e.g. "length"
    OptionKind kind = OptionKind::Value;
    std::string help;         // one line, with the default
    std::string metavar = {}; // the value's placeholder in the usage line and --help ("N", "FILE"; default VALUE)
    bool pictureOnly = false; // read only for a picture output (-o FILE.png|svg|pdf); refused with data output
    bool required = false;    // refused when missing: "VERB: -o FILE is required"
};

// An output option and the extensions it may end in; checked (extension, then a writable place) before any work.
struct OutputDef {
    std::string option; // "o" or e.g. "probs"
    std::vector<std::string> extensions;
    // A core rule for the file name that replaces `extensions`, called as nameRule(path, "-o") (checkpoints:
    // checkCheckpointFileName, so the CLI and the GUI refuse the same names).
    void (*nameRule)(const std::string& path, const std::string& what) = nullptr;
};

// One way of using a verb, with the options it reads: the usage lines and --help are made from these, and an option
// given outside the form in use is refused (exit 2, naming it) instead of being silently ignored.
struct UsageForm {
    std::string words;                   // what follows the verb, e.g. "SCHEME --checkpoint MODEL.safetensors"
    std::vector<std::string> options;    // the options this form reads
    std::string whenWord;                // the form in use when the first positional word is this ...
    std::string whenOption;              // ... or when this option is given; neither: the form otherwise in use
    std::vector<OutputDef> outputs = {}; // this form's outputs when they differ from the verb's (VerbDef::outputs)
};

// The parsed command line of one verb.
class ParsedArgs {
public:
    std::vector<std::string> positional;
    std::map<std::string, std::vector<std::string>> values; // option -> every value given (flags: {"1"})

    bool has(const std::string& name) const { return values.count(name) != 0; }
    std::string text(const std::string& name, const std::string& fallback = {}) const;
    const std::vector<std::string>& all(const std::string& name) const;
    // Integers and numbers, with InputError naming the option and the allowed range.
    long long integer(const std::string& name, long long fallback, long long lo, long long hi) const;
    double number(const std::string& name, double fallback) const;
    // A comma-separated list of integers, each in [lo, hi].
    std::vector<int> integerList(const std::string& name, const std::vector<int>& fallback, long long lo,
                                 long long hi) const;
};

struct VerbContext {
    std::ostream& out;
    std::ostream& err;
};

struct VerbDef {
    std::string name;
    std::string words;   // what follows the verb in the usage line when there is one form, e.g. "SCHEME"
    std::string summary; // one line for the overview
    std::vector<OptionDef> options;
    int minPositional = 0;
    int maxPositional = 0;
    std::function<int(const ParsedArgs&, VerbContext&)> run;
    std::vector<UsageForm> forms = {};   // empty: one form, `words` with every option
    std::vector<OutputDef> outputs = {}; // checked by runCli before the verb runs (empty: the verb checks its own);
                                         // a form with outputs of its own (UsageForm::outputs) replaces these
    std::string notes = {};              // lines printed after the usage in --help
};

// The usage line(s) of a verb, one per form, made from its options: the one text --help and error messages show.
std::string usageText(const VerbDef& verb);

// Adds a verb (replacing one of the same name). The GUI library registers `render` this way.
void registerVerb(VerbDef verb);
// Parses argv for `verb` (argv excludes the program and verb names); throws InputError. Also refuses the options the
// form in use would ignore (a picture option without a picture output, `entropy --layer` without --checkpoint).
ParsedArgs parseArgs(const VerbDef& verb, const std::vector<std::string>& argv);
// The rule for every output path, in one place: `path` must end in one of `extensions` (InputError listing them, then
// `note` in brackets when given) and its place must be writable (InputError naming the reason, nothing left behind).
// `option` is "o" or e.g. "probs".
void checkOutputPath(const std::string& option, const std::string& path, const std::vector<std::string>& extensions,
                     const std::string& note = {});
// The same for an OutputDef: its nameRule when it has one, else checkOutputPath with its extensions. runCli checks the
// outputs of the form in use (UsageForm::outputs, else VerbDef::outputs) so, naming the form that writes a refused
// extension in `note`.
void checkOutputDef(const OutputDef& output, const std::string& path, const std::string& note = {});
// Refuses `options` when given, saying why they would be ignored (`reason`, e.g. "they apply only with --checkpoint").
void refuseOptions(const std::string& verb, const ParsedArgs& args, const std::vector<std::string>& options,
                   const std::string& reason);
// Runs the whole command line; returns the exit code (0 ok, 1 failure while running, 2 bad usage/input).
int runCli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
// A core message as the CLI reports it: core names no option, so when the error is about one parameter ("scaling")
// its option goes first: "--scaling = 'x' is not a known method" (also after a prefix: "cell ...: --scaling = ..."),
// "--set: a setting is NAME=VALUE, got 'dim'".
std::string cliMessage(const ParameterError& e);

// Options shared by every verb that takes a scheme (--scheme S is the alternative to the SCHEME word).
std::vector<OptionDef> schemeOptions();
// The names of schemeOptions(), for usage forms.
std::vector<std::string> schemeOptionNames();
// The scheme of a verb: the positional word at `index` or --scheme S, both allowed, and both only when they agree.
// InputError naming `usage` when neither is given.
std::string schemeFromArgs(const ParsedArgs& args, size_t index, const std::string& usage);
// --context L (0 when absent); --logn without --context is refused naming --context.
int contextFromArgs(const ParsedArgs& args);
// --context given where nothing would read it (core's schemesReadContext over `schemes`, --logn and --scaling) is
// refused, naming the schemes, options and methods that read it. Called once the verb knows its schemes.
void refuseUnreadContext(const std::string& verb, const std::vector<std::string>& schemes, const ParsedArgs& args);
// --qk zero|random of entropy and render entropy (default zero); with zero, --seed and --head-dim (which set the random
// q and k) are refused, and so is --set dim of a rotary `scheme` (a SCHEME word, "rope+yarn" too): it rotates q and k
// that are zero, and the head dim it must equal is --qk random's.
std::string qkFromArgs(const std::string& verb, const ParsedArgs& args, const std::string& scheme);
// --scaling METHOD: a rope/xpos length-extension method (core/schemes/rotary_scaling.h).
OptionDef scalingOption();
// --set NAME=VALUE of a length-extension method (eval, the --checkpoint views, frequencies): core's checkMethodSetting,
// its refusal named as the option ("--set dim=8: method none has no parameter 'dim' ..."), and with no method, how to
// name one.
void checkScalingSet(const RotaryMethodInfo& method, const std::string& setting);
// --context L of the verbs that take a scheme (after `when`, e.g. "attention", when given).
OptionDef contextOption(const std::string& when = {});
// --layer L of a checkpoint's view (core's modelLayer: default the last layer); InputError when out of range.
int layerFromArgs(const ParsedArgs& args, const ModelConfig& config);
// A SCHEME word, which may carry a method ("rope+yarn": rope under yarn, as the compare view writes it), and
// --scaling METHOD: the scheme, and the method when either names one (both only when they agree; InputError naming
// both otherwise). "rope+" is refused, listing the known methods.
struct SchemeWord {
    std::string scheme;
    std::optional<std::string> method;
};
SchemeWord schemeWordFromArgs(const std::string& word, const ParsedArgs& args);
// Builds a validated SchemeSpec from SCHEME and the shared options. With headDim > 0 the spec is for q and k of that
// head dim (core's makeSchemeSpecForHeadDim: rope/xpos dim follows it, another dim is refused naming headDimName).
SchemeSpec schemeSpecFromArgs(const std::string& name, const ParsedArgs& args, int defaultHeads = 8, int headDim = 0,
                              const std::string& headDimName = {});

// The rope spec of `frequencies` (and its picture): --dim, --base, --scaling, --set, --context; and the sequence length
// n it is evaluated at (--length, default the context L).
SchemeSpec frequenciesSpecFromArgs(const ParsedArgs& args);
int frequenciesLengthFromArgs(const ParsedArgs& args, const SchemeSpec& spec);

// --allow-long lifts the compute-time guard of entropy, attention, bench attention and a model folder's retrieval.
OptionDef allowLongOption();
// Refuses work estimated above core's limit (checkWorkEstimate) unless --allow-long is given; `howToProceed` lists
// the options that make the job smaller.
void checkWork(const ParsedArgs& args, double flops, const std::string& what, const std::string& howToProceed);
// The same for a run that estimates its own time (core's checkEstimatedSeconds).
void checkWorkSeconds(const ParsedArgs& args, double seconds, const std::string& what, const std::string& howToProceed);

// --precision f32|bf16 of the verbs that run a Hugging Face model folder (core's HfPrecision; default f32), and its
// value (core's refusal, named as the option).
OptionDef precisionOption();
HfPrecision precisionFromArgs(const ParsedArgs& args);

// --threads T (1..1024, default all cores) for the OpenMP verbs; returns the thread count in effect.
int applyThreadsOption(const ParsedArgs& args);

// --task NAME (and --task-length L, default the longest the context holds) of train and render train; none without
// --task. Core's refusals name the options.
std::optional<TaskSpec> taskFromArgs(const ParsedArgs& args, int context);
// The --threads option: one text everywhere, after `when` ("with --checkpoint") and before `note` when given.
OptionDef threadsOption(const std::string& when = {}, const std::string& note = {});
// "m:ss" or "h:mm:ss" for elapsed times and ETAs; "?" when unknown.
std::string clockText(double seconds);
// CPU seconds of the whole process (all threads): on a loaded machine work per CPU-second still shows efficiency.
double processCpuSeconds();

// The extensions of data (.csv .json .npy) and of pictures (.png .svg .pdf), for OutputDef lists.
std::vector<std::string> dataExtensions(bool npy = true);
std::vector<std::string> pictureExtensions();
std::vector<std::string> dataAndPictureExtensions(bool npy = true);
// The picture options of every verb that draws (width, height, language), all pictureOnly: one text for each.
std::vector<OptionDef> pictureOptions();
// --dpi and --dark, of `render` and `collect`, pictureOnly too.
std::vector<OptionDef> pictureStyleOptions();

// The languages pictures can be drawn in (--lang; the GUI library holds their translations, ui/i18n.h).
const std::vector<std::string>& pictureLanguages();
// --lang CODE (default "en"); InputError listing the allowed codes for any other. parseArgs() checks it already.
std::string languageFromArgs(const ParsedArgs& args);

// True for .png, .svg and .pdf: pictures, rendered by the GUI library's exporter.
bool isImagePath(const std::string& path);
// The GUI library installs this so `bias ... -o x.png` renders the same picture as the GUI.
using ImageExporter = std::function<void(const std::string& verb, const ParsedArgs& args, const std::string& path)>;
void setImageExporter(ImageExporter exporter);
void exportImage(const std::string& verb, const ParsedArgs& args, const std::string& path);

// --json of every verb that prints data: JSON on stdout, the document -o FILE.json writes.
OptionDef jsonOption();
// Writes data to -o FILE atomically (format from its extension) or to stdout: CSV, or JSON with --json (runCli has
// refused --json with an -o of another format).
void writeDataOutput(const ParsedArgs& args, VerbContext& ctx, bool npyAllowed,
                     const std::function<void(std::ostream&, DataFormat)>& write);

// Set by SIGINT/SIGTERM while an InterruptGuard is alive: long verbs (train, eval, sweep) stop cleanly on it.
std::atomic<bool>& interruptFlag();
// Installs the SIGINT/SIGTERM handler for a scope (clearing the flag); a second Ctrl-C falls back to the default
// (kill).
class InterruptGuard {
public:
    InterruptGuard();
    ~InterruptGuard();
    InterruptGuard(const InterruptGuard&) = delete;
    InterruptGuard& operator=(const InterruptGuard&) = delete;

private:
    void (*m_int)(int);
    void (*m_term)(int);
};

// The model options (--preset, sizes, --set, --logn, --seed) and the schedule options (--steps, --batch, --lr, ...)
// that train and sweep share, and the configs they give (preset first, then each option; scheme and seed untouched).
std::vector<OptionDef> modelOptions();
std::vector<OptionDef> scheduleOptions();
void modelAndTrainingFromArgs(const ParsedArgs& args, ModelConfig& model, TrainConfig& train);
// The model options beyond the sizes (--nope-every, --attn-temperature-tuning, --floor-scale, --attn-scale, --ssmax,
// --sink-logit) into `model` (the preset's or a checkpoint's): train, sweep and render train.
// Also the layer types (--layer-types, --window, --chunk, --full-scheme, --full-set), checked by validateModelConfig.
void layerScheduleFromArgs(const ParsedArgs& args, ModelConfig& model);
// The names of the options layerScheduleFromArgs reads (render train takes them too).
const std::vector<std::string>& layerScheduleOptionNames();
// --preset (default quick) into `model` and `train`; with --task, core's applyTaskPreset on top (sizes and a schedule
// that learn the task).
void presetFromArgs(const ParsedArgs& args, ModelConfig& model, TrainConfig& train);
// --task NAME: its kind, or nullopt without --task; an unknown name is refused as "--task: task 'x' is unknown; ...".
std::optional<TaskKind> taskKindFromArgs(const ParsedArgs& args);
// --task NAME and --task-length L (default the longest the context holds) of train and sweep; core's refusals name the
// options.
std::optional<TaskSpec> taskFromArgs(const ParsedArgs& args, int context);
// The --task and --task-length options.
std::vector<OptionDef> taskOptions();

// eval --compare: the checkpoint (rope or xpos), the text and options of `eval`, evaluated under each method of
// --compare (core's evaluateUnderMethods); per-method results on `err` unless --quiet. RunError "evaluation cancelled"
// on Ctrl-C. The data writer and the picture exporter both call it.
// MODEL may also be a Hugging Face model folder (isModelFolder): lengths in its tokens, the text tokenized with its
// tokenizer.json, the config's own method keeping the config's settings.
struct MethodComparisonRun {
    std::vector<MethodCurve> curves;
    std::string scheme;
    int context = 0;
    nlohmann::json meta;       // checkpoint, config, mode, corpus, split, bytes, trained_with (a folder: model, ...)
    std::string unit = "byte"; // what the lengths count: "byte", or "token" for a model folder
};
// A Hugging Face model folder given where a checkpoint is: a directory (a checkpoint is a file).
bool isModelFolder(const std::string& path);
MethodComparisonRun runMethodComparison(const ParsedArgs& args, std::ostream& err);

// ---- a model folder where a checkpoint is (verbs_folder.cpp) ----
// InputError naming --OPTION unless `length` tokens fit the folder's model (core's checkHfLength: a learned-position
// table, a sliding window).
void checkFolderLength(const std::string& option, const HfConfig& config, int length);
// The folder's positions under --scaling (or `method`, SCHEME's "rope+yarn") and --set: the config's own method
// keeps its settings, another starts from its defaults (core's hfPositionSpec); InputError naming the setting. `note`
// receives what is used ("using positions rope+yarn (factor 4) (zero-shot)").
// --scaling-layers sends the method to the layer types it names (core's hfScalingReaches), refused without a method
// and when it would reach no rotary layer (checkHfScalingReach); the note says where it goes in a mixed folder.
HfPositions folderPositionsFromArgs(const HfConfig& config, const ParsedArgs& args,
                                    const std::optional<std::string>& method, std::string* note);
// --scaling-layers full|sliding|all (folder verbs: eval, logits, attention, entropy, frequencies --model, render).
OptionDef scalingLayersOption();
// InputError for --scaling-layers where no model folder is read (`what` names the input): a lab checkpoint's layers
// are one type.
void refuseScalingLayers(const ParsedArgs& args, const std::string& what);
// attention --checkpoint DIR: layer --layer's output (heads, T, D) and --probs (heads, T, T) on the first --length
// tokens of the --corpus's validation split; entropy --checkpoint DIR: each head's entropy at --lengths tokens.
int runFolderAttention(const ParsedArgs& args, VerbContext& ctx);
int runFolderEntropy(const ParsedArgs& args, VerbContext& ctx);

// ---- eval DIR --task NAME: retrieval in a model folder's tokens (verbs_retrieval.cpp) ----
// The folder, its tokenizer, the haystack of --corpus and the options (--lengths, --depths, --examples, --seed,
// --score, --compare; core's retrievalDefaults for those not given), checked, with the estimate in seconds.
struct RetrievalSetup {
    std::unique_ptr<hf::Tokenizer> tokenizer;
    std::unique_ptr<RetrievalGenerator> generator; // reads *tokenizer; null with --examples-in
    std::vector<RetrievalPromptCell> prompts;      // --examples-in's
    std::unique_ptr<HfModel> model;
    RetrievalOptions options;
    std::vector<RetrievalMethod> methods;
    double seconds = 0;
    nlohmann::json meta;
};
// --depths D,D,...: each a number (parseNumber naming --depths); the range is the caller's check. The one parser of
// eval --task's, eval DIR --task's and sweep --task's depths.
std::vector<double> depthsOption(const ParsedArgs& args);
RetrievalSetup retrievalSetupFromArgs(const ParsedArgs& args);
// Runs it, the estimate and each cell with an ETA on `err` unless --quiet; RunError "retrieval cancelled" on Ctrl-C.
// The data writer and the picture exporter both call it.
RetrievalRun runRetrievalFromArgs(const ParsedArgs& args, RetrievalSetup& setup, std::ostream& err,
                                  const std::function<void(const RetrievalRecord&)>& exampleDone = {});
int runFolderRetrieval(const ParsedArgs& args, VerbContext& ctx);
// eval CHECKPOINT --task --examples-out: appends each scored example to `lines` as taskExampleRecordJson writes it,
// a wrong answer completed past its first wrong byte by greedy generation. The path is checked here, before any work.
std::function<void(const TaskExample&, const uint8_t*)> taskExampleWriter(const ParsedArgs& args, Model& model,
                                                                          std::string& lines);
// --score and --examples-out.
std::vector<OptionDef> retrievalOptions();

// Registration of the built-in verbs, one function per source file.
void registerSchemeVerbs();    // schemes, bias, dot, entropy, frequencies
void registerModelVerbs();     // train, eval
void registerAttentionVerbs(); // attention, bench
void registerLessonVerbs();    // lessons
void registerSweepVerbs();     // sweep, collect
void registerTokenizeVerbs();  // tokenize
void registerHfVerbs();        // inspect, logits (Hugging Face model folders)
void registerGenerateVerbs();  // generate (folders and checkpoints)
void registerExportVerbs();    // export (lab checkpoints as Hugging Face folders)
// render (every view, train, lesson) and the image exporter (app/cli/verbs_render.cpp, built with the GUI library
// only: it draws with ui's painters). Safe to call more than once.
void registerRenderVerbs();

// --folder of `lessons` and `render lesson`; the lessons --folder and --lang name (broken files in LessonSet::errors).
OptionDef lessonFolderOption();
LessonSet lessonsFromArgs(const ParsedArgs& args);

// Runs the attention kernel on unrotated q, k, v (B = 1, H, N, D) under `spec`; writes --probs (when given) and -o.
void writeAttentionOutputs(const ParsedArgs& args, const SchemeSpec& spec, const AttentionDims& dims, const float* q,
                           const float* k, const float* v);

// entropy --checkpoint: the model's real q and k (verbs_checkpoint.cpp); SCHEME must match the checkpoint's.
int runEntropyWithCheckpoint(const std::string& scheme, const ParsedArgs& args, VerbContext& ctx);
// --corpus FILE, or the default corpus (the Debian fortunes files).
Corpus corpusFromArgs(const ParsedArgs& args);
// The --corpus option: one text everywhere, after `when` ("train, lesson") and before `note` when given.
OptionDef corpusOption(const std::string& when = {}, const std::string& note = {});
// --checkpoint MODEL.safetensors (`help`: what the model supplies), --layer l and --corpus FILE: the options of entropy
// and attention that read a model's q and k on text.
std::vector<OptionDef> checkpointOptions(const std::string& help);
// --checkpoint of entropy/attention: the model, which must have been trained with SCHEME's scheme (InputError naming
// `verb`), under the method of SCHEME ("rope+yarn") or --scaling, and --set (applyScalingOptions, whose note lands in
// `note` when given).
LoadedCheckpoint checkpointOfScheme(const std::string& verb, const std::string& scheme, const ParsedArgs& args,
                                    std::string* note = nullptr);
// Zero-shot under a method (eval, entropy/attention --checkpoint, their pictures): the checkpoint's own method and the
// parameters it was trained with unless `method` (--scaling, or a SCHEME word's method) names another, which starts
// from its defaults (naming the checkpoint's own method keeps its parameters); --set then sets the method's
// parameters only (a scheme parameter, or one of no method, is refused naming the option). Returns the note the verbs
// print on stderr (printScalingNote): the method and parameters in use, and whether they are the checkpoint's;
// empty for a plain model under no method.
std::string applyScalingOptions(Model& model, const ParsedArgs& args, const std::optional<std::string>& method);
// Prints applyScalingOptions' note on `err`, unless it is empty or --quiet is given.
void printScalingNote(const std::string& note, const ParsedArgs& args, std::ostream& err);
// entropy's --lengths (default 16, 32, ..., 4096), each in [1, maxLength]: one default for data and pictures.
std::vector<int> entropyLengthsFromArgs(const ParsedArgs& args, int maxLength);
// attention --checkpoint: the model's q, k, v of one layer on text; writes OUT.npy (and --probs).
int runAttentionWithCheckpoint(const std::string& scheme, const ParsedArgs& args, VerbContext& ctx);

} // namespace plab::cli
