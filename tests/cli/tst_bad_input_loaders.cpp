// Bad files for the in-process loaders (.npy, safetensors, corpora, GUI session files): each refused with a clear
// InputError (no positionlab-cli run).
#include "bad_input.h"
#include "base/errors.h"
#include "base/npy.h"
#include "base/safetensors.h"
#include "model/corpus.h"
#include "settings/session.h"
#include "test_main.h"

using namespace plab::test::bad_input;

class TestBadInputLoaders : public QObject {
    Q_OBJECT

private slots:
    void npyLoader_data();
    void npyLoader();
    void safetensorsLoader_data();
    void safetensorsLoader();
    void corpusLoader_data();
    void corpusLoader();
    void sessionLoader_data();
    void sessionLoader();
};

void TestBadInputLoaders::npyLoader_data()
{
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<bool>(
        "fromMemory"); // also parseNpy on the bytes (false: only the file reader refuses it this way)
    QTest::addColumn<QString>("message");

    auto row = [](const char* name, const QByteArray& bytes, const QString& message, bool fromMemory = true) {
        QTest::newRow(name) << bytes << fromMemory << message;
    };
    const QByteArray data24 = floats(ramp(24));
    row("empty file", {}, "not a usable .npy file: missing the \\x93NUMPY magic");
    row("text file", "hello, world\n", "missing the \\x93NUMPY magic");
    row("csv file", "0,1,2\n3,4,5\n", "missing the \\x93NUMPY magic");
    row("magic only", QByteArray("\x93NUMPY", 6), "missing the \\x93NUMPY magic");
    row(
        "version 4",
        [] {
            QByteArray b = goodNpy();
            b[6] = 4;
            return b;
        }(),
        "unsupported format version 4 (allowed: 1, 2, 3)");
    row(
        "version 0",
        [] {
            QByteArray b = goodNpy();
            b[6] = 0;
            return b;
        }(),
        "unsupported format version 0");
    row(
        "header length past end",
        [] {
            QByteArray b = goodNpy().left(40);
            return b;
        }(),
        "header length 118 runs past the end");
    row("v2 truncated length", QByteArray("\x93NUMPY\x02\x00\x10\x00", 10), "truncated header");
    row("v2 header length absurd", QByteArray("\x93NUMPY\x02\x00\xff\xff\xff\x7f{}", 14), "header length", false);
    row("dtype int32", npyFile(npyDict("<i4", "(2, 3, 4)"), data24),
        "dtype '<i4' is not supported; allowed: float32 '<f4'");
    row("dtype float16", npyFile(npyDict("<f2", "(2, 3, 4)"), data24.left(48)), "dtype '<f2' is not supported");
    row("dtype uint8", npyFile(npyDict("|u1", "(2, 3, 4)"), QByteArray(24, 1)), "dtype '|u1' is not supported");
    row("dtype complex", npyFile(npyDict("<c8", "(2, 3, 2)"), data24.left(96)), "dtype '<c8' is not supported");
    row("dtype structured",
        npyFile("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }", floats({1, 2})),
        "dtype [('a' is not supported");
    row("dtype missing", npyFile("{'fortran_order': False, 'shape': (2,), }", floats({1, 2})),
        "missing or malformed descr");
    row("big-endian f4", npyFile(npyDict(">f4", "(2, 3, 4)"), bigEndianFloats(ramp(24))),
        "big-endian data ('>f4'); allowed: little-endian float32 '<f4' or float64 '<f8'");
    row("big-endian f8", npyFile(npyDict(">f8", "(2,)"), doubles({1, 2})), "big-endian data ('>f8')");
    row("fortran order", npyFile(npyDict("<f4", "(2, 3, 4)", "True"), data24),
        "Fortran-order arrays are not supported; save with np.ascontiguousarray");
    row("fortran order missing", npyFile("{'descr': '<f4', 'shape': (2,), }", floats({1, 2})),
        "missing or malformed fortran_order");
    row("fortran order garbage", npyFile(npyDict("<f4", "(2,)", "Maybe"), floats({1, 2})),
        "missing or malformed fortran_order");
    row("shape missing", npyFile("{'descr': '<f4', 'fortran_order': False, }", floats({1, 2})),
        "missing or malformed shape");
    row("shape list", npyFile(npyDict("<f4", "[2, 3]"), floats(ramp(6))), "missing or malformed shape");
    row("shape unclosed", npyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3", floats(ramp(6))),
        "malformed shape");
    row("shape negative", npyFile(npyDict("<f4", "(-1, 3)"), floats(ramp(3))), "malformed shape entry '-1");
    row("shape text", npyFile(npyDict("<f4", "(two,)"), floats(ramp(2))), "malformed shape entry 'two");
    row("shape 9 dims", npyFile(npyDict("<f4", "(1, 1, 1, 1, 1, 1, 1, 1, 1)"), floats({1})), "more than 8 dimensions");
    row("shape overflow", npyFile(npyDict("<f4", "(999999999999, 999999999999, 999999999999)"), {}), "shape overflows");
    row("truncated data", goodNpy().chopped(5), "truncated: shape (2, 4, 8) needs 256 bytes of data, the file has 251");
    row("no data", npyFile(npyDict("<f4", "(2, 4, 8)"), {}), "truncated: shape (2, 4, 8) needs 256 bytes");
    row("trailing bytes", goodNpy() + "xyz", "unexpected bytes after the data");
    row("nan", npyFile(npyDict("<f4", "(2, 3)"), floats({0, 1, 2, std::numeric_limits<float>::quiet_NaN(), 4, 5})),
        "element 3 is NaN; inputs must be finite");
    row("inf", npyFile(npyDict("<f4", "(2, 3)"), floats({0, 1, 2, 3, 4, -std::numeric_limits<float>::infinity()})),
        "element 5 is infinite");
    row("f8 nan", npyFile(npyDict("<f8", "(3,)"), doubles({0, std::nan(""), 1})), "element 1 is NaN");
    row("f8 beyond float range", npyFile(npyDict("<f8", "(3,)"), doubles({0, 1, 1e300})),
        "element 2 is infinite (or beyond float32 range)");
    row("absurd shape", npyFile(npyDict("<f4", "(100000, 100000, 1000)"), floats({1, 2})),
        "an array of shape (100000, 100000, 1000) would need about 74505.8 GiB of memory", false);
    row("v2 absurd shape", npyFile(npyDict("<f8", "(4000000000,)"), {}, 2), "would need about 44.7 GiB", false);
}

void TestBadInputLoaders::npyLoader()
{
    QFETCH(QByteArray, bytes);
    QFETCH(bool, fromMemory);
    QFETCH(QString, message);

    auto expectRefusal = [&](const std::function<void()>& load, const char* how) {
        try {
            load();
        } catch (const plab::InputError& e) {
            const QString what = QString::fromUtf8(e.what());
            QVERIFY2(!what.contains('\n'), qPrintable(what));
            QVERIFY2(what.contains(message), qPrintable(QString(how) + ": '" + what + "' lacks '" + message + "'"));
            return;
        } catch (const std::exception& e) {
            QFAIL(qPrintable(QString(how) + ": wrong exception type: " + e.what()));
        }
        QFAIL(qPrintable(QString(how) + ": accepted"));
    };
    const std::string_view view(bytes.constData(), size_t(bytes.size()));
    if (fromMemory)
        expectRefusal([&] { plab::parseNpy(view, "mem.npy"); }, "parseNpy");
    QTemporaryDir temp;
    const QString path = temp.filePath("input.npy");
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(bytes);
    f.close();
    expectRefusal([&] { plab::readNpy(path.toStdString()); }, "readNpy");
}

void TestBadInputLoaders::safetensorsLoader_data()
{
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QString>("message");
    auto row = [](const char* name, const QByteArray& bytes, const QString& message) {
        QTest::newRow(name) << bytes << message;
    };
    auto one = [](const QByteArray& entry, const QByteArray& data = {}) {
        QByteArray header = "{\"t\":" + entry + "}";
        while (header.size() % 8)
            header += ' ';
        return safetensorsRaw(header, data);
    };
    row("empty", {}, "file is 0 bytes, too short for a safetensors header length");
    row("seven bytes", "1234567", "file is 7 bytes, too short");
    row("length over limit", safetensorsRaw("{}", {}, 100000001),
        "header length 100000001 exceeds the limit of 100000000 bytes");
    row("length huge", safetensorsRaw("{}", {}, std::numeric_limits<qint64>::max()), "exceeds the limit");
    row("length past end", safetensorsRaw("{}", {}, 1000),
        "header length 1000 runs past the end of the file (10 bytes; truncated?)");
    row("length zero", safetensorsRaw("{}", {}, 0), "header does not start with '{'");
    row("not an object", safetensorsRaw("[1, 2]  "), "header does not start with '{'");
    row("bad json", safetensorsRaw("{\"a\": }  "), "header is not valid JSON");
    row("json then garbage", safetensorsRaw("{} xyz  "), "header is not valid JSON");
    row("deep nesting", safetensorsRaw("{\"a\":" + QByteArray(100000, '[') + QByteArray(100000, ']') + "}"),
        "header is nested deeper than 64 levels at line 1, column 69 (byte 68)");
    row("tensor not object", one("5"), "tensor 't' is not an object");
    row("unknown field", one("{\"dtype\":\"F32\",\"shape\":[],\"data_offsets\":[0,4],\"x\":1}", floats({1})),
        "tensor 't' has an unknown field 'x'");
    row("no dtype", one("{\"shape\":[1],\"data_offsets\":[0,4]}", floats({1})), "tensor 't' has no dtype string");
    row("dtype I64", one("{\"dtype\":\"I64\",\"shape\":[1],\"data_offsets\":[0,8]}", QByteArray(8, 0)),
        "tensor 't' has dtype I64; allowed: F32 (F64, F16, BF16 are converted)");
    row("no shape", one("{\"dtype\":\"F32\",\"data_offsets\":[0,4]}", floats({1})), "tensor 't' has no shape array");
    row("negative dim", one("{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]}", floats({1})),
        "has a shape entry that is not a non-negative integer");
    row("fractional dim", one("{\"dtype\":\"F32\",\"shape\":[1.5],\"data_offsets\":[0,4]}", floats({1})),
        "has a shape entry that is not a non-negative integer");
    row("huge dim", one("{\"dtype\":\"F32\",\"shape\":[18446744073709551615],\"data_offsets\":[0,4]}", floats({1})),
        "has a shape entry that is not a non-negative integer");
    row("absurd shape",
        one("{\"dtype\":\"F32\",\"shape\":[1048576,1048576,1048576],\"data_offsets\":[0,4]}", floats({1})),
        "tensor 't' has an absurd shape");
    row("no offsets", one("{\"dtype\":\"F32\",\"shape\":[1]}", floats({1})), "needs data_offsets [begin, end]");
    row("three offsets", one("{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4,8]}", floats({1})),
        "needs data_offsets");
    row("negative offset", one("{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[-4,0]}", floats({1})),
        "needs data_offsets");
    row("reversed offsets", one("{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[4,0]}", floats({1})),
        "has data_offsets [4, 0] outside the data buffer");
    row("offsets past end", one("{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}", floats({1})),
        "has data_offsets [0, 8] outside the data buffer of 4 bytes (truncated file?)");
    row("offset overflow",
        one("{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[18446744073709551612,0]}", floats({1})),
        "outside the data buffer");
    row("size mismatch", one("{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}", floats({1, 2})),
        "tensor 't' has 8 data bytes but shape (3,) of F32 needs 12");
    row("overlap",
        safetensorsRaw("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                       "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}",
                       floats({1, 2, 3})),
        "overlaps the data of another tensor");
    row("same span twice",
        safetensorsRaw("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
                       "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}",
                       floats({1})),
        "overlaps the data of another tensor");
    row("hole", one("{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}", floats({1, 2})),
        "the data buffer has a hole before tensor 't' (bytes 0..4 belong to no tensor)");
    row("trailing", one("{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}", floats({1, 2})),
        "trailing bytes that belong to no tensor");
    row("metadata not object", safetensorsRaw("{\"__metadata__\":[1]}    "),
        "__metadata__ is not an object of strings");
    row("metadata number", safetensorsRaw("{\"__metadata__\":{\"step\":3}}"),
        "__metadata__ value of 'step' is not a string");
}

void TestBadInputLoaders::safetensorsLoader()
{
    QFETCH(QByteArray, bytes);
    QFETCH(QString, message);
    auto expectRefusal = [&](const std::function<void()>& load, const char* how) {
        try {
            load();
        } catch (const plab::InputError& e) {
            const QString what = QString::fromUtf8(e.what());
            QVERIFY2(!what.contains('\n'), qPrintable(what));
            QVERIFY2(what.contains(message), qPrintable(QString(how) + ": '" + what + "' lacks '" + message + "'"));
            return;
        } catch (const std::exception& e) {
            QFAIL(qPrintable(QString(how) + ": wrong exception type: " + e.what()));
        }
        QFAIL(qPrintable(QString(how) + ": accepted"));
    };
    expectRefusal([&] { plab::parseSafetensors(std::string_view(bytes.constData(), size_t(bytes.size())), "mem"); },
                  "parseSafetensors");
    QTemporaryDir temp;
    QFile f(temp.filePath("x.safetensors"));
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(bytes);
    f.close();
    expectRefusal([&] { plab::readSafetensors(f.fileName().toStdString()); }, "readSafetensors");
}

void TestBadInputLoaders::corpusLoader_data()
{
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QString>("message");
    auto row = [](const char* name, const QByteArray& bytes, const QString& message) {
        QTest::newRow(name) << bytes << message;
    };
    row("empty", {}, "is empty; a UTF-8 text file of at least 2048 bytes is needed");
    row("nul", "abc" + QByteArray(1, 0) + text(3000), "looks binary (NUL byte at offset 3)");
    row("elf binary",
        QByteArray("\x7f"
                   "ELF\x02\x01\x01",
                   7) +
            QByteArray(3000, '\x90'),
        "is not valid UTF-8 (byte offset 7)");
    row("lone continuation", text(50) + "\x80" + text(3000), "is not valid UTF-8 (byte offset 50)");
    row("overlong slash", text(3000) + "\xc0\xaf", "is not valid UTF-8 (byte offset 3000)");
    row("overlong 3-byte", "\xe0\x80\xaf" + text(3000), "is not valid UTF-8 (byte offset 0)");
    row("surrogate", text(9) + "\xed\xb0\x80" + text(3000), "is not valid UTF-8 (byte offset 9)");
    row("beyond U+10FFFF", text(1) + "\xf5\x80\x80\x80" + text(3000), "is not valid UTF-8 (byte offset 1)");
    row("cut at end", text(3000) + "\xf0\x9f\x99", "is not valid UTF-8 (byte offset 3000)");
    row("cut before ascii", text(3000) + "\xe2\x82" + "a", "is not valid UTF-8 (byte offset 3000)");
    row("latin-1", text(2047) + "\xe9t\xe9", "is not valid UTF-8 (byte offset 2047)");
    row("too short", text(2047), "is too short (2047 bytes); at least 2048 bytes are needed");
}

void TestBadInputLoaders::corpusLoader()
{
    QFETCH(QByteArray, bytes);
    QFETCH(QString, message);
    for (int how = 0; how < 2; ++how) {
        QTemporaryDir temp;
        QFile f(temp.filePath("c.txt"));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(bytes);
        f.close();
        try {
            if (how == 0)
                plab::makeCorpus(bytes.toStdString(), "mem");
            else
                plab::loadCorpusFile(f.fileName().toStdString());
            QFAIL("accepted");
        } catch (const plab::InputError& e) {
            const QString what = QString::fromUtf8(e.what());
            QVERIFY2(what.contains(message), qPrintable("'" + what + "' lacks '" + message + "'"));
            QVERIFY(!what.contains('\n'));
        }
    }
}

void TestBadInputLoaders::sessionLoader_data()
{
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QString>("field"); // empty: parseSession must refuse; else sessionInt(panel, field) must
    QTest::addColumn<QString>("message");
    QTest::addColumn<bool>("knownOpen");
    auto row = [](const char* name, const QByteArray& bytes, const QString& field, const QString& message,
                  bool open = false) { QTest::newRow(name) << bytes << field << message << open; };
    const QByteArray head = "{\"format\": \"positionlab-session\", \"version\": 1, ";
    row("empty", {}, {}, "s.plab: not a valid JSON file (syntax error at byte");
    row("binary", QByteArray("\x00\x01\xff\xfe", 4), {}, "not a valid JSON file");
    row("truncated", head + "\"panel\": {\"heads\": 8", {}, "not a valid JSON file (syntax error at byte");
    row("not utf-8", "{\"format\": \"positionlab-session\xff\"}", {}, "not a valid JSON file");
    row("array", "[1, 2]", {}, "not a PositionLab session (expected \"format\": \"positionlab-session\")");
    row("other format", "{\"format\": \"excel\", \"version\": 1}", {}, "not a PositionLab session");
    row("no version", "{\"format\": \"positionlab-session\"}", {}, "session has no integer \"version\"");
    row("version text", "{\"format\": \"positionlab-session\", \"version\": \"1\"}", {},
        "session has no integer \"version\"");
    row("newer version", "{\"format\": \"positionlab-session\", \"version\": 7}", {},
        "session version 7 is not supported");
    row("number overflow", head + "\"panel\": {\"heads\": 1e315}}", {},
        "not a valid JSON file (a number is out of range)");
    row("version wraps to 1", "{\"format\": \"positionlab-session\", \"version\": 4294967297}", {},
        "session version 4294967297 is not supported");
    row("heads text", head + "\"panel\": {\"heads\": \"8\"}}", "heads",
        "session: panel.heads = \"8\" is not an integer");
    row("heads fraction", head + "\"panel\": {\"heads\": 2.5}}", "heads", "panel.heads = 2.5 is not an integer");
    row("heads zero", head + "\"panel\": {\"heads\": 0}}", "heads",
        "panel.heads = 0 is out of range; allowed: integers in [1, 1024]");
    row("heads huge", head + "\"panel\": {\"heads\": 1e300}}", "heads", "panel.heads = 1e+300 is out of range");
    row("heads unsigned", head + "\"panel\": {\"heads\": 18446744073709551615}}", "heads", "is out of range");
}

void TestBadInputLoaders::sessionLoader()
{
    QFETCH(QByteArray, bytes);
    QFETCH(QString, field);
    QFETCH(QString, message);
    QFETCH(bool, knownOpen);
    if (knownOpen)
        QSKIP("known open finding (row documents it)");
    try {
        const nlohmann::json session = plab::ui::parseSession(bytes.toStdString(), "s.plab");
        if (field.isEmpty())
            QFAIL("accepted");
        const nlohmann::json panel = plab::ui::sessionObject(session, "panel", "session");
        plab::ui::sessionInt(panel, field.toUtf8().constData(), 8, 1, 1024, "panel");
        QFAIL("field accepted");
    } catch (const plab::InputError& e) {
        const QString what = QString::fromUtf8(e.what());
        QVERIFY2(what.contains(message), qPrintable("'" + what + "' lacks '" + message + "'"));
        QVERIFY(!what.contains('\n'));
    }
}

PLAB_QTEST_GUILESS_MAIN(TestBadInputLoaders)
#include "tst_bad_input_loaders.moc"
