// Runs the real positionlab-cli (POSITIONLAB_CLI, set by positionlab_add_qtest) as a user would: one helper for every
// test.
#pragma once

#include <QByteArray>
#include <QFile>
#include <QProcess>
#include <QStringList>

namespace plab::test {

struct CliResult {
    int exitCode = -1; // -1: crashed, or killed after the timeout
    QByteArray out;
    QByteArray err;
};

// Runs positionlab-cli with `args` and waits for it (a hang guard, not a timing assertion: tests never time work).
// `environment`: extra NAME=VALUE entries on top of the test's own environment.
inline CliResult runCli(const QStringList& args, int timeoutMs = 300000, const QStringList& environment = {})
{
    QProcess p;
    if (!environment.isEmpty())
        p.setEnvironment(QProcess::systemEnvironment() + environment);
    p.start(QStringLiteral(POSITIONLAB_CLI), args);
    if (!p.waitForFinished(timeoutMs)) {
        p.kill();
        p.waitForFinished();
        // Keep what it printed before hanging: that is what tells a failing test where it hung.
        return {-1, p.readAllStandardOutput(),
                "(killed after " + QByteArray::number(timeoutMs) + " ms)\n" + p.readAllStandardError()};
    }
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, p.readAllStandardOutput(),
            p.readAllStandardError()};
}

// A small UTF-8 corpus with structure (a repeating, slowly shifting word pattern), written once into `dir`.
inline QString writeStructuredCorpus(const QString& dir, int bytes)
{
    const QString path = dir + "/corpus.txt";
    if (!QFile::exists(path)) {
        QFile f(path);
        if (!f.open(QIODevice::WriteOnly))
            qFatal("cannot write the corpus");
        QByteArray text;
        const char* words[] = {"naïve ", "cat ", "sat ", "on ", "the ", "mat ", "and ", "ran. "};
        for (int i = 0; text.size() < bytes; ++i)
            text += words[(i * 7 + i / 3) % 8];
        f.write(text);
    }
    return path;
}

} // namespace plab::test
