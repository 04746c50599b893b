// The layering the build relies on, read from the sources: core/ includes no Qt, ui/ includes nothing from app/, and
// within core/ and ui/ each part (folder) includes only itself and the parts below it.
#include "source_files.h"
#include "test_main.h"

#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QRegularExpression>
#include <QSet>

namespace {

using plab::test::sourcesBelow;

// The include lines of a source file, as written between the quotes or angle brackets.
QStringList includesOf(const QString& path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return {QStringLiteral("<unreadable %1>").arg(path)};
    static const QRegularExpression include(QStringLiteral("^\\s*#\\s*include\\s*[<\"]([^>\"]+)[>\"]"),
                                            QRegularExpression::MultilineOption);
    QStringList names;
    for (auto it = include.globalMatch(QString::fromUtf8(file.readAll())); it.hasNext();)
        names << it.next().captured(1);
    return names;
}

// The quoted include lines of a source file: the project's own headers (angle brackets name the system's).
QStringList quotedIncludesOf(const QString& path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return {QStringLiteral("<unreadable %1>").arg(path)};
    static const QRegularExpression include(QStringLiteral("^\\s*#\\s*include\\s*\"([^\"]+)\""),
                                            QRegularExpression::MultilineOption);
    QStringList names;
    for (auto it = include.globalMatch(QString::fromUtf8(file.readAll())); it.hasNext();)
        names << it.next().captured(1);
    return names;
}

// File names of the headers below `folder` (what a quoted include of that folder would name).
QSet<QString> headerNames(const QString& folder)
{
    QSet<QString> names;
    for (const QString& file : sourcesBelow(folder))
        if (file.endsWith(QLatin1String(".h")))
            names.insert(QFileInfo(file).fileName());
    return names;
}

// The parts of each library, lowest first: a part may include itself and the parts before it, never one after it.
// docs/architecture.md's file map lists them in this order. A new part (a new folder) must be placed here, or its files
// fail.
const QStringList& partsInOrder(const QString& library)
{
    static const QStringList core = {QStringLiteral("base"),  QStringLiteral("schemes"), QStringLiteral("attention"),
                                     QStringLiteral("views"), QStringLiteral("model"),   QStringLiteral("hf"),
                                     QStringLiteral("tasks"), QStringLiteral("runs"),    QStringLiteral("lessons")};
    static const QStringList ui = {QStringLiteral("settings"), QStringLiteral("painting"), QStringLiteral("charts"),
                                   QStringLiteral("workers"),  QStringLiteral("tabs"),     QStringLiteral("window")};
    return library == QLatin1String("core") ? core : ui;
}

} // namespace

class TestLayering : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void coreIncludesNoQt_data();
    void coreIncludesNoQt();
    void uiIncludesNothingFromApp_data();
    void uiIncludesNothingFromApp();
    void partsIncludeOnlyDownward_data();
    void partsIncludeOnlyDownward();
    void partsAreKnown_data();
    void partsAreKnown();
};

void TestLayering::coreIncludesNoQt_data()
{
    QTest::addColumn<QString>("file");
    const QStringList files = sourcesBelow(QStringLiteral("core"));
    QVERIFY(files.contains(QStringLiteral("core/model/model.cpp"))); // the walk found the core
    for (const QString& file : files)
        QTest::newRow(qPrintable(file)) << file;
}

void TestLayering::coreIncludesNoQt()
{
    QFETCH(QString, file);
    static const QRegularExpression qt(QStringLiteral("^(Q[A-Z]|Qt[A-Za-z]*/|q[a-z]+\\.h$)"));
    for (const QString& name : includesOf(QDir(QStringLiteral(POSITIONLAB_SOURCE_DIR)).filePath(file)))
        QVERIFY2(!qt.match(name).hasMatch(), qPrintable(file + QStringLiteral(" includes ") + name));
}

void TestLayering::uiIncludesNothingFromApp_data()
{
    QTest::addColumn<QString>("file");
    const QStringList files = sourcesBelow(QStringLiteral("ui"));
    QVERIFY(files.contains(QStringLiteral("ui/tabs/view_base.h")));
    for (const QString& file : files)
        QTest::newRow(qPrintable(file)) << file;
}

void TestLayering::uiIncludesNothingFromApp()
{
    QFETCH(QString, file);
    // A quoted name that only app/ provides (ui/ and core/ have no header of that name) is an include from app/.
    const QSet<QString> appOnly =
        headerNames(QStringLiteral("app")) - headerNames(QStringLiteral("ui")) - headerNames(QStringLiteral("core"));
    QVERIFY(appOnly.contains(QStringLiteral("cli.h")));
    for (const QString& name : includesOf(QDir(QStringLiteral(POSITIONLAB_SOURCE_DIR)).filePath(file))) {
        QVERIFY2(!name.startsWith(QLatin1String("app/")) && !name.contains(QLatin1String("../app")),
                 qPrintable(file + QStringLiteral(" includes ") + name));
        QVERIFY2(!appOnly.contains(QFileInfo(name).fileName()), qPrintable(file + QStringLiteral(" includes ") + name));
    }
}

void TestLayering::partsIncludeOnlyDownward_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("library");
    for (const QString& library : {QStringLiteral("core"), QStringLiteral("ui")})
        for (const QString& file : sourcesBelow(library))
            QTest::newRow(qPrintable(file)) << file << library;
}

void TestLayering::partsIncludeOnlyDownward()
{
    QFETCH(QString, file);
    QFETCH(QString, library);
    const QStringList& parts = partsInOrder(library);
    const QStringList path = file.split(QLatin1Char('/'));
    QVERIFY2(path.size() == 3, qPrintable(file + QStringLiteral(" is not in a part (a folder of ") + library + ')'));
    const qsizetype own = parts.indexOf(path[1]);
    QVERIFY2(own >= 0, qPrintable(file + QStringLiteral(" is in a part not listed in partsInOrder")));
    const QString source = QDir(QStringLiteral(POSITIONLAB_SOURCE_DIR)).filePath(file);
    for (const QString& name : quotedIncludesOf(source)) {
        if (name.endsWith(QLatin1String(".moc")))
            continue; // moc's output for this very file
        const QString part = name.section(QLatin1Char('/'), 0, 0);
        // Quoted includes name their part ("model/model.h"), so the order can be read from the name alone.
        QVERIFY2(name.contains(QLatin1Char('/')),
                 qPrintable(file + QStringLiteral(" includes ") + name + QStringLiteral(" without naming its part")));
        const qsizetype included = parts.indexOf(part);
        if (included < 0) {
            // From ui/, a core part (lower than every ui part) is fine; anything else is unknown.
            QVERIFY2(library == QLatin1String("ui") && partsInOrder(QStringLiteral("core")).contains(part),
                     qPrintable(file + QStringLiteral(" includes ") + name + QStringLiteral(", from no known part")));
            continue;
        }
        QVERIFY2(included <= own,
                 qPrintable(file + QStringLiteral(" (part ") + path[1] + QStringLiteral(") includes ") + name +
                            QStringLiteral(", from the higher part ") + part));
    }
}

// Every folder below core/ and ui/ is a part in partsInOrder, and no part is listed that has no folder.
void TestLayering::partsAreKnown_data()
{
    QTest::addColumn<QString>("library");
    QTest::newRow("core") << QStringLiteral("core");
    QTest::newRow("ui") << QStringLiteral("ui");
}

void TestLayering::partsAreKnown()
{
    QFETCH(QString, library);
    const QDir dir(QDir(QStringLiteral(POSITIONLAB_SOURCE_DIR)).filePath(library));
    QStringList folders = dir.entryList(QDir::Dirs | QDir::NoDotAndDotDot);
    QStringList parts = partsInOrder(library);
    folders.sort();
    parts.sort();
    QCOMPARE(folders, parts);
}

PLAB_QTEST_APPLESS_MAIN(TestLayering)
#include "tst_layering.moc"
