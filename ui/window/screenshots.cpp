// Scripted screenshots: set the panel and each view's controls as a user would, wait for the workers, grab.
#include "window/screenshots.h"

#include "charts/curve_chart.h"
#include "window/lessons_panel.h"
#include "window/main_window.h"
#include "tabs/hf_model_view.h"
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

// The lesson on ALiBi's slopes beside the views, its second figure shown; false when the file cannot be written.
bool grabLessons(MainWindow& window, QDockWidget& lessonsDock, const QString& dir, int width)
{
    lessonsDock.show();
    LessonsPanel* lessons = window.lessonsPanel();
    for (int i = 0; i < static_cast<int>(lessons->lessons().lessons.size()); ++i)
        if (lessons->lessons().lessons[i].slug == "alibi-slopes")
            lessons->showLesson(i);
    lessons->showState(1);
    waitUntil([&] { return window.currentView()->hasPicture() && !window.currentView()->isBusy(); }, 60000);
    const QImage image = window.grab().toImage().scaledToWidth(width, Qt::SmoothTransformation);
    lessonsDock.hide();
    return image.save(QDir(dir).filePath(QStringLiteral("lessons.png")));
}

// The empty state a first-time user meets in a model view: the message and "Train a demo model now".
bool grabEmptyModelView(MainWindow& window, const QString& dir, int width)
{
    window.showView(QStringLiteral("attention"));
    waitUntil([] { return true; }, 0);
    const QImage empty = window.grab().toImage().scaledToWidth(width, Qt::SmoothTransformation);
    return empty.save(QDir(dir).filePath(QStringLiteral("empty.png")));
}

} // namespace

bool takeRotaryScreenshots(MainWindow& window, const QString& dir, int width, QString* error)
{
    QDir().mkpath(dir);
    auto grab = [&](const QString& id, const QString& file) {
        ViewBase* v = window.view(id);
        window.showView(id);
        if (!waitUntil([&] { return v->hasPicture() && !v->isBusy(); }, 600000)) {
            if (error)
                *error = QStringLiteral("%1: no picture within 10 minutes").arg(id);
            return false;
        }
        const QImage image = window.grab().toImage().scaledToWidth(width, Qt::SmoothTransformation);
        if (!image.save(QDir(dir).filePath(file + QStringLiteral(".png")))) {
            if (error)
                *error = QStringLiteral("%1: cannot write the screenshot").arg(file);
            return false;
        }
        return true;
    };
    if (auto* lessonsDock = window.findChild<QDockWidget*>(QStringLiteral("lessonsDock")))
        lessonsDock->hide();
    SchemePanel* panel = window.panel();
    panel->setScheme(QStringLiteral("rope"));
    panel->setHeads(8);
    panel->setLength(256);
    panel->setLogn(false, 64);
    panel->setScaling(QStringLiteral("yarn"));
    panel->setParameter(QStringLiteral("factor"), 16);
    if (!grab(QStringLiteral("frequencies"), QStringLiteral("frequencies-yarn")))
        return false;
    panel->setScaling(QStringLiteral("llama3"));
    panel->setParameter(QStringLiteral("factor"), 8);
    if (!grab(QStringLiteral("frequencies"), QStringLiteral("frequencies-llama3")))
        return false;
    panel->setScaling(QStringLiteral("none"));
    auto* compare = static_cast<CompareView*>(window.view(QStringLiteral("compare")));
    compare->setSchemes({QStringLiteral("rope"), QStringLiteral("rope+yarn"), QStringLiteral("rope+rerope")});
    compare->setDifference(false);
    if (!grab(QStringLiteral("compare"), QStringLiteral("compare-rotary")))
        return false;
    // A demo-preset rope model (context 32, about 15 s), then every method on the Train tab's methods page.
    auto* train = static_cast<TrainView*>(window.view(QStringLiteral("train")));
    window.showView(QStringLiteral("train"));
    train->start(demoTrainRequest({"rope"}));
    if (!waitUntil([&] { return !train->isBusy(); }, 1800000)) {
        if (error)
            *error = QStringLiteral("train: the rope model did not finish within 30 minutes");
        return false;
    }
    train->showMethodsPage(true);
    MethodsPanel* methods = train->methodsPanel();
    methods->setCheckedMethods({QStringLiteral("none"), QStringLiteral("pi"), QStringLiteral("ntk"),
                                QStringLiteral("dynamic-ntk"), QStringLiteral("yarn"), QStringLiteral("llama3"),
                                QStringLiteral("rerope"), QStringLiteral("leaky-rerope")});
    methods->evaluate();
    return grab(QStringLiteral("train"), QStringLiteral("methods"));
}

bool takeModelScreenshots(MainWindow& window, const QString& folder, const QString& dir, QString* error,
                          const QString& methodsText, const QString& lengths)
{
    QDir().mkpath(dir);
    // The tab reads no scheme panel: both docks out of the picture, the window as large as the README's pictures.
    for (const char* dock : {"lessonsDock", "schemeDock"})
        if (auto* d = window.findChild<QDockWidget*>(QString::fromLatin1(dock)))
            d->hide();
    window.resize(1400, 900);
    HfModelView* view = window.modelView();
    window.showView(view->viewId());
    auto fail = [&](const QString& message) {
        if (error)
            *error = message;
        return false;
    };
    auto save = [&](const QImage& image, const QString& file) {
        return image.save(QDir(dir).filePath(file + QStringLiteral(".png"))) ||
               fail(QStringLiteral("%1: cannot write the screenshot").arg(file));
    };
    view->setPage(HfModelView::AttentionPage);
    view->openFolder(folder);
    if (!waitUntil([&] { return view->model() && view->hasPicture() && !view->isBusy(); }, 600000))
        return fail(QStringLiteral("model: %1 did not open and draw within 10 minutes").arg(folder));
    if (!save(view->summaryCard()->grab().toImage(), QStringLiteral("model-card")) ||
        !save(window.grab().toImage(), QStringLiteral("model-attention")))
        return false;
    view->setPage(HfModelView::SinksPage);
    waitUntil([] { return false; }, 300); // the page paints
    if (!save(window.grab().toImage(), QStringLiteral("model-sinks")))
        return false;
    view->setPage(HfModelView::EntropyPage);
    waitUntil([] { return false; }, 300);
    if (!save(window.grab().toImage(), QStringLiteral("model-entropy")))
        return false;
    view->setPage(HfModelView::MethodsPage);
    view->setMethodsTextFile(methodsText);
    // A quick comparison for the picture: lengths up to 4 x the tiny model's context, 2048 tokens each.
    view->setMethodsLengths(lengths.isEmpty() ? QStringLiteral("8,16,32,64,128") : lengths);
    view->setMethodsTokensPerLength(2048);
    view->evaluateMethods();
    if (!waitUntil([&] { return !view->isBusy(); }, 1800000))
        return fail(QStringLiteral("model: the evaluation under methods did not finish within 30 minutes"));
    waitUntil([] { return false; }, 300);
    return save(window.grab().toImage(), QStringLiteral("model-methods"));
}

bool takeLayoutScreenshots(MainWindow& window, const QString& dir, QString* error)
{
    QDir().mkpath(dir);
    auto fail = [&](const QString& message) {
        if (error)
            *error = message;
        return false;
    };
    auto grab = [&](const QString& id, const QString& file) {
        ViewBase* v = window.view(id);
        window.showView(id);
        if (!waitUntil([&] { return v->hasPicture() && !v->isBusy(); }, 600000))
            return fail(QStringLiteral("%1: no picture within 10 minutes").arg(id));
        if (!window.grab().toImage().save(QDir(dir).filePath(QStringLiteral("layout-%1.png").arg(file))))
            return fail(QStringLiteral("%1: cannot write the screenshot").arg(file));
        return true;
    };
    if (auto* lessonsDock = window.findChild<QDockWidget*>(QStringLiteral("lessonsDock")))
        lessonsDock->show();
    LessonsPanel* lessons = window.lessonsPanel();
    for (int i = 0; i < static_cast<int>(lessons->lessons().lessons.size()); ++i)
        if (lessons->lessons().lessons[i].slug == "alibi-slopes")
            lessons->showLesson(i);
    SchemePanel* panel = window.panel();
    // The scheme whose formula is longest: the panel's widest text.
    const SchemeInfo* longest = &schemeCatalog().front();
    for (const SchemeInfo& s : schemeCatalog())
        if (schemeFormula(s).size() > schemeFormula(*longest).size())
            longest = &s;
    panel->setScheme(QString::fromStdString(longest->name));
    if (!grab(QStringLiteral("bias"), QStringLiteral("scheme-long")))
        return false;
    panel->setScheme(QStringLiteral("alibi"));
    panel->setHeads(8);
    panel->setLength(64);
    panel->setHead(1);
    if (!grab(QStringLiteral("bias"), QStringLiteral("bias")))
        return false;
    auto* compare = static_cast<CompareView*>(window.view(QStringLiteral("compare")));
    compare->setSchemes({QStringLiteral("alibi"), QStringLiteral("local"), QStringLiteral("kerple-log")});
    if (!grab(QStringLiteral("compare"), QStringLiteral("compare")))
        return false;
    if (!grab(QStringLiteral("dot"), QStringLiteral("dot")))
        return false;
    if (!grab(QStringLiteral("entropy"), QStringLiteral("entropy")))
        return false;
    panel->setScheme(QStringLiteral("rope"));
    panel->setScaling(QStringLiteral("yarn"));
    if (!grab(QStringLiteral("frequencies"), QStringLiteral("frequencies")))
        return false;
    panel->setScaling(QStringLiteral("none"));
    panel->setScheme(QStringLiteral("alibi"));
    // A short run of the Train tab's default schemes: enough for the loss and perplexity charts and their legends.
    auto* train = static_cast<TrainView*>(window.view(QStringLiteral("train")));
    TrainRequest request = train->request();
    setTrainingSteps(request.train, 30);
    request.evalBytes = 2048;
    window.showView(QStringLiteral("train"));
    train->start(request);
    if (!waitUntil([&] { return !train->isBusy(); }, 1800000))
        return fail(QStringLiteral("train: not done within 30 minutes"));
    if (!grab(QStringLiteral("train"), QStringLiteral("train")))
        return false;
    // The Train tab's other page as it opens (its model list, its method tree), before any evaluation.
    train->showMethodsPage(true);
    waitUntil([] { return true; }, 0);
    if (!window.grab().toImage().save(QDir(dir).filePath(QStringLiteral("layout-train-methods.png"))))
        return fail(QStringLiteral("train-methods: cannot write the screenshot"));
    train->showMethodsPage(false);
    // A model under a long file name: the attention's title must wrap or elide, not run into its subtitle.
    auto* attention = static_cast<AttentionView*>(window.view(QStringLiteral("attention")));
    if (attention->modelCount() == 0)
        return fail(QStringLiteral("attention: the training run left no model"));
    const QString longName = QDir(dir).filePath(
        QStringLiteral("alibi-demo-model-with-a-rather-long-checkpoint-name-trained-on-fortunes.safetensors"));
    QString problem;
    if (!attention->saveModel(attention->modelCount() - 1, longName, &problem) ||
        !attention->loadModel(longName, &problem))
        return fail(QStringLiteral("attention: %1").arg(problem));
    attention->selectModel(attention->modelCount() - 1);
    attention->setText(QStringLiteral("Why did the chicken cross the road?"));
    return grab(QStringLiteral("attention"), QStringLiteral("attention"));
}

bool takeSchemeScreenshots(MainWindow& window, const QString& dir, QString* error)
{
    QDir().mkpath(dir);
    auto fail = [&](const QString& message) {
        if (error)
            *error = message;
        return false;
    };
    auto grab = [&](const QString& id, const QString& file) {
        ViewBase* v = window.view(id);
        window.showView(id);
        if (!waitUntil([&] { return v->hasPicture() && !v->isBusy(); }, 600000))
            return fail(QStringLiteral("%1: no picture within 10 minutes").arg(id));
        waitUntil([] { return false; }, 300); // the chart's layout settles
        if (!window.grab().toImage().save(QDir(dir).filePath(QStringLiteral("schemes-%1.png").arg(file))))
            return fail(QStringLiteral("%1: cannot write the screenshot").arg(file));
        return true;
    };
    if (auto* lessonsDock = window.findChild<QDockWidget*>(QStringLiteral("lessonsDock")))
        lessonsDock->show();
    SchemePanel* panel = window.panel();
    panel->setScheme(QStringLiteral("rope"));
    panel->setParameter(QStringLiteral("keep"), 0.25);
    if (!grab(QStringLiteral("frequencies"), QStringLiteral("frequencies-keep")))
        return false;
    panel->setParameter(QStringLiteral("keep"), 1);
    panel->setParameter(QStringLiteral("rotary-fraction"), 0.25);
    if (!grab(QStringLiteral("frequencies"), QStringLiteral("frequencies-rotary-fraction")))
        return false;
    panel->setParameter(QStringLiteral("rotary-fraction"), 1);
    // A demo fire model trained here (unless one is kept already): the window offers it to the Bias tab's learned
    // curve as it is evaluated.
    auto* train = static_cast<TrainView*>(window.view(QStringLiteral("train")));
    auto* bias = static_cast<BiasView*>(window.view(QStringLiteral("bias")));
    train->setPreset(QStringLiteral("demo"));
    if (bias->modelBox()->count() < 2) {
        window.showView(QStringLiteral("train"));
        TrainRequest fire = train->request();
        fire.schemes = {"fire"};
        fire.evalBytes = 2048;
        train->start(fire);
        if (!waitUntil([&] { return !train->isBusy(); }, 1800000))
            return fail(QStringLiteral("train fire: not done within 30 minutes"));
    }
    panel->setScheme(QStringLiteral("fire"));
    panel->setHeads(8);
    panel->setLength(32);
    panel->setHead(1);
    bias->setCurveShown(true);
    if (bias->modelBox()->count() < 2)
        return fail(QStringLiteral("bias: the fire model was not offered to the learned curve"));
    if (!grab(QStringLiteral("bias"), QStringLiteral("fire-curve")))
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
    window.showView(QStringLiteral("train"));
    train->start(options);
    if (!waitUntil([&] { return !train->isBusy(); }, 1800000))
        return fail(QStringLiteral("train: not done within 30 minutes"));
    return grab(QStringLiteral("train"), QStringLiteral("train-options"));
}

bool takeTaskScreenshots(MainWindow& window, const QString& dir, QString* error)
{
    QDir().mkpath(dir);
    auto fail = [&](const QString& message) {
        if (error)
            *error = message;
        return false;
    };
    auto save = [&](const QImage& image, const QString& file) {
        return image.save(QDir(dir).filePath(file)) || fail(QStringLiteral("cannot write %1").arg(file));
    };
    auto* train = static_cast<TrainView*>(window.view(QStringLiteral("train")));
    window.showView(QStringLiteral("train"));
    train->setPreset(QStringLiteral("demo"));
    train->findChild<QSpinBox*>(QStringLiteral("steps"))->setValue(600);
    train->taskBox()->setCurrentIndex(train->taskBox()->findData(QStringLiteral("passkey")));
    train->dropeButton()->click();
    if (!waitUntil([&] { return train->taskCurves().size() >= 2 || !train->isBusy(); }, 1800000))
        return fail(QStringLiteral("train: the recipe scored nothing within 30 minutes"));
    if (!train->isBusy())
        return fail(QStringLiteral("train: the recipe ended early: %1").arg(train->statusText()));
    if (!save(window.grab().toImage(), QStringLiteral("tasks-drope-running.png")))
        return false;
    if (!waitUntil([&] { return !train->isBusy(); }, 1800000))
        return fail(QStringLiteral("train: the recipe did not end within 30 minutes"));
    if (train->taskCurves().size() != 4)
        return fail(QStringLiteral("train: the recipe ended with %1 curves: %2")
                        .arg(train->taskCurves().size())
                        .arg(train->statusText()));
    if (!save(window.grab().toImage(), QStringLiteral("tasks-drope-done.png")) ||
        !save(train->passkeyHeatmap()->grab().toImage(), QStringLiteral("tasks-passkey-heatmap.png")))
        return false;
    ImageOptions options;
    options.size = train->defaultImageSize();
    try {
        writeImageFile(
            QDir(dir).filePath(QStringLiteral("tasks-drope-export.png")), options,
            [&](QPainter& p, const QRectF& r, const PictureStyle& s) { train->paintPicture(p, r, s); },
            train->pictureTitle());
    } catch (const std::exception& e) {
        return fail(QString::fromStdString(e.what()));
    }
    return true;
}

bool takeScreenshots(MainWindow& window, const QString& dir, int width, QString* error)
{
    QDir().mkpath(dir);
    auto fail = [&](const QString& message) {
        if (error)
            *error = message;
        return false;
    };
    auto grab = [&](const QString& id, const std::function<void()>& prepare = {}) {
        ViewBase* v = window.view(id);
        window.showView(id);
        if (!waitUntil([&] { return v->hasPicture() && !v->isBusy(); }, 600000))
            return fail(QStringLiteral("%1: no picture within 10 minutes").arg(id));
        if (prepare) {
            prepare();
            waitUntil([] { return true; }, 0); // paint what it changed
        }
        const QImage image = window.grab().toImage().scaledToWidth(width, Qt::SmoothTransformation);
        if (!image.save(QDir(dir).filePath(id + QStringLiteral(".png"))))
            return fail(QStringLiteral("%1: cannot write the screenshot").arg(id));
        return true;
    };
    // The views at full width; the lessons panel only in its own picture.
    QDockWidget* lessonsDock = window.findChild<QDockWidget*>(QStringLiteral("lessonsDock"));
    if (lessonsDock)
        lessonsDock->hide();
    SchemePanel* panel = window.panel();
    panel->setScheme(QStringLiteral("alibi"));
    panel->setHeads(8);
    panel->setLength(64);
    panel->setHead(1);
    if (!grab(QStringLiteral("bias")))
        return false;
    if (lessonsDock && !grabLessons(window, *lessonsDock, dir, width))
        return fail(QStringLiteral("lessons: cannot write the screenshot"));
    auto* compare = static_cast<CompareView*>(window.view(QStringLiteral("compare")));
    compare->setSchemes({QStringLiteral("alibi"), QStringLiteral("local"), QStringLiteral("kerple-log")});
    if (!grab(QStringLiteral("compare")))
        return false;
    auto* dot = static_cast<DotView*>(window.view(QStringLiteral("dot")));
    DotRequest request;
    request.maxDistance = 2048;
    dot->setRequest(request, true);
    if (!grab(QStringLiteral("dot")))
        return false;
    auto* entropy = static_cast<EntropyView*>(window.view(QStringLiteral("entropy")));
    entropy->setMaxLength(2048);
    if (!grab(QStringLiteral("entropy"), [&] { hoverPoint(entropy->plot(), 0, 4); }))
        return false;

    auto* attention = static_cast<AttentionView*>(window.view(QStringLiteral("attention")));
    if (attention->modelCount() == 0 && !grabEmptyModelView(window, dir, width))
        return fail(QStringLiteral("empty: cannot write the screenshot"));

    // Train short / test long: the Train tab's default, the demo preset (Figure 1 of the ALiBi paper in miniature).
    auto* train = static_cast<TrainView*>(window.view(QStringLiteral("train")));
    const TrainRequest tr = train->request();
    window.showView(QStringLiteral("train"));
    train->start(tr);
    if (!waitUntil([&] { return !train->isBusy(); }, 1800000))
        return fail(QStringLiteral("train: not done within 30 minutes"));
    if (!grab(QStringLiteral("train")))
        return false;
    attention->setText(QStringLiteral("Why did the chicken cross the road?"));
    for (int i = 0; i < attention->modelCount(); ++i) // ALiBi's heads show locality best
        if (attention->models()[i].model->config().scheme == "alibi")
            attention->selectModel(i);
    panel->setHead(0);
    return grab(QStringLiteral("attention"));
}

} // namespace plab::ui
