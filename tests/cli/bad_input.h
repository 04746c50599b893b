// What every tst_bad_input_VERB shares: the row runner (a real positionlab-cli run checked for its one-line
// message, exit code and untouched files), the tiny checkpoints the rows break, and file builders.
#pragma once

#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>

#include <csignal>
#include <sys/resource.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define PLAB_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PLAB_ASAN 1
#endif
#endif

// Files a row needs, by name relative to its temporary directory; a name ending in '/' is a directory.
using Files = QMap<QString, QByteArray>;
Q_DECLARE_METATYPE(Files)

namespace plab::test::bad_input {

enum Flag {
    LimitMemory = 1,   // the child may not allocate more than ~3 GiB: absurd sizes must be refused, not tried
    ReadOnlyDir = 2,   // the row's directory is read-only (the child drops root so the permission holds)
    FileSizeLimit = 4, // RLIMIT_FSIZE of 4 KiB: every write past it fails like a full disk
    StdoutFull = 8,    // standard output is /dev/full
    MultiLine = 16,    // usage text instead of a one-line message
    KnownOpen = 32,    // a known, not yet fixed finding: the row documents it and is skipped until fixed
    NeedsRender = 64,  // the `render` verb (CLI built with the GUI library); skipped otherwise
};

inline bool cliHasRender()
{
    static const bool has = [] {
        QProcess p;
        p.start(QStringLiteral(POSITIONLAB_CLI), {"render", "--help"});
        return p.waitForFinished(60000) && p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0;
    }();
    return has;
}

// ---- .npy bytes built here, independently of core/base/npy.cpp ----

inline QByteArray npyFile(const QByteArray& dict, const QByteArray& data, int major = 1)
{
    QByteArray header = dict;
    const int prefix = major == 1 ? 10 : 12;
    while ((prefix + header.size() + 1) % 64)
        header += ' ';
    header += '\n';
    QByteArray out("\x93NUMPY", 6);
    out += char(major);
    out += char(0);
    const quint32 len = quint32(header.size());
    out += char(len & 0xff);
    out += char((len >> 8) & 0xff);
    if (major != 1) {
        out += char((len >> 16) & 0xff);
        out += char((len >> 24) & 0xff);
    }
    return out + header + data;
}

inline QByteArray npyDict(const QByteArray& descr, const QByteArray& shape, const QByteArray& fortran = "False")
{
    return "{'descr': '" + descr + "', 'fortran_order': " + fortran + ", 'shape': " + shape + ", }";
}

inline QByteArray floats(const QList<float>& values)
{
    QByteArray out;
    for (float v : values)
        out.append(reinterpret_cast<const char*>(&v), sizeof v);
    return out;
}

inline QByteArray doubles(const QList<double>& values)
{
    QByteArray out;
    for (double v : values)
        out.append(reinterpret_cast<const char*>(&v), sizeof v);
    return out;
}

inline QByteArray bigEndianFloats(const QList<float>& values)
{
    QByteArray out = floats(values);
    for (int i = 0; i < out.size(); i += 4)
        std::reverse(out.begin() + i, out.begin() + i + 4);
    return out;
}

inline QList<float> ramp(int n)
{
    QList<float> v;
    for (int i = 0; i < n; ++i)
        v << 0.01f * float(i);
    return v;
}

// A good (H, N, D) = (2, 4, 8) float32 array.
inline QByteArray goodNpy()
{
    return npyFile(npyDict("<f4", "(2, 4, 8)"), floats(ramp(64)));
}

// ---- safetensors bytes built here, independently of core/base/safetensors.cpp ----

struct StTensor {
    QString name;
    QString dtype = "F32";
    QList<qint64> shape;
    QByteArray data;
};

// 8-byte little-endian length, the JSON header (padded to 8), the data; offsets assigned in order.
inline QByteArray safetensorsFile(const QList<StTensor>& tensors, const QJsonObject& metadata = {})
{
    QJsonObject header;
    if (!metadata.isEmpty())
        header["__metadata__"] = metadata;
    QByteArray data;
    for (const StTensor& t : tensors) {
        QJsonArray shape;
        for (qint64 d : t.shape)
            shape.append(d);
        header[t.name] =
            QJsonObject{{"dtype", t.dtype},
                        {"shape", shape},
                        {"data_offsets", QJsonArray{qint64(data.size()), qint64(data.size() + t.data.size())}}};
        data += t.data;
    }
    QByteArray json = QJsonDocument(header).toJson(QJsonDocument::Compact);
    while (json.size() % 8)
        json += ' ';
    const quint64 length = quint64(json.size());
    return QByteArray(reinterpret_cast<const char*>(&length), 8) + json + data;
}

// A header given as text, for malformed JSON and hand-made offsets.
inline QByteArray safetensorsRaw(const QByteArray& header, const QByteArray& data = {}, qint64 lengthOverride = -1)
{
    const quint64 length = lengthOverride >= 0 ? quint64(lengthOverride) : quint64(header.size());
    return QByteArray(reinterpret_cast<const char*>(&length), 8) + header + data;
}

// Splits a safetensors file back into its metadata and tensors (test-side reader, trusted input).
inline void splitSafetensors(const QByteArray& bytes, QJsonObject& metadata, QList<StTensor>& tensors)
{
    quint64 length = 0;
    std::memcpy(&length, bytes.constData(), 8);
    const QJsonObject header = QJsonDocument::fromJson(bytes.mid(8, qsizetype(length))).object();
    const QByteArray data = bytes.mid(8 + qsizetype(length));
    metadata = header["__metadata__"].toObject();
    tensors.clear();
    for (auto it = header.begin(); it != header.end(); ++it) {
        if (it.key() == "__metadata__")
            continue;
        const QJsonObject e = it.value().toObject();
        StTensor t;
        t.name = it.key();
        t.dtype = e["dtype"].toString();
        for (const QJsonValue& d : e["shape"].toArray())
            t.shape << qint64(d.toDouble());
        const QJsonArray off = e["data_offsets"].toArray();
        t.data = data.mid(qsizetype(off[0].toDouble()), qsizetype(off[1].toDouble() - off[0].toDouble()));
        tensors << t;
    }
}

// A checkpoint with one change applied to its metadata or tensors.
inline QByteArray changedCheckpoint(const QByteArray& checkpoint,
                                    const std::function<void(QJsonObject& metadata, QList<StTensor>& tensors)>& change)
{
    QJsonObject metadata;
    QList<StTensor> tensors;
    splitSafetensors(checkpoint, metadata, tensors);
    change(metadata, tensors);
    return safetensorsFile(tensors, metadata);
}

inline QJsonObject configOf(const QJsonObject& metadata)
{
    return QJsonDocument::fromJson(metadata["config"].toString().toUtf8()).object();
}

inline void setConfig(QJsonObject& metadata, const QJsonObject& config)
{
    metadata["config"] = QString::fromUtf8(QJsonDocument(config).toJson(QJsonDocument::Compact));
}

// UTF-8 text of `bytes` bytes, for corpora.
inline QByteArray text(int bytes)
{
    QByteArray t;
    while (t.size() < bytes)
        t += "Train short, test long: the model sees 64 bytes and is asked about 1024. ";
    return t.left(bytes);
}

// Writes the row's files; directories for names ending in '/'.
inline void materialise(const QString& dir, const Files& files)
{
    for (auto it = files.begin(); it != files.end(); ++it) {
        const QString path = dir + '/' + it.key();
        if (it.key().endsWith('/')) {
            QVERIFY(QDir().mkpath(path));
            continue;
        }
        QDir().mkpath(QFileInfo(path).absolutePath());
        QFile f(path);
        QVERIFY2(f.open(QIODevice::WriteOnly), qPrintable(path));
        f.write(it.value());
    }
}

inline QStringList listTree(const QString& dir)
{
    QStringList names;
    QDirIterator it(dir, QDir::AllEntries | QDir::Hidden | QDir::System | QDir::NoDotAndDotDot,
                    QDirIterator::Subdirectories);
    while (it.hasNext())
        names << QDir(dir).relativeFilePath(it.next());
    names.sort();
    return names;
}

inline QStringList expectedTree(const Files& files)
{
    QStringList names;
    for (auto it = files.begin(); it != files.end(); ++it) {
        QString name = it.key();
        if (name.endsWith('/'))
            name.chop(1);
        // parent directories of nested names
        QStringList parts = name.split('/');
        for (int i = 1; i <= parts.size(); ++i)
            names << QStringList(parts.mid(0, i)).join('/');
    }
    names.removeDuplicates();
    names.sort();
    return names;
}

// Starts positionlab-cli as a terminal would: SIGINT, SIGTERM and SIGHUP at their defaults, whatever the test runner
// ignores, so a signal the test sends reaches the CLI's own handler (or ends it, as it intends).
inline void startWithDefaultSignals(QProcess& p, const QStringList& args)
{
    p.setChildProcessModifier([] {
        for (int s : {SIGINT, SIGTERM, SIGHUP})
            std::signal(s, SIG_DFL);
    });
    p.start(QStringLiteral(POSITIONLAB_CLI), args);
}

// The columns of every `cli` table: a row is a positionlab-cli run that must be refused as it says.
inline void addCliColumns()
{
    QTest::addColumn<QStringList>("args"); // @DIR@ stands for the row's temporary directory
    QTest::addColumn<Files>("files");      // created before the run; must be byte-identical after it
    QTest::addColumn<int>("exitCode");     // 2 bad input, 1 failure while running
    QTest::addColumn<QString>("message");  // substring of the one-line stderr message
    QTest::addColumn<int>("flags");
}

// One row of a `cli` table.
inline void row(const char* name, QStringList args, int code, const QString& message, Files files = {}, int flags = 0)
{
    QTest::newRow(name) << args << files << code << message << flags;
}

// The checkpoints the rows break: a base of the test classes whose rows need them.
struct Checkpoints {
    QByteArray m_checkpoint;        // a valid tiny model checkpoint, made by `train` in initTestCase
    QByteArray m_ropeCheckpoint;    // the same with scheme rope (eval --compare)
    QByteArray m_learnedCheckpoint; // the same with scheme learned (its table's rows follow the context)
    QString makeCheckpoints();
};

// The checkpoints the rows break, made once by whoever needs them first: initTestCase, or cli_data when the binary
// only lists its rows (-datatags runs no initTestCase, and the rows are built from these bytes). Empty: made.
inline QString Checkpoints::makeCheckpoints()
{
    if (!m_checkpoint.isEmpty())
        return {};
    // A real checkpoint to break in many ways: one step of the smallest model.
    QTemporaryDir temp;
    QFile corpus(temp.filePath("corpus.txt"));
    if (!corpus.open(QIODevice::WriteOnly))
        return "cannot write " + corpus.fileName();
    corpus.write(text(4096));
    corpus.close();
    QString problem;
    auto trainTiny = [&](const QString& scheme, QByteArray& checkpoint) {
        QProcess p;
        p.start(QStringLiteral(POSITIONLAB_CLI), {"train",
                                                  "--scheme",
                                                  scheme,
                                                  "--corpus",
                                                  corpus.fileName(),
                                                  "--layers",
                                                  "1",
                                                  "--d-model",
                                                  "8",
                                                  "--heads",
                                                  "2",
                                                  "--d-ff",
                                                  "8",
                                                  "--context",
                                                  "8",
                                                  "--steps",
                                                  "1",
                                                  "--batch",
                                                  "1",
                                                  "--eval-bytes",
                                                  "0",
                                                  "-o",
                                                  temp.filePath(scheme + ".safetensors")});
        if (!p.waitForFinished(120000) || p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0) {
            problem += "train " + scheme + ": " + QString::fromUtf8(p.readAllStandardError());
            return;
        }
        QFile model(temp.filePath(scheme + ".safetensors"));
        if (model.open(QIODevice::ReadOnly))
            checkpoint = model.readAll();
    };
    trainTiny("alibi", m_checkpoint);
    trainTiny("rope", m_ropeCheckpoint);
    trainTiny("learned", m_learnedCheckpoint);
    return problem;
}

// Runs one `cli` row: the CLI under the row's flags, then its exit code, its one-line message, and the row's
// files byte for byte with nothing else left in its directory.
inline void checkCliRow(QStringList args, const Files& files, int exitCode, QString message, int flags)
{
    if (flags & KnownOpen)
        QSKIP("known open finding (row documents it)");
    if ((flags & NeedsRender) && !cliHasRender())
        QSKIP("this positionlab-cli has no render verb (built without the GUI library)");
    QTemporaryDir temp;
    QVERIFY(temp.isValid());
    const QString dir = temp.path();
    materialise(dir, files);
    for (QString& a : args)
        a.replace("@DIR@", dir);
    message.replace("@DIR@", dir);

    const bool dropRoot = (flags & ReadOnlyDir) && ::geteuid() == 0;
    if (flags & ReadOnlyDir) {
        // nobody must reach the directory through /tmp's private QTemporaryDir (0700)
        QFile::setPermissions(dir, QFileDevice::ReadOwner | QFileDevice::ExeOwner | QFileDevice::ReadGroup |
                                       QFileDevice::ExeGroup | QFileDevice::ReadOther | QFileDevice::ExeOther);
    }

    // As nobody, the CLI itself must be reachable too: a checkout under a private directory (mktemp -d is 0700)
    // is not, so run a copy from a directory nobody can enter.
    QTemporaryDir binDir;
    QString cli = QStringLiteral(POSITIONLAB_CLI);
    if (dropRoot) {
        QVERIFY(binDir.isValid());
        const QString copy = binDir.path() + QStringLiteral("/positionlab-cli");
        QVERIFY(QFile::copy(cli, copy));
        const auto readExec = QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner |
                              QFileDevice::ReadGroup | QFileDevice::ExeGroup | QFileDevice::ReadOther |
                              QFileDevice::ExeOther;
        QVERIFY(QFile::setPermissions(binDir.path(), readExec) && QFile::setPermissions(copy, readExec));
        cli = copy;
    }

    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
#ifdef PLAB_ASAN
    if (flags & LimitMemory) {
        // One allocation above 3 GiB is an ASan error (the run then fails): the refusal must come first.
        const QString old = env.value("ASAN_OPTIONS");
        env.insert("ASAN_OPTIONS", (old.isEmpty() ? QString() : old + ':') + "max_allocation_size_mb=3072");
    }
#endif
    if (dropRoot && env.contains("LSAN_OPTIONS")) {
        // The same for LeakSanitizer's suppressions file (ASan preset): nobody must be able to read it.
        QStringList options = env.value("LSAN_OPTIONS").split(':');
        for (QString& option : options)
            if (option.startsWith("suppressions=")) {
                const QString copy = binDir.path() + QStringLiteral("/lsan.supp");
                QVERIFY(QFile::copy(option.mid(13), copy));
                QVERIFY(QFile::setPermissions(copy, QFileDevice::ReadOwner | QFileDevice::ReadGroup |
                                                        QFileDevice::ReadOther));
                option = "suppressions=" + copy;
            }
        env.insert("LSAN_OPTIONS", options.join(':'));
    }
    p.setProcessEnvironment(env);
    p.setChildProcessModifier([flags, dropRoot] {
#ifndef PLAB_ASAN
        if (flags & LimitMemory) {
            const rlimit limit{rlim_t(3) << 30, rlim_t(3) << 30};
            ::setrlimit(RLIMIT_AS, &limit);
        }
#endif
        if (flags & FileSizeLimit) {
            std::signal(SIGXFSZ, SIG_IGN); // a write past the limit then fails with EFBIG, like a full disk
            const rlimit limit{4096, 4096};
            ::setrlimit(RLIMIT_FSIZE, &limit);
        }
        if (dropRoot) {
            if (::setgid(65534) != 0 || ::setuid(65534) != 0)
                ::_exit(99);
        }
    });
    if (flags & StdoutFull)
        p.setStandardOutputFile("/dev/full");
    p.start(cli, args);
    QVERIFY(p.waitForStarted());
    // A hang guard, not a timing assertion: refusals must not compute or allocate first.
    if (!p.waitForFinished(120000)) {
        p.kill();
        p.waitForFinished();
        QFAIL("the CLI did not finish within 120 s");
    }
    if (flags & ReadOnlyDir)
        QFile::setPermissions(dir, QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
    const QByteArray err = p.readAllStandardError();
    QVERIFY2(p.exitStatus() == QProcess::NormalExit, ("crashed; stderr: " + err).constData());
    QVERIFY2(p.exitCode() != 99, "could not drop root for the read-only row");
    QCOMPARE(p.exitCode(), exitCode);

    const QByteArray trimmed = err.trimmed();
    if (!(flags & MultiLine)) {
        QVERIFY2(!trimmed.contains('\n'), ("stderr is not one line: " + err).constData());
        QVERIFY2(trimmed.startsWith(exitCode == 2 ? "positionlab-cli: error: " : "positionlab-cli: failed: "),
                 err.constData());
    }
    QVERIFY2(trimmed.contains(message.toUtf8()),
             ("stderr: " + err + "\nexpected to contain: " + message.toUtf8()).constData());

    // No partial output, no temporary left behind, every file the row had unchanged byte for byte.
    QCOMPARE(listTree(dir), expectedTree(files));
    for (auto it = files.begin(); it != files.end(); ++it) {
        if (it.key().endsWith('/'))
            continue;
        QFile f(dir + '/' + it.key());
        QVERIFY(f.open(QIODevice::ReadOnly));
        QVERIFY2(f.readAll() == it.value(), qPrintable(it.key() + " changed"));
    }
}

} // namespace plab::test::bad_input
