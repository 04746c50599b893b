// An emitted sweep on a real single-node Slurm (scripts/slurm-local.sh): the job array's results equal a local run.
// Skipped, with the reason, when Slurm or munge is not installed.
#include "cli_runner.h"
#include "sweep_results.h"
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

using namespace plab::test;

const QString kScript = QStringLiteral(POSITIONLAB_SOURCE_DIR "/scripts/slurm-local.sh");

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
    const QStringList grid = tinyGrid(corpus, "alibi,rope", "1,2", "20");
    const QString local = m_tmp.path() + "/local", cluster = m_tmp.path() + "/array";
    CliResult r = runCli(grid + QStringList{"-o", local, "--quiet"});
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

    const auto expected = readResults(local);
    QString problem;
    const auto got = readResults(cluster, &problem);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    QCOMPARE(int(expected.size()), 4);
    QCOMPARE(int(got.size()), 4);
    for (const auto& [cell, o] : expected) {
        QVERIFY_SAME_RESULT(got.at(cell), o);
        QCOMPARE(got.at(cell)["threads"].toInt(), 1); // --cpus-per-task 1 reached the task as --threads
    }
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
