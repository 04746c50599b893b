// positionlab-cli sweep and collect as a user runs them: resume, kills at points of its progress, many writers, bad
// input.
#include "cli_runner.h"
#include "sweep_results.h"
#include "test_main.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>

#include <signal.h>

#include "base/errors.h"
#include "runs/sweep.h"

namespace {

using namespace plab::test;

// A CSV table on stdout (eval's) as length -> the value of `column`; rows of one length (passkey's depths) averaged.
std::map<int, double> csvColumn(const QByteArray& out, const QString& column)
{
    std::map<int, double> values;
    std::map<int, int> counts;
    const QList<QByteArray> lines = out.trimmed().split('\n');
    if (lines.isEmpty())
        return values;
    const QStringList header = QString::fromUtf8(lines.front()).split(',');
    const int at = static_cast<int>(header.indexOf(column)), lengthAt = static_cast<int>(header.indexOf("length"));
    for (const QByteArray& line : lines.mid(1)) {
        const QStringList f = QString::fromUtf8(line).split(',');
        if (at >= 0 && lengthAt >= 0 && f.size() > std::max(at, lengthAt)) {
            values[f[lengthAt].toInt()] += f[at].toDouble();
            ++counts[f[lengthAt].toInt()];
        }
    }
    for (auto& [length, value] : values)
        value /= counts[length];
    return values;
}

QByteArray readAll(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

void writeAll(const QString& path, const QByteArray& bytes)
{
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate) || f.write(bytes) != bytes.size())
        qFatal("cannot write %s", qPrintable(path));
}

} // namespace

class TestSweep : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();
    void sweepWritesGridAndResults();
    void resumeSkipsFinishedCells();
    void tornLastLineIsDropped();
    void jobsAndManyWritersAgree();
    void killedAtProgressPoints();
    void collectStatistics();
    void collectSeveralFolders();
    void emitSlurmAndParallel();
    void badInput_data();
    void badInput();
    void scalingReachesEveryCell_data();
    void scalingReachesEveryCell();
    void collectTellsMethodsApart();
    void taskSweepAndCollect();
    void collectRefusesOtherModels_data();
    void collectRefusesOtherModels();
    void collectTellsModelsApart_data();
    void collectTellsModelsApart();
    void collectRefusesOtherTasks_data();
    void collectRefusesOtherTasks();
    void gridReadsConfigsAsModelConfigDoes_data();
    void gridReadsConfigsAsModelConfigDoes();
    void addedEvaluationsMatchTrainAndEval_data();
    void addedEvaluationsMatchTrainAndEval();
    void taskSweepPictures_data();
    void taskSweepPictures();
    void taskPointsPooled_data();
    void taskPointsPooled();

private:
    QTemporaryDir m_tmp;
    QString m_corpus;
    QString m_reference; // an uninterrupted run of referenceGrid()
    QStringList referenceGrid() const { return tinyGrid(m_corpus, "alibi,rope,local", "1,2,3", "60"); }
    QString referenceRun();
};

void TestSweep::initTestCase()
{
    QVERIFY(m_tmp.isValid());
    m_corpus = writeCorpus(m_tmp.path());
}

QString TestSweep::referenceRun()
{
    if (m_reference.isEmpty()) {
        const QString dir = m_tmp.path() + "/reference";
        const CliResult r = runCli(referenceGrid() + QStringList{"-o", dir});
        if (r.exitCode != 0)
            qFatal("the reference sweep failed: %s", r.err.constData());
        m_reference = dir;
    }
    return m_reference;
}

void TestSweep::sweepWritesGridAndResults()
{
    const QString dir = m_tmp.path() + "/plain";
    const CliResult r = runCli(tinyGrid(m_corpus) + QStringList{"-o", dir});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QVERIFY2(r.err.contains("[4/4]"), r.err.constData());
    QVERIFY(r.err.contains("ETA"));
    QVERIFY2(r.err.contains("sweep overhead"), r.err.constData());
    const QJsonObject grid = QJsonDocument::fromJson(readAll(dir + "/sweep.json")).object();
    QCOMPARE(grid["format"].toString(), QString("positionlab-sweep"));
    QCOMPARE(grid["schemes"].toArray().size(), 2);
    QCOMPARE(grid["hash"].toString().size(), 16);
    QString problem;
    const auto cells = readResults(dir, &problem);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    QCOMPARE(int(cells.size()), 4);
    for (const auto& [index, o] : cells) {
        QCOMPARE(o["grid"].toString(), grid["hash"].toString());
        QCOMPARE(o["lengths"].toArray().size(), 2);
        QCOMPARE(o["perplexity"].toArray().size(), 2);
        // Perplexity is exp(loss): the line's two numbers agree.
        const double loss = o["loss"].toArray()[0].toDouble(), ppl = o["perplexity"].toArray()[0].toDouble();
        QVERIFY2(std::abs(std::exp(loss) - ppl) < 1e-9 * ppl, qPrintable(resultSignature(o)));
        QVERIFY(ppl > 1 && ppl < 256);
        QCOMPARE(o["steps"].toInt(), 4);
        QVERIFY(!o["version"].toString().isEmpty());
        QVERIFY(o["train_seconds"].toDouble() > 0);
    }
    // Seeds vary slowest: cells 0, 1 are seed 1 (alibi, rope), cells 2, 3 seed 2.
    QCOMPARE(cells.at(0)["key"].toString(), QString("scheme=alibi seed=1"));
    QCOMPARE(cells.at(1)["key"].toString(), QString("scheme=rope seed=1"));
    QCOMPARE(cells.at(3)["key"].toString(), QString("scheme=rope seed=2"));
    // Different seeds give different models.
    QVERIFY(cells.at(0)["perplexity"].toArray()[0] != cells.at(2)["perplexity"].toArray()[0]);
}

void TestSweep::resumeSkipsFinishedCells()
{
    const QString dir = m_tmp.path() + "/resume";
    CliResult r = runCli(tinyGrid(m_corpus) + QStringList{"-o", dir});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const QByteArray before = readAll(dir + "/results.jsonl");
    // Again: nothing to run, nothing appended.
    r = runCli(tinyGrid(m_corpus) + QStringList{"-o", dir});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QVERIFY2(r.err.contains("4 done") && r.err.contains("0 to run"), r.err.constData());
    QCOMPARE(readAll(dir + "/results.jsonl"), before);
    // Remove the line of cell 2: only that cell runs again, and gives the same numbers.
    QList<QByteArray> lines = before.split('\n');
    const QByteArray removed = lines.takeAt(2);
    writeAll(dir + "/results.jsonl", lines.join('\n'));
    r = runCli(tinyGrid(m_corpus) + QStringList{"-o", dir});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QVERIFY2(r.err.contains("3 done") && r.err.contains("1 to run"), r.err.constData());
    const auto cells = readResults(dir);
    QCOMPARE(int(cells.size()), 4);
    const QJsonObject old = QJsonDocument::fromJson(removed).object();
    QVERIFY_SAME_RESULT(cells.at(old["cell"].toInt()), old);
}

void TestSweep::tornLastLineIsDropped()
{
    const QString dir = m_tmp.path() + "/torn";
    CliResult r = runCli(tinyGrid(m_corpus, "alibi", "1,2") + QStringList{"-o", dir});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    // A writer killed in the middle of its line: drop the second line's end (and its newline).
    QByteArray bytes = readAll(dir + "/results.jsonl");
    const QByteArray complete = bytes;
    const int secondStart = bytes.indexOf('\n') + 1;
    bytes.truncate(secondStart + (bytes.size() - secondStart) / 2);
    writeAll(dir + "/results.jsonl", bytes);
    r = runCli(tinyGrid(m_corpus, "alibi", "1,2") + QStringList{"-o", dir});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QVERIFY2(r.err.contains("torn"), r.err.constData());
    QVERIFY2(r.err.contains("1 to run"), r.err.constData());
    QString problem;
    const auto cells = readResults(dir, &problem);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    QCOMPARE(int(cells.size()), 2);
    const auto expected = QJsonDocument::fromJson(complete.split('\n')[1]).object();
    QVERIFY_SAME_RESULT(cells.at(1), expected);
}

void TestSweep::jobsAndManyWritersAgree()
{
    const QString reference = referenceRun();
    const auto expected = readResults(reference);
    QCOMPARE(int(expected.size()), 9);

    // --jobs 3: cells in child processes, one thread each (as the reference), appending to one file.
    const QString jobsDir = m_tmp.path() + "/jobs";
    CliResult r = runCli(referenceGrid() + QStringList{"--jobs", "3", "--threads", "3", "-o", jobsDir});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QVERIFY2(r.err.contains("3 at a time with 1 threads each"), r.err.constData());

    // Every cell at once, each its own `sweep --cell I DIR` process (as Slurm array tasks or GNU parallel run them).
    const QString manyDir = m_tmp.path() + "/many";
    r = runCli(referenceGrid() + QStringList{"--emit", "parallel", "-o", manyDir});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    std::vector<std::unique_ptr<QProcess>> processes;
    for (int cell = 0; cell < 9; ++cell) {
        auto p = std::make_unique<QProcess>();
        p->start(POSITIONLAB_CLI, {"sweep", "--cell", QString::number(cell), "--threads", "1", manyDir});
        processes.push_back(std::move(p));
    }
    // And a second writer of cell 4 racing the first: still one line for it.
    auto twin = std::make_unique<QProcess>();
    twin->start(POSITIONLAB_CLI, {"sweep", "--cell", "4", "--threads", "1", manyDir});
    processes.push_back(std::move(twin));
    for (auto& p : processes) {
        QVERIFY(p->waitForFinished(120000));
        QVERIFY2(p->exitCode() == 0, p->readAllStandardError().constData());
    }

    for (const QString& dir : {jobsDir, manyDir}) {
        QString problem;
        const auto cells = readResults(dir, &problem);
        QVERIFY2(problem.isEmpty(), qPrintable(dir + ": " + problem));
        QCOMPARE(int(cells.size()), 9);
        for (const auto& [index, o] : expected)
            QVERIFY_SAME_RESULT(cells.at(index), o);
    }
    QCOMPARE(int(readAll(manyDir + "/results.jsonl").count('\n')), 9);
}

void TestSweep::killedAtProgressPoints()
{
    const QString reference = referenceRun();
    const auto expected = readResults(reference);
    const QString dir = m_tmp.path() + "/killed";
    const QStringList args = referenceGrid() + QStringList{"-o", dir, "--quiet"};
    // Kills at points fixed by the sweep's own progress, not by the clock: at once (before or while the grid is
    // written), once the folder's sweep.json exists, and once results.jsonl holds k lines for k = 1..8 - each run
    // resumes the folder the last one left and is killed when its point is reached (or ends by itself first).
    const auto lineCount = [&dir] { return int(readAll(dir + "/results.jsonl").count('\n')); };
    int lines = 0;
    for (int point = -1; point <= 8; ++point) {
        QProcess p;
        p.start(POSITIONLAB_CLI, args);
        QVERIFY(p.waitForStarted());
        const auto reached = [&] {
            return point < 0 || (point == 0 ? QFileInfo::exists(dir + "/sweep.json") : lineCount() >= point);
        };
        for (int i = 0; i < 60000 && !reached() && p.state() == QProcess::Running; ++i)
            p.waitForFinished(1); // polls: no assertion on how long anything takes
        QVERIFY2(reached() || p.state() != QProcess::Running,
                 qPrintable(QString("kill point %1 never came").arg(point)));
        if (p.state() == QProcess::Running)
            ::kill(static_cast<pid_t>(p.processId()), SIGKILL);
        QVERIFY(p.waitForFinished(60000));
        QString problem;
        readResults(dir, &problem); // a kill may leave a torn last line, never a duplicate or a broken middle
        QVERIFY2(!problem.contains("twice"), qPrintable(problem));
        // Finished cells stay finished: a resumed run never loses a line the last one completed.
        const int now = lineCount();
        QVERIFY2(now >= lines && now >= std::max(point, 0),
                 qPrintable(QString("point %1: %2 lines after %3").arg(point).arg(now).arg(lines)));
        lines = now;
    }
    const CliResult r = runCli(args);
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QString problem;
    const auto cells = readResults(dir, &problem);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    QCOMPARE(int(cells.size()), 9);
    for (const auto& [index, o] : expected)
        QVERIFY_SAME_RESULT(cells.at(index), o);
}

void TestSweep::collectStatistics()
{
    const QString reference = referenceRun();
    const auto cells = readResults(reference);
    const QString csv = m_tmp.path() + "/summary.csv";
    CliResult r = runCli({"collect", reference, "-o", csv});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const QList<QByteArray> lines = readAll(csv).trimmed().split('\n');
    QCOMPARE(lines[0], QByteArray("scheme,variant,context,length,n,ppl_mean,ppl_sd,ppl_min,ppl_max,ratio_n,ratio_mean,"
                                  "ratio_sd,ratio_min,ratio_max,layers,options"));
    QCOMPARE(lines.size(), 1 + 3 * 2); // three schemes at lengths 8 and 16
    // The reference: mean and sample sd over the three seeds computed here from the result lines.
    int checked = 0;
    for (const QByteArray& line : lines.mid(1)) {
        const QList<QByteArray> f = line.split(',');
        const QString scheme = f[0];
        const int lengthIndex = f[3].toInt() == 8 ? 0 : 1;
        std::vector<double> ppl, ratio;
        for (const auto& [index, o] : cells)
            if (o["scheme"].toString() == scheme) {
                ppl.push_back(o["perplexity"].toArray()[lengthIndex].toDouble());
                ratio.push_back(ppl.back() / o["perplexity"].toArray()[0].toDouble());
            }
        QCOMPARE(int(ppl.size()), 3);
        auto meanSd = [](const std::vector<double>& v) {
            double m = 0, s = 0;
            for (double x : v)
                m += x / v.size();
            for (double x : v)
                s += (x - m) * (x - m);
            return std::make_pair(m, std::sqrt(s / (v.size() - 1)));
        };
        const auto [pm, ps] = meanSd(ppl);
        const auto [rm, rs] = meanSd(ratio);
        QCOMPARE(f[4].toInt(), 3);
        QVERIFY2(std::abs(f[5].toDouble() - pm) < 1e-12 * pm, line.constData());
        QVERIFY2(std::abs(f[6].toDouble() - ps) < 1e-9 * pm, line.constData());
        QCOMPARE(f[7].toDouble(), *std::min_element(ppl.begin(), ppl.end()));
        QCOMPARE(f[8].toDouble(), *std::max_element(ppl.begin(), ppl.end()));
        QVERIFY2(std::abs(f[10].toDouble() - rm) < 1e-12, line.constData());
        QVERIFY2(std::abs(f[11].toDouble() - rs) < 1e-9, line.constData());
        if (lengthIndex == 0)
            QCOMPARE(f[10].toDouble(), 1.0); // ppl(L) / ppl(L)
        ++checked;
    }
    QCOMPARE(checked, 6);

    const QString json = m_tmp.path() + "/summary.json";
    r = runCli({"collect", reference, "-o", json});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const QJsonObject summary = QJsonDocument::fromJson(readAll(json)).object();
    QCOMPARE(summary["rows"].toArray().size(), 6);
    QCOMPARE(summary["rows"].toArray()[1].toObject()["perplexity"].toObject()["n"].toInt(), 3);

#ifdef POSITIONLAB_HAVE_UI
    for (const char* ext : {"png", "svg"}) {
        const QString picture = m_tmp.path() + "/plot." + ext;
        r = runCli({"collect", reference, "-o", picture});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QVERIFY(QFileInfo(picture).size() > 1000);
    }
    QVERIFY(readAll(m_tmp.path() + "/plot.svg").contains("alibi (n = 3)"));
#endif
}

void TestSweep::collectSeveralFolders()
{
    // Seeds 1, 2 in one folder and 3 in another: collected together they are the reference's three seeds.
    const QString a = m_tmp.path() + "/partA", b = m_tmp.path() + "/partB";
    CliResult r = runCli(tinyGrid(m_corpus, "alibi,rope,local", "1,2", "60") + QStringList{"-o", a, "--quiet"});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    r = runCli(tinyGrid(m_corpus, "alibi,rope,local", "3", "60") + QStringList{"-o", b, "--quiet"});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const CliResult together = runCli({"collect", a, b});
    QVERIFY2(together.exitCode == 0, together.err.constData());
    const CliResult reference = runCli({"collect", referenceRun()});
    QVERIFY2(reference.exitCode == 0, reference.err.constData());
    // Same rows up to float rounding (see sameResult; an sd, a difference, loses digits): numbers to 1e-5, structure
    // exactly.
    const QList<QByteArray> x = together.out.trimmed().split('\n'), y = reference.out.trimmed().split('\n');
    QCOMPARE(x.size(), y.size());
    for (int i = 1; i < x.size(); ++i) {
        const QList<QByteArray> p = x[i].split(','), q = y[i].split(',');
        QCOMPARE(p.mid(0, 5), q.mid(0, 5));
        for (int c = 5; c < p.size(); ++c)
            QVERIFY2(std::abs(p[c].toDouble() - q[c].toDouble()) <= 1e-5 * std::max(1.0, std::abs(q[c].toDouble())),
                     qPrintable(x[i] + " vs " + y[i]));
    }
}

void TestSweep::emitSlurmAndParallel()
{
    const QString dir = m_tmp.path() + "/emitted";
    CliResult r = runCli(tinyGrid(m_corpus, "alibi,rope", "1,2,3") + QStringList{"--emit", "slurm", "-o", dir});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const QByteArray script = readAll(dir + "/sweep.sbatch");
    QVERIFY2(script.startsWith("#!/bin/bash\n"), script.constData());
    QVERIFY2(script.contains("#SBATCH --array=0-5\n"), script.constData());
    QVERIFY2(script.contains("#SBATCH --cpus-per-task=2\n"), script.constData());
    QVERIFY2(script.contains("#SBATCH --mem="), script.constData());
    QVERIFY2(script.contains("#SBATCH --time=0:10:00\n"), script.constData());
    QVERIFY2(script.contains("sweep --cell \"$SLURM_ARRAY_TASK_ID\""), script.constData());
    QVERIFY(QFileInfo(dir + "/sweep.json").exists());
    QVERIFY(!QFileInfo(dir + "/results.jsonl").exists()); // emitting runs nothing

    r = runCli(tinyGrid(m_corpus, "alibi,rope", "1,2,3") + QStringList{"--emit", "parallel", "-o", dir});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const QList<QByteArray> commands = readAll(dir + "/sweep.commands").trimmed().split('\n');
    QCOMPARE(commands.size(), 6);
    QVERIFY2(commands[5].contains("sweep --cell 5 "), commands[5].constData());
    // One emitted command, run through the shell as GNU parallel would, finishes its cell.
    QProcess sh;
    sh.start("/bin/sh", {"-c", QString::fromUtf8(commands[3])});
    QVERIFY(sh.waitForFinished(60000));
    QVERIFY2(sh.exitCode() == 0, sh.readAllStandardError().constData());
    const auto cells = readResults(dir);
    QCOMPARE(int(cells.size()), 1);
    QCOMPARE(cells.begin()->first, 3);
}

void TestSweep::badInput_data()
{
    QTest::addColumn<QString>("setup"); // what the folder holds before the command
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("message");
    QTest::addColumn<bool>("resultsKept"); // a finished result there before is still there, unchanged

    const QStringList grid = tinyGrid("CORPUS", "alibi", "1");
    auto with = [&](const QStringList& base, const QString& option, const QString& value) {
        QStringList a = base;
        a[a.indexOf(option) + 1] = value;
        return a;
    };
    QTest::newRow("empty schemes") << "" << with(grid, "--schemes", ",") + QStringList{"-o", "DIR"}
                                   << "--schemes: no schemes listed" << false;
    QTest::newRow("unknown scheme") << "" << with(grid, "--schemes", "alibi,nope") + QStringList{"-o", "DIR"} << "nope"
                                    << false;
    QTest::newRow("duplicate scheme") << "" << with(grid, "--schemes", "alibi,alibi") + QStringList{"-o", "DIR"}
                                      << "--schemes: scheme alibi is listed twice" << false;
    QTest::newRow("duplicate seeds") << "" << with(grid, "--seeds", "1,2,1") + QStringList{"-o", "DIR"}
                                     << "--seeds: seed 1 is listed twice in 1,2,1" << false;
    QTest::newRow("no seeds") << "" << with(grid, "--seeds", ",") + QStringList{"-o", "DIR"}
                              << "--seeds: no seeds listed" << false;
    QTest::newRow("negative seed") << "" << with(grid, "--seeds", "1,-2") + QStringList{"-o", "DIR"} << "seeds"
                                   << false;
    QTest::newRow("output is a file") << "file" << grid + QStringList{"-o", "DIR"} << "is a file" << false;
    QTest::newRow("another grid") << "done" << with(grid, "--steps", "5") + QStringList{"-o", "DIR"}
                                  << "holds another grid; train.steps: 5 here, 4 in the folder" << true;
    QTest::newRow("another scheme list") << "done" << with(grid, "--schemes", "rope") + QStringList{"-o", "DIR"}
                                         << "schemes: [\"rope\"] here, [\"alibi\"] in the folder" << true;
    QTest::newRow("results of another grid")
        << "foreign" << grid + QStringList{"-o", "DIR"} << "a result of another grid" << true;
    QTest::newRow("corrupt middle line") << "corrupt" << grid + QStringList{"-o", "DIR"}
                                         << "results.jsonl line 1 is not a good result" << true;
    QTest::newRow("unwritable folder") << "" << grid + QStringList{"-o", "/proc/positionlab-sweep"}
                                       << "cannot be created" << false;
    QTest::newRow("cell out of range") << "done" << QStringList{"sweep", "--cell", "1", "DIR"}
                                       << "cell 1 is out of range; allowed: 0..0" << true;
    QTest::newRow("negative cell") << "done" << QStringList{"sweep", "--cell", "-1", "DIR"}
                                   << "cell = -1 is out of range; allowed: integers in [0, " << true;
    QTest::newRow("cell without folder") << "" << QStringList{"sweep", "--cell", "0", "DIR"} << "not a sweep folder"
                                         << false;
    QTest::newRow("collect no results") << "emitted" << QStringList{"collect", "DIR"} << "has no finished cell"
                                        << false;
    QTest::newRow("collect not a folder") << "" << QStringList{"collect", "DIR"} << "not a sweep folder" << false;
    QTest::newRow("collect, results.jsonl a folder")
        << "results folder" << QStringList{"collect", "DIR"} << "results.jsonl: cannot read: Is a directory" << false;
    QTest::newRow("bad emit") << "" << grid + QStringList{"--emit", "pbs", "-o", "DIR"} << "--emit pbs is not allowed"
                              << false;
    QTest::newRow("bad vary") << "" << grid + QStringList{"--vary", "window", "-o", "DIR"} << "--vary window" << false;
    QTest::newRow("vary unknown parameter") << "" << grid + QStringList{"--vary", "wndow=4,8", "-o", "DIR"}
                                            << "scheme alibi has no parameter 'wndow'; its parameters: none" << false;
    QTest::newRow("no output") << "" << grid << "-o DIR is required" << false;
    // evaluateModel's rule before any cell trains: 15 held-out bytes cannot fill a window of 16.
    QTest::newRow("eval bytes below a length") << "" << with(grid, "--eval-bytes", "15") + QStringList{"-o", "DIR"}
                                               << "lengths 16 exceed the text scored: the validation split of" << false;
    QTest::newRow("jobs zero") << "" << grid + QStringList{"--jobs", "0", "-o", "DIR"}
                               << "jobs = 0 is out of range; allowed: integers in [1, 256]" << false;
    QTest::newRow("scaling on alibi") << "" << grid + QStringList{"--scaling", "yarn", "-o", "DIR"}
                                      << "--scaling = yarn is not allowed for scheme alibi" << false;
    QTest::newRow("init") << "" << grid + QStringList{"--init", "CORPUS", "-o", "DIR"}
                          << "sweep: --init cannot be used here: every cell trains from scratch" << false;
    const QStringList ropeGrid = with(grid, "--schemes", "rope");
    QTest::newRow("eval scaling without a factor")
        << "" << ropeGrid + QStringList{"--eval-scaling", "none,rerope", "-o", "DIR"}
        << "--eval-scaling: evaluation method rerope cannot be scored zero-shot with a factor; allowed: pi, ntk"
        << false;
    QTest::newRow("eval scaling unknown")
        << "" << ropeGrid + QStringList{"--eval-scaling", "yarm", "-o", "DIR"}
        << "'yarm' is not a known method; known methods: none, pi, ntk, dynamic-ntk, yarn" << false;
    QTest::newRow("eval scaling twice") << "" << ropeGrid + QStringList{"--eval-scaling", "yarn,yarn", "-o", "DIR"}
                                        << "evaluation method yarn is listed twice" << false;
    QTest::newRow("eval scaling, no rotary scheme")
        << "" << grid + QStringList{"--eval-scaling", "yarn", "-o", "DIR"}
        << "zero-shot evaluation methods apply to rotary schemes (rope, xpos), and the grid has none" << false;
    QTest::newRow("drope fraction 0") << "" << ropeGrid + QStringList{"--drope", "0", "-o", "DIR"}
                                      << "--drope: DroPE recalibration fraction = 0 is out of range; allowed: (0, 1]"
                                      << false;
    QTest::newRow("drope fraction 1.5") << "" << ropeGrid + QStringList{"--drope", "1.5", "-o", "DIR"}
                                        << "fraction = 1.5 is out of range" << false;
    QTest::newRow("drope without rope") << "" << grid + QStringList{"--drope", "0.1", "-o", "DIR"}
                                        << "the DroPE recipe continues rope cells, and the grid has no scheme rope"
                                        << false;
    QTest::newRow("drope logit-c negative")
        << "" << ropeGrid + QStringList{"--drope", "0.1", "--drope-logit-c", "0,-1", "-o", "DIR"} << "logit-c" << false;
    QTest::newRow("drope logit-c twice") << "" << ropeGrid + QStringList{"--drope", "0.1", "--drope-logit-c",
                                                                         "0.5,0.5", "-o",  "DIR"}
                                         << "logit-c 0.5 is listed twice" << false;
    QTest::newRow("drope logit-c without drope") << "" << ropeGrid + QStringList{"--drope-logit-c", "0.5", "-o", "DIR"}
                                                 << "--drope-logit-c 0.5 applies only with --drope FRACTION" << false;
}

void TestSweep::badInput()
{
    QFETCH(QString, setup);
    QFETCH(QStringList, args);
    QFETCH(QString, message);
    QFETCH(bool, resultsKept);
    QTemporaryDir tmp;
    const QString dir = tmp.path() + "/sweep";
    const QStringList grid = tinyGrid(m_corpus, "alibi", "1") + QStringList{"-o", dir, "--quiet"};
    QByteArray results;
    if (setup == "file") {
        writeAll(dir, "not a folder");
    } else if (setup == "results folder") {
        const CliResult r = runCli(grid + QStringList{"--emit", "parallel"});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QVERIFY(QDir().mkpath(dir + "/results.jsonl"));
    } else if (setup == "emitted") {
        const CliResult r = runCli(grid + QStringList{"--emit", "parallel"});
        QVERIFY2(r.exitCode == 0, r.err.constData());
    } else if (!setup.isEmpty()) {
        const CliResult r = runCli(grid);
        QVERIFY2(r.exitCode == 0, r.err.constData());
        results = readAll(dir + "/results.jsonl");
        if (setup == "foreign") {
            writeAll(dir + "/results.jsonl", QByteArray(results).replace("\"grid\":\"", "\"grid\":\"f"));
            results = readAll(dir + "/results.jsonl");
        } else if (setup == "corrupt") {
            writeAll(dir + "/results.jsonl", "{\"cell\": 0, broken\n" + results);
            results = readAll(dir + "/results.jsonl");
        }
    }
    for (QString& a : args) {
        a.replace("CORPUS", m_corpus);
        if (a == "DIR")
            a = dir;
    }
    const CliResult r = runCli(args);
    QVERIFY2(r.exitCode == 2, qPrintable(QString("exit %1: %2").arg(r.exitCode).arg(QString::fromUtf8(r.err))));
    QVERIFY2(QString::fromUtf8(r.err).contains(message), r.err.constData());
    QVERIFY2(!r.err.contains("terminate called"), r.err.constData());
    if (resultsKept)
        QCOMPARE(readAll(dir + "/results.jsonl"), results);
}

// --scaling reaches every cell of a grid (it was read and dropped): the grid records it, the cells train under it. A
// grid without a method records none, so its hash, and the results of sweeps made before, stay as they were.
void TestSweep::scalingReachesEveryCell_data()
{
    QTest::addColumn<QStringList>("extra");
    QTest::addColumn<QString>("scaling"); // the grid's model.scaling; empty: absent
    QTest::addColumn<bool>("samePlain");  // the cells' numbers equal those of the grid without the options
    QTest::newRow("yarn") << QStringList{"--scaling", "yarn", "--set", "factor=2"} << "yarn" << false;
    QTest::newRow("pi, factor 8") << QStringList{"--scaling", "pi", "--set", "factor=8"} << "pi" << false;
    QTest::newRow("none") << QStringList{"--scaling", "none"} << "" << true;
}

void TestSweep::scalingReachesEveryCell()
{
    QFETCH(QStringList, extra);
    QFETCH(QString, scaling);
    QFETCH(bool, samePlain);
    QTemporaryDir dir;
    const QStringList grid = tinyGrid(m_corpus, "rope,xpos", "1");
    const CliResult plain = runCli(grid + QStringList{"-o", dir.path() + "/plain"});
    const CliResult scaled = runCli(grid + extra + QStringList{"-o", dir.path() + "/scaled"});
    QVERIFY2(plain.exitCode == 0 && scaled.exitCode == 0, scaled.err.constData());
    const QJsonObject model =
        QJsonDocument::fromJson(readAll(dir.path() + "/scaled/sweep.json")).object()["model"].toObject();
    QCOMPARE(model.contains("scaling"), !scaling.isEmpty());
    QCOMPARE(model["scaling"].toString(), scaling);
    const auto a = readResults(dir.path() + "/plain"), b = readResults(dir.path() + "/scaled");
    QCOMPARE(int(b.size()), 2);
    for (const auto& [index, cell] : b)
        QCOMPARE(cell["perplexity"].toArray() == a.at(index)["perplexity"].toArray(), samePlain);
}

// A plain sweep and one under a method, collected together: two curves, each named by its method and settings (they
// were one "rope" row with n = 2 when results did not record the method).
void TestSweep::collectTellsMethodsApart()
{
    QTemporaryDir dir;
    const QStringList grid = tinyGrid(m_corpus, "rope", "1");
    const QString plain = dir.path() + "/plain", scaled = dir.path() + "/yarn";
    CliResult r = runCli(grid + QStringList{"-o", plain, "--quiet"});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    r = runCli(grid + QStringList{"--scaling", "yarn", "--set", "factor=2", "-o", scaled, "--quiet"});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const QJsonObject line = readResults(scaled).at(0);
    QCOMPARE(line["scaling"].toString(), QString("yarn"));
    QCOMPARE(line["settings"].toString(), QString("factor=2"));
    QVERIFY(!readResults(plain).at(0).contains("scaling")); // a plain grid's lines are as they were
    r = runCli({"collect", plain, scaled});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QStringList rows; // scheme,variant,context,length,n
    for (const QByteArray& l : r.out.trimmed().split('\n').mid(1))
        rows << QString::fromUtf8(l).section(',', 0, 4);
    QCOMPARE(rows,
             (QStringList{"rope,,8,8,1", "rope,,8,16,1", "rope+yarn,factor=2,8,8,1", "rope+yarn,factor=2,8,16,1"}));
}

// sweep --task (issue 21): every cell trains on the task and scores exact-match accuracy per length; collect gives
// mean and sd over the seeds, checked here against the lines' own numbers.
void TestSweep::taskSweepAndCollect()
{
    QTemporaryDir dir;
    const QString folder = dir.path() + "/copy";
    const QStringList grid = {"sweep", "--schemes", "alibi,none", "--seeds",    "1,2",  "--preset",
                              "tiny",  "--steps",   "4",          "--layers",   "1",    "--d-model",
                              "16",    "--heads",   "2",          "--d-ff",     "32",   "--context",
                              "12",    "--batch",   "2",          "--task",     "copy", "--task-length",
                              "3",     "--lengths", "2,3,6",      "--examples", "10",   "--threads",
                              "1",     "--quiet",   "-o",         folder};
    CliResult r = runCli(grid);
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const QJsonObject task = QJsonDocument::fromJson(readAll(folder + "/sweep.json")).object()["task"].toObject();
    QCOMPARE(task["task"].toString(), QString("copy"));
    QCOMPARE(task["task_length"].toInt(), 3);
    QCOMPARE(task["examples"].toInt(), 10);
    const auto cells = readResults(folder);
    QCOMPARE(int(cells.size()), 4);
    std::map<QString, std::vector<std::vector<double>>> bySchemeLength; // scheme -> length index -> seeds' accuracy
    for (const auto& [index, o] : cells) {
        QCOMPARE(o["task"].toString(), QString("copy"));
        const QJsonArray accuracy = o["accuracy"].toArray();
        QCOMPARE(accuracy.size(), 3);
        auto& lengths = bySchemeLength[o["scheme"].toString()];
        lengths.resize(3);
        for (int i = 0; i < 3; ++i) {
            const double a = accuracy[i].toDouble();
            QVERIFY(a >= 0 && a <= 1);
            QVERIFY2(std::abs(a * 10 - std::round(a * 10)) < 1e-12, "10 examples: a multiple of 1/10");
            lengths[size_t(i)].push_back(a);
        }
    }
    // A 4-step model scores 0 everywhere, which would check collect's mean and sd on zeros only: the lines' accuracies
    // are replaced by hand-written ones, known, nonzero and unequal across the seeds, before collect reads them.
    const std::map<std::pair<QString, int>, std::vector<double>> handWritten = {{{"alibi", 1}, {0.1, 0.4, 0.9}},
                                                                                {{"alibi", 2}, {0.3, 0.2, 0.6}},
                                                                                {{"none", 1}, {1.0, 0.5, 0.1}},
                                                                                {{"none", 2}, {0.7, 0.8, 0.4}}};
    QByteArray rewritten;
    bySchemeLength.clear();
    for (auto [index, o] : cells) {
        const std::vector<double>& values = handWritten.at({o["scheme"].toString(), o["seed"].toInt()});
        QJsonArray accuracy;
        for (size_t i = 0; i < values.size(); ++i) {
            accuracy.append(values[i]);
            bySchemeLength[o["scheme"].toString()].resize(3);
            bySchemeLength[o["scheme"].toString()][i].push_back(values[i]);
        }
        o["accuracy"] = accuracy;
        rewritten += QJsonDocument(o).toJson(QJsonDocument::Compact) + "\n";
    }
    writeAll(folder + "/results.jsonl", rewritten);
    r = runCli({"collect", folder});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const QList<QByteArray> lines = r.out.trimmed().split('\n');
    QCOMPARE(lines.front(),
             QByteArray("scheme,variant,context,task,length,n,acc_mean,acc_sd,acc_min,acc_max,layers,options"));
    QCOMPARE(lines.size(), 1 + 2 * 3);
    const int lengths[] = {2, 3, 6};
    for (int row = 0; row < 6; ++row) {
        const QStringList f = QString::fromUtf8(lines[row + 1]).split(',');
        const QString scheme = row < 3 ? "alibi" : "none";
        QCOMPARE(f[0], scheme);
        QCOMPARE(f[3], QString("copy"));
        QCOMPARE(f[4].toInt(), lengths[row % 3]);
        QCOMPARE(f[5].toInt(), 2);
        const std::vector<double>& v = bySchemeLength[scheme][size_t(row % 3)];
        QCOMPARE(int(v.size()), 2);
        const double mean = (v[0] + v[1]) / 2, sd = std::abs(v[0] - v[1]) / std::sqrt(2.0);
        QVERIFY(mean > 0 && sd > 0); // the hand-written numbers are what they were meant to be
        QVERIFY2(std::abs(f[6].toDouble() - mean) < 1e-12, lines[row + 1].constData());
        QVERIFY2(std::abs(f[7].toDouble() - sd) < 1e-12, lines[row + 1].constData());
        QCOMPARE(f[8].toDouble(), std::min(v[0], v[1]));
        QCOMPARE(f[9].toDouble(), std::max(v[0], v[1]));
    }
}

void TestSweep::collectRefusesOtherModels_data()
{
    QTest::addColumn<QStringList>("other"); // options of the second folder's sweep, added to the first's
    QTest::addColumn<QString>("field");
    QTest::newRow("d-model") << QStringList{"--d-model", "32"} << "model.d_model: 16 in";
    QTest::newRow("steps") << QStringList{"--steps", "5"} << "train.steps: 4 in";
    QTest::newRow("eval bytes") << QStringList{"--eval-bytes", "128"} << "eval.bytes: 256 in";
}

void TestSweep::collectRefusesOtherModels()
{
    QFETCH(QStringList, other);
    QFETCH(QString, field);
    QTemporaryDir dir;
    const QString a = dir.path() + "/a", b = dir.path() + "/b";
    CliResult r = runCli(tinyGrid(m_corpus, "rope", "1") + QStringList{"-o", a, "--quiet"});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    r = runCli(tinyGrid(m_corpus, "rope", "1") + other + QStringList{"-o", b, "--quiet"});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    r = runCli({"collect", a, b});
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.contains("the folders' models or training differ") && r.err.contains(field.toUtf8()),
             r.err.constData());
    QVERIFY2(r.err.contains(("in " + a).toUtf8()) && r.err.contains(("in " + b).toUtf8()), r.err.constData());
    QVERIFY(r.out.isEmpty());
}

// Two sweeps whose models differ only in an option (or the depth) collected together: a row per model, each with the
// numbers of its folder collected alone (never one mean over both), the model named in the last two CSV columns, the
// JSON rows and the picture's curve names.
void TestSweep::collectTellsModelsApart_data()
{
    QTest::addColumn<QStringList>("first");  // options added to the tiny grid (1 layer) of the first folder
    QTest::addColumn<QStringList>("second"); // and of the second
    QTest::addColumn<QString>("columns");    // the second folder's rows end with layers,options
    QTest::addColumn<QString>("firstName");  // the curves' names in the picture
    QTest::addColumn<QString>("secondName"); // (its start)
    QTest::newRow("ssmax") << QStringList{} << QStringList{"--ssmax"} << "1,ssmax"
                           << "rope (n = 2)"
                           << "rope ssmax (n = 2)";
    QTest::newRow("nope-every") << QStringList{"--layers", "2"} << QStringList{"--layers", "2", "--nope-every", "2"}
                                << "2,nope_every=2"
                                << "rope (n = 2)"
                                << "rope nope_every=2 (n = 2)";
    QTest::newRow("layers") << QStringList{} << QStringList{"--layers", "2"} << "2,"
                            << "rope layers=1 (n = 2)"
                            << "rope layers=2 (n = 2)";
    // A full layer without a scheme of its own is named by the cell's scheme (rope), not the grid's default.
    QTest::newRow("full-set without full-scheme")
        << QStringList{"--layers", "2"}
        << QStringList{"--layers", "2", "--layer-types", "sliding,full", "--window", "4", "--full-set", "base=1000000"}
        << "2,\"layers=sliding,full window=4 full=rope:base=1000000\""
        << "rope (n = 2)"
        << "rope layers=sliding,full";
    QTest::newRow("sink logit and temperature")
        << QStringList{"--layers", "2", "--nope-every", "2"}
        << QStringList{"--layers", "2", "--nope-every", "2", "--sink-logit", "--attn-temperature-tuning"}
        << "2,\"nope_every=2 temperature(F=8192, β=0.1) sink_logit\""
        << "rope nope_every=2 (n = 2)"
        << "rope nope_every=2 temperature(F=8192"; // the legend elides the rest
}

void TestSweep::collectTellsModelsApart()
{
    QFETCH(QStringList, first);
    QFETCH(QStringList, second);
    QFETCH(QString, columns);
    QFETCH(QString, firstName);
    QFETCH(QString, secondName);
    QTemporaryDir dir;
    const QString a = dir.path() + "/a", b = dir.path() + "/b";
    // tinyGrid's --layers 1 is overridden by a later --layers.
    CliResult r = runCli(tinyGrid(m_corpus, "rope", "1,2") + first + QStringList{"-o", a, "--quiet"});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    r = runCli(tinyGrid(m_corpus, "rope", "1,2") + second + QStringList{"-o", b, "--quiet"});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const CliResult alone[2] = {runCli({"collect", a}), runCli({"collect", b})};
    const CliResult together = runCli({"collect", a, b});
    QVERIFY2(together.exitCode == 0, together.err.constData());
    const QList<QByteArray> rows = together.out.trimmed().split('\n');
    QCOMPARE(rows.front(), QByteArray("scheme,variant,context,length,n,ppl_mean,ppl_sd,ppl_min,ppl_max,ratio_n,"
                                      "ratio_mean,ratio_sd,ratio_min,ratio_max,layers,options"));
    // Two models at lengths 8 and 16: four rows, each of the two seeds of one folder only.
    QCOMPARE(rows.size(), 1 + 2 * 2);
    QList<QByteArray> expected;
    for (const CliResult& each : alone) {
        QVERIFY2(each.exitCode == 0, each.err.constData());
        expected += each.out.trimmed().split('\n').mid(1);
    }
    QCOMPARE(rows.mid(1), expected); // the same numbers, digit for digit, as each folder collected alone
    for (int i = 1; i < rows.size(); ++i)
        QVERIFY2(rows[i].split(',')[4] == "2", rows[i].constData()); // n: the folder's two seeds, not four
    QVERIFY2(rows[3].endsWith("," + columns.toUtf8()) && rows[4].endsWith("," + columns.toUtf8()), rows[3].constData());
    QVERIFY2(rows[1] != rows[3], "the two models' rows differ");

    const QString json = dir.path() + "/summary.json";
    r = runCli({"collect", a, b, "-o", json});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const QJsonArray jsonRows = QJsonDocument::fromJson(readAll(json)).object()["rows"].toArray();
    QCOMPARE(jsonRows.size(), 4);
    QCOMPARE(jsonRows[2].toObject()["layers"].toInt(), columns.section(',', 0, 0).toInt());
    QCOMPARE(jsonRows[2].toObject()["options"].toString(), columns.section(',', 1).remove('"')); // unquoted in JSON
#ifdef POSITIONLAB_HAVE_UI
    const QString svg = dir.path() + "/plot.svg";
    r = runCli({"collect", a, b, "-o", svg});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const QString text = QString::fromUtf8(readAll(svg));
    QVERIFY2(text.contains(">" + firstName + "<") && text.contains(">" + secondName), qPrintable(text));
#endif
}

// Grids that differ in what no row names stay refused, naming both folders and the field: a text sweep and a task
// sweep, or two tasks.
void TestSweep::collectRefusesOtherTasks_data()
{
    QTest::addColumn<QString>("firstTask"); // "": a text sweep
    QTest::addColumn<QString>("field");
    QTest::newRow("text and copy") << ""
                                   << "the folders score different things (task: text in";
    QTest::newRow("reverse and copy") << "reverse"
                                      << "the folders score different things (task: reverse in";
}

void TestSweep::collectRefusesOtherTasks()
{
    QFETCH(QString, firstTask);
    QFETCH(QString, field);
    QTemporaryDir dir;
    const QString a = dir.path() + "/a", b = dir.path() + "/b";
    auto grid = [&](const QString& task, const QString& folder) {
        QStringList words = {"sweep",     "--schemes", "rope",     "--seeds",   "1",         "--preset", "tiny",
                             "--steps",   "4",         "--layers", "1",         "--d-model", "16",       "--heads",
                             "2",         "--d-ff",    "32",       "--context", "12",        "--batch",  "2",
                             "--threads", "1",         "--quiet",  "-o",        folder};
        if (task.isEmpty()) // the default corpus, as a task grid's (which names none)
            return words + QStringList{"--eval-bytes", "256", "--lengths", "12,24"};
        return words + QStringList{"--task", task, "--task-length", "2", "--lengths", "2,3", "--examples", "4"};
    };
    CliResult r = runCli(grid(firstTask, a));
    QVERIFY2(r.exitCode == 0, r.err.constData());
    r = runCli(grid("copy", b));
    QVERIFY2(r.exitCode == 0, r.err.constData());
    r = runCli({"collect", a, b});
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.contains(field.toUtf8()) && r.err.contains(("in " + a).toUtf8()) &&
                 r.err.contains(("in " + b).toUtf8()),
             r.err.constData());
    QVERIFY(r.out.isEmpty());
}

// A grid's model and train JSON are model_config's (modelShapeJson, TrainConfig::toJson without data_seed), written
// as before so a folder's grid keeps its hash, and read back with model_config's readers and one set of ranges.
void TestSweep::gridReadsConfigsAsModelConfigDoes_data()
{
    QTest::addColumn<QString>("pointer"); // a field of sweep.json to change; empty: none
    QTest::addColumn<int>("value");
    QTest::addColumn<QString>("message"); // empty: the grid reads back with the same hash
    QTest::newRow("round trip") << "" << 0 << "";
    QTest::newRow("batch 0") << "/train/batch" << 0 << "G: batch = 0 is out of range; allowed: integers in [1, 65536]";
    QTest::newRow("steps -7") << "/train/steps" << -7 << "G: steps = -7 is out of range";
    QTest::newRow("layers 0: read, refused with the scheme")
        << "/model/layers" << 0 << "layers = 0 is out of range; allowed: integers in [1, 64]";
}

void TestSweep::gridReadsConfigsAsModelConfigDoes()
{
    QFETCH(QString, pointer);
    QFETCH(int, value);
    QFETCH(QString, message);
    plab::SweepGrid grid;
    grid.schemes = {"local"};
    grid.seeds = {1, 2};
    grid.model.layers = 1;
    grid.model.dModel = 16;
    grid.model.heads = 2;
    grid.model.dFf = 32;
    grid.model.context = 16;
    grid.model.schemeSettings = {"window=8"};
    grid.train.steps = 5;
    grid.evalLengths = {16, 32};
    nlohmann::json j = grid.toJson();
    // The fields as the grid wrote them itself before: the same JSON, so the same hash for every folder.
    const plab::TrainConfig& t = grid.train;
    const nlohmann::json model{{"layers", 1},   {"d_model", 16},           {"heads", 2}, {"d_ff", 32}, {"context", 16},
                               {"logn", false}, {"settings", {"window=8"}}};
    const nlohmann::json train{{"steps", 5},           {"batch", t.batch},
                               {"lr", t.learningRate}, {"min_lr", t.minLearningRate},
                               {"warmup", t.warmup},   {"weight_decay", t.weightDecay},
                               {"beta1", t.beta1},     {"beta2", t.beta2},
                               {"epsilon", t.epsilon}, {"grad_clip", t.gradClip}};
    QCOMPARE(QString::fromStdString(j["model"].dump()), QString::fromStdString(model.dump()));
    QCOMPARE(QString::fromStdString(j["train"].dump()), QString::fromStdString(train.dump()));
    if (!pointer.isEmpty())
        j[nlohmann::json::json_pointer(pointer.toStdString())] = value;
    try {
        const plab::SweepGrid back = plab::SweepGrid::fromJson(j, "G");
        plab::validateSweepGrid(back);
        QVERIFY2(message.isEmpty(), "no InputError");
        QCOMPARE(QString::fromStdString(back.hash()), QString::fromStdString(grid.hash()));
    } catch (const plab::InputError& e) {
        QVERIFY2(!message.isEmpty() && QString(e.what()).contains(message), e.what());
    }
}

// The evaluations a cell adds (--eval-scaling, --drope) are the runs a user makes by hand: a sweep cell of seed S is
// `train --seed S`; its zero-shot row is `eval --scaling yarn --set factor=F` of that checkpoint (F: the longest
// scored sequence over the context); its DroPE rows are `train --init --drop-positions` for the fraction of the steps
// (its batches drawn with data seed S + 0x9e3779b9) scored with `--set logit-c=C`. The cell's own numbers are those of
// the grid without the options, and collect makes a row of each evaluation.
void TestSweep::addedEvaluationsMatchTrainAndEval_data()
{
    QTest::addColumn<QString>("task"); // empty: text
    QTest::addColumn<QStringList>("options");
    QTest::addColumn<QStringList>("rows"); // collect's scheme,variant of the rows, in order
    QTest::newRow("text: yarn zero-shot, DroPE at two logit-c")
        << "" << QStringList{"--eval-scaling", "none,yarn", "--drope", "0.5", "--drope-logit-c", "0,0.5"}
        << QStringList{"rope,", "rope+yarn,zero-shot factor=2", "drope,fraction=0.5 logit-c=0",
                       "drope,fraction=0.5 logit-c=0.5", "alibi,"};
    // Copy trains long enough (150 steps) to get length 1 right: the sweep and the hand-run eval then compare numbers
    // that are not all 0.
    QTest::newRow("copy: ntk and yarn zero-shot")
        << "copy" << QStringList{"--eval-scaling", "ntk,yarn"}
        << QStringList{"rope,", "rope+ntk,zero-shot factor=2", "rope+yarn,zero-shot factor=2", "alibi,"};
    QTest::newRow("passkey: DroPE at the default logit-c")
        << "passkey" << QStringList{"--drope", "0.25"}
        << QStringList{"rope,", "drope,fraction=0.25 logit-c=0.25", "alibi,"};
}

void TestSweep::addedEvaluationsMatchTrainAndEval()
{
    QFETCH(QString, task);
    QFETCH(QStringList, options);
    QFETCH(QStringList, rows);
    QTemporaryDir dir;
    // Text: context 8, lengths 8 and 16 (factor 2). Copy at L = 1, context 8: the longest example scored (length 6)
    // reads 13 positions (factor 2); 150 steps at batch 4, lr 0.02 learn length 1 (a 4-step model scores 0
    // everywhere, and 0 against 0 would check nothing). Passkey at L = 2 needs a context of 22 (the needle and the
    // question); no budget this small learns it (0.0 at 400 steps of a 2-layer d-model 32 model), so it stays at 4.
    const int steps = task == "copy" ? 150 : 4;
    QStringList shape = {
        "--preset", "tiny", "--steps", QString::number(steps),     "--layers",  "1", "--d-model", "16", "--heads", "2",
        "--d-ff",   "32",   "--batch", task == "copy" ? "4" : "2", "--threads", "1"};
    if (task == "copy")
        shape += {"--lr", "0.02"};
    QStringList scoring;
    if (task.isEmpty()) {
        shape += {"--context", "8", "--corpus", m_corpus};
        scoring = {"--lengths", "8,16"};
    } else if (task == "copy") {
        shape += {"--context", "8", "--task", "copy", "--task-length", "1"};
        scoring = {"--lengths", "1,2,6", "--examples", "10"};
    } else {
        shape += {"--context", "24", "--task", "passkey", "--task-length", "2"};
        scoring = {"--lengths", "1,2,6", "--examples", "4"};
    }
    const QStringList sweepScoring = task.isEmpty() ? scoring + QStringList{"--eval-bytes", "256"} : scoring;
    const QString folder = dir.path() + "/added", plainFolder = dir.path() + "/plain";
    const QStringList grid = QStringList{"sweep", "--schemes", "rope,alibi", "--seeds", "1"} + shape + sweepScoring;
    CliResult r = runCli(grid + options + QStringList{"-o", folder, "--quiet"});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    r = runCli(grid + QStringList{"-o", plainFolder, "--quiet"});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const auto cells = readResults(folder), plain = readResults(plainFolder);
    QCOMPARE(int(cells.size()), 2);
    const char* measure = task.isEmpty() ? "perplexity" : "accuracy";
    // The cells' own numbers are the plain grid's; alibi (not rotary, not rope) adds nothing.
    for (int c = 0; c < 2; ++c)
        QCOMPARE(cells.at(c)[measure].toArray(), plain.at(c)[measure].toArray());
    if (task == "copy") { // the comparisons below see a nonzero accuracy
        const QJsonArray accuracy = cells.at(0)[measure].toArray();
        QVERIFY2(std::any_of(accuracy.begin(), accuracy.end(), [](const QJsonValue& a) { return a.toDouble() > 0; }),
                 QJsonDocument(cells.at(0)).toJson().constData());
    }
    QVERIFY(!cells.at(1).contains("evaluations"));
    const QJsonArray added = cells.at(0)["evaluations"].toArray();
    QCOMPARE(added.size(), rows.size() - 2);

    // The same runs by hand.
    const QString rope = dir.path() + "/rope.safetensors";
    r = runCli(QStringList{"train", "rope", "--seed", "1", "--quiet", "-o", rope} + shape);
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const QStringList evalScoring = task.isEmpty() ? scoring + QStringList{"--max-bytes", "256", "--corpus", m_corpus}
                                                   : scoring + QStringList{"--task", task, "--seed", "1"};
    const QString column = task.isEmpty() ? "perplexity" : "accuracy";
    auto compare = [&](const QJsonObject& line, const QStringList& evalArgs, const QString& what) {
        const CliResult e = runCli(evalArgs + evalScoring + QStringList{"--threads", "1", "--quiet"});
        QVERIFY2(e.exitCode == 0, e.err.constData());
        const std::map<int, double> byHand = csvColumn(e.out, column);
        const QJsonArray lengths = line["lengths"].toArray(), values = line[measure].toArray();
        QCOMPARE(int(byHand.size()), int(lengths.size()));
        for (int i = 0; i < lengths.size(); ++i) {
            const double want = byHand.at(lengths[i].toInt()), got = values[i].toDouble();
            QVERIFY2(
                std::abs(want - got) <= 1e-5 * std::max(1.0, std::abs(want)),
                qPrintable(
                    QString("%1 at %2: sweep %3, by hand %4").arg(what).arg(lengths[i].toInt()).arg(got).arg(want)));
        }
    };
    compare(cells.at(0), {"eval", rope}, "rope");
    for (const QJsonValue& v : added) {
        const QJsonObject e = v.toObject();
        QCOMPARE(e["cell"].toInt(), 0);
        const QString settings = e["method_settings"].toString();
        if (e["method"].toString() != "drope") {
            QCOMPARE(e["train_seconds"].toDouble(), 0.0);
            compare(e, {"eval", rope, "--scaling", e["method"].toString(), "--set", settings}, e["method"].toString());
            continue;
        }
        const double fraction = settings.section(' ', 0, 0).section('=', 1).toDouble();
        const QString c = settings.section(' ', 1, 1).section('=', 1);
        const int dropeSteps = std::max(1, int(std::lround(fraction * steps)));
        QCOMPARE(e["steps"].toInt(), dropeSteps);
        const QString dropped = dir.path() + "/drope.safetensors";
        const CliResult t =
            runCli(QStringList{"train", "--init", rope, "--drop-positions", "--seed", "1", "--data-seed",
                               QString::number(1ULL + 0x9e3779b9ULL), "--quiet", "-o", dropped} +
                   shape.mid(0, 2) + QStringList{"--steps", QString::number(dropeSteps)} + shape.mid(4));
        QVERIFY2(t.exitCode == 0, t.err.constData());
        compare(e, {"eval", dropped, "--set", "logit-c=" + c}, "drope logit-c " + c);
    }

    // collect: a row per evaluation, named by its method and settings.
    r = runCli({"collect", folder});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QStringList got;
    for (const QByteArray& l : r.out.trimmed().split('\n').mid(1)) {
        const QString row = QString::fromUtf8(l).section(',', 0, 1);
        if (got.isEmpty() || got.back() != row)
            got << row;
    }
    QCOMPARE(got, rows);
    // The same command again resumes: nothing to run.
    r = runCli(grid + options + QStringList{"-o", folder});
    QVERIFY2(r.exitCode == 0 && r.err.contains("all 2 cells done"), r.err.constData());
}

// collect -o x.png of a task sweep draws the Train tab's figures: accuracy against length with bands over seeds, and
// for passkey the depth x length heatmaps (results lines keep the accuracy per depth, pooled to the length's).
void TestSweep::taskSweepPictures_data()
{
    QTest::addColumn<QString>("task");
    QTest::addColumn<QString>("lengths");
    QTest::addColumn<QString>("context");
    QTest::newRow("copy") << "copy"
                          << "2,3,6"
                          << "12";
    QTest::newRow("passkey") << "passkey"
                             << "1,2,6"
                             << "24";
}

void TestSweep::taskSweepPictures()
{
    QFETCH(QString, task);
    QFETCH(QString, lengths);
    QFETCH(QString, context);
    QTemporaryDir dir;
    const QString folder = dir.path() + "/" + task;
    const QStringList grid = {"sweep", "--schemes",      "none,rope", "--seeds",    "1,2", "--preset",
                              "tiny",  "--steps",        "4",         "--layers",   "1",   "--d-model",
                              "16",    "--heads",        "2",         "--d-ff",     "32",  "--context",
                              context, "--batch",        "2",         "--task",     task,  "--task-length",
                              "2",     "--lengths",      lengths,     "--examples", "4",   "--threads",
                              "1",     "--eval-scaling", "yarn",      "--quiet",    "-o",  folder};
    CliResult r = runCli(grid);
    QVERIFY2(r.exitCode == 0, r.err.constData());
    for (const auto& [index, o] : readResults(folder)) {
        const QJsonArray pooled = o["accuracy"].toArray(), depths = o["depths"].toArray();
        QCOMPARE(depths.isEmpty(), task != "passkey");
        if (depths.isEmpty())
            continue;
        // Each length's accuracy is the mean over its depths (the same examples at every depth).
        const QJsonArray rowsByLength = o["depth_accuracy"].toArray();
        QCOMPARE(rowsByLength.size(), pooled.size());
        for (int i = 0; i < pooled.size(); ++i) {
            double sum = 0;
            for (const QJsonValue& a : rowsByLength[i].toArray())
                sum += a.toDouble();
            QVERIFY(std::abs(sum / depths.size() - pooled[i].toDouble()) < 1e-12);
        }
    }
    for (const QString& extension : {QString("png"), QString("svg")}) {
        const QString picture = dir.path() + "/" + task + "." + extension;
        r = runCli({"collect", folder, "-o", picture});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QVERIFY(QFileInfo(picture).size() > 1000);
        if (extension == "svg") {
            const QByteArray svg = readAll(picture);
            QVERIFY2(svg.contains("rope+yarn zero-shot factor="), "every summary row is a curve");
            QCOMPARE(svg.contains("needle depth"), task == "passkey");
        }
    }
    if (qEnvironmentVariableIsSet("PLAB_KEEP_PICTURES")) // to look at them
        QFile::copy(dir.path() + "/" + task + ".png", qEnvironmentVariable("PLAB_KEEP_PICTURES") + "/" + task + ".png");
}

// A task cell's pooling (core's poolTaskPoints, what every results line keeps) on hand-written points with unequal,
// nonzero accuracies and unequal example counts: the length's accuracy is every example pooled (not the mean of the
// depths' accuracies when their counts differ), each depth keeps its own, and an unsupported length is NaN.
// Points are "length:depth:examples:correct[:u]" (u: unsupported); the expected values were counted by hand.
void TestSweep::taskPointsPooled_data()
{
    QTest::addColumn<QString>("points");
    QTest::addColumn<QString>("lengths");
    QTest::addColumn<QString>("depths");
    QTest::addColumn<QString>("pooled");      // per length
    QTest::addColumn<QString>("depthMatrix"); // rows by length, ';' between rows
    QTest::newRow("passkey, equal counts") << "8:0:4:4,8:0.5:4:2,8:1:4:1,16:0:4:3,16:0.5:4:0,16:1:4:2"
                                           << "8,16" << "0,0.5,1" << "0.5833333333333334,0.4166666666666667"
                                           << "1,0.5,0.25;0.75,0,0.5";
    QTest::newRow("passkey, unequal counts") << "8:0:2:2,8:1:8:2" << "8" << "0,1" << "0.4"
                                             << "1,0.25"; // the mean of the depths would say 0.625
    QTest::newRow("copy, no depths") << "4:-1:10:7,8:-1:5:1" << "4,8" << "" << "0.7,0.2" << "";
    QTest::newRow("unsupported length") << "4:-1:10:7,8:-1:5:1:u" << "4,8" << "" << "0.7,nan" << "";
}

void TestSweep::taskPointsPooled()
{
    QFETCH(QString, points);
    QFETCH(QString, lengths);
    QFETCH(QString, depths);
    QFETCH(QString, pooled);
    QFETCH(QString, depthMatrix);
    std::vector<plab::TaskAccuracyPoint> input;
    for (const QString& text : points.split(',')) {
        const QStringList f = text.split(':');
        plab::TaskAccuracyPoint p;
        p.length = f[0].toInt();
        p.depth = f[1].toDouble();
        p.examples = f[2].toInt();
        p.correct = f[3].toInt();
        p.accuracy = static_cast<double>(p.correct) / p.examples;
        p.supported = f.size() < 5;
        input.push_back(p);
    }
    std::vector<int> lengthList;
    for (const QString& l : lengths.split(','))
        lengthList.push_back(l.toInt());
    std::vector<double> depthList;
    for (const QString& d : depths.split(',', Qt::SkipEmptyParts))
        depthList.push_back(d.toDouble());
    plab::SweepResult r;
    plab::poolTaskPoints(input, lengthList, depthList, r);
    const auto same = [](double got, const QString& want) {
        return want == "nan" ? std::isnan(got) : std::abs(got - want.toDouble()) <= 1e-12;
    };
    const QStringList want = pooled.split(',');
    QCOMPARE(r.accuracy.size(), size_t(want.size()));
    for (int i = 0; i < want.size(); ++i)
        QVERIFY2(same(r.accuracy[i], want[i]),
                 qPrintable(QString("length %1: %2, counted by hand %3").arg(lengthList[i]).arg(r.accuracy[i]).arg(want[i])));
    QCOMPARE(r.depths.size(), depthList.size());
    const QStringList rows = depthMatrix.split(';', Qt::SkipEmptyParts);
    QCOMPARE(r.depthAccuracy.size(), size_t(rows.size()));
    for (int i = 0; i < rows.size(); ++i) {
        const QStringList row = rows[i].split(',');
        QCOMPARE(r.depthAccuracy[i].size(), size_t(row.size()));
        for (int d = 0; d < row.size(); ++d)
            QVERIFY2(same(r.depthAccuracy[i][d], row[d]), qPrintable(QString("length %1 depth %2").arg(i).arg(d)));
    }
    QVERIFY2(std::any_of(r.accuracy.begin(), r.accuracy.end(), [](double a) { return a > 0; }),
             "at least one accuracy is nonzero");
}

PLAB_QTEST_GUILESS_MAIN(TestSweep)
#include "tst_sweep.moc"
