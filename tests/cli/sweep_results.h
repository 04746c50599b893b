// Shared by the sweep tests: a tiny grid and corpus, results.jsonl as JSON, and what "the same result" means.
#pragma once

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QStringList>

#include "cli_runner.h"

#include <map>

namespace plab::test {

// A small UTF-8 corpus with structure.
inline QString writeCorpus(const QString& dir)
{
    return writeStructuredCorpus(dir, 20000);
}

// A grid of tiny cells (a few ms each in Release): 1 layer, d_model 16, context 8, lengths 8 and 16 (L and 2L).
inline QStringList tinyGrid(const QString& corpus, const QString& schemes = "alibi,rope", const QString& seeds = "1,2",
                            const QString& steps = "4")
{
    return {"sweep", "--schemes",    schemes, "--seeds",   seeds,  "--preset", "tiny", "--steps",   steps, "--layers",
            "1",     "--d-model",    "16",    "--heads",   "2",    "--d-ff",   "32",   "--context", "8",   "--batch",
            "2",     "--eval-bytes", "256",   "--lengths", "8,16", "--corpus", corpus, "--threads", "1"};
}

// results.jsonl as cell index -> the line's JSON object; fails the test on a line that is not JSON or a repeated cell.
inline std::map<int, QJsonObject> readResults(const QString& dir, QString* problem = nullptr)
{
    std::map<int, QJsonObject> cells;
    QFile f(dir + "/results.jsonl");
    if (!f.open(QIODevice::ReadOnly))
        return cells;
    const QList<QByteArray> lines = f.readAll().split('\n');
    for (int i = 0; i < lines.size(); ++i) {
        if (lines[i].isEmpty() && i == lines.size() - 1)
            continue;
        QJsonParseError error;
        const QJsonDocument doc = QJsonDocument::fromJson(lines[i], &error);
        if (!doc.isObject()) {
            if (problem)
                *problem = QString("line %1 is not JSON: %2").arg(i + 1).arg(QString::fromUtf8(lines[i]));
            continue;
        }
        const int cell = doc.object()["cell"].toInt(-1);
        if (cells.count(cell) && problem)
            *problem = QString("cell %1 appears twice").arg(cell);
        cells[cell] = doc.object();
    }
    return cells;
}

// The numbers of a result that must not depend on interruptions: key, perplexities and losses.
inline QString resultSignature(const QJsonObject& o)
{
    return o["key"].toString() + " " + QJsonDocument(o["perplexity"].toArray()).toJson(QJsonDocument::Compact) + " " +
           QJsonDocument(o["loss"].toArray()).toJson(QJsonDocument::Compact) + " " +
           QString::number(o["steps"].toInt());
}

// Same cell, same steps, the same numbers to the last bit: a model's sums no longer depend on the heap layout of its
// process (aligned parameter, gradient and moment buffers; see tst_train_cli's sameBitsWhereverMallocPutsBuffers), so
// a cell run again elsewhere, in another folder or by Slurm, reproduces its numbers exactly.
inline bool sameResult(const QJsonObject& a, const QJsonObject& b)
{
    if (a["key"] != b["key"] || a["steps"] != b["steps"] || a["cell"] != b["cell"])
        return false;
    for (const char* field : {"perplexity", "loss"})
        if (a[field].toArray() != b[field].toArray())
            return false;
    return true;
}
} // namespace plab::test

#define QVERIFY_SAME_RESULT(a, b)                                                                                      \
    QVERIFY2(plab::test::sameResult((a), (b)),                                                                         \
             qPrintable(plab::test::resultSignature(a) + "\n   vs " + plab::test::resultSignature(b)))
