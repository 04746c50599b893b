// The layering the build relies on, read from the sources: core/ includes no Qt, ui/ includes nothing from app/.
#include "test_main.h"

#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QRegularExpression>
#include <QSet>

namespace {

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

// Every C++ source below `folder` of the project, relative to the project root.
QStringList sourcesBelow(const QString& folder)
{
    QStringList files;
    const QDir root(QStringLiteral(POSITIONLAB_SOURCE_DIR));
    QDirIterator it(root.filePath(folder), {QStringLiteral("*.h"), QStringLiteral("*.cpp")}, QDir::Files,
                    QDirIterator::Subdirectories);
    while (it.hasNext())
        files << root.relativeFilePath(it.next());
    files.sort();
    return files;
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

} // namespace

class TestLayering : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void coreIncludesNoQt_data();
    void coreIncludesNoQt();
    void uiIncludesNothingFromApp_data();
    void uiIncludesNothingFromApp();
};

void TestLayering::coreIncludesNoQt_data()
{
    QTest::addColumn<QString>("file");
    const QStringList files = sourcesBelow(QStringLiteral("core"));
    QVERIFY(files.contains(QStringLiteral("core/model.cpp"))); // the walk found the core
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
    QVERIFY(files.contains(QStringLiteral("ui/views.h")));
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

PLAB_QTEST_APPLESS_MAIN(TestLayering)
#include "tst_layering.moc"
