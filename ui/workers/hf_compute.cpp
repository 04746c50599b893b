// Opening a Hugging Face folder, a real model's attention on a text and the "Your model" tab's figures.
#include "workers/hf_compute.h"

#include "base/errors.h"
#include "model/corpus.h"
#include "runs/language_model.h"
#include "schemes/position_bias.h"

#include <QFileInfo>
#include <QLocale>

#include <algorithm>
#include <cmath>
#include <exception>

namespace plab::ui {

namespace {

// A token as the axes show it: spaces, line breaks and tabs visible, nothing empty.
QString visibleToken(const std::string& text)
{
    QString s = QString::fromStdString(text);
    s.replace(QLatin1Char(' '), QStringLiteral("␣"));
    s.replace(QLatin1Char('\n'), QStringLiteral("↵"));
    s.replace(QLatin1Char('\t'), QStringLiteral("⇥"));
    return s.isEmpty() ? QStringLiteral("∅") : s;
}

QString bytesText(double bytes)
{
    if (bytes >= (1ull << 30))
        return QStringLiteral("%1 GiB").arg(bytes / (1ull << 30), 0, 'f', 2);
    return QStringLiteral("%1 MiB").arg(bytes / (1ull << 20), 0, 'f', 1);
}

// The figures name BF16 products, as they name a method applied zero-shot; float32, the default, goes unsaid.
QString precisionNote(const HfAttentionResult& attention)
{
    return attention.request.model && attention.request.model->model->precision() == HfPrecision::BFloat16
               ? FigureText::tr(" · BF16 products")
               : QString();
}

} // namespace

HfOpenResult openHfModel(const QString& folder, HfPrecision precision)
{
    HfOpenResult result;
    runGuarded(result, [&] {
        auto opened = std::make_shared<HfOpened>();
        opened->folder = folder;
        opened->model = std::make_unique<HfModel>(folder.toStdString(), precision);
        opened->tokenizer.emplace(hf::Tokenizer::fromFolder(folder.toStdString()));
        result.model = std::move(opened);
    });
    return result;
}

QString hfPrecisionLabel(HfPrecision precision)
{
    return precision == HfPrecision::BFloat16 ? FigureText::tr("BFloat16 products") : FigureText::tr("Float32");
}

QString hfPrecisionUnavailable(HfPrecision precision)
{
    try {
        checkHfPrecisionSupported(precision);
        return {};
    } catch (const std::exception& e) {
        return QString::fromStdString(e.what());
    }
}

namespace {

// "sliding", "full", "chunked" in the interface's language.
QString layerTypeLabel(HfLayerType type)
{
    switch (type) {
    case HfLayerType::Sliding:
        return FigureText::tr("sliding layers");
    case HfLayerType::Chunked:
        return FigureText::tr("chunked layers");
    case HfLayerType::Full:
        break;
    }
    return FigureText::tr("full layers");
}

// The card's layer pattern: one letter per layer (core's hfLayerStrip), the window, chunk and soft caps.
QString layerTypesText(const HfConfig& c)
{
    QStringList parts;
    if (c.slidingWindow > 0)
        parts << FigureText::tr("S sliding, window %1").arg(c.slidingWindow);
    if (c.chunkSize > 0)
        parts << FigureText::tr("C chunked, chunk %1").arg(c.chunkSize);
    parts << FigureText::tr("F full");
    QString text = QStringLiteral("%1 (%2)").arg(QString::fromStdString(hfLayerStrip(c)), parts.join(QStringLiteral("; ")));
    if (c.attnSoftcap > 0)
        text += FigureText::tr("; attention soft cap %1").arg(c.attnSoftcap);
    if (c.finalSoftcap > 0)
        text += FigureText::tr("; final soft cap %1").arg(c.finalSoftcap);
    return text;
}

} // namespace

std::vector<std::pair<QString, QString>> hfSummaryRows(const HfModel& model)
{
    const HfConfig& c = model.config();
    const SchemeSpec positions = hfPositionSpec(c);
    std::vector<std::pair<QString, QString>> rows;
    rows.emplace_back(FigureText::tr("Family"), QString::fromStdString(c.modelType));
    rows.emplace_back(FigureText::tr("Layers"), QString::number(c.layers));
    rows.emplace_back(FigureText::tr("Heads"), FigureText::tr("%1 query, %2 key/value").arg(c.heads).arg(c.kvHeads));
    rows.emplace_back(FigureText::tr("Head dim"), QString::number(c.headDim));
    rows.emplace_back(FigureText::tr("Context"), FigureText::tr("%1 tokens").arg(c.context));
    rows.emplace_back(FigureText::tr("Positions"), QString::fromStdString(hfPositionText(positions)));
    if (c.hasSliding() || c.chunkSize > 0 || c.attnSoftcap > 0 || c.finalSoftcap > 0)
        rows.emplace_back(FigureText::tr("Layer types"), layerTypesText(c));
    if (c.hasSliding() && c.slidingRopeTheta > 0)
        rows.emplace_back(FigureText::tr("Sliding rope"),
                          FigureText::tr("%1, theta %2 (the sliding layers' own table)")
                              .arg(QString::fromStdString(hfPositionText(hfSlidingPositionSpec(c))))
                              .arg(QLocale().toString(c.slidingRopeTheta, 'g', 10)));
    rows.emplace_back(FigureText::tr("Rope theta"),
                      c.scheme == "rope" ? QLocale().toString(c.ropeTheta, 'g', 10) : FigureText::tr("none"));
    rows.emplace_back(FigureText::tr("Scaling"), c.scheme != "rope"      ? FigureText::tr("none")
                                                 : c.scalingText.empty() ? QString::fromStdString(c.scaling)
                                                                         : QString::fromStdString(c.scalingText));
    rows.emplace_back(FigureText::tr("Parameters"),
                      FigureText::tr("%1 M").arg(QLocale().toString(c.parameterCount() / 1e6, 'f', 2)));
    rows.emplace_back(FigureText::tr("Precision"), hfPrecisionLabel(model.precision()));
    rows.emplace_back(
        FigureText::tr("Memory"),
        FigureText::tr("%1 (%2 weights; %3 with one forward)")
            .arg(bytesText(model.weightBytes()))
            .arg(model.precision() == HfPrecision::BFloat16 ? QStringLiteral("BF16") : QStringLiteral("float32"))
            .arg(bytesText(hfModelMemoryBytes(c, model.precision()))));
    return rows;
}

std::vector<int> repeatedTokens(std::vector<int> ids, int repeatTo)
{
    if (ids.empty())
        throw InputError(
            FigureText::tr("the text gives no tokens; allowed: a text of at least one token").toStdString());
    for (size_t i = 0; static_cast<int>(ids.size()) < repeatTo; ++i)
        ids.push_back(ids[i]);
    return ids;
}

HfAttentionResult computeHfAttention(const HfAttentionRequest& request, const JobControl& control)
{
    HfAttentionResult result;
    result.request = request;
    runGuarded(result, [&] {
        if (!request.model)
            throw InputError(FigureText::tr("no model folder is open").toStdString());
        const HfOpened& m = *request.model;
        const hf::Encoding encoding = m.tokenizer->encode(request.text.toStdString());
        std::vector<int> ids = repeatedTokens(encoding.ids, request.repeatTo);
        if (static_cast<int>(ids.size()) > kHfMaxTokens)
            throw InputError(FigureText::tr("the text has %1 tokens; allowed: at most %2 in this view")
                                 .arg(ids.size())
                                 .arg(kHfMaxTokens)
                                 .toStdString());
        const HfConfig& c = m.model->config();
        if (request.positions)
            checkHfScalingReach(c, request.scalingLayers);
        auto capture = std::make_shared<HfAttentionCapture>(captureHfAttention(
            *m.model, ids, HfPositions(request.positions.value_or(hfPositionSpec(c)), request.scalingLayers), true,
            [&control](int done, int layers) {
                control.report(done, layers);
                return !control.isCanceled();
            }));
        if (capture->layers == 0)
            return; // canceled
        for (int id : ids)
            result.tokens.push_back(visibleToken(m.tokenizer->decode({id})));
        auto sinks = std::make_shared<Matrix>();
        sinks->rows = capture->layers;
        sinks->cols = capture->heads;
        for (double v : capture->sinkMass)
            sinks->values.push_back(static_cast<float>(v));
        result.sinks = sinks;
        constexpr int thumbnailCells = 48;
        for (int l = 0; l < capture->layers; ++l)
            for (int h = 0; h < capture->heads; ++h) {
                HfAttentionMap map = hfAttentionMap(*capture, l, h, thumbnailCells, 0, 0, 0, 0, true);
                auto thumb = std::make_shared<Matrix>();
                thumb->rows = map.rows;
                thumb->cols = map.cols;
                thumb->values = std::move(map.values);
                result.thumbnails.push_back(thumb);
            }
        result.ids = std::move(ids);
        result.capture = capture;
    });
    return result;
}

HfMapResult computeHfMap(const HfMapRequest& request, const JobControl&)
{
    HfMapResult result;
    result.request = request;
    runGuarded(result, [&] {
        if (!request.capture)
            throw InputError(FigureText::tr("no attention has been computed yet").toStdString());
        result.map = std::make_shared<const HfAttentionMap>(
            hfAttentionMap(*request.capture, request.layer, request.head, request.maxCells, request.rowBegin,
                           request.rowEnd, request.colBegin, request.colEnd, false, request.reduce));
    });
    return result;
}

MatrixPtr hfMapMatrix(const HfAttentionMap& map)
{
    auto matrix = std::make_shared<Matrix>();
    matrix->rows = map.rows;
    matrix->cols = map.cols;
    matrix->values = map.values;
    return matrix;
}

MethodComparisonDefaults hfMethodsDefaults(const HfConfig& config)
{
    return methodComparisonDefaults(
        config.context, config.scaling, kMaxLength, [&config](int length) { return config.prefillFlops(length); },
        kHfEvalFlopsPerSecond);
}

double hfMethodsSecondsEstimate(const HfConfig& config, const HfMethodsRequest& request, size_t curves)
{
    if (request.maxTokens == 0)
        return 0;
    const std::vector<int> lengths = request.lengths.empty() ? hfMethodsDefaults(config).lengths : request.lengths;
    return methodComparisonSeconds([&config](int length) { return config.prefillFlops(length); }, curves, lengths,
                                   request.maxTokens, kHfEvalFlopsPerSecond);
}

namespace {

// The evaluation's text: the file's train and validation splits, or the default corpus; `source` names it.
std::string methodsText(const HfMethodsRequest& request, QString& source)
{
    if (request.textPath.isEmpty()) {
        source = FigureText::tr("the default corpus");
        return defaultCorpusText();
    }
    const Corpus corpus = loadCorpusFile(request.textPath.toStdString());
    std::string text(corpus.train.begin(), corpus.train.end());
    text.append(corpus.validation.begin(), corpus.validation.end());
    source = request.textPath;
    return text;
}

// Only as much of a long text as the evaluation reads is tokenized (a 3 MB corpus takes seconds): 16 bytes per token
// needed, and the whole text when that prefix gives too few tokens.
std::vector<int32_t> methodsTokens(const HfOpened& m, const std::string& text, size_t maxTokens, int longest)
{
    std::vector<int> ids;
    const size_t needed = maxTokens > 0 ? maxTokens + longest + 1 : 0;
    if (needed > 0 && text.size() > 16 * needed) {
        size_t cut = 16 * needed;
        while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80)
            --cut; // a UTF-8 boundary
        ids = m.tokenizer->encode(std::string_view(text).substr(0, cut)).ids;
    }
    if (ids.size() < needed || needed == 0)
        ids = m.tokenizer->encode(text).ids;
    return std::vector<int32_t>(ids.begin(), ids.end());
}

// The config's own method keeps its settings (HfLanguageModel::methodSettings); the lab's version of the same method
// needs its comparison defaults given explicitly, in a second pass (one name per pass).
std::pair<std::vector<MethodChoice>, std::vector<MethodChoice>> methodPasses(const HfMethodsRequest& request,
                                                                             const HfConfig& c, int longest)
{
    std::vector<MethodChoice> first, second;
    if (request.own)
        first.push_back({c.scaling, {}});
    for (const std::string& name : request.methods) {
        if (request.own && name == c.scaling) {
            if (name != "none")
                second.push_back({name, methodDefaultSettings(rotaryMethodByName(name), c.context, longest)});
            continue;
        }
        first.push_back({name, {}});
    }
    if (first.empty() && second.empty())
        throw InputError(FigureText::tr("no method is ticked; allowed: at least one").toStdString());
    return {std::move(first), std::move(second)};
}

} // namespace

HfMethodsResult computeHfMethods(const HfMethodsRequest& request, const JobControl& control)
{
    HfMethodsResult result;
    result.request = request;
    runGuardedCancelable(result, [&control] { return control.isCanceled(); }, [&] {
        if (!request.model)
            throw InputError(FigureText::tr("no model folder is open").toStdString());
        const HfOpened& m = *request.model;
        const HfConfig& c = m.model->config();
        if (result.request.lengths.empty())
            result.request.lengths = hfMethodsDefaults(c).lengths;
        const std::string text = methodsText(request, result.textSource);
        result.context = c.context;
        const int longest = *std::max_element(result.request.lengths.begin(), result.request.lengths.end());
        const std::vector<int32_t> tokens = methodsTokens(m, text, request.maxTokens, longest);
        result.textTokens = tokens.size();
        auto [first, second] = methodPasses(request, c, longest);
        HfLanguageModel model(*m.model);
        model.setScalingLayers(request.scalingLayers);
        // A method core refuses for this model (e.g. one not implemented for real models yet) is left out with core's
        // message; the others are evaluated.
        for (std::vector<MethodChoice>* list : {&first, &second})
            std::erase_if(*list, [&](const MethodChoice& choice) {
                try {
                    model.positionsUnder(choice.method, resolvedMethodSettings(model, choice, result.request.lengths));
                    return false;
                } catch (const InputError& e) {
                    result.leftOut << QString::fromStdString(e.what());
                    return true;
                }
            });
        if (first.empty() && second.empty())
            throw InputError(result.leftOut.join(QLatin1Char('\n')).toStdString());
        // One method at a time: each curve is shown as soon as it is done.
        const double count = static_cast<double>(first.size() + second.size());
        int done = 0;
        for (std::vector<MethodChoice>* list : {&first, &second})
            for (const MethodChoice& choice : *list) {
                EvalOptions options;
                options.lengths = result.request.lengths;
                options.maxTokens = request.maxTokens;
                options.textName = result.textSource.toStdString();
                options.progress = [&](double fraction) {
                    control.report(static_cast<int>((done + fraction) / count * 1000), 1000);
                    return !control.isCanceled();
                };
                MethodCurve curve = std::move(evaluateUnderMethods(model, tokens, options, {choice}).front());
                if (request.own && list == &first && choice.method == c.scaling)
                    curve.label =
                        FigureText::tr("%1 (config's own)").arg(QString::fromStdString(curve.label)).toStdString();
                ++done;
                if (request.curveDone)
                    request.curveDone(curve);
                result.curves.push_back(std::move(curve));
            }
    });
    return result;
}

HeatmapFigure hfAttentionFigure(const HfAttentionResult& attention, const HfAttentionMap& g, int layer, int head,
                                bool sinkInScale, bool tokenLabels)
{
    HeatmapFigure figure;
    const QString name = attention.request.model ? QFileInfo(attention.request.model->folder).fileName() : QString();
    const int T = attention.capture ? attention.capture->length : 0;
    figure.title = FigureText::tr("Attention of %1 on your text").arg(name);
    if (g.perToken() && tokenLabels && static_cast<int>(attention.tokens.size()) >= g.colEnd) {
        figure.xLabel = FigureText::tr("key token");
        figure.yLabel = FigureText::tr("query token");
        for (int n = g.colBegin; n < g.colEnd; ++n)
            figure.tickLabels.push_back(attention.tokens[n]);
        for (int m = g.rowBegin; m < g.rowEnd; ++m)
            figure.rowTickLabels.push_back(attention.tokens[m]);
    } else {
        figure.xLabel = g.perToken() ? FigureText::tr("key position n")
                                     : FigureText::tr("key position n (blocks of about %1 tokens, max)")
                                           .arg((g.colEnd - g.colBegin + g.cols - 1) / g.cols);
        figure.yLabel = FigureText::tr("query position m");
        figure.columnIndexOrigin = g.colBegin;
        figure.rowIndexOrigin = g.rowBegin;
        figure.indexStep = static_cast<double>(g.colEnd - g.colBegin) / g.cols;
        figure.indexCount = T;
    }
    // One scale at every zoom: 0 to the head's peak (a max map's blocks hold probabilities that occur); the first
    // token's sink column, left out, saturates instead of washing every other cell out.
    figure.fixedLo = 0;
    figure.fixedHi = sinkInScale ? g.peak : g.peakPastFirstKey;
    HeatmapPanel panel;
    panel.title =
        layerText(layer) + QStringLiteral(" · ") + headOfText(head, attention.capture ? attention.capture->heads : 0);
    panel.subtitle = g.rowBegin == g.colBegin && g.rowEnd == g.colEnd
                         ? FigureText::tr("tokens %1–%2 of %3").arg(g.rowBegin).arg(g.rowEnd - 1).arg(T)
                         : FigureText::tr("queries %1–%2, keys %3–%4 of %5")
                               .arg(g.rowBegin)
                               .arg(g.rowEnd - 1)
                               .arg(g.colBegin)
                               .arg(g.colEnd - 1)
                               .arg(T);
    if (attention.request.positions) // a method applied zero-shot: name it, as the CLI's note does
        panel.subtitle += QStringLiteral(" · ") + QString::fromStdString(hfPositionText(*attention.request.positions));
    panel.subtitle += precisionNote(attention);
    if (!sinkInScale)
        panel.subtitle += FigureText::tr(" · first token left out of the colour scale");
    panel.valueLabel =
        g.perToken() ? FigureText::tr("attention probability") : FigureText::tr("attention probability (block max)");
    figure.panels.push_back(panel);
    return figure;
}

HeatmapFigure hfAttentionFigure(const HfAttentionResult& attention, const HfMapResult& map, bool sinkInScale)
{
    if (!map.map)
        return {};
    HeatmapFigure figure = hfAttentionFigure(attention, *map.map, map.request.layer, map.request.head, sinkInScale);
    figure.panels.front().matrix = hfMapMatrix(*map.map);
    return figure;
}

HeatmapFigure hfSinkFigure(const HfAttentionResult& attention)
{
    HeatmapFigure figure;
    figure.title = FigureText::tr("Attention on the first token (sinks)");
    figure.xLabel = FigureText::tr("head");
    figure.yLabel = FigureText::tr("layer");
    const int first = figureIndexBase() == IndexBase::One ? 1 : 0;
    if (attention.sinks)
        for (int i = 0; i < std::max(attention.sinks->rows, attention.sinks->cols); ++i)
            figure.tickLabels.push_back(QString::number(i + first));
    HeatmapPanel panel;
    panel.title =
        FigureText::tr("mean over %1 queries of p(m, 0)").arg(attention.capture ? attention.capture->length : 0) +
        precisionNote(attention);
    panel.valueLabel = FigureText::tr("attention mass on token 0");
    panel.matrix = attention.sinks;
    figure.panels.push_back(panel);
    return figure;
}

CurveFigure hfEntropyFigure(const HfAttentionResult& attention, bool byLayerType)
{
    CurveFigure figure;
    figure.title = FigureText::tr("Attention entropy against length on your text") + precisionNote(attention);
    figure.xLabel = FigureText::tr("tokens the query sees (m + 1)");
    figure.yLabel = FigureText::tr("entropy (nats), mean over heads");
    figure.yFloor = 0.0; // an entropy is never negative
    figure.logX = true;
    figure.logBase = 2;
    if (!attention.capture)
        return figure;
    const HfAttentionCapture& c = *attention.capture;
    if (byLayerType && attention.request.model) { // one curve per layer type, the mean over its layers (core's)
        for (const HfEntropyByType& g : hfEntropyByLayerType(c, attention.request.model->model->config())) {
            Curve curve;
            curve.name = FigureText::tr("%1 (%n layers)", nullptr, g.layers).arg(layerTypeLabel(g.type));
            for (int m = 0; m < c.length; ++m) {
                curve.x.push_back(m + 1);
                curve.y.push_back(g.entropy[static_cast<size_t>(m)]);
            }
            figure.curves.push_back(std::move(curve));
        }
    }
    const bool grouped = !figure.curves.empty();
    const std::vector<double> entropy = hfEntropyByPosition(c);
    for (int l = 0; l < c.layers && !grouped; ++l) {
        Curve curve;
        curve.name = layerText(l);
        for (int m = 0; m < c.length; ++m) {
            curve.x.push_back(m + 1);
            curve.y.push_back(entropy[static_cast<size_t>(l) * c.length + m]);
        }
        figure.curves.push_back(std::move(curve));
    }
    Curve uniform;
    uniform.name = FigureText::tr("log n (uniform attention)");
    uniform.reference = true;
    for (int m = 0; m < c.length; ++m) {
        uniform.x.push_back(m + 1);
        uniform.y.push_back(std::log(m + 1.0));
    }
    figure.curves.push_back(std::move(uniform));
    return figure;
}

} // namespace plab::ui
