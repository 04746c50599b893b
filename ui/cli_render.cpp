// `positionlab-cli render VIEW ...` and the image exporter: arguments -> request -> core -> figure -> file.
#include "cli_render.h"

#include "charts/curve_chart.h"
#include "compute.h"
#include "export.h"
#include "heatmap_painter.h"
#include "kept_models.h"
#include "model_compute.h"
#include "views.h"

#include "bias_views.h"
#include "cli.h"
#include "errors.h"

#include <QApplication>

#include <cstdlib>
#include <mutex>

namespace plab::ui {

namespace {

using cli::OptionDef;
using cli::OptionKind;
using cli::ParsedArgs;

// Charts and fonts need a QApplication; the CLI creates one on first use, off screen unless told otherwise.
void ensureApplication()
{
    if (QCoreApplication::instance())
        return;
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    // Qt's warning about a missing XDG_RUNTIME_DIR (common in containers) is noise on a CLI's stderr.
    static const QtMessageHandler previous = qInstallMessageHandler(nullptr);
    qInstallMessageHandler([](QtMsgType type, const QMessageLogContext &context, const QString &message) {
        if (message.startsWith(QLatin1String("QStandardPaths: XDG_RUNTIME_DIR")))
            return;
        if (previous)
            previous(type, context, message);
    });
    static int argc = 1;
    static char name[] = "positionlab-cli";
    static char *argv[] = {name, nullptr};
    // Lives until exit: tearing a QApplication down during static destruction is not safe.
    new QApplication(argc, argv);
    setApplicationNames(); // the GUI's: the same data folder (kept models) and settings
}

ImageOptions imageOptions(const ParsedArgs &args, QSize defaults)
{
    ImageOptions o;
    o.size = QSize(static_cast<int>(args.integer("width", defaults.width(), 64, 16384)),
                   static_cast<int>(args.integer("height", defaults.height(), 64, 16384)));
    o.dpi = static_cast<int>(args.integer("dpi", 96, 30, 2400));
    o.dark = args.has("dark");
    return o;
}

QString colorMapArg(const ParsedArgs &args)
{
    const QString name = QString::fromStdString(args.text("colormap", "auto"));
    if (name != QLatin1String("auto") && !ColorMap::isKnown(name))
        throw InputError("--colormap " + name.toStdString() + " is not allowed; allowed: auto, viridis, magma, cividis, diverging");
    return name;
}

int headArg(const ParsedArgs &args, int heads)
{
    const std::string text = args.text("head", "0");
    // `bias --head all` writes every head as data; a picture shows the first.
    if (text == "all")
        return 0;
    return static_cast<int>(parseInteger(text, "head", 0, heads - 1));
}

PanelState panelFromArgs(const std::string &scheme, const ParsedArgs &args)
{
    PanelState p;
    p.spec = cli::schemeSpecFromArgs(scheme, args);
    p.length = static_cast<int>(args.integer("length", 16, 1, kMaxLength));
    p.head = headArg(args, p.spec.heads);
    p.colorMap = colorMapArg(args);
    return p;
}

[[noreturn]] void fail(const QString &error)
{
    throw InputError(error.toStdString());
}

void save(const std::string &path, const ImageOptions &options, const PaintFunction &paint, const QString &title)
{
    imageFormatForPath(QString::fromStdString(path)); // a clear message before any work
    writeImageFile(QString::fromStdString(path), options, paint, title);
}

void renderBias(const std::string &scheme, const ParsedArgs &args, const std::string &path)
{
    const PanelState panel = panelFromArgs(scheme, args);
    checkMemoryEstimate(8.0 * panel.length * panel.length, "a " + std::to_string(panel.length) + " x " +
                                                                std::to_string(panel.length) + " picture");
    BiasRequest request;
    request.spec = panel.spec;
    request.length = panel.length;
    request.head = panel.head;
    request.buckets = args.has("buckets");
    const BiasResult result = computeBias(request);
    if (!result.error.isEmpty())
        fail(result.error);
    const ImageOptions options = imageOptions(args, {1000, 820});
    HeatmapFigure figure = biasFigure(result, panel.colorMap);
    figure.dark = options.dark;
    HeatmapPainter heatmap;
    heatmap.setFigure(std::move(figure));
    save(path, options, [&](QPainter &p, const QRectF &r, const PictureStyle &s) { heatmap.paint(p, r, s); },
         heatmap.figure().title);
}

void renderCompare(const std::vector<std::string> &schemes, const ParsedArgs &args, const std::string &path)
{
    if (schemes.size() < 2 || schemes.size() > 4)
        throw InputError("render compare: needs 2 to 4 schemes, got " + std::to_string(schemes.size()));
    // --set applies to the first scheme (the GUI panel's scheme); the others use their defaults.
    const PanelState panel = panelFromArgs(schemes.front(), args);
    QStringList names;
    for (const std::string &s : schemes)
        names << QString::fromStdString(s);
    CompareRequest request;
    request.specs = CompareView::specsFor(names, panel);
    request.length = panel.length;
    request.head = panel.head;
    const bool difference = args.has("difference");
    if (difference) {
        request.differenceA = 0;
        request.differenceB = 1;
    }
    const CompareResult result = computeCompare(request);
    if (!result.error.isEmpty())
        fail(result.error);
    const int panels = static_cast<int>(schemes.size()) + (difference ? 1 : 0);
    const ImageOptions options = imageOptions(args, {420 * panels + 260, 640});
    HeatmapFigure figure = compareFigure(result, panel.colorMap, !args.has("separate-scales"));
    figure.dark = options.dark;
    HeatmapPainter heatmap;
    heatmap.setFigure(std::move(figure));
    save(path, options, [&](QPainter &p, const QRectF &r, const PictureStyle &s) { heatmap.paint(p, r, s); },
         heatmap.figure().title);
}

void renderDot(const ParsedArgs &args, const std::string &path)
{
    DotRequest request;
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
    const DotResult result = computeDot(request);
    if (!result.error.isEmpty())
        fail(result.error);
    const CurveFigure figure = dotFigure(result, args.has("log-x"));
    save(path, imageOptions(args, {1100, 700}),
         [&](QPainter &p, const QRectF &r, const PictureStyle &s) { renderCurveFigure(p, r, figure, s); }, figure.title);
}

void renderEntropy(const std::vector<std::string> &schemes, const ParsedArgs &args, const std::string &path)
{
    if (schemes.empty())
        throw InputError("render entropy: name at least one scheme");
    PanelState panel = panelFromArgs(schemes.front(), args);
    const int headDim = static_cast<int>(args.integer("head-dim", 64, 1, 4096));
    // The picture's specs follow the same rotary-dim rule as `entropy --head-dim` (dim = the head dim).
    panel.spec = cli::schemeSpecFromArgs(schemes.front(), args, 8, headDim, "--head-dim");
    QStringList names;
    for (const std::string &s : schemes)
        names << QString::fromStdString(s);
    const std::string qk = args.text("qk", "zero");
    if (qk != "zero" && qk != "random")
        throw InputError("--qk " + qk + " is not allowed; allowed: zero, random");
    EntropyRequest request = EntropyView::requestFor(names, panel, qk == "random" ? QkSource::Random : QkSource::Zero,
                                                     static_cast<uint64_t>(args.integer("seed", 0, 0, 1LL << 62)), 2048);
    request.lengths = args.integerList("lengths", {16, 32, 64, 128, 256, 512, 1024, 2048, 4096}, 1, kMaxLength);
    request.headDim = headDim;
    // Every scheme, not only the first, follows `entropy --head-dim`'s rule: rope/xpos rotate heads of --head-dim.
    for (size_t i = 1; i < request.specs.size(); ++i) {
        const SchemeInfo &info = schemeByName(schemes[i]);
        request.specs[i] = makeSchemeSpecForHeadDim(info.name, panel.spec.heads, panel.spec.bidirectional && info.bidirectionalAllowed,
                                                    {}, headDim, "--head-dim", panel.spec.context, panel.spec.logn);
    }
    const std::string measure = args.text("measure", "last");
    if (measure != "last" && measure != "mean")
        throw InputError("--measure " + measure + " is not allowed; allowed: last, mean");
    double flops = 0; // as `entropy` counts it, for every scheme drawn
    for (const SchemeSpec &spec : request.specs)
        flops += attentionWork(spec, request.lengths, qk == "random" ? headDim : 0);
    cli::checkWork(args, flops, "render entropy of " + std::to_string(request.specs.size()) + " schemes x " +
                                    std::to_string(panel.spec.heads) + " heads over --lengths " + args.text("lengths", "16,...,4096"),
                   "fewer schemes, fewer or shorter --lengths, fewer --heads");
    const EntropyResult result = computeEntropy(request);
    if (!result.error.isEmpty())
        fail(result.error);
    const CurveFigure figure =
        entropyFigure(result, panel.head, measure == "last" ? EntropyMeasure::LastRow : EntropyMeasure::MeanOverRows);
    save(path, imageOptions(args, {1100, 720}),
         [&](QPainter &p, const QRectF &r, const PictureStyle &s) { renderCurveFigure(p, r, figure, s); }, figure.title);
}

void renderAttention(const ParsedArgs &args, const std::string &path)
{
    if (!args.has("checkpoint"))
        throw InputError("render attention: --checkpoint MODEL.safetensors is required");
    AttentionRequest request;
    request.model = loadSharedModel(QString::fromStdString(args.text("checkpoint")));
    const std::string text = args.text("text", "To be, or not to be, that is the question.");
    request.tokens.assign(text.begin(), text.end());
    const int repeat = static_cast<int>(args.integer("repeat-to", 0, 0, 2048));
    if (repeat > 0 && !request.tokens.empty()) {
        std::vector<uint8_t> r(repeat);
        for (int i = 0; i < repeat; ++i)
            r[i] = request.tokens[i % request.tokens.size()];
        request.tokens = std::move(r);
    }
    const ModelConfig &config = request.model.model->config();
    request.layer = cli::layerFromArgs(args, config); // the last layer unless --layer, as `attention --checkpoint`
    const int head = static_cast<int>(args.integer("head", 0, 0, config.heads - 1));
    const AttentionResult result = computeAttention(request);
    if (!result.error.isEmpty())
        fail(result.error);
    const ImageOptions options = imageOptions(args, {1000, 1150});
    HeatmapFigure figure = attentionFigure(result, head, colorMapArg(args));
    figure.dark = options.dark;
    HeatmapPainter heatmap;
    heatmap.setFigure(std::move(figure));
    const CurveFigure entropy = rowEntropyFigure(result, head);
    save(path, options,
         [&](QPainter &p, const QRectF &r, const PictureStyle &s) {
             // As the GUI's view: the heatmap above, the row entropies below.
             const QRectF top(r.left(), r.top(), r.width(), r.height() * 0.7);
             const QRectF bottom(r.left(), top.bottom(), r.width(), r.height() - top.height());
             PictureStyle hs = PictureStyle::forSize(top.size(), s.dark);
             hs.vectorOutput = s.vectorOutput;
             heatmap.paint(p, top, hs);
             renderCurveFigure(p, bottom, entropy, s);
         },
         heatmap.figure().title);
}

void exportFromVerb(const std::string &verb, const ParsedArgs &args, const std::string &path)
{
    ensureApplication();
    if (verb == "bias")
        renderBias(args.positional.at(0), args, path);
    else if (verb == "dot")
        renderDot(args, path);
    else if (verb == "entropy")
        renderEntropy({args.positional.at(0)}, args, path);
    else
        throw InputError("-o " + path + ": the " + verb + " verb has no picture; use .csv, .json or .npy");
}

int runRender(const ParsedArgs &args, cli::VerbContext &)
{
    if (!args.has("o"))
        throw InputError("render: -o FILE.png|svg|pdf is required");
    const std::string path = args.text("o");
    imageFormatForPath(QString::fromStdString(path));
    const std::string view = args.positional.at(0);
    const std::vector<std::string> schemes(args.positional.begin() + 1, args.positional.end());
    ensureApplication();
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
    } else if (view == "attention") {
        if (!schemes.empty())
            throw InputError("render attention: takes no scheme (the checkpoint has one)");
        renderAttention(args, path);
    } else if (view == "train") {
        throw InputError("render train: training runs for minutes; use `positionlab-cli train` and `eval`, or the GUI");
    } else {
        throw InputError("render: unknown view '" + view + "'; views: bias, compare, dot, entropy, attention");
    }
    return 0;
}

} // namespace

void installCliRendering()
{
    static std::once_flag once;
    std::call_once(once, [] {
        cli::setImageExporter(exportFromVerb);
        std::vector<OptionDef> options = cli::schemeOptions();
        const std::vector<OptionDef> own = {
            {"length", OptionKind::Value, "bias/compare: sequence length N (default 16, as `bias`)"},
            {"head", OptionKind::Value, "head index 0..H-1 shown (default 0)"},
            {"buckets", OptionKind::Flag, "bias, t5: bucket indices instead of values"},
            {"colormap", OptionKind::Value, "auto (default), viridis, magma, cividis, diverging"},
            {"separate-scales", OptionKind::Flag, "compare: one colour scale per panel instead of a shared one"},
            {"difference", OptionKind::Flag, "compare: add the panel first scheme − second scheme (diverging scale)"},
            {"curves", OptionKind::Value, "dot: DIM:BASE[,DIM:BASE...] (default 128:10000,64:10000,128:500)"},
            {"dim", OptionKind::Value, "dot: one curve's dimension"},
            {"base", OptionKind::Value, "dot: one curve's base"},
            {"max-distance", OptionKind::Value, "dot: largest distance (default 256)"},
            {"log-x", OptionKind::Flag, "dot: logarithmic distance axis"},
            {"lengths", OptionKind::Value, "entropy: comma-separated lengths (default 16,32,...,4096)"},
            {"qk", OptionKind::Value, "entropy: zero (bias alone) or random"},
            {"seed", OptionKind::Value, "entropy: seed of --qk random (default 0)"},
            {"head-dim", OptionKind::Value, "entropy: head dimension of random q, k (default 64)"},
            {"measure", OptionKind::Value, "entropy: last (last query, default) or mean (over queries)"},
            cli::allowLongOption(),
            {"checkpoint", OptionKind::Value, "attention: the trained model (.safetensors)"},
            {"text", OptionKind::Value, "attention: the text whose bytes the model reads"},
            {"layer", OptionKind::Value, "attention: layer index 0..layers-1 (default the last)"},
            {"repeat-to", OptionKind::Value, "attention: repeat the text to N bytes (past the training context)"},
            {"width", OptionKind::Value, "picture width in pixels (default depends on the view)"},
            {"height", OptionKind::Value, "picture height in pixels"},
            {"dpi", OptionKind::Value, "resolution stored in PNG / used for SVG and PDF (default 96)"},
            {"dark", OptionKind::Flag, "dark background"},
            {"o", OptionKind::Value, "output picture: .png, .svg or .pdf (required)"},
        };
        options.insert(options.end(), own.begin(), own.end());
        cli::registerVerb({"render",
                           "positionlab-cli render VIEW [SCHEME ...] [view options] -o FILE.png|svg|pdf\n"
                           "  VIEW: bias SCHEME | compare SCHEME SCHEME [SCHEME [SCHEME]] [--difference] | dot |\n"
                           "        entropy SCHEME ... |\n"
                           "        attention --checkpoint M.safetensors [--text T]\n"
                           "  (--set applies to the first scheme, like the GUI panel's scheme)",
                           "any GUI view as a picture, headless (the same painters as the GUI)", options, 1, 13, runRender});
    });
}

} // namespace plab::ui
