// Scripted screenshots: set the panel and each view's controls as a user would, wait for the workers, grab.
#include "window/screenshots.h"

#include "charts/curve_chart.h"
#include "window/lessons_panel.h"
#include "window/main_window.h"
#include "tabs/continue_text_page.h"
#include "tabs/hf_model_view.h"
#include "tabs/retrieval_page.h"
#include "tabs/methods_panel.h"
#include "tabs/scheme_panel.h"
#include "tabs/attention_view.h"
#include "tabs/bias_view.h"
#include "tabs/compare_view.h"
#include "tabs/dot_view.h"
#include "tabs/entropy_view.h"
#include "tabs/heatmap_widget.h"
#include "tabs/train_view.h"
#include "tabs/view_base.h"
#include "settings/i18n.h"
#include "painting/export.h"

#include "runs/training.h"

#include <QCheckBox>
#include <QComboBox>
#include <QCoreApplication>
#include <QDockWidget>
#include <QDoubleSpinBox>
#include <QDir>
#include <QElapsedTimer>
#include <QMouseEvent>
#include <QPushButton>
#include <QSpinBox>
#include <QTabWidget>
#include <QThread>

#include <functional>

namespace plab::ui {

namespace {

bool waitUntil(const std::function<bool()>& done, int timeoutMs)
{
    QElapsedTimer timer;
    timer.start();
    while (!done()) {
        if (timer.elapsed() > timeoutMs)
            return false;
        QCoreApplication::processEvents(QEventLoop::AllEvents, 50);
        QThread::msleep(5);
    }
    // Let the last paint happen.
    for (int i = 0; i < 5; ++i)
        QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
    return true;
}

// Moves the mouse onto a data point, so the picture shows the hover marker and the status bar's read-out.
void hoverPoint(CurvePlot* plot, int curve, int index)
{
    const QPointF p = plot->pointPosition(curve, index);
    QWidget* target = plot->childAt(p.toPoint());
    if (p.isNull() || !target)
        return;
    const QPointF local = target->mapFrom(plot, p);
    QMouseEvent move(QEvent::MouseMove, local, target->mapToGlobal(local), Qt::NoButton, Qt::NoButton, Qt::NoModifier);
    QCoreApplication::sendEvent(target, &move);
}

// What every screenshot mode does around its steps: the directory, the first failure's message, waiting for a view's
// picture and writing the window (or a widget) as DIR/<prefix><file>.png, optionally scaled to a width.
class Shots {
public:
    Shots(MainWindow& window, const QString& dir, QString* error, QString prefix = {}, int width = 0)
        : m_window(window), m_dir(dir), m_error(error), m_prefix(std::move(prefix)), m_width(width)
    {
        QDir().mkpath(dir);
    }

    bool fail(const QString& message) const
    {
        if (m_error)
            *m_error = message;
        return false;
    }

    bool save(const QImage& image, const QString& file) const
    {
        const QImage shown = m_width > 0 ? image.scaledToWidth(m_width, Qt::SmoothTransformation) : image;
        return shown.save(QDir(m_dir).filePath(m_prefix + file + QStringLiteral(".png"))) ||
               fail(QStringLiteral("%1: cannot write the screenshot").arg(file));
    }

    bool saveWindow(const QString& file) const { return save(m_window.grab().toImage(), file); }

    // Shows view `id`, waits for its picture (after `prepare`, if any, and `settleMs` for a chart's layout), saves.
    bool view(const QString& id, const QString& file, int settleMs = 0, const std::function<void()>& prepare = {}) const
    {
        ViewBase* v = m_window.view(id);
        m_window.showView(id);
        if (!waitUntil([&] { return v->hasPicture() && !v->isBusy(); }, 600000))
            return fail(QStringLiteral("%1: no picture within 10 minutes").arg(id));
        if (prepare) {
            prepare();
            waitUntil([] { return true; }, 0); // paint what it changed
        }
        if (settleMs > 0)
            waitUntil([] { return false; }, settleMs);
        return saveWindow(file);
    }

    // Starts a training run on the Train tab and waits for its end (30 minutes at most).
    bool train(TrainView* train, const TrainRequest& request, const QString& what) const
    {
        m_window.showView(QStringLiteral("train"));
        train->start(request);
        return waitUntil([&] { return !train->isBusy(); }, 1800000) ||
               fail(QStringLiteral("%1: not done within 30 minutes").arg(what));
    }

private:
    MainWindow& m_window;
    QString m_dir;
    QString* m_error;
    QString m_prefix;
    int m_width;
};

void showLessonsDock(MainWindow& window, bool shown)
{
    if (auto* dock = window.findChild<QDockWidget*>(QStringLiteral("lessonsDock")))
        dock->setVisible(shown);
}

void showLesson(MainWindow& window, const char* slug)
{
    LessonsPanel* lessons = window.lessonsPanel();
    for (int i = 0; i < static_cast<int>(lessons->lessons().lessons.size()); ++i)
        if (lessons->lessons().lessons[i].slug == slug)
            lessons->showLesson(i);
}

// The lesson on ALiBi's slopes beside the views, its second figure shown.
bool grabLessons(MainWindow& window, const Shots& shots)
{
    showLessonsDock(window, true);
    showLesson(window, "alibi-slopes");
    window.lessonsPanel()->showState(1);
    waitUntil([&] { return window.currentView()->hasPicture() && !window.currentView()->isBusy(); }, 60000);
    const bool saved = shots.saveWindow(QStringLiteral("lessons"));
    showLessonsDock(window, false);
    return saved;
}

// The empty state a first-time user meets in a model view: the message and "Train a demo model now".
bool grabEmptyModelView(MainWindow& window, const Shots& shots)
{
    window.showView(QStringLiteral("attention"));
    waitUntil([] { return true; }, 0);
    return shots.saveWindow(QStringLiteral("empty"));
}

// "Continue the text" on `page` (shown): the prompt repeated to `repeatTo`, `maxNew` new tokens on each side.
bool grabContinue(const Shots& shots, ContinueTextPage* page, const QString& file, int repeatTo, int maxNew)
{
    page->setRepeatTo(repeatTo);
    page->setMaxNew(maxNew);
    page->start();
    if (!waitUntil([&] { return !page->isBusy(); }, 600000))
        return shots.fail(QStringLiteral("%1: the continuation did not finish within 10 minutes").arg(file));
    waitUntil([] { return false; }, 300);
    return shots.saveWindow(file);
}

// The Your model tab's pages with `folder` open; the methods page after a quick evaluation of `lengths`.
bool grabModelPages(MainWindow& window, const Shots& shots, const QString& folder, const QString& methodsText,
                    const QString& lengths, int tokensPerLength)
{
    HfModelView* view = window.modelView();
    window.showView(view->viewId());
    view->setPage(HfModelView::AttentionPage);
    view->openFolder(folder);
    if (!waitUntil([&] { return view->model() && view->hasPicture() && !view->isBusy(); }, 600000))
        return shots.fail(QStringLiteral("model: %1 did not open and draw within 10 minutes").arg(folder));
    if (!shots.save(view->summaryCard()->grab().toImage(), QStringLiteral("model-card")) ||
        !shots.saveWindow(QStringLiteral("model-attention")))
        return false;
    for (const auto& [page, file] :
         {std::pair{HfModelView::SinksPage, "model-sinks"}, std::pair{HfModelView::EntropyPage, "model-entropy"}}) {
        view->setPage(page);
        waitUntil([] { return false; }, 300); // the page paints
        if (!shots.saveWindow(QString::fromLatin1(file)))
            return false;
    }
    if (view->model() && hfLayerStrip(view->model()->model->config()).find_first_not_of('F') != std::string::npos) {
        view->setEntropyByLayerType(true); // a folder that mixes layer types: its curves by type too
        waitUntil([] { return false; }, 300);
        const bool saved = shots.saveWindow(QStringLiteral("model-entropy-by-type"));
        view->setEntropyByLayerType(false);
        if (!saved)
            return false;
    }
    view->setPage(HfModelView::MethodsPage);
    view->setMethodsTextFile(methodsText);
    view->setMethodsLengths(lengths);
    view->setMethodsTokensPerLength(tokensPerLength);
    view->evaluateMethods();
    if (!waitUntil([&] { return !view->isBusy(); }, 1800000))
        return shots.fail(QStringLiteral("model: the evaluation under methods did not finish within 30 minutes"));
    waitUntil([] { return false; }, 300);
    if (!shots.saveWindow(QStringLiteral("model-methods")))
        return false;
    // A canceled evaluation (every token of the text: long enough to cancel): "Canceled after N s." at once.
    view->setMethodsTokensPerLength(0);
    view->evaluateMethods();
    waitUntil([] { return false; }, 1500);
    view->cancelMethods();
    if (!waitUntil([&] { return !view->isBusy(); }, 600000))
        return shots.fail(QStringLiteral("model: the canceled evaluation did not stop within 10 minutes"));
    waitUntil([] { return false; }, 300);
    if (!shots.saveWindow(QStringLiteral("model-methods-canceled")))
        return false;
    // Continue the text: past the context (four times it), the config's own positions beside YaRN.
    view->setPage(HfModelView::ContinuePage);
    view->continueTextPage()->setMethod(QStringLiteral("yarn"));
    if (!grabContinue(shots, view->continueTextPage(), QStringLiteral("model-continue"),
                        4 * view->model()->model->config().context, 48))
        return false;
    // The Retrieval page: passkey at three lengths and depths under none and yarn, every heatmap filled in.
    RetrievalPage* retrieval = view->retrievalPage();
    view->setPage(HfModelView::RetrievalTab);
    retrieval->setInputs(QStringLiteral("160,240,320"), QStringLiteral("0,0.5,1"));
    retrieval->run();
    if (!waitUntil([&] { return !retrieval->isBusy(); }, 1800000))
        return shots.fail(QStringLiteral("model: the retrieval run did not finish within 30 minutes"));
    waitUntil([] { return false; }, 300);
    return shots.saveWindow(QStringLiteral("model-retrieval"));
}

} // namespace

bool takeRotaryScreenshots(MainWindow& window, const QString& dir, int width, QString* error)
{
    const Shots shots(window, dir, error, {}, width);
    showLessonsDock(window, false);
    SchemePanel* panel = window.panel();
    panel->setScheme(QStringLiteral("rope"));
    panel->setHeads(8);
    panel->setLength(256);
    panel->setLogn(false, 64);
    panel->setScaling(QStringLiteral("yarn"));
    panel->setParameter(QStringLiteral("factor"), 16);
    if (!shots.view(QStringLiteral("frequencies"), QStringLiteral("frequencies-yarn")))
        return false;
    panel->setScaling(QStringLiteral("llama3"));
    panel->setParameter(QStringLiteral("factor"), 8);
    if (!shots.view(QStringLiteral("frequencies"), QStringLiteral("frequencies-llama3")))
        return false;
    panel->setScaling(QStringLiteral("none"));
    auto* compare = static_cast<CompareView*>(window.view(QStringLiteral("compare")));
    compare->setSchemes({QStringLiteral("rope"), QStringLiteral("rope+yarn"), QStringLiteral("rope+rerope")});
    compare->setDifference(false);
    if (!shots.view(QStringLiteral("compare"), QStringLiteral("compare-rotary")))
        return false;
    // A demo-preset rope model (context 32, about 15 s), then every method on the Train tab's methods page.
    auto* train = static_cast<TrainView*>(window.view(QStringLiteral("train")));
    if (!shots.train(train, demoTrainRequest({"rope"}), QStringLiteral("train: the rope model")))
        return false;
    train->showMethodsPage(true);
    MethodsPanel* methods = train->methodsPanel();
    methods->setCheckedMethods({QStringLiteral("none"), QStringLiteral("pi"), QStringLiteral("ntk"),
                                QStringLiteral("dynamic-ntk"), QStringLiteral("yarn"), QStringLiteral("llama3"),
                                QStringLiteral("rerope"), QStringLiteral("leaky-rerope")});
    methods->evaluate();
    return shots.view(QStringLiteral("train"), QStringLiteral("methods"));
}

bool takeModelScreenshots(MainWindow& window, const QString& folder, const QString& dir, QString* error,
                          const QString& methodsText, const QString& lengths)
{
    const Shots shots(window, dir, error);
    // The Lessons dock out of the picture (the window itself hides the scheme panel on this tab, which reads none of
    // it), the window as large as the README's pictures.
    if (auto* d = window.findChild<QDockWidget*>(QStringLiteral("lessonsDock")))
        d->hide();
    window.resize(1400, 900);
    // A quick comparison for the picture: lengths up to 4 x the tiny model's context, 2048 tokens each.
    return grabModelPages(window, shots, folder, methodsText,
                          lengths.isEmpty() ? QStringLiteral("8,16,32,64,128") : lengths, 2048);
}

bool takeLayoutScreenshots(MainWindow& window, const QString& dir, QString* error, const QString& modelFolder)
{
    const Shots shots(window, dir, error, QStringLiteral("layout-"));
    showLessonsDock(window, true);
    showLesson(window, "alibi-slopes");
    SchemePanel* panel = window.panel();
    // The scheme whose formula is longest: the panel's widest text.
    const SchemeInfo* longest = &schemeCatalog().front();
    for (const SchemeInfo& s : schemeCatalog())
        if (schemeFormula(s).size() > schemeFormula(*longest).size())
            longest = &s;
    panel->setScheme(QString::fromStdString(longest->name));
    if (!shots.view(QStringLiteral("bias"), QStringLiteral("scheme-long")))
        return false;
    panel->setScheme(QStringLiteral("alibi"));
    panel->setHeads(8);
    panel->setLength(64);
    panel->setHead(1);
    if (!shots.view(QStringLiteral("bias"), QStringLiteral("bias")))
        return false;
    auto* compare = static_cast<CompareView*>(window.view(QStringLiteral("compare")));
    compare->setSchemes({QStringLiteral("alibi"), QStringLiteral("local"), QStringLiteral("kerple-log")});
    if (!shots.view(QStringLiteral("compare"), QStringLiteral("compare")) ||
        !shots.view(QStringLiteral("dot"), QStringLiteral("dot")) ||
        !shots.view(QStringLiteral("entropy"), QStringLiteral("entropy")))
        return false;
    panel->setScheme(QStringLiteral("rope"));
    panel->setScaling(QStringLiteral("yarn"));
    if (!shots.view(QStringLiteral("frequencies"), QStringLiteral("frequencies")))
        return false;
    panel->setScaling(QStringLiteral("none"));
    panel->setScheme(QStringLiteral("alibi"));
    // A short run of the Train tab's default schemes: enough for the loss and perplexity charts and their legends.
    auto* train = static_cast<TrainView*>(window.view(QStringLiteral("train")));
    TrainRequest request = train->request();
    setTrainingSteps(request.train, 30);
    request.evalBytes = 2048;
    if (!shots.train(train, request, QStringLiteral("train")) ||
        !shots.view(QStringLiteral("train"), QStringLiteral("train")))
        return false;
    // The Train tab's other page as it opens (its model list, its method tree), before any evaluation.
    train->showMethodsPage(true);
    waitUntil([] { return true; }, 0);
    if (!shots.saveWindow(QStringLiteral("train-methods")))
        return false;
    // The same page for the lab's models: the run's models continue a prompt (bytes), own positions beside YaRN.
    if (auto* pages = train->findChild<QTabWidget*>(QStringLiteral("train_pages"))) {
        pages->setCurrentWidget(train->continueTextPage());
        train->continueTextPage()->setPrompt(QStringLiteral("Why did the chicken cross the road? To get to the"));
        if (!grabContinue(shots, train->continueTextPage(), QStringLiteral("train-continue"), 0, 64))
            return false;
    }
    train->showMethodsPage(false);
    // A model under a long file name: the attention's title must wrap or elide, not run into its subtitle.
    auto* attention = static_cast<AttentionView*>(window.view(QStringLiteral("attention")));
    if (attention->modelCount() == 0)
        return shots.fail(QStringLiteral("attention: the training run left no model"));
    const QString longName = QDir(dir).filePath(
        QStringLiteral("alibi-demo-model-with-a-rather-long-checkpoint-name-trained-on-fortunes.safetensors"));
    QString problem;
    if (!attention->saveModel(attention->modelCount() - 1, longName, &problem) ||
        !attention->loadModel(longName, &problem))
        return shots.fail(QStringLiteral("attention: %1").arg(problem));
    attention->selectModel(attention->modelCount() - 1);
    attention->setText(QStringLiteral("Why did the chicken cross the road?"));
    if (!shots.view(QStringLiteral("attention"), QStringLiteral("attention")))
        return false;
    // The Your model tab at the window's own size, when a folder was given: its pages and a short evaluation, under
    // YaRN (the longest parameter form of the positions chooser).
    if (modelFolder.isEmpty())
        return true;
    window.modelView()->setPositions(QStringLiteral("yarn"), {QStringLiteral("factor=4")});
    return grabModelPages(window, shots, modelFolder, QString(), QStringLiteral("8,16,32,64"), 512);
}

// The layer-type modifiers in the Bias tab: rope's band under a sliding window with two sinks, and ALiBi in chunks
// under a soft cap (issue 28); the panel's fields back to off afterwards.
bool grabLayerTypeBands(SchemePanel* panel, const Shots& shots, int settleMs)
{
    panel->setScheme(QStringLiteral("rope"));
    panel->setLength(64);
    panel->setModifier(QStringLiteral("window"), 16);
    panel->setModifier(QStringLiteral("sinks"), 2);
    if (!shots.view(QStringLiteral("bias"), QStringLiteral("bias-window"), settleMs))
        return false;
    panel->setModifier(QStringLiteral("window"), 0);
    panel->setModifier(QStringLiteral("sinks"), 0);
    panel->setScheme(QStringLiteral("alibi"));
    panel->setHead(0);
    panel->setModifier(QStringLiteral("chunk"), 16);
    panel->setModifier(QStringLiteral("softcap"), 2);
    if (!shots.view(QStringLiteral("bias"), QStringLiteral("bias-chunk-softcap"), settleMs))
        return false;
    panel->setModifier(QStringLiteral("chunk"), 0);
    panel->setModifier(QStringLiteral("softcap"), 0);
    panel->setScheme(QStringLiteral("rope"));
    return true;
}

bool takeSchemeScreenshots(MainWindow& window, const QString& dir, QString* error)
{
    const Shots shots(window, dir, error, QStringLiteral("schemes-"));
    const int settleMs = 300; // the chart's layout settles
    showLessonsDock(window, true);
    SchemePanel* panel = window.panel();
    panel->setScheme(QStringLiteral("rope"));
    panel->setParameter(QStringLiteral("keep"), 0.25);
    if (!shots.view(QStringLiteral("frequencies"), QStringLiteral("frequencies-keep"), settleMs))
        return false;
    panel->setParameter(QStringLiteral("keep"), 1);
    panel->setParameter(QStringLiteral("rotary-fraction"), 0.25);
    if (!shots.view(QStringLiteral("frequencies"), QStringLiteral("frequencies-rotary-fraction"), settleMs))
        return false;
    panel->setParameter(QStringLiteral("rotary-fraction"), 1);
    if (!grabLayerTypeBands(panel, shots, settleMs))
        return false;
    // A demo fire model trained here (unless one is kept already): the window offers it to the Bias tab's learned
    // curve as it is evaluated.
    auto* train = static_cast<TrainView*>(window.view(QStringLiteral("train")));
    auto* bias = static_cast<BiasView*>(window.view(QStringLiteral("bias")));
    train->setPreset(QStringLiteral("demo"));
    if (bias->modelBox()->count() < 2) {
        TrainRequest fire = train->request();
        fire.schemes = {"fire"};
        fire.evalBytes = 2048;
        if (!shots.train(train, fire, QStringLiteral("train fire")))
            return false;
    }
    panel->setScheme(QStringLiteral("fire"));
    panel->setHeads(8);
    panel->setLength(32);
    panel->setHead(1);
    bias->setCurveShown(true);
    if (bias->modelBox()->count() < 2)
        return shots.fail(QStringLiteral("bias: the fire model was not offered to the learned curve"));
    if (!shots.view(QStringLiteral("bias"), QStringLiteral("fire-curve"), settleMs))
        return false;
    // The model options on a short rope run: the fields, the schedule's note, and rows named with the options.
    panel->setScheme(QStringLiteral("alibi"));
    train->nopeEveryBox()->setValue(2);
    train->temperatureBox()->setChecked(true);
    train->floorScaleBox()->setValue(32);
    train->ssmaxBox()->setChecked(true);
    train->sinkLogitBox()->setChecked(true);
    TrainRequest options = train->request();
    options.schemes = {"rope"};
    setTrainingSteps(options.train, 60);
    options.evalBytes = 2048;
    return shots.train(train, options, QStringLiteral("train")) &&
           shots.view(QStringLiteral("train"), QStringLiteral("train-options"), settleMs);
}

bool takeTaskScreenshots(MainWindow& window, const QString& dir, QString* error)
{
    const Shots shots(window, dir, error, QStringLiteral("tasks-"));
    auto* train = static_cast<TrainView*>(window.view(QStringLiteral("train")));
    window.showView(QStringLiteral("train"));
    train->setPreset(QStringLiteral("demo"));
    train->findChild<QSpinBox*>(QStringLiteral("steps"))->setValue(600);
    train->taskBox()->setCurrentIndex(train->taskBox()->findData(QStringLiteral("passkey")));
    train->dropeButton()->click();
    if (!waitUntil([&] { return train->taskCurves().size() >= 2 || !train->isBusy(); }, 1800000))
        return shots.fail(QStringLiteral("train: the recipe scored nothing within 30 minutes"));
    if (!train->isBusy())
        return shots.fail(QStringLiteral("train: the recipe ended early: %1").arg(train->statusText()));
    if (!shots.saveWindow(QStringLiteral("drope-running")))
        return false;
    if (!waitUntil([&] { return !train->isBusy(); }, 1800000))
        return shots.fail(QStringLiteral("train: the recipe did not end within 30 minutes"));
    if (train->taskCurves().size() != 4)
        return shots.fail(QStringLiteral("train: the recipe ended with %1 curves: %2")
                              .arg(train->taskCurves().size())
                              .arg(train->statusText()));
    if (!shots.saveWindow(QStringLiteral("drope-done")) ||
        !shots.save(train->passkeyHeatmap()->grab().toImage(), QStringLiteral("passkey-heatmap")))
        return false;
    ImageOptions options;
    options.size = train->defaultImageSize();
    try {
        writeImageFile(
            QDir(dir).filePath(QStringLiteral("tasks-drope-export.png")), options,
            [&](QPainter& p, const QRectF& r, const PictureStyle& s) { train->paintPicture(p, r, s); },
            train->pictureTitle());
    } catch (const std::exception& e) {
        return shots.fail(QString::fromStdString(e.what()));
    }
    return true;
}

bool takeScreenshots(MainWindow& window, const QString& dir, int width, QString* error)
{
    const Shots shots(window, dir, error, {}, width);
    // The views at full width; the lessons panel only in its own picture.
    showLessonsDock(window, false);
    SchemePanel* panel = window.panel();
    panel->setScheme(QStringLiteral("alibi"));
    panel->setHeads(8);
    panel->setLength(64);
    panel->setHead(1);
    if (!shots.view(QStringLiteral("bias"), QStringLiteral("bias")) || !grabLessons(window, shots))
        return false;
    auto* compare = static_cast<CompareView*>(window.view(QStringLiteral("compare")));
    compare->setSchemes({QStringLiteral("alibi"), QStringLiteral("local"), QStringLiteral("kerple-log")});
    if (!shots.view(QStringLiteral("compare"), QStringLiteral("compare")))
        return false;
    auto* dot = static_cast<DotView*>(window.view(QStringLiteral("dot")));
    DotRequest request;
    request.maxDistance = 2048;
    dot->setRequest(request, true);
    if (!shots.view(QStringLiteral("dot"), QStringLiteral("dot")))
        return false;
    auto* entropy = static_cast<EntropyView*>(window.view(QStringLiteral("entropy")));
    entropy->setMaxLength(2048);
    if (!shots.view(QStringLiteral("entropy"), QStringLiteral("entropy"), 0,
                    [&] { hoverPoint(entropy->plot(), 0, 4); }))
        return false;

    auto* attention = static_cast<AttentionView*>(window.view(QStringLiteral("attention")));
    if (attention->modelCount() == 0 && !grabEmptyModelView(window, shots))
        return false;

    // Train short / test long: the Train tab's default, the demo preset (Figure 1 of the ALiBi paper in miniature).
    auto* train = static_cast<TrainView*>(window.view(QStringLiteral("train")));
    if (!shots.train(train, train->request(), QStringLiteral("train")) ||
        !shots.view(QStringLiteral("train"), QStringLiteral("train")))
        return false;
    attention->setText(QStringLiteral("Why did the chicken cross the road?"));
    for (int i = 0; i < attention->modelCount(); ++i) // ALiBi's heads show locality best
        if (attention->models()[i].model->config().scheme == "alibi")
            attention->selectModel(i);
    panel->setHead(0);
    return shots.view(QStringLiteral("attention"), QStringLiteral("attention"));
}

} // namespace plab::ui
