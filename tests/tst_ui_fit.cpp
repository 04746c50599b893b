// The main window on a 1366 x 768 laptop screen (the offscreen platform with a screen of that size), in English and
// Chinese: it opens within the available geometry, and no text of the scheme panel is clipped for any scheme.
#include "settings/i18n.h"
#include "tabs/scheme_panel.h"
#include "window/main_window.h"

#include "schemes/rotary_scaling.h"
#include "test_main.h"
#include "test_settings.h"

#include <QDir>
#include <QDockWidget>
#include <QLabel>
#include <QScreen>
#include <QScrollArea>
#include <QScrollBar>
#include <QtTest>

#include <cstdio>

using namespace plab;
using namespace plab::ui;

namespace {

constexpr int kScreenWidth = 1366;
constexpr int kScreenHeight = 768;

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

} // namespace

class TestUiFit : public QObject {
    Q_OBJECT
public:
    // Before the application object exists: the offscreen platform reads its screens from a configuration file.
    static void initMain()
    {
        const QString config = QDir::temp().filePath(QStringLiteral("tst_ui_fit_screen_%1.json").arg(getpid()));
        QFile file(config);
        if (!file.open(QIODevice::WriteOnly) ||
            file.write(QStringLiteral(R"({"screens": [{"name": "laptop", "x": 0, "y": 0, "width": %1, "height": %2,
                                          "logicalDpi": 96, "logicalBaseDpi": 96, "dpr": 1}]})")
                           .arg(kScreenWidth)
                           .arg(kScreenHeight)
                           .toUtf8()) < 0) {
            std::fprintf(stderr, "tst_ui_fit: cannot write %s\n", qPrintable(config));
            return;
        }
        qputenv("QT_QPA_PLATFORM", "offscreen:configfile=" + config.toLocal8Bit());
    }

private Q_SLOTS:
    void initTestCase()
    {
        test::isolateSettings(QStringLiteral("tst_ui_fit"));
        const QRect screen = QGuiApplication::primaryScreen()->geometry();
        QCOMPARE(screen.size(), QSize(kScreenWidth, kScreenHeight));
    }
    void cleanup() { setLanguage(QStringLiteral("en")); }

    void windowFitsSmallScreen_data();
    void windowFitsSmallScreen();
    void schemePanelNotClipped_data();
    void schemePanelNotClipped();
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
    QVERIFY(setLanguage(language));
    MainWindow window;
    window.findChild<QDockWidget*>(QStringLiteral("lessonsDock"))->show();
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
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
}

PLAB_QTEST_MAIN(TestUiFit)
#include "tst_ui_fit.moc"
