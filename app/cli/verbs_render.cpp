// `positionlab-cli render VIEW ...`, `render lesson` and the image exporter of `bias/dot/entropy -o x.png`:
// arguments -> ui's request -> ui's headless picture writers (the GUI's figures and painters).
#include "cli.h"

#include "workers/compute.h"
#include "painting/export.h"
#include "workers/headless.h"
#include "settings/i18n.h"
#include "workers/kept_models.h"
#include "workers/model_compute.h"
#include "workers/retrieval_compute.h"

#include "base/atomic_file.h"
#include "model/checkpoint.h"
#include "model/corpus.h"
#include "model/positions_on_text.h"
#include "hf/tokenizer.h"
#include "base/errors.h"
#include "lessons/lessons.h"
#include "base/picture_limits.h"
#include "schemes/rotary_scaling.h"
#include "runs/training.h"

#include <QApplication>
#include <QDir>
#include <QFileInfo>

#include <algorithm>
#include <iostream>
#include <mutex>

namespace plab::cli {

namespace {

using ui::ImageOptions;
using ui::PanelState;

// Charts and fonts need a QApplication: made on first use, off screen unless QT_QPA_PLATFORM says otherwise, with the
// GUI's application names (the same data folder and settings). Safe to call more than once.
void ensureHeadlessApplication()
{
    if (QCoreApplication::instance())
        return;
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    // Qt's warning about a missing XDG_RUNTIME_DIR (common in containers) is noise on a CLI's stderr.
    static const QtMessageHandler previous = qInstallMessageHandler(nullptr);
    qInstallMessageHandler([](QtMsgType type, const QMessageLogContext& context, const QString& message) {
        if (message.startsWith(QLatin1String("QStandardPaths: XDG_RUNTIME_DIR")))
            return;
        if (previous)
            previous(type, context, message);
    });
    static int argc = 1;
    static char name[] = "positionlab-cli";
    static char* argv[] = {name, nullptr};
    // Lives until exit: tearing a QApplication down during static destruction is not safe.
    new QApplication(argc, argv);
    ui::setApplicationNames(); // the GUI's: the same data folder (kept models) and settings
}

// The headless application, and the language (--lang CODE, checked by the CLI's parser already; errors on stderr stay
// English) and numbering of titles: heads and layers from 0, as the CLI's --head and --layer options count them.
void preparePictures(const ParsedArgs& args)
{
    ensureHeadlessApplication();
    ui::setFigureIndexBase(ui::IndexBase::Zero);
    const QString code = QString::fromStdString(languageFromArgs(args));
    QString error;
    if (!ui::setLanguage(code, &error))
        throw RunError(error.toStdString());
}

ImageOptions imageOptions(const ParsedArgs& args, QSize defaults)
{
    ImageOptions o;
    o.size = QSize(static_cast<int>(args.integer("width", defaults.width(), kMinPictureSide, kMaxPictureSide)),
                   static_cast<int>(args.integer("height", defaults.height(), kMinPictureSide, kMaxPictureSide)));
    o.dpi = static_cast<int>(args.integer("dpi", 96, kMinPictureDpi, kMaxPictureDpi));
    o.dark = args.has("dark");
    return o;
}

QString colorMapArg(const ParsedArgs& args)
{
    const QString name = QString::fromStdString(args.text("colormap", "auto"));
    if (name != QLatin1String("auto") && !ui::ColorMap::isKnown(name))
        throw InputError("--colormap " + name.toStdString() +
                         " is not allowed; allowed: auto, viridis, magma, cividis, diverging");
    return name;
}

int headArg(const ParsedArgs& args, int heads)
{
    const std::string text = args.text("head", "0");
    // `bias --head all` writes every head as data; a picture shows the first.
    if (text == "all")
        return 0;
    return static_cast<int>(parseInteger(text, "head", 0, heads - 1));
}

// The panel of the first of `schemes`, the schemes a view draws (--context must be read by one of them).
PanelState panelFromArgs(const std::vector<std::string>& schemes, const std::string& view, const ParsedArgs& args)
{
    PanelState p;
    p.spec = schemeSpecFromArgs(schemes.front(), args);
    refuseUnreadContext("render " + view, schemes, args);
    p.length = static_cast<int>(args.integer("length", 16, 1, kMaxLength));
    p.head = headArg(args, p.spec.heads);
    p.colorMap = colorMapArg(args);
    return p;
}

QString qPath(const std::string& path)
{
    return QString::fromStdString(path);
}

// The names the compare and entropy views are given for `schemes`: the first as the panel's own label, so that
// compareSpecs takes for it the spec read from the command line (its word, --scaling, --set, --head-dim: "rope
// --scaling rerope" is the panel's rope+rerope, as the word rope+rerope is), the others as written.
QStringList viewSchemeNames(const std::vector<std::string>& schemes, const PanelState& panel)
{
    QStringList names{QString::fromStdString(schemeLabel(panel.spec))};
    for (size_t i = 1; i < schemes.size(); ++i)
        names << QString::fromStdString(schemes[i]);
    return names;
}

// `render bias fire --curve [--checkpoint M]`: the Bias view's FIRE curve page, the learned curve of the checkpoint's
// head --head at row --length - 1 beside the untrained one (that one alone without a checkpoint).
void renderFireCurve(const std::string& scheme, const ParsedArgs& args, const std::string& path)
{
    const PanelState panel = panelFromArgs({scheme}, "bias", args);
    if (panel.spec.kind != SchemeKind::Fire)
        throw InputError("render bias --curve: scheme " + scheme + " has no learned curve; allowed: fire");
    SchemeSpec spec = panel.spec;
    QString modelName;
    if (args.has("checkpoint")) {
        const ui::SharedModel model = ui::loadSharedModel(QString::fromStdString(args.text("checkpoint")));
        spec = model.model->schemeSpec();
        if (spec.kind != SchemeKind::Fire)
            throw InputError("render bias --curve --checkpoint " + args.text("checkpoint") + ": its scheme is " +
                             spec.name() + "; allowed: a fire model");
        if (panel.head >= spec.heads)
            throw InputError("--head " + std::to_string(panel.head) + " is out of range; allowed: integers in [0, " +
                             std::to_string(spec.heads - 1) + "] (the checkpoint's heads)");
        modelName = ui::checkpointModelName(model);
    }
    ui::writeFireCurvePicture(fireCurves(spec, panel.length - 1), panel.head, modelName,
                              imageOptions(args, ui::defaultPictureSize(QStringLiteral("fire-curve"))), qPath(path));
}

void renderBias(const std::string& scheme, const ParsedArgs& args, const std::string& path)
{
    if (args.has("curve")) {
        renderFireCurve(scheme, args, path);
        return;
    }
    if (args.has("checkpoint"))
        throw InputError("render bias: --checkpoint reads a model's FIRE curve; allowed only with --curve");
    const PanelState panel = panelFromArgs({scheme}, "bias", args);
    ui::BiasRequest request;
    request.spec = panel.spec;
    request.length = panel.length;
    request.head = panel.head;
    request.buckets = args.has("buckets");
    ui::writeBiasPicture(request, panel.colorMap, imageOptions(args, ui::defaultPictureSize(QStringLiteral("bias"))),
                         qPath(path));
}

void renderCompare(const std::vector<std::string>& schemes, const ParsedArgs& args, const std::string& path)
{
    if (schemes.size() < 2 || schemes.size() > 4)
        throw InputError("render compare: needs 2 to 4 schemes, got " + std::to_string(schemes.size()));
    // --scaling and --set apply to the first scheme (the GUI panel's scheme); the others use their defaults.
    const PanelState panel = panelFromArgs(schemes, "compare", args);
    ui::CompareRequest request;
    request.specs = ui::compareSpecs(viewSchemeNames(schemes, panel), panel);
    request.length = panel.length;
    request.head = panel.head;
    const bool difference = args.has("difference");
    if (difference) {
        request.differenceA = 0;
        request.differenceB = 1;
    }
    const int panels = static_cast<int>(schemes.size()) + (difference ? 1 : 0);
    ui::writeComparePicture(request, panel.colorMap, !args.has("separate-scales"),
                            imageOptions(args, ui::defaultPictureSize(QStringLiteral("compare"), panels)), qPath(path));
}

void renderDot(const ParsedArgs& args, const std::string& path)
{
    ui::DotRequest request;
    request.maxDistance = static_cast<int>(args.integer("max-distance", 256, 0, 10000000));
    if (args.has("curves")) {
        // --curves 128:10000,64:500
        request.curves.clear();
        const std::string s = args.text("curves");
        size_t start = 0;
        while (start <= s.size()) {
            const size_t comma = std::min(s.find(',', start), s.size());
            const std::string item = s.substr(start, comma - start);
            const size_t colon = item.find(':');
            if (colon == std::string::npos)
                throw InputError("--curves expects DIM:BASE[,DIM:BASE...], got '" + item + "'");
            request.curves.emplace_back(static_cast<int>(parseInteger(item.substr(0, colon), "dim", 2, 4096)),
                                        parseNumber(item.substr(colon + 1), "base"));
            start = comma + 1;
        }
    } else if (args.has("dim") || args.has("base")) {
        request.curves = {{static_cast<int>(args.integer("dim", 128, 2, 4096)), args.number("base", 10000)}};
    }
    ui::writeDotPicture(request, args.has("log-x"), imageOptions(args, ui::defaultPictureSize(QStringLiteral("dot"))),
                        qPath(path));
}

void renderFrequencies(const ParsedArgs& args, const std::string& path)
{
    const SchemeSpec spec = frequenciesSpecFromArgs(args);
    ui::writeFrequenciesPicture(spec, frequenciesLengthFromArgs(args, spec),
                                imageOptions(args, ui::defaultPictureSize(QStringLiteral("frequencies"))), qPath(path));
}

void renderEntropy(const std::vector<std::string>& schemes, const ParsedArgs& args, const std::string& path)
{
    if (schemes.empty())
        throw InputError("render entropy: name at least one scheme");
    const std::string qk = qkFromArgs("render entropy", args, schemes.front()); // --set applies to the first
    PanelState panel = panelFromArgs(schemes, "entropy", args);
    const int headDim = static_cast<int>(args.integer("head-dim", 64, 1, 4096));
    // Every scheme follows `entropy --head-dim`'s rule (rope/xpos rotate heads of --head-dim), the first with its
    // --scaling and --set as the data path reads them.
    panel.spec = schemeSpecFromArgs(schemes.front(), args, 8, headDim, "--head-dim");
    ui::EntropyRequest request;
    request.specs = ui::compareSpecs(viewSchemeNames(schemes, panel), panel, headDim, "--head-dim");
    request.qk = qk == "random" ? ui::QkSource::Random : ui::QkSource::Zero;
    request.seed = static_cast<uint64_t>(args.integer("seed", 0, 0, 1LL << 62));
    request.lengths = entropyLengthsFromArgs(args, kMaxLength);
    request.headDim = headDim;
    const std::string measure = args.text("measure", "last");
    if (measure != "last" && measure != "mean")
        throw InputError("--measure " + measure + " is not allowed; allowed: last, mean");
    double flops = 0; // as `entropy` counts it, for every scheme drawn
    for (const SchemeSpec& spec : request.specs)
        flops += attentionWork(spec, request.lengths, qk == "random" ? headDim : 0);
    checkWork(args, flops,
              "render entropy of " + std::to_string(request.specs.size()) + " schemes x " +
                  std::to_string(panel.spec.heads) + " heads over --lengths " + args.text("lengths", "16,...,4096"),
              "fewer schemes, fewer or shorter --lengths, fewer --heads");
    ui::writeEntropyPicture(request, panel.head,
                            measure == "last" ? ui::EntropyMeasure::LastRow : ui::EntropyMeasure::MeanOverRows,
                            imageOptions(args, ui::defaultPictureSize(QStringLiteral("entropy"))), qPath(path));
}

// `entropy SCHEME --checkpoint M -o x.png`: the model's q and k of --layer on the --corpus's validation text, as the
// verb's data output reads them (the first head, as every entropy picture).
void renderModelEntropy(const std::string& scheme, const ParsedArgs& args, const std::string& path)
{
    LoadedCheckpoint loaded = checkpointOfScheme("entropy", scheme, args); // under SCHEME's method or --scaling
    const int layer = layerFromArgs(args, loaded.model->config());
    const std::vector<int> lengths = entropyLengthsFromArgs(args, loaded.model->maxLength());
    const Corpus corpus = corpusFromArgs(args);
    const ui::SharedModel model =
        ui::makeSharedModel(QString::fromStdString(args.text("checkpoint")), std::move(loaded.model), corpus.validation,
                            std::move(loaded.info));
    ui::writeModelEntropyPicture(model, lengths, layer, 0, ui::EntropyMeasure::LastRow,
                                 imageOptions(args, ui::defaultPictureSize(QStringLiteral("entropy"))), qPath(path));
}

// render attention --checkpoint DIR: the "Your model" tab's attention page (decoded tokens on the axes) through the
// same headless writer as `render model`, under --scaling/--set; --text in the folder's tokens, --repeat-to N tokens.
void renderFolderAttention(const ParsedArgs& args, const std::string& path)
{
    const std::string dir = args.text("checkpoint");
    const HfConfig config = readHfConfig(dir);
    std::string note;
    const SchemeSpec positions = folderPositionsFromArgs(config, args, std::nullopt, &note).spec;
    const std::string text = args.text("text", "To be, or not to be, that is the question.");
    const int repeatTo = static_cast<int>(args.integer("repeat-to", 0, 0, ui::kHfMaxTokens));
    const int tokens = static_cast<int>(hf::Tokenizer::fromFolder(dir).encode(text).ids.size());
    checkFolderLength(repeatTo > tokens ? "repeat-to" : "text", config, std::max(tokens, repeatTo));
    const int layer = static_cast<int>(args.integer("layer", config.layers - 1, 0, config.layers - 1));
    const int head = static_cast<int>(args.integer("head", 0, 0, config.heads - 1));
    const bool methodGiven = args.has("scaling") || args.has("set");
    ui::writeHfModelPicture(QString::fromStdString(dir), QStringLiteral("attention"), QString::fromStdString(text),
                            layer, head, repeatTo, imageOptions(args, ui::defaultPictureSize(QStringLiteral("model"))),
                            qPath(path), methodGiven ? std::optional<SchemeSpec>(positions) : std::nullopt);
}

void renderAttention(const ParsedArgs& args, const std::string& path)
{
    if (!args.has("checkpoint"))
        throw InputError("render attention: --checkpoint MODEL.safetensors (or a model folder DIR) is required");
    if (isModelFolder(args.text("checkpoint"))) {
        renderFolderAttention(args, path);
        return;
    }
    ui::AttentionRequest request;
    request.model = ui::loadSharedModel(QString::fromStdString(args.text("checkpoint")));
    // Zero-shot under a length-extension method, as `attention --checkpoint` and eval read --scaling and --set.
    applyScalingOptions(*request.model.model, args,
                        args.has("scaling") ? std::optional(args.text("scaling")) : std::nullopt);
    request.model.name = ui::checkpointModelName(request.model); // the title names the method: rope+rerope
    const std::string text = args.text("text", "To be, or not to be, that is the question.");
    request.tokens.assign(text.begin(), text.end());
    const int repeat = static_cast<int>(args.integer("repeat-to", 0, 0, 2048));
    if (repeat > 0)
        request.tokens = repeatedText(request.tokens, repeat);
    const ModelConfig& config = request.model.model->config();
    request.layer = layerFromArgs(args, config); // the last layer unless --layer, as `attention --checkpoint`
    const int head = static_cast<int>(args.integer("head", 0, 0, config.heads - 1));
    TextView show = TextView::Weights;
    try {
        show = textViewByName(args.text("show", "weights"));
        checkTextView(show, request.model.model->schemeSpec().kind);
    } catch (const InputError& e) {
        throw InputError(std::string("render attention: --") + e.what());
    }
    ui::writeAttentionPicture(request, head, show, colorMapArg(args),
                              imageOptions(args, ui::defaultPictureSize(QStringLiteral("attention"))), qPath(path));
}

// render model: the "Your model" tab's page for the folder of --model (none: the picture says one is needed).
void renderHfModel(const ParsedArgs& args, const std::string& path)
{
    const std::string page = args.text("page", "attention");
    if (page != "attention" && page != "entropy" && page != "sinks")
        throw InputError("render model: --page " + page + " is not allowed; allowed: attention, entropy, sinks");
    ui::writeHfModelPicture(QString::fromStdString(args.text("model", "")), QString::fromStdString(page),
                            QString::fromStdString(args.text("text", "The quick brown fox jumps over the lazy dog.")),
                            static_cast<int>(args.integer("layer", -1, 0, 1023)),
                            static_cast<int>(args.integer("head", 0, 0, 1023)),
                            static_cast<int>(args.integer("repeat-to", 0, 0, ui::kHfMaxTokens)),
                            imageOptions(args, ui::defaultPictureSize(QStringLiteral("model"))), qPath(path));
}

// Trains `request` on a worker, printing each scheme's progress on stderr; returns every snapshot of the run.
std::vector<ui::TrainSnapshot> trainWithProgress(const ui::TrainRequest& request, std::ostream& err)
{
    return ui::runTrainingAndWait(request, [&](const ui::TrainSnapshot& s) {
        if (!s.error.isEmpty())
            return;
        const std::string& scheme = request.schemes.at(static_cast<size_t>(s.schemeIndex));
        if (s.trained) {
            err << "  " << scheme << ": trained and evaluated";
            for (const EvalPoint& p : s.eval)
                err << "  ppl@" << p.length << " "
                    << (p.supported ? QString::number(p.perplexity, 'f', 2).toStdString() : "-");
            err << '\n';
        } else if (s.step == request.train.steps || s.step % std::max(1, request.train.steps / 4) == 0) {
            err << "  " << scheme << ": step " << s.step << " of " << request.train.steps << ", loss "
                << QString::number(s.loss, 'f', 3).toStdString() << '\n';
        }
    });
}

// --set NAME=VALUE of `render train` goes to each of `schemes` ("rope+yarn") that has the parameter NAME or whose
// method has (ui's schemeModelConfig); one that none of them has would be ignored, so it is refused, naming what each
// takes.
void checkSettingsTaken(const std::vector<std::string>& schemes, const ParsedArgs& args)
{
    for (const std::string& setting : args.all("set")) {
        std::string takes;
        bool taken = false;
        for (const std::string& label : schemes) {
            const auto [scheme, method] = splitSchemeLabel(label);
            taken = taken || !settingsTakenBy(scheme, method, {setting}).empty();
            std::string names;
            for (const std::string& n : parametersUnderMethod(scheme, method))
                names += (names.empty() ? "" : ", ") + n;
            takes += (takes.empty() ? "" : "; ") + label + " takes " + (names.empty() ? "none" : names);
        }
        if (!taken)
            throw InputError("render train: --set " + setting +
                             " names a parameter of none of the schemes; allowed: "
                             "a parameter of a scheme or of its method: " +
                             takes);
    }
}

// The training request of `render train` and of a lesson's train and attention states: the preset's (model_compute's
// presetTrainRequest), with --steps, --corpus, --seed, --scaling and --set on top. --scaling trains every scheme under
// the method, as `train` reads it (a word may name its own, "rope+yarn"); --set sets a parameter in each scheme that
// has it or whose method has it (checkSettingsTaken).
ui::TrainRequest trainRequestFromArgs(const std::vector<std::string>& words, const ParsedArgs& args,
                                      const std::string& preset)
{
    std::vector<std::string> schemes;
    for (const std::string& w : words) {
        const SchemeWord word = schemeWordFromArgs(w, args);
        schemes.push_back(word.method ? word.scheme + "+" + *word.method : word.scheme);
    }
    checkSettingsTaken(schemes, args);
    ui::TrainRequest request = ui::presetTrainRequest(preset, schemes);
    request.model.schemeSettings = args.all("set");
    if (args.has("steps")) {
        setTrainingSteps(request.train, static_cast<int>(args.integer("steps", request.train.steps, 1, 1000000)));
        request.reportEvery = ui::reportInterval(request.train.steps);
        request.preset = QString::fromLatin1(ui::kCustomPreset);
    }
    if (args.has("seed")) { // the initialisation and the data order, as `train --seed`
        request.model.seed = static_cast<uint64_t>(args.integer("seed", 1, 0, 1LL << 62));
        request.train.dataSeed = request.model.seed;
    }
    if (args.has("corpus")) {
        loadCorpusFile(args.text("corpus")); // a missing or unsuitable file is bad input (exit 2), before any work
        request.corpusPath = QString::fromStdString(args.text("corpus"));
    }
    layerScheduleFromArgs(args, request.model); // --nope-every, Llama 4's temperature, --ssmax, --sink-logit
    for (size_t s = 0; s < request.schemes.size(); ++s)
        validateModelConfig(ui::schemeModelConfig(request, s)); // a clear message before minutes of work
    return request;
}

void renderTrain(const std::vector<std::string>& schemes, const ParsedArgs& args, const std::string& path,
                 std::ostream& err)
{
    if (args.has("recalibration") && !args.has("task"))
        throw InputError("render train: --recalibration " + args.text("recalibration") +
                         " runs the DroPE recipe on a task; allowed: with --task copy|reverse|addition|passkey");
    if (schemes.empty() && !args.has("recalibration"))
        throw InputError("render train: name at least one scheme, e.g. render train sinusoidal rope alibi local");
    const ui::TrainRequest request = trainRequestFromArgs(schemes, args, args.text("preset", ui::kDemoPreset));
    if (const std::optional<TaskSpec> task = taskFromArgs(args, request.model.context)) {
        // A task: exact-match accuracy against length (and depth), for the schemes or the DroPE recipe.
        const bool drope = args.has("recalibration");
        const double percent = drope ? parseNumber(args.text("recalibration"), "--recalibration") : 0;
        if (drope && !(percent >= 0.5 && percent <= 100))
            throw InputError("render train: --recalibration " + args.text("recalibration") +
                             " is out of range; allowed: a percent of the rope run's steps in [0.5, 100]");
        const ui::TaskRequest taskRequest = ui::taskRequestFor(request, *task, drope, percent / 100);
        err << "render train: " << (drope ? "the DroPE recipe" : std::to_string(schemes.size()) + " scheme(s)")
            << " on task " << taskInfo(task->kind).name << " (lengths 1.." << task->trainLength << "), preset "
            << args.text("preset", "demo") << ", " << request.train.steps << " steps each\n";
        const std::vector<TaskCurve> curves = ui::runTaskAndWait(taskRequest, [&](const ui::TaskSnapshot& s) {
            if (!s.stage.isEmpty())
                err << "render train: " << s.stage.toStdString() << "\n";
        });
        ui::writeTaskPicture(taskRequest, curves, imageOptions(args, ui::defaultPictureSize(QStringLiteral("train"))),
                             qPath(path));
        return;
    }
    err << "render train: training " << schemes.size() << " scheme(s), preset " << args.text("preset", "demo") << ", "
        << request.train.steps << " steps each\n";
    std::vector<std::vector<EvalPoint>> evals(schemes.size());
    for (const ui::TrainSnapshot& s : trainWithProgress(request, err))
        if (s.trained)
            evals.at(static_cast<size_t>(s.schemeIndex)) = s.eval;
    // The curves name the model's options, as the Train tab's run labels do ("rope nope_every=2").
    std::vector<std::string> labels = request.schemes;
    if (const std::string options = modelOptionsLabel(request.model); !options.empty())
        for (std::string& label : labels)
            label += " " + options;
    ui::writePerplexityPicture(labels, evals, request.model.context,
                               imageOptions(args, ui::defaultPictureSize(QStringLiteral("train"))), qPath(path));
}

void renderView(const std::string& view, const std::vector<std::string>& schemes, const ParsedArgs& args,
                const std::string& path, std::ostream& err);

// Where a lesson's attention state (or a bias state's FIRE curve) finds its model: the kept model of its preset and
// scheme (as the GUI keeps them), else one trained now and kept. With --steps or --corpus the run is not the lesson's
// model: it goes beside the output instead.
std::string lessonModelPath(const LessonState& state, const ParsedArgs& args, std::ostream& err)
{
    const std::string& scheme = state.schemes.front();
    const bool custom = args.has("steps") || args.has("corpus");
    const QString kept = ui::keptModelPath(state.preset, scheme);
    if (!custom && QFileInfo::exists(kept))
        return kept.toStdString();
    const ui::TrainRequest request = trainRequestFromArgs({scheme}, args, state.preset);
    err << "render lesson: no kept " << state.preset << " model of " << scheme << "; training one ("
        << request.train.steps << " steps)\n";
    for (const ui::TrainSnapshot& s : trainWithProgress(request, err))
        if (s.trained && s.model.isValid()) {
            if (!custom)
                return ui::keepModel(s.model).toStdString();
            const QString beside = QString::fromStdString(args.text("o")) +
                                   QStringLiteral("/model-%1.safetensors").arg(QString::fromStdString(scheme));
            ui::saveSharedModel(s.model, beside);
            return beside.toStdString();
        }
    throw RunError("render lesson: training the " + scheme + " model gave no model");
}

std::string shellQuoted(const std::string& word)
{
    if (!word.empty() &&
        word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.,:=/+") ==
            std::string::npos)
        return word;
    std::string q = "'";
    for (char c : word)
        q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

VerbDef& renderVerbDefinition()
{
    static VerbDef verb;
    return verb;
}

const VerbDef& renderVerbDef()
{
    return renderVerbDefinition();
}

// Lesson `number` of `set`; InputError with its file's error when that file is broken, else listing the lessons.
const Lesson& findLesson(const LessonSet& set, int number)
{
    for (const Lesson& l : set.lessons)
        if (l.number == number)
            return l;
    for (size_t i = 0; i < set.errors.size(); ++i) {
        const QString base = QFileInfo(QString::fromStdString(set.brokenFiles[i])).fileName();
        if (base.section(QLatin1Char('-'), 0, 0).toInt() == number)
            throw InputError(set.errors[i]);
    }
    std::string numbers;
    for (const Lesson& l : set.lessons)
        numbers += (numbers.empty() ? "" : ", ") + std::to_string(l.number);
    throw InputError("render lesson: there is no lesson " + std::to_string(number) +
                     "; lessons: " + (numbers.empty() ? std::string("none") : numbers));
}

// `render lesson K -o DIR`: every figure of lesson K as DIR/NN-slug-figI.png with its state (and the equivalent
// command) in DIR/NN-slug-figI.json.
void renderLesson(const std::vector<std::string>& words, const ParsedArgs& args, std::ostream& err)
{
    if (words.size() != 1)
        throw InputError("render lesson: expected one lesson number K (see `positionlab-cli lessons`), got " +
                         std::to_string(words.size()) + " words");
    const int number = static_cast<int>(parseInteger(words[0], "lesson number K", 0, 9999));
    const LessonSet set = lessonsFromArgs(args);
    const Lesson* lesson = &findLesson(set, number);
    const QString dir = QString::fromStdString(args.text("o"));
    if (QFileInfo(dir).exists() && !QFileInfo(dir).isDir())
        throw InputError("render lesson: -o " + dir.toStdString() + " is a file; allowed: a folder (made if missing)");
    if (!QDir().mkpath(dir))
        throw InputError("render lesson: cannot make the folder -o " + dir.toStdString());
    checkWritable((dir + QStringLiteral("/lesson.png")).toStdString()); // before any figure (or training) is made
    for (size_t i = 0; i < lesson->states.size(); ++i) {
        const LessonState& state = lesson->states[i];
        const std::string checkpoint =
            state.view == LessonView::Attention || state.curve ? lessonModelPath(state, args, err) : std::string();
        std::vector<std::string> words =
            lessonRenderArguments(state, state.view == LessonView::Model ? args.text("model", "") : checkpoint);
        const QString stem = QStringLiteral("%1-%2-fig%3")
                                 .arg(lesson->number, 2, 10, QLatin1Char('0'))
                                 .arg(QString::fromStdString(lesson->slug))
                                 .arg(i + 1);
        const std::string png = (dir + QLatin1Char('/') + stem + QStringLiteral(".png")).toStdString();
        // The options the lesson run was given carry over: language and picture size to every figure, the training
        // overrides to the figures that train (an attention figure's model is trained above with them already).
        std::vector<const char*> carried = {"lang", "width", "height", "dpi"};
        if (state.view == LessonView::Train)
            carried.insert(carried.end(), {"steps", "corpus"});
        for (const char* option : carried)
            if (args.has(option)) {
                words.push_back(std::string("--") + option);
                words.push_back(args.text(option));
            }
        if (args.has("dark"))
            words.push_back("--dark");
        std::string command = "positionlab-cli render";
        for (const std::string& w : words)
            command += " " + shellQuoted(w);
        command += " -o " + shellQuoted(stem.toStdString() + ".png");
        words.push_back("-o");
        words.push_back(png);
        const ParsedArgs stateArgs = parseArgs(renderVerbDef(), words);
        err << "render lesson " << number << ": figure " << i + 1 << " of " << lesson->states.size() << " ("
            << lessonViewName(state.view) << ")\n";
        renderView(stateArgs.positional.at(0),
                   std::vector<std::string>(stateArgs.positional.begin() + 1, stateArgs.positional.end()), stateArgs,
                   png, err);
        const nlohmann::json sidecar{{"lesson", lesson->number},     {"slug", lesson->slug}, {"title", lesson->title},
                                     {"language", lesson->language}, {"file", lesson->file}, {"figure", i + 1},
                                     {"line", state.line},           {"state", state.json},  {"command", command}};
        writeFileAtomically((dir + QLatin1Char('/') + stem + QStringLiteral(".json")).toStdString(),
                            sidecar.dump(2) + "\n");
    }
}

void exportFromVerb(const std::string& verb, const ParsedArgs& args, const std::string& path)
{
    preparePictures(args);
    if (verb == "bias")
        renderBias(schemeFromArgs(args, 0, "bias"), args, path);
    else if (verb == "dot")
        renderDot(args, path);
    else if (verb == "entropy" && args.has("checkpoint"))
        renderModelEntropy(schemeFromArgs(args, 0, "entropy"), args, path);
    else if (verb == "entropy")
        renderEntropy({schemeFromArgs(args, 0, "entropy")}, args, path);
    else if (verb == "frequencies")
        renderFrequencies(args, path);
    else if (verb == "eval" && (args.has("task") || args.has("examples-in"))) { // a model folder's retrieval heatmaps, one per method
        ui::imageFormatForPath(qPath(path));
        RetrievalSetup setup = retrievalSetupFromArgs(args);
        const RetrievalRun run = runRetrievalFromArgs(args, setup, std::cerr);
        ui::writeRetrievalPicture(run, setup.options,
                                  imageOptions(args, ui::retrievalPictureSize(run.methods.size())), qPath(path));
    } else if (verb == "eval") {
        ui::imageFormatForPath(qPath(path)); // before the evaluation
        const MethodComparisonRun run = runMethodComparison(args, std::cerr);
        ui::writeMethodsPicture(run.curves, run.scheme, run.context,
                                imageOptions(args, ui::defaultPictureSize(QStringLiteral("methods"))), qPath(path));
    } else if (verb == "collect") {
        const std::vector<SweepResult> results = collectSweepResults(args.positional);
        if (!results.empty() && !results.front().task.empty()) { // accuracy (and passkey's heatmaps), as the Train tab
            const SweepGrid grid = loadSweepGrid(args.positional.front()); // collect checked the folders agree
            ui::writeSweepTaskPicture(
                results, grid,
                imageOptions(args, ui::defaultPictureSize(QStringLiteral("collect"), ui::sweepPictureStrips(results))),
                qPath(path));
        } else
            ui::writeSweepPicture(summarizeSweep(results),
                                  imageOptions(args, ui::defaultPictureSize(QStringLiteral("collect"))), qPath(path));
    } else
        throw InputError("-o " + path + ": the " + verb + " verb has no picture; use .csv, .json or .npy");
}

void renderView(const std::string& view, const std::vector<std::string>& schemes, const ParsedArgs& args,
                const std::string& path, std::ostream& err)
{
    if (view == "bias") {
        if (schemes.size() != 1)
            throw InputError("render bias: expected one SCHEME, got " + std::to_string(schemes.size()));
        renderBias(schemes[0], args, path);
    } else if (view == "compare") {
        renderCompare(schemes, args, path);
    } else if (view == "dot") {
        if (!schemes.empty())
            throw InputError("render dot: takes no scheme (use --curves DIM:BASE,...)");
        renderDot(args, path);
    } else if (view == "entropy") {
        renderEntropy(schemes, args, path);
    } else if (view == "frequencies") {
        if (!schemes.empty())
            throw InputError("render frequencies: takes no scheme (rope's --dim, --base, --scaling, --set, --context)");
        renderFrequencies(args, path);
    } else if (view == "attention") {
        if (!schemes.empty())
            throw InputError("render attention: takes no scheme (the checkpoint has one)");
        renderAttention(args, path);
    } else if (view == "train") {
        renderTrain(schemes, args, path, err);
    } else if (view == "model") {
        if (!schemes.empty())
            throw InputError("render model: takes no scheme (the model folder of --model has its own)");
        renderHfModel(args, path);
    } else {
        throw InputError("render: unknown view '" + view +
                         "'; views: bias, compare, dot, frequencies, entropy, attention, train, model, lesson");
    }
}

// The scheme words of a view: the words after VIEW, or --scheme S for the first (both only when they agree).
std::vector<std::string> schemeWords(const ParsedArgs& args)
{
    std::vector<std::string> words(args.positional.begin() + 1, args.positional.end());
    if (args.has("scheme")) {
        const std::string first = schemeFromArgs(args, 1, "render " + args.positional.at(0));
        if (words.empty())
            words.push_back(first);
    }
    return words;
}

int runRender(const ParsedArgs& args, VerbContext& ctx)
{
    const std::string path = args.text("o");
    const std::string view = args.positional.at(0);
    const std::vector<std::string> words = schemeWords(args);
    if (view != "lesson") // before any work (a lesson's folder is made and checked by renderLesson)
        checkOutputPath("o", path, pictureExtensions());
    preparePictures(args);
    std::ostream silent(nullptr); // --quiet: training progress goes nowhere
    std::ostream& progress = args.has("quiet") ? silent : ctx.err;
    if (view == "lesson")
        renderLesson(words, args, progress);
    else
        renderView(view, words, args, path, progress);
    return 0;
}

// The options each view reads (its usage form); any other option given to `render VIEW` is refused, not ignored.
std::vector<UsageForm> renderForms()
{
    const std::vector<std::string> picture = {"width", "height", "dpi", "dark", "lang", "o"};
    const std::vector<std::string> scheme = schemeOptionNames(), none;
    // compare names two to four SCHEME words: --scheme (one scheme, instead of the word) has no place there
    std::vector<std::string> compared;
    for (const std::string& o : scheme)
        if (o != "scheme")
            compared.push_back(o);
    auto form = [&](const std::string& view, const std::string& words, std::vector<std::string> own,
                    const std::vector<std::string>& shared) {
        own.insert(own.end(), shared.begin(), shared.end());
        own.insert(own.end(), picture.begin(), picture.end());
        return UsageForm{view + (words.empty() ? "" : " " + words), own, view, {}};
    };
    return {
        form("bias", "SCHEME", {"length", "head", "buckets", "colormap", "curve", "checkpoint"}, scheme),
        form("compare", "SCHEME SCHEME [SCHEME [SCHEME]]",
             {"length", "head", "colormap", "separate-scales", "difference"}, compared),
        form("dot", "", {"curves", "dim", "base", "max-distance", "log-x"}, none),
        form("frequencies", "", {"dim", "base", "scaling", "set", "context", "length", "log-x"}, none),
        form("entropy", "SCHEME ...", {"head", "lengths", "qk", "seed", "head-dim", "measure", "allow-long"}, scheme),
        form("attention", "--checkpoint MODEL.safetensors",
             {"checkpoint", "text", "layer", "head", "repeat-to", "colormap", "scaling", "set", "show"}, none),
        form("train", "SCHEME ...",
             [] {
                 std::vector<std::string> own{"preset", "steps", "seed", "corpus", "scaling", "set",
                                              "task", "task-length", "recalibration"};
                 for (const std::string& name : layerScheduleOptionNames())
                     own.push_back(name);
                 return own;
             }(),
             none),
        form("model", "[--model DIR]", {"model", "page", "text", "layer", "head", "repeat-to"}, none),
        {"lesson K",
         {"folder", "steps", "corpus", "model", "width", "height", "dpi", "dark", "lang", "o"},
         "lesson",
         {}},
    };
}

std::vector<OptionDef> renderOptions()
{
    std::vector<OptionDef> options = schemeOptions();
    const std::vector<OptionDef> own = {
        {"length", OptionKind::Value, "bias/compare: sequence length N (default 16, as `bias`)", "N"},
        {"head", OptionKind::Value, "head index h = 0..H-1 shown (default 0)", "h"},
        {"buckets", OptionKind::Flag, "bias, t5: bucket indices instead of values"},
        {"curve", OptionKind::Flag,
         "bias, fire: the learned curve of --checkpoint (head --head, row --length - 1) beside the untrained one"},
        {"colormap", OptionKind::Value, "bias/compare/attention: auto (default), viridis, magma, cividis, diverging",
         "NAME"},
        {"separate-scales", OptionKind::Flag, "compare: one colour scale per panel instead of a shared one"},
        {"difference", OptionKind::Flag, "compare: add the panel first scheme − second scheme (diverging scale)"},
        {"curves", OptionKind::Value, "dot: curves (default 128:10000,64:10000,128:500)", "DIM:BASE,..."},
        {"dim", OptionKind::Value, "dot: one curve's dimension", "D"},
        {"base", OptionKind::Value, "dot: one curve's base", "B"},
        {"max-distance", OptionKind::Value, "dot: largest distance (default 256)", "R"},
        {"log-x", OptionKind::Flag, "dot: logarithmic distance axis"},
        {"lengths", OptionKind::Value, "entropy: comma-separated lengths (default 16,32,...,4096)", "N,N,..."},
        {"qk", OptionKind::Value, "entropy: zero (bias alone) or random", "zero|random"},
        {"seed", OptionKind::Value, "entropy: seed of --qk random (default 0); train: seed of the models (default 1)",
         "S"},
        {"head-dim", OptionKind::Value, "entropy: head dimension of random q, k (default 64)", "D"},
        {"measure", OptionKind::Value, "entropy: last (last query, default) or mean (over queries)", "last|mean"},
        allowLongOption(),
        {"checkpoint", OptionKind::Value,
         "attention: the trained model, or a Hugging Face model folder DIR (its decoded tokens on the axes); "
         "bias --curve: a fire model",
         "MODEL.safetensors"},
        {"text", OptionKind::Value, "attention: the text whose bytes (a model folder: tokens) the model reads", "TEXT"},
        {"layer", OptionKind::Value, "attention: layer index l = 0..layers-1 (default the last)", "l"},
        {"repeat-to", OptionKind::Value,
         "attention: repeat the text to N bytes (a model folder: tokens) past the training context; model: to N "
         "tokens",
         "N"},
        {"show", OptionKind::Value,
         "attention: weights (the attention probabilities, default), bias (the positional bias on the text) or "
         "positions (cope's contextual positions)",
         "weights|bias|positions"},
        {"model", OptionKind::Value,
         "model, lesson: a Hugging Face model folder (none: the picture says one is needed)", "DIR"},
        {"page", OptionKind::Value, "model: attention (--layer, --head), entropy or sinks (default attention)",
         "attention|entropy|sinks"},
        {"o", OptionKind::Value, "output picture: .png, .svg or .pdf (render lesson: a folder)", "FILE.png|svg|pdf",
         false, true},
        lessonFolderOption(),
        {"preset", OptionKind::Value, "train: training preset (default demo; see `train --help`)", "NAME"},
        {"steps", OptionKind::Value, "train, lesson: training steps instead of the preset's (a quick preview)", "N"},
        corpusOption("train, lesson"),
        {"quiet", OptionKind::Flag, "train, lesson: no training progress on stderr"},
        {"task", OptionKind::Value,
         "train: a task (copy, reverse, addition, passkey) scored by exact-match accuracy at L..4L instead of text",
         "NAME"},
        {"task-length", OptionKind::Value,
         "train --task: training lengths 1..L (default the longest the context holds)", "L"},
        {"recalibration", OptionKind::Value,
         "train --task: run the DroPE recipe (rope, rope+yarn, NoPE, DroPE) with this recalibration percent", "P"},
    };
    options.insert(options.end(), own.begin(), own.end());
    // train: the model options of `train`, with its help (one home, layerScheduleFromArgs reads them).
    for (const OptionDef& o : modelOptions())
        if (std::find(layerScheduleOptionNames().begin(), layerScheduleOptionNames().end(), o.name) !=
            layerScheduleOptionNames().end()) {
            OptionDef train = o;
            train.help = "train: " + train.help;
            options.push_back(train);
        }
    for (const std::vector<OptionDef>& picture : {pictureOptions(), pictureStyleOptions()})
        options.insert(options.end(), picture.begin(), picture.end());
    return options;
}

} // namespace

void registerRenderVerbs()
{
    static std::once_flag once;
    std::call_once(once, [] {
        setImageExporter(exportFromVerb);
        std::vector<UsageForm> forms = renderForms();
        for (UsageForm& f : forms) // training prints progress: --quiet silences it
            if (f.whenWord == "train" || f.whenWord == "lesson")
                f.options.push_back("quiet");
        renderVerbDefinition() = {
            "render",
            "VIEW",
            "any GUI view as a picture, headless (the same painters as the GUI)",
            renderOptions(),
            1,
            13,
            runRender,
            forms,
            {},
            "The SCHEME word of bias and entropy may also be given as --scheme S (entropy: the first scheme). "
            "In compare and entropy --scaling and --set apply to the first scheme, like the GUI panel's scheme (and to "
            "another named as it reads, e.g. rope+rerope beside rope --scaling rerope), the others use their "
            "defaults. In train --scaling applies to every scheme, --set NAME=VALUE to each scheme that has the "
            "parameter NAME or whose method has (refused when none has). `render lesson K -o DIR` writes every figure "
            "of lesson K (PNG + state JSON)."};
        registerVerb(renderVerbDefinition());
    });
}

} // namespace plab::cli
