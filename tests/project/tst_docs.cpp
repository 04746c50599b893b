// The docs keep up with the code: every relative link and picture of README.md and docs/ resolves, the file map of
// docs/architecture.md names every source file and only files that exist, and docs/cli.md lists every verb and
// option that positionlab-cli's --help lists.
#include "cli_runner.h"
#include "test_main.h"

#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>
#include <QHash>
#include <QRegularExpression>
#include <QSet>
#include <QUrl>

namespace {

QDir sourceDir()
{
    return QDir(QStringLiteral(POSITIONLAB_SOURCE_DIR));
}

// A file of the repository (path relative to its root) as UTF-8 text; a null string when it cannot be read.
QString readText(const QString& relative)
{
    QFile file(sourceDir().filePath(relative));
    if (!file.open(QIODevice::ReadOnly))
        return {};
    return QString::fromUtf8(file.readAll());
}

struct MarkdownLine {
    int number = 0; // from 1
    QString text;
};

// The lines of a Markdown text outside its fenced code blocks (``` or ````: a fence closes with at least as many
// backticks as opened it), so that "# comment" in a shell example is no heading and a path in it no link.
QList<MarkdownLine> proseLines(const QString& text)
{
    static const QRegularExpression fence(QStringLiteral("^\\s*(`{3,}|~{3,})"));
    QList<MarkdownLine> lines;
    QString open; // the fence being inside of, empty outside
    const QStringList all = text.split(QLatin1Char('\n'));
    for (int i = 0; i < all.size(); ++i) {
        const QRegularExpressionMatch m = fence.match(all[i]);
        if (m.hasMatch()) {
            const QString marks = m.captured(1);
            if (open.isEmpty())
                open = marks;
            else if (marks[0] == open[0] && marks.size() >= open.size())
                open.clear();
            continue;
        }
        if (open.isEmpty())
            lines.append({i + 1, all[i]});
    }
    return lines;
}

// GitHub's anchor of a heading: lower case, every character but letters, marks, digits, '_', '-' and spaces dropped,
// spaces turned into '-'.
QString headingSlug(const QString& heading)
{
    QString slug;
    for (const QChar c : heading.toLower()) {
        if (c.isLetterOrNumber() || c.isMark() || c == QLatin1Char('_') || c == QLatin1Char('-'))
            slug += c;
        else if (c == QLatin1Char(' '))
            slug += QLatin1Char('-');
    }
    return slug;
}

// Every anchor of a Markdown file: each heading's slug, a repeated one with -1, -2, ... as GitHub numbers them.
QSet<QString> anchorsOf(const QString& relative)
{
    static const QRegularExpression heading(QStringLiteral("^#{1,6}\\s+(.*?)\\s*#*\\s*$"));
    QSet<QString> anchors;
    QHash<QString, int> seen;
    for (const MarkdownLine& line : proseLines(readText(relative))) {
        const QRegularExpressionMatch m = heading.match(line.text);
        if (!m.hasMatch())
            continue;
        const QString slug = headingSlug(m.captured(1));
        const int repeats = seen.value(slug, 0);
        anchors.insert(repeats == 0 ? slug : slug + QLatin1Char('-') + QString::number(repeats));
        seen[slug] = repeats + 1;
    }
    return anchors;
}

// The pages whose links are checked: README.md and every docs/*.md, relative to the repository's root.
QStringList markdownPages()
{
    QStringList pages = {QStringLiteral("README.md")};
    const QStringList docs =
        QDir(sourceDir().filePath(QStringLiteral("docs"))).entryList({QStringLiteral("*.md")}, QDir::Files, QDir::Name);
    for (const QString& name : docs)
        pages << QStringLiteral("docs/") + name;
    return pages;
}

struct Link {
    int line = 0;
    QString target; // as written: path, #anchor or path#anchor
};

// The relative links and pictures of a page, `[text](target)` and `![alt](target)` outside code (fenced blocks and
// `inline code`); links with a scheme (https:, mailto:) are the web's, not checked here.
QList<Link> relativeLinks(const QString& page)
{
    static const QRegularExpression code(QStringLiteral("`+[^`]*`+"));
    static const QRegularExpression link(QStringLiteral("\\]\\(\\s*<?([^)\\s>]+)>?(?:\\s+\"[^\"]*\")?\\s*\\)"));
    static const QRegularExpression scheme(QStringLiteral("^[A-Za-z][A-Za-z0-9+.-]*:"));
    QList<Link> links;
    for (const MarkdownLine& line : proseLines(readText(page))) {
        QString text = line.text;
        text.replace(code, QStringLiteral("``"));
        for (auto it = link.globalMatch(text); it.hasNext();) {
            const QString target = it.next().captured(1);
            if (!scheme.match(target).hasMatch())
                links.append({line.number, target});
        }
    }
    return links;
}

// The lines of `text` from the heading line `heading` (exactly) to the next heading of the same or a higher level.
QString section(const QString& text, const QString& heading)
{
    const QStringList lines = text.split(QLatin1Char('\n'));
    const qsizetype level = heading.indexOf(QLatin1Char(' '));
    const qsizetype start = lines.indexOf(heading);
    if (start < 0)
        return {};
    QStringList body;
    for (qsizetype i = start + 1; i < lines.size(); ++i) {
        const qsizetype hashes = lines[i].indexOf(QLatin1Char(' '));
        if (hashes > 0 && hashes <= level && lines[i].left(hashes) == QString(hashes, QLatin1Char('#')))
            break;
        body << lines[i];
    }
    return body.join(QLatin1Char('\n'));
}

// The paths the file map names, one line per file: "- `path`: what it holds".
QStringList mapPaths()
{
    static const QRegularExpression entry(QStringLiteral("^- `([^`]+)`"), QRegularExpression::MultilineOption);
    const QString map = section(readText(QStringLiteral("docs/architecture.md")), QStringLiteral("## File map"));
    QStringList paths;
    for (auto it = entry.globalMatch(map); it.hasNext();)
        paths << it.next().captured(1);
    return paths;
}

// The folders whose sources the file map must name, each with all its subfolders: the libraries and apps, the tests
// (by part, and the fuzzers) and the benchmarks.
constexpr const char* kMapFolders[] = {"core", "ui", "app", "tests", "benchmarks", "python"};

QStringList sourcesIn(const char* folder)
{
    QStringList files;
    QDirIterator it(sourceDir().filePath(QString::fromLatin1(folder)), {QStringLiteral("*.h"), QStringLiteral("*.cpp")},
                    QDir::Files, QDirIterator::Subdirectories);
    while (it.hasNext())
        files << sourceDir().relativeFilePath(it.next());
    files.sort();
    return files;
}

// The entries of a --help listing: the first word of each line after the line `header` up to the next blank line.
QStringList listedAfter(const QByteArray& help, const QString& header, const QRegularExpression& entry)
{
    QStringList names;
    bool listing = false;
    for (const QString& line : QString::fromUtf8(help).split(QLatin1Char('\n'))) {
        if (line.trimmed() == header)
            listing = true;
        else if (listing && line.trimmed().isEmpty())
            break;
        else if (listing)
            if (const QRegularExpressionMatch m = entry.match(line); m.hasMatch())
                names << m.captured(1);
    }
    return names;
}

QStringList cliVerbs()
{
    const plab::test::CliResult r = plab::test::runCli({QStringLiteral("--help")});
    if (r.exitCode != 0)
        return {};
    return listedAfter(r.out, QStringLiteral("verbs:"), QRegularExpression(QStringLiteral("^  (\\S+)")));
}

// A verb's section of docs/cli.md: from its heading "### `verb`" to the next heading.
QString cliVerbSection(const QString& verb)
{
    return section(readText(QStringLiteral("docs/cli.md")), QStringLiteral("### `%1`").arg(verb));
}

} // namespace

class TestDocs : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void readmeIsAFrontPage_data();
    void readmeIsAFrontPage();
    void linksResolve_data();
    void linksResolve();
    void everySourceIsMapped_data();
    void everySourceIsMapped();
    void mappedFilesExist_data();
    void mappedFilesExist();
    void cliPageListsVerb_data();
    void cliPageListsVerb();
    void cliPageListsOption_data();
    void cliPageListsOption();
};

void TestDocs::readmeIsAFrontPage_data()
{
    QTest::addColumn<QString>("what");
    QTest::newRow("at most 300 lines") << QString();
    // CI runs the test command (.ci/run); the set-up section shows it and the run command exactly.
    QTest::newRow("the test command") << QStringLiteral("bash scripts/setup.sh test");
    QTest::newRow("the run command") << QStringLiteral("bash scripts/setup.sh run");
    QTest::newRow("the table of contents of docs/") << QStringLiteral("](docs/cli.md)");
}

// README.md stays the front page: short, with the two set-up commands and a way into docs/.
void TestDocs::readmeIsAFrontPage()
{
    QFETCH(QString, what);
    const QString readme = readText(QStringLiteral("README.md"));
    QVERIFY(!readme.isEmpty());
    if (what.isEmpty()) {
        const qsizetype lines = readme.count(QLatin1Char('\n'));
        QVERIFY2(lines <= 300,
                 qPrintable(QStringLiteral("README.md has %1 lines; its detail belongs in docs/").arg(lines)));
        return;
    }
    QVERIFY2(readme.contains(what), qPrintable(QStringLiteral("README.md does not show ") + what));
}

void TestDocs::linksResolve_data()
{
    QTest::addColumn<QString>("page");
    QTest::addColumn<QString>("target");
    const QStringList pages = markdownPages();
    QVERIFY2(pages.contains(QStringLiteral("docs/architecture.md")), qPrintable(pages.join(QLatin1Char(' '))));
    int links = 0;
    for (const QString& page : pages)
        for (const Link& link : relativeLinks(page)) {
            QTest::addRow("%s:%d %s", qPrintable(page), link.line, qPrintable(link.target)) << page << link.target;
            ++links;
        }
    QVERIFY2(links > 50, qPrintable(QStringLiteral("only %1 links found").arg(links))); // the parser found them
}

// The file (or folder) a link names exists, relative to its page; an #anchor names a heading of the target page.
void TestDocs::linksResolve()
{
    QFETCH(QString, page);
    QFETCH(QString, target);
    const qsizetype hash = target.indexOf(QLatin1Char('#'));
    const QString path = QUrl::fromPercentEncoding(target.left(hash < 0 ? target.size() : hash).toUtf8());
    const QString anchor = hash < 0 ? QString() : QUrl::fromPercentEncoding(target.mid(hash + 1).toUtf8());
    const QString resolved = path.isEmpty() ? page : QDir::cleanPath(QFileInfo(page).path() + QLatin1Char('/') + path);
    QVERIFY2(QFileInfo::exists(sourceDir().filePath(resolved)),
             qPrintable(page + QStringLiteral(" links to ") + target + QStringLiteral(", but ") + resolved +
                        QStringLiteral(" does not exist")));
    if (anchor.isEmpty() || !resolved.endsWith(QLatin1String(".md")))
        return;
    const QSet<QString> anchors = anchorsOf(resolved);
    QVERIFY2(anchors.contains(anchor), qPrintable(page + QStringLiteral(" links to ") + target + QStringLiteral(": ") +
                                                  resolved + QStringLiteral(" has no heading #") + anchor));
}

void TestDocs::everySourceIsMapped_data()
{
    QTest::addColumn<QString>("file");
    int files = 0;
    for (const char* folder : kMapFolders)
        for (const QString& file : sourcesIn(folder)) {
            QTest::newRow(qPrintable(file)) << file;
            ++files;
        }
    QVERIFY2(files > 150, qPrintable(QStringLiteral("only %1 sources found").arg(files)));
}

// Every .h and .cpp of the folders in kMapFolders has its line in docs/architecture.md's file map.
void TestDocs::everySourceIsMapped()
{
    QFETCH(QString, file);
    static const QStringList paths = mapPaths();
    QVERIFY2(paths.contains(file),
             qPrintable(QStringLiteral("docs/architecture.md's file map has no line for ") + file +
                        QStringLiteral("; add \"- `") + file + QStringLiteral("`: what it holds\" under its part")));
}

void TestDocs::mappedFilesExist_data()
{
    QTest::addColumn<QString>("path");
    const QStringList paths = mapPaths();
    QVERIFY2(paths.size() > 150, qPrintable(QStringLiteral("only %1 map lines found").arg(paths.size())));
    QSet<QString> seen;
    for (const QString& path : paths) {
        QVERIFY2(!seen.contains(path), qPrintable(QStringLiteral("the file map names ") + path + " twice"));
        seen.insert(path);
        QTest::newRow(qPrintable(path)) << path;
    }
}

// Every file the map names is there (a file moved or removed takes its line with it).
void TestDocs::mappedFilesExist()
{
    QFETCH(QString, path);
    QVERIFY2(QFileInfo(sourceDir().filePath(path)).isFile(),
             qPrintable(QStringLiteral("docs/architecture.md's file map names ") + path +
                        QStringLiteral(", which does not exist")));
}

void TestDocs::cliPageListsVerb_data()
{
    QTest::addColumn<QString>("verb");
    const QStringList verbs = cliVerbs();
    QVERIFY2(verbs.contains(QStringLiteral("bias")) && verbs.contains(QStringLiteral("train")),
             qPrintable(QStringLiteral("verbs read from positionlab-cli --help: ") + verbs.join(QLatin1Char(' '))));
    for (const QString& verb : verbs)
        QTest::newRow(qPrintable(verb)) << verb;
}

// Every verb of `positionlab-cli --help` has its heading in docs/cli.md, with its usage (scripts/cli_docs.py).
void TestDocs::cliPageListsVerb()
{
    QFETCH(QString, verb);
    const QString body = cliVerbSection(verb);
    QVERIFY2(!body.isEmpty(), qPrintable(QStringLiteral("docs/cli.md has no heading ### `") + verb +
                                         QStringLiteral("`; run python3 scripts/cli_docs.py")));
    QVERIFY2(body.contains(QStringLiteral("positionlab-cli ") + verb),
             qPrintable(QStringLiteral("docs/cli.md's section of ") + verb + QStringLiteral(" shows no usage")));
}

void TestDocs::cliPageListsOption_data()
{
    QTest::addColumn<QString>("verb");
    QTest::addColumn<QString>("option");
    static const QRegularExpression option(QStringLiteral("^  (-o|--[A-Za-z0-9][A-Za-z0-9-]*)\\b"));
    int options = 0;
    for (const QString& verb : cliVerbs()) {
        const plab::test::CliResult r = plab::test::runCli({verb, QStringLiteral("--help")});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        for (const QString& name : listedAfter(r.out, QStringLiteral("options:"), option)) {
            QTest::newRow(qPrintable(verb + QLatin1Char(' ') + name)) << verb << name;
            ++options;
        }
    }
    QVERIFY2(options > 100, qPrintable(QStringLiteral("only %1 options found").arg(options)));
}

// Every option of `positionlab-cli VERB --help` has its line (the option first, then its help) in the verb's section
// of docs/cli.md, not merely a mention in a usage line.
void TestDocs::cliPageListsOption()
{
    QFETCH(QString, verb);
    QFETCH(QString, option);
    const QRegularExpression line(QStringLiteral("^  ") + QRegularExpression::escape(option) +
                                      QStringLiteral("(\\s|$)"),
                                  QRegularExpression::MultilineOption);
    QVERIFY2(line.match(cliVerbSection(verb)).hasMatch(),
             qPrintable(QStringLiteral("docs/cli.md's section of ") + verb + QStringLiteral(" does not list ") +
                        option + QStringLiteral("; run python3 scripts/cli_docs.py")));
}

PLAB_QTEST_GUILESS_MAIN(TestDocs)
#include "tst_docs.moc"
