// "Continue the text": the prompt's tokens, both continuations through core's generate, snapshots to the GUI thread.
#include "workers/generation.h"

#include "base/errors.h"
#include "hf/hf_config.h"
#include "model/model.h"
#include "runs/generation.h"
#include "runs/language_model.h"
#include "schemes/schemes.h"

#include <QElapsedTimer>
#include <QtConcurrent>

#include <algorithm>
#include <mutex>

namespace plab::ui {

namespace {

constexpr int kTailTokens = 48;       // the prompt's end shown before a continuation (a folder's tokens)
constexpr int kTailBytes = 240;       // the same for a lab model's bytes
constexpr qint64 kSnapshotEveryMs = 60; // at most about 16 updates a second: a fast model's tokens come in groups

// The prompt's ids: the folder's tokens, or a lab model's bytes; then the tab's repeat rule.
std::vector<int> promptIds(const GenerationModel& model, const QString& text, int repeatTo)
{
    std::vector<int> ids;
    if (model.folder) {
        ids = model.folder->tokenizer->encode(text.toStdString()).ids;
    } else {
        const QByteArray bytes = text.toUtf8();
        for (const char c : bytes)
            ids.push_back(static_cast<uint8_t>(c));
    }
    return repeatedTokens(std::move(ids), repeatTo);
}

// The ids' text. A model's vocabulary can be larger than its tokenizer's (padded for speed), so a sampled id may have no
// text: each run of ids the tokenizer knows is decoded whole, each id it does not shows as ⟨id⟩.
QString decodeIds(const GenerationModel& model, const std::vector<int>& ids)
{
    if (model.folder) {
        const hf::Tokenizer& tokenizer = *model.folder->tokenizer;
        try {
            return QString::fromStdString(tokenizer.decode(ids));
        } catch (const InputError&) {
        }
        QString text;
        std::vector<int> run;
        const auto flush = [&] {
            text += QString::fromStdString(tokenizer.decode(run));
            run.clear();
        };
        for (const int id : ids) {
            try {
                tokenizer.decode({id});
                run.push_back(id);
            } catch (const InputError&) {
                flush();
                text += QStringLiteral("⟨%1⟩").arg(id);
            }
        }
        flush();
        return text;
    }
    QByteArray bytes;
    for (const int id : ids)
        bytes.append(static_cast<char>(id));
    return QString::fromUtf8(bytes);
}

QString promptTail(const GenerationModel& model, const std::vector<int>& ids)
{
    const size_t keep = static_cast<size_t>(model.folder ? kTailTokens : kTailBytes);
    if (ids.size() <= keep)
        return decodeIds(model, ids);
    return QStringLiteral("…") + decodeIds(model, std::vector<int>(ids.end() - static_cast<long>(keep), ids.end()));
}

// The method's full settings for this run: core's defaults for a prompt + continuation of `length` tokens (a folder's
// own method: the config's), then the page's own (resolvedMethodSettings, the comparison's rule).
std::vector<std::string> methodSettings(const GenerationModel& model, const MethodChoice& choice, int length)
{
    if (model.folder) {
        const HfLanguageModel language(*model.folder->model);
        return resolvedMethodSettings(language, choice, {length});
    }
    ByteLanguageModel language(*model.lab.model);
    return resolvedMethodSettings(language, choice, {length});
}

// One side: core's generate with a token callback that grows the snapshot and stops once the run is canceled.
void runSide(const GenerationRequest& request, const std::vector<int>& prompt, GenerationSnapshot snapshot,
             QPromise<GenerationSnapshot>& promise)
{
    GenerateOptions options;
    options.maxNew = request.maxNew;
    options.temperature = request.temperature;
    options.topK = request.topK;
    options.seed = request.seed;
    QElapsedTimer sinceShown;
    sinceShown.start();
    const GeneratedToken onToken = [&](int id) {
        if (promise.isCanceled())
            return false;
        snapshot.ids.push_back(id);
        if (sinceShown.elapsed() >= kSnapshotEveryMs) {
            snapshot.text = decodeIds(request.model, snapshot.ids);
            promise.addResult(snapshot);
            sinceShown.restart();
        }
        return true;
    };
    runGuarded(snapshot, [&] {
        if (snapshot.side == 1) {
            options.scaling = request.method.method;
            options.settings =
                methodSettings(request.model, request.method, static_cast<int>(prompt.size()) + request.maxNew);
        }
        GenerateResult result;
        if (request.model.folder) {
            result = generate(*request.model.folder->model, prompt, options, onToken);
        } else {
            // Model::forward mutates its activations, and generate sets the method for the call: one user at a time.
            const std::lock_guard lock(*request.model.lab.mutex);
            result = generate(*request.model.lab.model, prompt, options, onToken);
        }
        snapshot.ids = result.ids;
        snapshot.prefillMs = result.prefillMs;
        snapshot.tokensPerSecond = result.decodeTokensPerSecond;
        snapshot.positions = QString::fromStdString(result.positions);
    });
    if (promise.isCanceled())
        return;
    runGuarded(snapshot, [&] { snapshot.text = decodeIds(request.model, snapshot.ids); });
    snapshot.done = true;
    promise.addResult(snapshot);
}

} // namespace

int GenerationModel::context() const
{
    if (folder)
        return folder->model->config().context;
    return lab.isValid() ? lab.model->config().context : 0;
}

const char* GenerationModel::unit() const
{
    return folder ? "token" : "byte";
}

bool GenerationModel::rotary() const
{
    if (folder)
        return folder->model->config().scheme == "rope";
    return lab.isValid() && schemeByName(lab.model->config().scheme).rotary;
}

PromptLength promptLength(const GenerationModel& model, const QString& text, int repeatTo)
{
    PromptLength length;
    length.context = model.context();
    runGuarded(length, [&] {
        if (!model.isValid())
            return;
        length.tokens = static_cast<int>(promptIds(model, text, repeatTo).size());
    });
    return length;
}

void runGeneration(const GenerationRequest& request, QPromise<GenerationSnapshot>& promise)
{
    GenerationSnapshot first;
    std::vector<int> prompt;
    runGuarded(first, [&] {
        if (!request.model.isValid())
            throw InputError(FigureText::tr("no model is open").toStdString());
        prompt = promptIds(request.model, request.prompt, request.repeatTo);
        first.promptTokens = static_cast<int>(prompt.size());
        first.promptTail = promptTail(request.model, prompt);
    });
    for (const int side : {0, 1}) {
        if (promise.isCanceled())
            return;
        GenerationSnapshot snapshot = first;
        snapshot.side = side;
        if (!first.error.isEmpty()) { // the prompt itself refused: both sides say so
            snapshot.done = true;
            promise.addResult(snapshot);
            continue;
        }
        promise.addResult(snapshot); // the side starts: its prompt shown, no token yet
        runSide(request, prompt, std::move(snapshot), promise);
    }
}

// ---- GenerationRun ------------------------------------------------------------------------------------------

GenerationRun::GenerationRun(QObject* parent) : QObject(parent), m_watcher(new QFutureWatcher<GenerationSnapshot>(this))
{
    connect(m_watcher, &QFutureWatcherBase::resultReadyAt, this,
            [this](int index) { Q_EMIT snapshot(m_watcher->future().resultAt(index)); });
    connect(m_watcher, &QFutureWatcherBase::finished, this, [this] {
        m_inFlight = false;
        Q_EMIT finished(m_watcher->future().isCanceled());
    });
}

GenerationRun::~GenerationRun()
{
    m_watcher->cancel();
    m_watcher->waitForFinished();
}

bool GenerationRun::start(const GenerationRequest& request)
{
    if (m_inFlight)
        return false;
    m_inFlight = true;
    m_watcher->setFuture(QtConcurrent::run(
        [request](QPromise<GenerationSnapshot>& promise) { runGeneration(request, promise); }));
    return true;
}

void GenerationRun::cancel()
{
    m_watcher->cancel();
}

} // namespace plab::ui
