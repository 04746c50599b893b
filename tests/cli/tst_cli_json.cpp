// --json of every verb that prints data (issue 27): `VERB ... --json` prints the document `VERB ... -o x.json` writes,
// every verb whose -o takes .json offers --json, and --json with -o of another format is refused naming both.
#include "cli_runner.h"
#include "test_main.h"

#include <QDir>
#include <QFile>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>

using namespace plab::test;

namespace {

QString hfData(const char* name)
{
    return QStringLiteral(POSITIONLAB_TEST_DATA "/hf/") + QString::fromLatin1(name);
}

QStringList tinyModel()
{
    return {"--layers", "1", "--d-model", "16", "--heads", "2", "--d-ff", "32", "--context", "16", "--batch", "4"};
}

// The verbs the overview lists (`positionlab-cli --help`: "  VERB  summary" lines).
QStringList verbs()
{
    const CliResult r = runCli({"--help"});
    QStringList names;
    static const QRegularExpression line(QStringLiteral("^  ([a-z][a-z-]*)\\s"));
    for (const QByteArray& l : r.out.split('\n')) {
        const QRegularExpressionMatch m = line.match(QString::fromUtf8(l));
        if (m.hasMatch())
            names << m.captured(1);
    }
    return names;
}

} // namespace

class TestCliJson : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_corpus = writeStructuredCorpus(m_dir.path(), 30000);
        // A rope checkpoint (rope: --compare needs a rotary model) and a FIRE one (fire-curve), a few steps each.
        for (const char* scheme : {"rope", "fire"}) {
            const QString model = m_dir.filePath(QString::fromLatin1(scheme) + ".safetensors");
            const CliResult r = runCli(QStringList{"train", "--scheme", scheme, "--corpus", m_corpus, "--steps", "3",
                                                   "-o", model} +
                                       tinyModel());
            QVERIFY2(r.exitCode == 0, r.err.constData());
        }
        // A sweep folder for collect.
        const CliResult sweep = runCli({"sweep",     "--schemes", "alibi", "--seeds",   "1",      "--preset",
                                        "tiny",      "--steps",   "2",     "--layers",  "1",      "--d-model",
                                        "16",        "--heads",   "2",     "--d-ff",    "32",     "--context",
                                        "8",         "--batch",   "2",     "--eval-bytes", "256", "--lengths",
                                        "8,16",      "--corpus",  m_corpus, "--threads", "1",     "-o",
                                        m_dir.filePath("sweep")});
        QVERIFY2(sweep.exitCode == 0, sweep.err.constData());
    }

    void jsonIsWhatTheFileHolds_data()
    {
        QTest::addColumn<QStringList>("args");
        const QString rope = m_dir.filePath("rope.safetensors"), fire = m_dir.filePath("fire.safetensors");
        const QString folder = hfData("qwen2_text");
        QTest::newRow("eval") << QStringList{"eval", rope, "--corpus", m_corpus, "--lengths", "16,32", "--quiet"};
        QTest::newRow("eval --compare")
            << QStringList{"eval", rope, "--corpus", m_corpus, "--lengths", "16,32", "--compare", "none,pi", "--quiet"};
        QTest::newRow("eval --task")
            << QStringList{"eval", rope, "--task", "copy", "--lengths", "2,4", "--examples", "3", "--quiet"};
        QTest::newRow("eval DIR") << QStringList{"eval", folder, "--lengths", "16,32", "--max-bytes", "200", "--quiet"};
        QTest::newRow("eval DIR --compare") << QStringList{"eval",         folder, "--lengths", "16,32",   "--max-bytes",
                                                           "200",          "--compare", "none,yarn", "--quiet"};
        QTest::newRow("eval DIR --task") << QStringList{"eval", folder, "--task", "passkey", "--lengths", "180",
                                                        "--depths", "0.5", "--corpus", m_corpus, "--quiet"};
        QTest::newRow("bias") << QStringList{"bias", "alibi", "--length", "8"};
        QTest::newRow("dot") << QStringList{"dot", "--max-distance", "16"};
        QTest::newRow("entropy") << QStringList{"entropy", "alibi", "--lengths", "16,32"};
        QTest::newRow("frequencies") << QStringList{"frequencies", "--scaling", "yarn"};
        QTest::newRow("fire-curve") << QStringList{"fire-curve", fire};
        QTest::newRow("collect") << QStringList{"collect", m_dir.filePath("sweep")};
    }

    // The JSON on stdout parses and equals the file's (same numbers, same metadata).
    void jsonIsWhatTheFileHolds()
    {
        QFETCH(QStringList, args);
        const CliResult printed = runCli(args + QStringList{"--json"});
        QVERIFY2(printed.exitCode == 0, printed.err.constData());
        const QString file = m_dir.filePath(QStringLiteral("out.json"));
        QFile::remove(file);
        const CliResult written = runCli(args + QStringList{"-o", file});
        QVERIFY2(written.exitCode == 0, written.err.constData());
        QFile f(file);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const nlohmann::json fromFile = nlohmann::json::parse(f.readAll().toStdString(), nullptr, false);
        const nlohmann::json fromStdout = nlohmann::json::parse(printed.out.toStdString(), nullptr, false);
        QVERIFY2(!fromStdout.is_discarded(), printed.out.left(300).constData());
        QVERIFY(!fromFile.is_discarded());
        QVERIFY2(!fromStdout.empty(), "an empty document");
        QVERIFY2(fromStdout == fromFile, qPrintable(QString::fromStdString(fromStdout.dump().substr(0, 300) + "\n vs \n" +
                                                                            fromFile.dump().substr(0, 300))));
    }

    // Every verb that prints data offers --json: those without -o and those whose -o is optional (stdout by default);
    // train, sweep, render, logits and attention write files only.
    void everyDataVerbTakesJson()
    {
        const QStringList names = verbs();
        QVERIFY2(names.size() >= 10, qPrintable(names.join(QLatin1Char(','))));
        QStringList missing;
        for (const QString& verb : names) {
            const CliResult help = runCli({verb, "--help"});
            QVERIFY2(help.exitCode == 0, help.err.constData());
            const QString text = QString::fromUtf8(help.out);
            // It prints data when it has no -o (inspect, schemes ...) or its -o is optional, stdout the default.
            bool hasOutput = false, printsData = false;
            for (const QString& line : text.split(QLatin1Char('\n')))
                if (line.trimmed().startsWith(QStringLiteral("-o "))) {
                    hasOutput = true;
                    printsData = line.contains(QStringLiteral("stdout"));
                }
            if ((!hasOutput || printsData) && !text.contains(QStringLiteral("--json")))
                missing << verb;
        }
        QVERIFY2(missing.isEmpty(), qPrintable(QStringLiteral("no --json: ") + missing.join(QStringLiteral(", "))));
    }

    // --json with -o of another format is refused before any work, naming the verb, both options and what is allowed.
    void jsonWithAnotherOutputRefused_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("path");
        QTest::newRow("eval to csv") << QStringList{"eval", m_dir.filePath("rope.safetensors"), "--corpus", m_corpus}
                                     << QStringLiteral("x.csv");
        QTest::newRow("eval --compare to png")
            << QStringList{"eval", m_dir.filePath("rope.safetensors"), "--corpus", m_corpus, "--compare", "none,pi"}
            << QStringLiteral("x.png");
        QTest::newRow("bias to npy") << QStringList{"bias", "alibi"} << QStringLiteral("x.npy");
        QTest::newRow("collect to csv") << QStringList{"collect", m_dir.filePath("sweep")} << QStringLiteral("x.csv");
    }

    void jsonWithAnotherOutputRefused()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, path);
        const QString out = m_dir.filePath(path);
        const CliResult r = runCli(args + QStringList{"--json", "-o", out});
        QCOMPARE(r.exitCode, 2);
        const QString want = args.front() + QStringLiteral(": --json contradicts -o ") + out + QStringLiteral("; allowed");
        QVERIFY2(QString::fromUtf8(r.err).contains(want), r.err.constData());
        QVERIFY(!QFile::exists(out));
    }

private:
    QTemporaryDir m_dir;
    QString m_corpus;
};

PLAB_QTEST_GUILESS_MAIN(TestCliJson)
#include "tst_cli_json.moc"
