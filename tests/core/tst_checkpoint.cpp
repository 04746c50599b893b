// Checkpoints and corpora: safetensors round trips, every corrupt-file case refused clearly, UTF-8 and split rules.
#include "model/checkpoint.h"
#include "model/corpus.h"
#include "base/errors.h"
#include "model/model.h"
#include "base/safetensors.h"
#include "test_main.h"
#include "runs/training.h"

#include <QtTest>

#include <nlohmann/json.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>

using namespace plab;

namespace {

ModelConfig smallConfig(const std::string& scheme)
{
    ModelConfig c;
    c.layers = 2;
    c.dModel = 16;
    c.heads = 4;
    c.dFf = 24;
    c.context = 10;
    c.scheme = scheme;
    return c;
}

std::string tempPath(const QTemporaryDir& dir, const char* name)
{
    return (dir.path() + "/" + name).toStdString();
}

// Splits a safetensors file into its JSON header and its data buffer, and joins them back.
struct Parts {
    nlohmann::ordered_json header;
    std::string data;
};
Parts split(const std::string& bytes)
{
    uint64_t n = 0;
    std::memcpy(&n, bytes.data(), 8);
    return {nlohmann::ordered_json::parse(bytes.substr(8, n)), bytes.substr(8 + n)};
}
std::string join(const std::string& header, const std::string& data)
{
    std::string out(8, '\0');
    const uint64_t n = header.size();
    std::memcpy(out.data(), &n, 8);
    return out + header + data;
}
std::string join(const Parts& p)
{
    return join(p.header.dump(), p.data);
}

std::string validCheckpoint(const std::string& scheme = "kerple-power")
{
    Model model(smallConfig(scheme));
    CheckpointInfo info;
    info.step = 42;
    info.trainLoss = 1.5;
    info.corpus = "test";
    return checkpointBytes(model, info);
}

} // namespace

class TestCheckpoint : public QObject {
    Q_OBJECT

private slots:
    void safetensorsRoundTrip();
    void safetensorsConversions();

    void checkpointRoundTrip_data();
    void checkpointRoundTrip();
    void checkpointWrittenAtomically();

    void corruptCheckpoint_data();
    void corruptCheckpoint();

    void utf8Validation_data();
    void utf8Validation();
    void corpusErrors_data();
    void corpusErrors();
    void corpusSplit();
    void repeatedText_data();
    void repeatedText();
    void checkpointFileName_data();
    void checkpointFileName();
    void defaultCorpusFromFortunesLayout();
};

void TestCheckpoint::safetensorsRoundTrip()
{
    const std::vector<float> a = {1, 2, 3, 4, 5, 6}, b = {-0.5f}, empty;
    const std::string bytes = serializeSafetensors(
        {{"a", {2, 3}, a.data()}, {"b", {1}, b.data()}, {"e", {0, 4}, empty.data()}}, {{"k", "v"}});
    // Layout: 8-byte little-endian length, JSON starting with '{', data 8-aligned.
    uint64_t n = 0;
    std::memcpy(&n, bytes.data(), 8);
    QCOMPARE(n % 8, uint64_t(0));
    QCOMPARE(bytes[8], '{');
    QCOMPARE(bytes.size(), size_t(8 + n + 4 * 7));
    const nlohmann::json header = nlohmann::json::parse(bytes.substr(8, n));
    QCOMPARE(header["a"]["dtype"].get<std::string>(), std::string("F32"));
    QCOMPARE(header["b"]["data_offsets"][0].get<int>(), 24);
    QCOMPARE(header["__metadata__"]["k"].get<std::string>(), std::string("v"));

    const SafetensorsFile f = parseSafetensors(bytes, "mem");
    QCOMPARE(f.metadata.at("k"), std::string("v"));
    QCOMPARE(f.tensors.at("a").data, a);
    QCOMPARE(f.tensors.at("a").shape, (std::vector<int64_t>{2, 3}));
    QCOMPARE(f.tensors.at("b").data, b);
    QCOMPARE(f.tensors.at("e").data.size(), size_t(0));
    QVERIFY_THROWS_EXCEPTION(InputError, serializeSafetensors({{"a", {1}, a.data()}, {"a", {1}, a.data()}}, {}));
}

void TestCheckpoint::safetensorsConversions()
{
    // F64, F16 and BF16 files (as torch/numpy may write them) are read as float32.
    const double d[2] = {0.25, -3.0};
    const uint16_t h[3] = {0x3C00, 0xC000, 0x0001}; // 1, -2, smallest subnormal 2^-24
    const uint16_t bf[1] = {0x3FC0};                // 1.5
    std::string data(reinterpret_cast<const char*>(d), 16);
    data.append(reinterpret_cast<const char*>(h), 6);
    data.append(reinterpret_cast<const char*>(bf), 2);
    const std::string header = R"({"d":{"dtype":"F64","shape":[2],"data_offsets":[0,16]},)"
                               R"("h":{"dtype":"F16","shape":[3],"data_offsets":[16,22]},)"
                               R"("bf":{"dtype":"BF16","shape":[1],"data_offsets":[22,24]}})";
    const SafetensorsFile f = parseSafetensors(join(header, data), "mem");
    QCOMPARE(f.tensors.at("d").data, (std::vector<float>{0.25f, -3.0f}));
    QCOMPARE(f.tensors.at("h").data[0], 1.0f);
    QCOMPARE(f.tensors.at("h").data[1], -2.0f);
    QCOMPARE(f.tensors.at("h").data[2], std::ldexp(1.0f, -24));
    QCOMPARE(f.tensors.at("bf").data[0], 1.5f);
}

void TestCheckpoint::checkpointRoundTrip_data()
{
    QTest::addColumn<QString>("scheme");
    for (const char* s : {"alibi", "t5", "kerple-power", "kerple-log", "learned", "rope", "sinusoidal", "local"})
        QTest::newRow(s) << QString(s);
}

void TestCheckpoint::checkpointRoundTrip()
{
    QFETCH(QString, scheme);
    QTemporaryDir dir;
    ModelConfig config = smallConfig(scheme.toStdString());
    config.seed = 99;
    config.logn = scheme == "alibi";
    if (scheme == "t5")
        config.schemeSettings = {"num-buckets=16", "max-distance=40"};
    Model model(config);
    // A few training steps so the scheme parameters move away from their initial values.
    std::vector<uint8_t> text(3000);
    for (size_t i = 0; i < text.size(); ++i)
        text[i] = static_cast<uint8_t>("abcabdabe\n"[i % 10]);
    TrainConfig tc;
    tc.steps = 3;
    tc.batch = 2;
    Trainer trainer(model, tc, text);
    for (int i = 0; i < 3; ++i)
        trainer.step();
    const std::string path = tempPath(dir, "m.safetensors");
    CheckpointInfo info;
    info.step = 3;
    info.trainLoss = 2.25;
    info.corpus = "generated";
    info.training = tc.toJson();
    saveCheckpoint(model, info, path);

    const LoadedCheckpoint loaded = loadCheckpoint(path);
    QCOMPARE(loaded.info.step, 3);
    QCOMPARE(loaded.info.trainLoss, 2.25);
    QCOMPARE(loaded.info.corpus, std::string("generated"));
    QCOMPARE(loaded.info.training["batch"].get<int>(), 2);
    QCOMPARE(loaded.model->config().toJson(), config.toJson());
    QCOMPARE(loaded.model->parameters(), model.parameters());
    const SchemeSpec a = model.schemeSpec(), b = loaded.model->schemeSpec();
    QCOMPARE(a.params, b.params);
    QCOMPARE(a.t5Values, b.t5Values);
    QCOMPARE(a.kerpleR1, b.kerpleR1);
    QCOMPARE(a.logn, b.logn);
    // Same numbers out of the loaded model.
    const float l1 = model.forward(text.data(), text.data() + 1, 1, 10);
    const float l2 = loaded.model->forward(text.data(), text.data() + 1, 1, 10);
    QCOMPARE(l1, l2);
    // Readable as plain safetensors, tensor names as documented.
    const SafetensorsFile raw = readSafetensors(path);
    QVERIFY(raw.tensors.count("wte.weight"));
    QVERIFY(raw.tensors.count("layers.1.attn.qkv.weight"));
    QVERIFY(raw.tensors.count("layers.0.mlp.proj.weight"));
    QVERIFY(raw.tensors.count("ln_f.bias"));
    QCOMPARE(raw.tensors.count("wpe.weight"), size_t(scheme == "learned"));
    QCOMPARE(raw.tensors.count("scheme.t5_bias"), size_t(scheme == "t5"));
    QCOMPARE(raw.tensors.count("scheme.kerple_r1"), size_t(scheme.startsWith("kerple")));
    QCOMPARE(raw.metadata.at("scheme"), scheme.toStdString());
    QCOMPARE(raw.metadata.at("step"), std::string("3"));
}

void TestCheckpoint::checkpointWrittenAtomically()
{
    QTemporaryDir dir;
    const std::string path = tempPath(dir, "m.safetensors");
    {
        std::ofstream(path) << "previous";
    }
    Model model(smallConfig("alibi"));
    saveCheckpoint(model, {}, path);
    QVERIFY(loadCheckpoint(path).model);
    // No temporary left beside it.
    int files = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir.path().toStdString())) {
        (void)e;
        ++files;
    }
    QCOMPARE(files, 1);
    // An unwritable target leaves nothing and names the path.
    QVERIFY_THROWS_EXCEPTION(InputError, saveCheckpoint(model, {}, tempPath(dir, "no/such/dir/m.safetensors")));
}

void TestCheckpoint::corruptCheckpoint_data()
{
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QString>("message");
    auto row = [](const char* name, const std::string& bytes, const char* message) {
        QTest::newRow(name) << QByteArray(bytes.data(), static_cast<qsizetype>(bytes.size())) << QString(message);
    };
    const std::string good = validCheckpoint();
    const Parts parts = split(good);

    row("empty file", "", "too short");
    row("7 bytes", good.substr(0, 7), "too short");
    {
        std::string b = good;
        const uint64_t huge = uint64_t(1) << 40;
        std::memcpy(b.data(), &huge, 8);
        row("header length absurd", b, "exceeds the limit");
    }
    {
        std::string b = good;
        uint64_t n = 0;
        std::memcpy(&n, b.data(), 8);
        row("header past the end", b.substr(0, 8 + n / 2), "past the end");
    }
    row("truncated data", good.substr(0, good.size() - 5), "outside the data buffer");
    row("header not JSON", join("{\"a\": [1, 2", parts.data), "not valid JSON");
    row("header not an object", join("[1, 2, 3]     ", parts.data), "does not start with '{'");
    row("trailing bytes", good + "xyz", "trailing bytes");
    {
        Parts p = parts;
        p.header["wte.weight"]["dtype"] = "I32";
        row("integer dtype", join(p), "dtype I32");
    }
    {
        Parts p = parts;
        p.header["wte.weight"]["shape"] = {256, 17};
        row("shape differs from data size", join(p), "data bytes but shape");
    }
    {
        Parts p = parts;
        p.header["wte.weight"]["shape"] = {-1, 16};
        row("negative dimension", join(p), "non-negative integer");
    }
    {
        Parts p = parts;
        p.header["ln_f.bias"]["data_offsets"] = {0, 64}; // the same bytes as the first tensor
        row("overlapping tensors", join(p), "overlaps");
    }
    {
        Parts p = parts;
        p.header["ln_f.bias"]["data_offsets"] = {5, 1};
        row("offsets reversed", join(p), "outside the data buffer");
    }
    {
        Parts p = parts;
        p.header["wte.weight"].erase("data_offsets");
        row("no data_offsets", join(p), "data_offsets");
    }
    {
        Parts p = parts;
        p.header["wte.weight"]["extra"] = 1;
        row("unknown field", join(p), "unknown field");
    }
    {
        Parts p = parts;
        p.header["__metadata__"]["step"] = 3;
        row("metadata not strings", join(p), "not a string");
    }
    // Structurally valid files whose content does not fit a model.
    auto rebuilt =
        [&](const std::function<void(std::map<std::string, Tensor>&, std::map<std::string, std::string>&)>& edit) {
            SafetensorsFile f = parseSafetensors(good, "mem");
            edit(f.tensors, f.metadata);
            std::vector<TensorView> views;
            for (const auto& [name, t] : f.tensors)
                views.push_back({name, t.shape, t.data.data()});
            return serializeSafetensors(views, f.metadata);
        };
    row("missing tensor", rebuilt([](auto& t, auto&) { t.erase("layers.1.ln2.bias"); }),
        "'layers.1.ln2.bias' is missing");
    row("unexpected tensor", rebuilt([](auto& t, auto&) {
            t["layers.2.ln1.bias"] = Tensor{{16}, std::vector<float>(16)};
        }),
        "unexpected tensor 'layers.2.ln1.bias'");
    row("shape vs config", rebuilt([](auto& t, auto&) {
            t["ln_f.weight"] = Tensor{{8, 2}, std::vector<float>(16, 1.0f)};
        }),
        "has shape (8, 2), the config needs (16,)");
    row("non-finite value", rebuilt([](auto& t, auto&) { t["ln_f.bias"].data[3] = NAN; }), "non-finite");
    row("kerple r2 out of range", rebuilt([](auto& t, auto&) { t["scheme.kerple_r2"].data[1] = 3.0f; }), "r2");
    row("no metadata", rebuilt([](auto&, auto& m) { m.clear(); }), "has no 'format'");
    row("foreign format", rebuilt([](auto&, auto& m) { m["format"] = "pt"; }), "format is 'pt'");
    row("future version", rebuilt([](auto&, auto& m) { m["format_version"] = "9"; }), "format_version 9");
    row("config not JSON", rebuilt([](auto&, auto& m) { m["config"] = "{layers: 2"; }), "not valid JSON");
    row("config heads", rebuilt([](auto&, auto& m) {
            auto j = nlohmann::json::parse(m["config"]);
            j["heads"] = 3;
            m["config"] = j.dump();
        }),
        "not divisible by heads");
    row("config unknown scheme", rebuilt([](auto&, auto& m) {
            auto j = nlohmann::json::parse(m["config"]);
            j["scheme"] = "wibble";
            m["config"] = j.dump();
        }),
        "wibble");
    row("config missing layers", rebuilt([](auto&, auto& m) {
            auto j = nlohmann::json::parse(m["config"]);
            j.erase("layers");
            m["config"] = j.dump();
        }),
        "no integer 'layers'");
    row("config far bigger than the file", rebuilt([](auto&, auto& m) {
            auto j = nlohmann::json::parse(m["config"]);
            j["d_model"] = 1024;
            j["layers"] = 8;
            m["config"] = j.dump();
        }),
        "the config needs (256, 1024)");
    row("config beyond the memory budget", rebuilt([](auto&, auto& m) {
            auto j = nlohmann::json::parse(m["config"]);
            j["d_model"] = 8192;
            j["layers"] = 64;
            j["d_ff"] = 65536;
            m["config"] = j.dump();
        }),
        "GiB of memory");
    row("scheme disagrees", rebuilt([](auto&, auto& m) { m["scheme"] = "alibi"; }), "disagrees");
    row("bad step", rebuilt([](auto&, auto& m) { m["step"] = "-4"; }), "step '-4'");
}

void TestCheckpoint::corruptCheckpoint()
{
    QFETCH(QByteArray, bytes);
    QFETCH(QString, message);
    QTemporaryDir dir;
    const std::string path = tempPath(dir, "bad.safetensors");
    {
        std::ofstream out(path, std::ios::binary);
        out.write(bytes.data(), bytes.size());
    }
    try {
        loadCheckpoint(path);
        QFAIL("no InputError");
    } catch (const InputError& e) {
        const QString what = e.what();
        QVERIFY2(what.contains(message), qPrintable(what));
        QVERIFY2(what.contains("bad.safetensors"), qPrintable("the message names the file: " + what));
        QVERIFY2(!what.contains('\n'), "one line");
    }
}

void TestCheckpoint::utf8Validation_data()
{
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<int>("badOffset"); // -1: valid
    QTest::newRow("ascii") << QByteArray("hello") << -1;
    QTest::newRow("two-byte") << QByteArray("caf\xC3\xA9") << -1;
    QTest::newRow("three-byte") << QByteArray("\xE2\x82\xAC ok") << -1;
    QTest::newRow("four-byte") << QByteArray("x\xF0\x9F\x98\x80") << -1;
    QTest::newRow("lone continuation") << QByteArray("ab\x80") << 2;
    QTest::newRow("latin-1") << QByteArray("caf\xE9!") << 3;
    QTest::newRow("overlong slash") << QByteArray("a\xC0\xAF") << 1;
    QTest::newRow("overlong 3-byte") << QByteArray("\xE0\x80\xAF") << 0;
    QTest::newRow("surrogate") << QByteArray("ok\xED\xA0\x80") << 2;
    QTest::newRow("above U+10FFFF") << QByteArray("\xF4\x90\x80\x80") << 0;
    QTest::newRow("truncated at end") << QByteArray("abc\xE2\x82") << 3;
    QTest::newRow("bad continuation") << QByteArray("\xE2\x28\xA1") << 0;
}

void TestCheckpoint::utf8Validation()
{
    QFETCH(QByteArray, text);
    QFETCH(int, badOffset);
    const size_t got = findInvalidUtf8(std::string_view(text.constData(), text.size()));
    QCOMPARE(got == std::string_view::npos ? -1 : int(got), badOffset);
}

void TestCheckpoint::corpusErrors_data()
{
    QTest::addColumn<QByteArray>("content");
    QTest::addColumn<QString>("message");
    QTest::newRow("empty") << QByteArray() << "is empty";
    QTest::newRow("binary") << QByteArray("abc\0def", 7) + QByteArray(3000, 'x') << "looks binary";
    QTest::newRow("not utf-8") << QByteArray(3000, 'x') + QByteArray("\xFF") << "not valid UTF-8 (byte offset 3000)";
    QTest::newRow("too short") << QByteArray("a short text") << "too short (12 bytes)";
}

void TestCheckpoint::corpusErrors()
{
    QFETCH(QByteArray, content);
    QFETCH(QString, message);
    QTemporaryDir dir;
    const std::string path = tempPath(dir, "c.txt");
    {
        std::ofstream out(path, std::ios::binary);
        out.write(content.data(), content.size());
    }
    try {
        loadCorpusFile(path);
        QFAIL("no InputError");
    } catch (const InputError& e) {
        QVERIFY2(QString(e.what()).contains(message), e.what());
        QVERIFY2(QString(e.what()).contains("c.txt"), e.what());
    }
    QVERIFY_THROWS_EXCEPTION(InputError, loadCorpusFile(tempPath(dir, "missing.txt")));
    QVERIFY_THROWS_EXCEPTION(InputError, loadCorpusFile(dir.path().toStdString()));
}

void TestCheckpoint::repeatedText_data()
{
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<int>("bytes");
    QTest::addColumn<QByteArray>("expected");
    QTest::newRow("repeated past its end") << QByteArray("abc") << 8 << QByteArray("abcabcab");
    QTest::newRow("cut to a prefix") << QByteArray("abcdef") << 4 << QByteArray("abcd");
    QTest::newRow("exactly once") << QByteArray("xyz") << 3 << QByteArray("xyz");
    QTest::newRow("zero bytes") << QByteArray("abc") << 0 << QByteArray();
    QTest::newRow("nothing to repeat") << QByteArray() << 5 << QByteArray();
}

void TestCheckpoint::repeatedText()
{
    QFETCH(QByteArray, text);
    QFETCH(int, bytes);
    QFETCH(QByteArray, expected);
    const std::vector<uint8_t> got = plab::repeatedText(std::vector<uint8_t>(text.begin(), text.end()), bytes);
    QCOMPARE(QByteArray(reinterpret_cast<const char*>(got.data()), int(got.size())), expected);
}

void TestCheckpoint::checkpointFileName_data()
{
    QTest::addColumn<QString>("path");
    QTest::addColumn<bool>("accepted");
    QTest::newRow("checkpoint") << "runs/m.safetensors" << true;
    QTest::newRow("other extension") << "m.npy" << false;
    QTest::newRow("upper case") << "M.SAFETENSORS" << false;
    QTest::newRow("suffix only in a folder name") << "x.safetensors/m" << false;
}

void TestCheckpoint::checkpointFileName()
{
    QFETCH(QString, path);
    QFETCH(bool, accepted);
    try {
        checkCheckpointFileName(path.toStdString(), "-o");
        QVERIFY(accepted);
    } catch (const InputError& e) {
        QVERIFY2(!accepted, e.what());
        // Names the option, the path and the allowed extension.
        QVERIFY(QString::fromStdString(e.what()).startsWith(QStringLiteral("-o ") + path + QStringLiteral(":")));
        QVERIFY(QString::fromStdString(e.what()).contains(QStringLiteral("must end in .safetensors")));
    }
}

void TestCheckpoint::corpusSplit()
{
    std::string text;
    for (int i = 0; i < 1000; ++i)
        text += "line " + std::to_string(i) + " \xC3\xA9\n";
    const Corpus c = makeCorpus(text, "mem");
    QCOMPARE(c.validation.size(), text.size() / 10);
    QCOMPARE(c.train.size() + c.validation.size(), text.size());
    const std::vector<uint8_t> bytes(text.begin(), text.end());
    QVERIFY(std::equal(c.validation.begin(), c.validation.end(), bytes.end() - c.validation.size()));
    QVERIFY(std::equal(c.train.begin(), c.train.end(), bytes.begin()));
}

void TestCheckpoint::defaultCorpusFromFortunesLayout()
{
    // The layout of /usr/share/games/fortunes: text files, their .dat indexes and .u8 symlinks.
    QTemporaryDir dir;
    const std::string d = dir.path().toStdString();
    auto write = [&](const std::string& name, const std::string& content) {
        std::ofstream(d + "/" + name, std::ios::binary) << content;
    };
    std::string b, a;
    for (int i = 0; i < 200; ++i)
        b += "bee " + std::to_string(i) + "\n%\n";
    for (int i = 0; i < 200; ++i)
        a += "ant " + std::to_string(i) + "\n%\n";
    write("b", b);
    write("a", a);
    write("a.dat", std::string("\0\0\0\2binary", 10));
    std::filesystem::create_symlink(d + "/a", d + "/a.u8");
    std::filesystem::create_directory(d + "/off");
    write("off/rude", "not included\n");
    int files = 0;
    const std::string text = defaultCorpusText(d, &files);
    QCOMPARE(files, 2);
    QVERIFY(text.starts_with("ant 0\nant 1\n")); // sorted by name, "%" lines dropped
    QVERIFY(text.find("%") == std::string::npos);
    QVERIFY(text.find("bee 199\n") != std::string::npos);
    QVERIFY(text.find("not included") == std::string::npos);
    QCOMPARE(text.size(), a.size() + b.size() - 2 * 200 * 2);
    const Corpus c = loadDefaultCorpus(d);
    QVERIFY(c.source.find("2 files") != std::string::npos);
    // No fortunes at all: a hint how to get them.
    QTemporaryDir emptyDir;
    try {
        loadDefaultCorpus(emptyDir.path().toStdString());
        QFAIL("no InputError");
    } catch (const InputError& e) {
        // Core's words for the GUI and the CLI alike; the CLI puts --corpus before it (its parameter).
        QVERIFY2(QString(e.what()).contains("apt-get install fortunes) or give a corpus file"), e.what());
        QVERIFY2(!QString(e.what()).contains("--"), e.what());
        QCOMPARE(e.parameter(), std::string("corpus"));
    }
}

PLAB_QTEST_GUILESS_MAIN(TestCheckpoint)
#include "tst_checkpoint.moc"
