// An emitted sweep on a real single-node Slurm (scripts/slurm-local.sh): the job array's results equal a local run.
// Skipped, with the reason, when Slurm or munge is not installed.
#include "cli_runner.h"
#include "test_main.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#include <map>

namespace {

using plab::test::CliResult;
using plab::test::runCli;

const QString kScript = QStringLiteral(POSITIONLAB_SOURCE_DIR "/scripts/slurm-local.sh");

QString writeCorpus(const QString& dir)
{
    const QString path = dir + "/corpus.txt";
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly))
        qFatal("cannot write the corpus");
    QByteArray text;
    const char* words[] = {"naïve ", "cat ", "sat ", "on ", "the ", "mat ", "and ", "ran. "};
    for (int i = 0; text.size() < 20000; ++i)
        text += words[(i * 7 + i / 3) % 8];
    f.write(text);
    return path;
}

// cell -> "key perplexities losses" of DIR/results.jsonl.
std::map<int, QString> results(const QString& dir)
{
    std::map<int, QString> out;
    QFile f(dir + "/results.jsonl");
    if (!f.open(QIODevice::ReadOnly))
        return out;
    for (const QByteArray& line : f.readAll().split('\n')) {
        const QJsonObject o = QJsonDocument::fromJson(line).object();
        if (o.isEmpty())
            continue;
        out[o["cell"].toInt()] = o["key"].toString() + " " +
                                 QJsonDocument(o["perplexity"].toArray()).toJson(QJsonDocument::Compact) + " " +
                                 QJsonDocument(o["loss"].toArray()).toJson(QJsonDocument::Compact);
    }
    return out;
}

QProcess::ProcessState run(QProcess& p, const QString& program, const QStringList& args, int timeoutMs)
{
    p.start(program, args);
    if (!p.waitForFinished(timeoutMs)) {
        p.kill();
        p.waitForFinished();
        return QProcess::Running;
    }
    return QProcess::NotRunning;
}

} // namespace

class TestSlurm : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();
    void arrayEqualsLocalRun();
    void cleanupTestCase();

private:
    QTemporaryDir m_tmp;
    QString m_cluster;
    QStringList m_env;
    bool m_started = false;
};

void TestSlurm::initTestCase()
{
    for (const char* tool : {"slurmctld", "slurmd", "sbatch", "munged"})
        if (QStandardPaths::findExecutable(tool).isEmpty() &&
            QStandardPaths::findExecutable(tool, {"/usr/sbin", "/sbin"}).isEmpty())
            QSKIP(qPrintable(QString("Slurm is not installed (%1 not found); scripts/setup.sh test installs slurmctld "
                                     "slurmd slurm-client munge")
                                 .arg(tool)));
    QVERIFY(m_tmp.isValid());
    m_cluster = m_tmp.path() + "/cluster";
    QProcess start;
    QVERIFY2(run(start, kScript, {"start", m_cluster}, 60000) == QProcess::NotRunning, "slurm-local.sh start hung");
    m_started = true;
    QVERIFY2(start.exitCode() == 0, start.readAllStandardError().constData());
    m_env = {"SLURM_CONF=" + m_cluster + "/slurm.conf"};
}

void TestSlurm::arrayEqualsLocalRun()
{
    const QString corpus = writeCorpus(m_tmp.path());
    const QStringList grid = {"sweep", "--schemes", "alibi,rope", "--seeds", "1,2", "--preset", "tiny", "--steps", "4",
                              "--layers", "1", "--d-model", "16", "--heads", "2", "--d-ff", "32", "--context", "8",
                              "--batch", "2", "--eval-bytes", "256", "--lengths", "8,16", "--corpus", corpus};
    const QString local = m_tmp.path() + "/local", cluster = m_tmp.path() + "/array";
    CliResult r = runCli(grid + QStringList{"--threads", "1", "-o", local, "--quiet"});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    r = runCli(grid + QStringList{"--emit", "slurm", "--cpus-per-task", "1", "-o", cluster});
    QVERIFY2(r.exitCode == 0, r.err.constData());

    // sbatch --wait returns when every task of the array has ended; bounded by the process timeout.
    QProcess sbatch;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("SLURM_CONF", m_cluster + "/slurm.conf");
    sbatch.setProcessEnvironment(env);
    QVERIFY2(run(sbatch, "sbatch", {"--wait", cluster + "/sweep.sbatch"}, 90000) == QProcess::NotRunning,
             "the job array did not finish within 90 s");
    QVERIFY2(sbatch.exitCode() == 0, (sbatch.readAllStandardOutput() + sbatch.readAllStandardError()).constData());

    const auto expected = results(local), got = results(cluster);
    QCOMPARE(int(expected.size()), 4);
    QCOMPARE(int(got.size()), 4);
    for (const auto& [cell, text] : expected)
        QCOMPARE(got.at(cell), text);
    QVERIFY(QFile::exists(cluster + "/logs/cell-3.out"));
}

void TestSlurm::cleanupTestCase()
{
    if (!m_started)
        return;
    QProcess stop;
    run(stop, kScript, {"stop", m_cluster}, 60000);
    QVERIFY2(stop.exitCode() == 0, stop.readAllStandardError().constData());
}

PLAB_QTEST_GUILESS_MAIN(TestSlurm)
#include "tst_slurm.moc"
