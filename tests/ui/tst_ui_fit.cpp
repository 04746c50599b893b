// The main window on a 1366 x 768 laptop screen and a 1920 x 1080 one (the offscreen platform with a screen of that
// size), in English and Chinese: it opens within the available geometry, no text of the scheme panel is clipped for any
// scheme, and on every tab no combo box cuts its text, no list or table scrolls sideways and no tab bar hides tabs.
#include "charts/curve_chart.h"
#include "settings/i18n.h"
#include "tabs/scheme_panel.h"
#include "tabs/view_base.h"
#include "window/main_window.h"
#include "workers/model_compute.h"

#include "schemes/rotary_scaling.h"
#include "test_main.h"
#include "test_settings.h"

#include "tabs/fitting_combo.h"
#include "tabs/hf_model_view.h"

#include <QAbstractItemView>
#include <QComboBox>
#include <QDir>
#include <QDockWidget>
#include <QGraphicsSimpleTextItem>
#include <QGraphicsTextItem>
#include <QGraphicsView>
#include <QHeaderView>
#include <QLabel>
#include <QMap>
#include <QProcess>
#include <QPushButton>
#include <QScreen>
#include <QScrollArea>
#include <QScrollBar>
#include <QStyleOptionComboBox>
#include <QTabBar>
#include <QTabWidget>
#include <QToolButton>
#include <QtTest>

#include <memory>
#include <optional>

#include <cstdio>

using namespace plab;
using namespace plab::ui;

namespace {

// The laptop screen; a row for another size runs in a child process whose screen has that size (the offscreen
// platform reads its screens once, before the application object exists).
constexpr QSize kLaptop(1366, 768);
constexpr QSize kDesktop(1920, 1080);
const char* const kTestClassName = "TestUiFit";
const char* const kScreenVariable = "PLAB_FIT_SCREEN"; // WxH of this process's screen; the laptop's when unset

QSize screenOfThisProcess()
{
    const QList<QByteArray> size = qgetenv(kScreenVariable).split('x');
    if (size.size() == 2 && size[0].toInt() > 0 && size[1].toInt() > 0)
        return {size[0].toInt(), size[1].toInt()};
    return kLaptop;
}

QString sizeText(const QSize& size)
{
    return QStringLiteral("%1x%2").arg(size.width()).arg(size.height());
}

// Nothing when this process's screen has the size (the row runs here); else what the current row, run in a child
// process with a screen of that size, reported: empty when it passed.
std::optional<QString> runOnOtherScreen(const QSize& size)
{
    if (QGuiApplication::primaryScreen()->size() == size)
        return std::nullopt;
    QProcess child;
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    environment.insert(QString::fromLatin1(kScreenVariable), sizeText(size));
    environment.remove(QStringLiteral("QT_QPA_PLATFORM")); // initMain sets it from the size
    child.setProcessEnvironment(environment);
    child.setProcessChannelMode(QProcess::MergedChannels);
    child.start(QCoreApplication::applicationFilePath(),
                {QStringLiteral("%1:%2").arg(QString::fromLatin1(QTest::currentTestFunction()),
                                             QString::fromLatin1(QTest::currentDataTag()))});
    if (!child.waitForFinished(-1))
        return QStringLiteral("the child process for %1 did not run: %2").arg(sizeText(size), child.errorString());
    const QString output = QString::fromLocal8Bit(child.readAll());
    if (child.exitStatus() != QProcess::NormalExit || child.exitCode() != 0)
        return QStringLiteral("on a %1 screen:\n%2").arg(sizeText(size), output);
    const QString passed =
        QStringLiteral("PASS   : %1::%2(%3)")
            .arg(QString::fromLatin1(kTestClassName), QString::fromLatin1(QTest::currentTestFunction()),
                 QString::fromLatin1(QTest::currentDataTag()));
    if (!output.contains(passed))
        return QStringLiteral("on a %1 screen the row did not run:\n%2").arg(sizeText(size), output);
    return QString();
}

// Why a label shows less than its text: empty when it shows all of it.
QString clipping(const QLabel* label)
{
    if (label->wordWrap()) {
        const int needed = label->heightForWidth(label->width());
        if (label->height() < needed)
            return QStringLiteral("wraps to %1 px but is %2 px high").arg(needed).arg(label->height());
        return {};
    }
    const int needed = label->minimumSizeHint().width();
    if (label->width() < needed)
        return QStringLiteral("needs %1 px but is %2 px wide").arg(needed).arg(label->width());
    return {};
}

void settle()
{
    for (int i = 0; i < 5; ++i)
        QCoreApplication::processEvents();
}

// The width a combo box's style gives its current text (the edit field less the label's 1-pixel insets).
int comboTextRoom(const QComboBox* combo)
{
    QStyleOptionComboBox option;
    option.initFrom(combo);
    option.editable = combo->isEditable();
    option.frame = combo->hasFrame();
    option.subControls = QStyle::SC_All;
    const QRect field =
        combo->style()->subControlRect(QStyle::CC_ComboBox, &option, QStyle::SC_ComboBoxEditField, combo);
    return field.width() - 2 - (combo->itemIcon(combo->currentIndex()).isNull() ? 0 : combo->iconSize().width() + 4);
}

// What the closed combo box shows: a FittingComboBox may show less than its item's text, never more than fits.
QString shownText(const QComboBox* combo)
{
    if (const auto* fitting = qobject_cast<const FittingComboBox*>(combo))
        return fitting->displayText();
    return combo->currentText();
}

// Each problem and the pages it was seen on.
using Problems = QMap<QString, QStringList>;

QString describe(const Problems& problems)
{
    QStringList lines;
    for (auto it = problems.begin(); it != problems.end(); ++it)
        lines << QStringLiteral("%1 (on %2)").arg(it.key(), it.value().join(QStringLiteral(", ")));
    return lines.join(QLatin1Char('\n'));
}

// Every shown standard control under root that shortens or scrolls its text: combo boxes whose current text is wider
// than their text area, lists and tables that scroll sideways, tab bars that hide tabs behind scroll buttons or are
// narrower than their tabs.
// The Your model tab reads no scheme panel: the window hides it there. Its fields (repeat, positions, layer, head) are
// all in view, none below the fold of their scroll area.
void findFieldsOutOfView(const MainWindow& window, const QWidget* view, Problems& problems)
{
    const auto* dock = window.findChild<QDockWidget*>(QStringLiteral("schemeDock"));
    if (!dock || !dock->isHidden())
        problems[QStringLiteral("the scheme panel shows on the Your model tab, which reads none of it")] << "model";
    for (const char* name : {"hfRepeat", "hfPositions", "hfLayer", "hfHead"}) {
        const auto* field = view->findChild<QWidget*>(QString::fromLatin1(name));
        if (!field || !field->isVisible()) {
            problems[QStringLiteral("field '%1' is not shown").arg(QString::fromLatin1(name))] << "model";
            continue;
        }
        // Within every scrolling ancestor's viewport, whole.
        for (const QWidget* w = field->parentWidget(); w && w != view; w = w->parentWidget())
            if (const auto* scroll = qobject_cast<const QScrollArea*>(w)) {
                const QRect shown(field->mapTo(scroll->viewport(), QPoint(0, 0)), field->size());
                if (!scroll->viewport()->rect().contains(shown))
                    problems[QStringLiteral("field '%1' at y %2-%3 of a scroll area %4 px high: below the fold")
                                 .arg(QString::fromLatin1(name))
                                 .arg(shown.top())
                                 .arg(shown.bottom())
                                 .arg(scroll->viewport()->height())]
                        << "model";
            }
    }
}

void findCutControls(const QWidget* root, const QString& page, Problems& problems)
{
    auto report = [&](const QWidget* w, const QString& what) {
        problems[QStringLiteral("%1 '%2' %3")
                     .arg(QString::fromLatin1(w->metaObject()->className()), w->objectName(), what)]
            << page;
    };
    for (const QComboBox* combo : root->findChildren<QComboBox*>()) {
        if (!combo->isVisible() || combo->isEditable())
            continue;
        const QString text = shownText(combo);
        const int needed = combo->fontMetrics().horizontalAdvance(text);
        if (needed > comboTextRoom(combo))
            report(combo,
                   QStringLiteral("shows '%1' (%2 px) in %3 px").arg(text).arg(needed).arg(comboTextRoom(combo)));
    }
    for (const QAbstractItemView* view : root->findChildren<QAbstractItemView*>()) {
        if (!view->isVisible() || qobject_cast<const QHeaderView*>(view))
            continue;
        if (view->horizontalScrollBar()->maximum() > 0)
            report(view, QStringLiteral("scrolls sideways by %1 px").arg(view->horizontalScrollBar()->maximum()));
    }
    for (const QTabBar* bar : root->findChildren<QTabBar*>()) {
        if (!bar->isVisible())
            continue;
        for (const QToolButton* button : bar->findChildren<QToolButton*>())
            if (button->isVisible())
                report(bar, QStringLiteral("shows a scroll button: not every tab is in view"));
        if (bar->width() < bar->sizeHint().width())
            report(bar,
                   QStringLiteral("needs %1 px for its tabs, has %2").arg(bar->sizeHint().width()).arg(bar->width()));
    }
}

// What a chart under `root` cuts: a text of its scene that Qt Charts elided ("loss (nats per…", a legend's "…"), a
// wrapping legend label cut short, and push buttons not wholly in view (below a scroll area's fold).
void findCutChartsAndButtons(const QWidget* root, const QString& page, Problems& problems)
{
    for (const QGraphicsView* view : root->findChildren<QGraphicsView*>()) {
        if (!view->isVisible() || !view->scene())
            continue;
        for (const QGraphicsItem* item : view->scene()->items()) {
            if (!item->isVisible())
                continue;
            QString text;
            if (const auto* rich = dynamic_cast<const QGraphicsTextItem*>(item))
                text = rich->toPlainText();
            else if (const auto* simple = dynamic_cast<const QGraphicsSimpleTextItem*>(item))
                text = simple->text();
            if (text.contains(QChar(0x2026)) || text.contains(QStringLiteral("..."))) // Qt Charts' ellipsis
                problems[QStringLiteral("a chart shows '%1' elided").arg(text)] << page;
        }
    }
    for (const CurvePlot* plot : root->findChildren<CurvePlot*>())
        for (const QLabel* legend : plot->findChildren<QLabel*>(QStringLiteral("legend")))
            if (legend->isVisible() && !clipping(legend).isEmpty())
                problems[QStringLiteral("a chart's legend %1").arg(clipping(legend))] << page;
    for (const QPushButton* button : root->findChildren<QPushButton*>()) {
        if (!button->isVisible())
            continue;
        const QRect shown = button->visibleRegion().boundingRect();
        if (!shown.contains(button->rect()))
            problems[QStringLiteral("the button '%1' is not wholly in view (%2 of %3 px high shown)")
                         .arg(button->text())
                         .arg(shown.height())
                         .arg(button->height())]
                << page;
    }
}

// The main window in `language`, the Lessons dock open or closed, shown and exposed; null when it could not be.
std::unique_ptr<MainWindow> openWindow(const QString& language, bool lessons)
{
    if (!setLanguage(language))
        return nullptr;
    auto window = std::make_unique<MainWindow>();
    window->findChild<QDockWidget*>(QStringLiteral("lessonsDock"))->setVisible(lessons);
    window->show();
    if (!QTest::qWaitForWindowExposed(window.get()))
        return nullptr;
    return window;
}

} // namespace

class TestUiFit : public QObject {
    Q_OBJECT
public:
    // Before the application object exists: the offscreen platform reads its screens from a configuration file.
    static void initMain()
    {
        const QSize screen = screenOfThisProcess();
        const QString config = QDir::temp().filePath(QStringLiteral("tst_ui_fit_screen_%1.json").arg(getpid()));
        QFile file(config);
        if (!file.open(QIODevice::WriteOnly) ||
            file.write(QStringLiteral(R"({"screens": [{"name": "laptop", "x": 0, "y": 0, "width": %1, "height": %2,
                                          "logicalDpi": 96, "logicalBaseDpi": 96, "dpr": 1}]})")
                           .arg(screen.width())
                           .arg(screen.height())
                           .toUtf8()) < 0) {
            std::fprintf(stderr, "tst_ui_fit: cannot write %s\n", qPrintable(config));
            return;
        }
        qputenv("QT_QPA_PLATFORM", "offscreen:configfile=" + config.toLocal8Bit());
    }

private Q_SLOTS:
    void initTestCase()
    {
        test::isolateSettings(QStringLiteral("tst_ui_fit_") + sizeText(screenOfThisProcess()));
        const QRect screen = QGuiApplication::primaryScreen()->geometry();
        QCOMPARE(screen.size(), screenOfThisProcess());
    }
    void cleanup() { setLanguage(QStringLiteral("en")); }

    void windowFitsSmallScreen_data();
    void windowFitsSmallScreen();
    void schemePanelNotClipped_data();
    void schemePanelNotClipped();
    void controlsShowTheirText_data();
    void controlsShowTheirText();
    void trainTabShowsItsCharts_data();
    void trainTabShowsItsCharts();
    void modelTabShowsItsPages_data();
    void modelTabShowsItsPages();
};

void TestUiFit::windowFitsSmallScreen_data()
{
    QTest::addColumn<QString>("language");
    QTest::addColumn<bool>("lessons");
    for (const QString& language : {QStringLiteral("en"), QStringLiteral("zh_CN")})
        for (const bool lessons : {false, true})
            QTest::addRow("%s%s", qPrintable(language), lessons ? " lessons open" : "") << language << lessons;
}

void TestUiFit::windowFitsSmallScreen()
{
    QFETCH(QString, language);
    QFETCH(bool, lessons);
    if (QGuiApplication::primaryScreen()->size() != kLaptop)
        QSKIP("the small-screen start (Lessons dock collapsed) is checked on the laptop screen");
    QVERIFY(setLanguage(language));
    MainWindow window;
    auto* lessonsDock = window.findChild<QDockWidget*>(QStringLiteral("lessonsDock"));
    QVERIFY(lessonsDock);
    // A small screen: the Lessons dock starts collapsed.
    QVERIFY(lessonsDock->isHidden());
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    if (lessons) {
        lessonsDock->show();
        settle();
    }
    const QRect available = window.screen()->availableGeometry();
    QVERIFY2(available.contains(window.frameGeometry()),
             qPrintable(QStringLiteral("window %1,%2 %3x%4 outside the available %5x%6")
                            .arg(window.frameGeometry().x())
                            .arg(window.frameGeometry().y())
                            .arg(window.frameGeometry().width())
                            .arg(window.frameGeometry().height())
                            .arg(available.width())
                            .arg(available.height())));
    // What the layout needs fits too (else Qt would grow the window past the screen on the next relayout).
    const QSize needed = window.minimumSizeHint();
    QVERIFY2(needed.width() <= available.width() && needed.height() <= available.height(),
             qPrintable(QStringLiteral("the window needs %1x%2").arg(needed.width()).arg(needed.height())));
    QVERIFY(lessons ? lessonsDock->isVisible() : !lessonsDock->isVisible());
}

void TestUiFit::schemePanelNotClipped_data()
{
    QTest::addColumn<QString>("language");
    QTest::addColumn<QString>("scheme");
    QTest::addColumn<QString>("method");
    for (const QString& language : {QStringLiteral("en"), QStringLiteral("zh_CN")}) {
        for (const SchemeInfo& s : schemeCatalog()) {
            const QString name = QString::fromStdString(s.name);
            QTest::addRow("%s %s", qPrintable(language), qPrintable(name))
                << language << name << QStringLiteral("none");
            if (s.rotary)
                for (const RotaryMethodInfo& m : rotaryMethodCatalog())
                    if (m.method != RotaryMethod::None)
                        QTest::addRow("%s %s+%s", qPrintable(language), qPrintable(name), m.name.c_str())
                            << language << name << QString::fromStdString(m.name);
        }
    }
}

void TestUiFit::schemePanelNotClipped()
{
    QFETCH(QString, language);
    QFETCH(QString, scheme);
    QFETCH(QString, method);
    const std::unique_ptr<MainWindow> shown = openWindow(language, true);
    QVERIFY(shown);
    MainWindow& window = *shown;
    SchemePanel* panel = window.panel();
    panel->setScheme(scheme);
    panel->setScaling(method);
    settle();
    auto* scroll = qobject_cast<QScrollArea*>(panel->parentWidget()->parentWidget());
    QVERIFY(scroll);
    QVERIFY2(!scroll->horizontalScrollBar()->isVisible(),
             qPrintable(QStringLiteral("the panel needs %1 px, the dock shows %2")
                            .arg(panel->minimumSizeHint().width())
                            .arg(scroll->viewport()->width())));
    QVERIFY(panel->width() <= scroll->viewport()->width());
    int checked = 0;
    for (const QLabel* label : panel->findChildren<QLabel*>()) {
        if (!label->isVisibleTo(panel) || label->text().isEmpty())
            continue;
        ++checked;
        const QString problem = clipping(label);
        QVERIFY2(problem.isEmpty(), qPrintable(QStringLiteral("'%1': %2").arg(label->text().left(60), problem)));
    }
    QVERIFY(checked >= 5); // the headings, the formula, the explanation, the parameters
    Problems problems;
    findCutControls(panel, scheme + QLatin1Char('+') + method, problems);
    QVERIFY2(problems.isEmpty(), qPrintable(describe(problems)));
}

void TestUiFit::controlsShowTheirText_data()
{
    QTest::addColumn<QString>("language");
    QTest::addColumn<QSize>("screen");
    QTest::addColumn<bool>("lessons");
    for (const QString& language : {QStringLiteral("en"), QStringLiteral("zh_CN")})
        for (const QSize& screen : {kLaptop, kDesktop})
            for (const bool lessons : {false, true})
                QTest::addRow("%s %s%s", qPrintable(language), qPrintable(sizeText(screen)),
                              lessons ? " lessons open" : "")
                    << language << screen << lessons;
}

void TestUiFit::controlsShowTheirText()
{
    QFETCH(QString, language);
    QFETCH(QSize, screen);
    QFETCH(bool, lessons);
    if (const std::optional<QString> child = runOnOtherScreen(screen)) {
        QVERIFY2(child->isEmpty(), qPrintable(*child));
        return;
    }
    const std::unique_ptr<MainWindow> shown = openWindow(language, lessons);
    QVERIFY(shown);
    MainWindow& window = *shown;
    settle();
    Problems problems;
    auto* tabs = qobject_cast<QTabWidget*>(window.centralWidget());
    QVERIFY(tabs);
    for (int i = 0; i < tabs->count(); ++i) {
        tabs->setCurrentIndex(i);
        settle();
        findCutControls(&window, tabs->tabText(i), problems);
        // Pages within the tab (the Train tab's training runs and methods).
        for (QTabWidget* inner : tabs->widget(i)->findChildren<QTabWidget*>()) {
            for (int j = 0; j < inner->count(); ++j) {
                inner->setCurrentIndex(j);
                settle();
                findCutControls(&window, tabs->tabText(i) + QStringLiteral(" > ") + inner->tabText(j), problems);
            }
            inner->setCurrentIndex(0);
        }
    }
    // The panel's fullest state: a rotary scheme with a length-extension method and its parameters.
    window.panel()->setScheme(QStringLiteral("rope"));
    window.panel()->setScaling(QStringLiteral("yarn"));
    settle();
    findCutControls(window.panel(), QStringLiteral("rope+yarn"), problems);
    for (const QLabel* label : window.panel()->findChildren<QLabel*>())
        if (label->isVisible() && !label->text().isEmpty() && !clipping(label).isEmpty())
            problems[QStringLiteral("the label '%1' %2").arg(label->text().left(60), clipping(label))]
                << QStringLiteral("rope+yarn");
    QVERIFY2(problems.isEmpty(), qPrintable(describe(problems)));
}

void TestUiFit::trainTabShowsItsCharts_data()
{
    controlsShowTheirText_data();
}

// The Train tab with its two small charts drawn (the default schemes' loss and perplexity curves, as a run leaves
// them): no axis title or legend entry elided or cut, and its buttons in view without scrolling.
void TestUiFit::trainTabShowsItsCharts()
{
    QFETCH(QString, language);
    QFETCH(QSize, screen);
    QFETCH(bool, lessons);
    if (const std::optional<QString> child = runOnOtherScreen(screen)) {
        QVERIFY2(child->isEmpty(), qPrintable(*child));
        return;
    }
    const std::unique_ptr<MainWindow> shown = openWindow(language, lessons);
    QVERIFY(shown);
    MainWindow& window = *shown;
    window.showView(QStringLiteral("train"));
    settle();
    QWidget* train = window.view(QStringLiteral("train"));
    const std::vector<std::string> schemes = TrainRequest{}.schemes;
    std::vector<Curve> losses(schemes.size());
    std::vector<std::vector<EvalPoint>> evals(schemes.size());
    for (size_t i = 0; i < schemes.size(); ++i) {
        for (int step = 0; step <= 300; step += 10) {
            losses[i].x.push_back(step);
            losses[i].y.push_back(5.5 / (1 + step / 60.0) + 0.1 * double(i));
        }
        for (int length : {64, 128, 256, 512, 1024}) {
            EvalPoint p;
            p.length = length;
            p.perplexity = 3 + double(i) + length / 256.0;
            evals[i].push_back(p);
        }
    }
    QList<CurvePlot*> plots; // the training runs' loss and perplexity charts: the shown ones
    for (CurvePlot* plot : train->findChildren<CurvePlot*>())
        if (plot->isVisible())
            plots << plot;
    QCOMPARE(plots.size(), 2);
    plots[0]->setFigure(trainingLossFigure(schemes, losses, 64));
    plots[1]->setFigure(perplexityFigure(schemes, evals, 64));
    settle();
    QVERIFY(!plots[0]->isShowingHint() && !plots[1]->isShowingHint());
    Problems problems;
    findCutChartsAndButtons(train, QStringLiteral("train"), problems);
    QVERIFY2(problems.isEmpty(), qPrintable(describe(problems)));
}

void TestUiFit::modelTabShowsItsPages_data()
{
    controlsShowTheirText_data();
}

// The Your model tab with a tiny folder open: the opened map has room to be read beside or under the layer x head grid,
// and after an evaluation under methods the chart's ticks, titles and legend are whole and the controls in view.
void TestUiFit::modelTabShowsItsPages()
{
    QFETCH(QString, language);
    QFETCH(QSize, screen);
    QFETCH(bool, lessons);
    if (const std::optional<QString> child = runOnOtherScreen(screen)) {
        QVERIFY2(child->isEmpty(), qPrintable(*child));
        return;
    }
    const std::unique_ptr<MainWindow> shown = openWindow(language, lessons);
    QVERIFY(shown);
    MainWindow& window = *shown;
    HfModelView* view = window.modelView();
    window.showView(view->viewId());
    view->setPage(HfModelView::AttentionPage);
    view->setPositions(QStringLiteral("yarn")); // the longest parameter form of the positions chooser
    view->openFolder(QStringLiteral(POSITIONLAB_TEST_DATA "/hf/qwen2_text"));
    QTRY_VERIFY_WITH_TIMEOUT(view->hasPicture() && !view->isBusy(), 60000);
    settle();
    const QRect available = window.screen()->availableGeometry();
    QVERIFY2(available.contains(window.frameGeometry()),
             qPrintable(QStringLiteral("with a model open, the window is %1x%2, the screen %3x%4")
                            .arg(window.frameGeometry().width())
                            .arg(window.frameGeometry().height())
                            .arg(available.width())
                            .arg(available.height())));
    const QWidget* map = view->findChild<TokenMapWidget*>();
    QVERIFY(map);
    const int minSide = 360; // a map of 64 tokens with its axes, colour bar and title: below this the labels pile up
    QVERIFY2(map->width() >= minSide && map->height() >= minSide,
             qPrintable(QStringLiteral("the opened map is %1 x %2 px; at least %3 px a side wanted")
                            .arg(map->width())
                            .arg(map->height())
                            .arg(minSide)));
    Problems problems;
    findCutControls(view, QStringLiteral("model attention"), problems);
    findFieldsOutOfView(window, view, problems);
    view->setPage(HfModelView::MethodsPage);
    view->setMethodsLengths(QStringLiteral("8,16,32,64"));
    view->setMethodsTokensPerLength(256);
    view->evaluateMethods();
    QTRY_VERIFY_WITH_TIMEOUT(!view->isBusy(), 120000);
    QVERIFY2(view->methodsResult().error.isEmpty(), qPrintable(view->methodsResult().error));
    settle();
    findCutControls(view, QStringLiteral("model methods"), problems);
    findCutChartsAndButtons(view, QStringLiteral("model methods"), problems);
    QVERIFY2(problems.isEmpty(), qPrintable(describe(problems)));
}

PLAB_QTEST_MAIN(TestUiFit)
#include "tst_ui_fit.moc"
