// Small rooms, kept small: no function over 80 lines and no source file over 900 in core/, ui/, app/, python/ and
// benchmarks/, read from the sources as tst_layering reads includes. No exceptions: the last were split in issue 27.
#include "code_size.h"
#include "source_files.h"
#include "test_main.h"

#include <QDir>
#include <QDirIterator>
#include <QFile>

using plab::test::FunctionSpan;
using plab::test::functionSpans;

namespace {

constexpr int kFunctionLimit = 80;
constexpr int kFileLimit = 900;

// Every C++ source below the product's folders (tests/ are not held to these limits), relative to the project root.
QStringList productSources()
{
    QStringList files;
    for (const QString& folder : {QStringLiteral("core"), QStringLiteral("ui"), QStringLiteral("app"),
                                  QStringLiteral("python"), QStringLiteral("benchmarks")})
        files << plab::test::sourcesBelow(folder);
    files.sort();
    return files;
}

QString readSource(const QString& file)
{
    QFile f(QDir(QStringLiteral(POSITIONLAB_SOURCE_DIR)).filePath(file));
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return QString::fromUtf8(f.readAll());
}

int lineCount(const QString& text)
{
    return int(text.count(QLatin1Char('\n'))) + (text.isEmpty() || text.endsWith(QLatin1Char('\n')) ? 0 : 1);
}

} // namespace

class TestCodeSize : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void scannerFindsFunctions_data();
    void scannerFindsFunctions();
    void filesWithinLimit_data();
    void filesWithinLimit();
    void functionsWithinLimit_data();
    void functionsWithinLimit();
};

// The scanner on hand-written sources whose functions are counted by eye: "name:first-last" per function.
void TestCodeSize::scannerFindsFunctions_data()
{
    QTest::addColumn<QString>("source");
    QTest::addColumn<QString>("expected");
    QTest::newRow("plain") << "int f(int a)\n{\n    return a;\n}\n"
                           << "f:1-4";
    QTest::newRow("namespace and class") << "namespace a {\nclass C {\npublic:\n    int g() const { return 1; }\n"
                                            "    int m = 2;\n};\nvoid C2::h() noexcept\n{\n}\n}\n"
                                         << "g:4-4 C2::h:7-9";
    QTest::newRow("braces in strings and comments")
        << "void f()\n{\n    auto s = \"}{\"; // }\n    /* { */ char c = '}';\n}\n"
        << "f:1-5";
    QTest::newRow("raw string") << "void f()\n{\n    auto s = R\"x(})x\";\n}\nvoid g() {}\n"
                                << "f:1-4 g:5-5";
    QTest::newRow("init list with braces") << "Foo::Foo(int a)\n    : m_a(a), m_b{a}\n{\n    if (a) { a = 1; }\n}\n"
                                           << "Foo::Foo:1-5";
    QTest::newRow("lambdas inside count") << "void f()\n{\n    auto g = [] {\n        return 1;\n    };\n}\n"
                                          << "f:1-6";
    QTest::newRow("namespace-level lambda and table")
        << "const auto g = [](int a) {\n    if (a) { return 1; }\n    return 0;\n};\nconst int t[] = {1, 2};\n"
           "int h() { return t[0]; }\n"
        << "h:6-6";
    QTest::newRow("enum and template") << "enum class E { A, B };\ntemplate <class T>\nT f(T x)\n{\n    return x;\n}\n"
                                       << "f:2-6";
    QTest::newRow("operator and trailing return") << "bool operator==(A a, A b) { return true; }\n"
                                                     "auto k() -> int\n{\n    return 1;\n}\n"
                                                  << "operator==:1-1 k:2-5";
    QTest::newRow("preprocessor and digit separator") << "#define X {\nint f()\n{\n    return 1'000;\n}\n"
                                                      << "f:2-5";
}

void TestCodeSize::scannerFindsFunctions()
{
    QFETCH(QString, source);
    QFETCH(QString, expected);
    QStringList found;
    for (const FunctionSpan& span : functionSpans(source))
        found << QStringLiteral("%1:%2-%3").arg(span.name).arg(span.firstLine).arg(span.lastLine);
    QCOMPARE(found.join(QLatin1Char(' ')), expected);
}

void TestCodeSize::filesWithinLimit_data()
{
    QTest::addColumn<QString>("file");
    const QStringList files = productSources();
    QVERIFY(files.contains(QStringLiteral("core/model/model.cpp"))); // the walk found the sources
    for (const QString& file : files)
        QTest::newRow(qPrintable(file)) << file;
}

void TestCodeSize::filesWithinLimit()
{
    QFETCH(QString, file);
    const int lines = lineCount(readSource(file));
    QVERIFY2(lines <= kFileLimit, qPrintable(QStringLiteral("%1 has %2 lines; allowed: at most %3 (split it by topic)")
                                                 .arg(file)
                                                 .arg(lines)
                                                 .arg(kFileLimit)));
}

void TestCodeSize::functionsWithinLimit_data()
{
    QTest::addColumn<QString>("file");
    for (const QString& file : productSources())
        QTest::newRow(qPrintable(file)) << file;
}

void TestCodeSize::functionsWithinLimit()
{
    QFETCH(QString, file);
    QStringList over;
    for (const FunctionSpan& span : functionSpans(readSource(file))) {
        if (span.lines() > kFunctionLimit)
            over << QStringLiteral("%1 (lines %2-%3): %4 lines, allowed at most %5")
                        .arg(span.name)
                        .arg(span.firstLine)
                        .arg(span.lastLine)
                        .arg(span.lines())
                        .arg(kFunctionLimit);
    }
    QVERIFY2(over.isEmpty(), qPrintable(file + QStringLiteral(": ") + over.join(QStringLiteral("; "))));
}

PLAB_QTEST_APPLESS_MAIN(TestCodeSize)
#include "tst_code_size.moc"
