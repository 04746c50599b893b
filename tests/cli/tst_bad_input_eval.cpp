// Bad input for `positionlab-cli eval` (checkpoints broken every way, --compare, tasks), `logits` and `inspect`:
// each must end in its one-line message and exit code; Ctrl-C during eval writes nothing half.
#include "bad_input.h"
#include "test_main.h"

using namespace plab::test::bad_input;

class TestBadInputEval : public QObject, private Checkpoints {
    Q_OBJECT

private slots:
    void initTestCase();
    void cli_data();
    void cli();
    void interruptEval_data();
    void interruptEval();
};

void TestBadInputEval::initTestCase()
{
    QVERIFY2(QFileInfo(QStringLiteral(POSITIONLAB_CLI)).isExecutable(), POSITIONLAB_CLI);
    const QString problem = makeCheckpoints();
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    QVERIFY(m_ropeCheckpoint.size() > 1000);
    QVERIFY(m_checkpoint.size() > 1000);
}

void TestBadInputEval::cli_data()
{
    addCliColumns();
    if (const QString problem = makeCheckpoints(); !problem.isEmpty())
        qFatal("%s", qPrintable(problem)); // rows built from empty checkpoints would test nothing

    // ---- eval and checkpoints ----
    auto eval = [](QStringList extra = {}) {
        return QStringList{"eval", "@DIR@/m.safetensors", "--corpus", "@DIR@/corpus.txt"} + extra;
    };
    auto withModel = [&](const QByteArray& model) {
        return Files{{"m.safetensors", model}, {"corpus.txt", text(4096)}};
    };
    auto changed = [&](const std::function<void(QJsonObject&, QList<StTensor>&)>& change) {
        return withModel(changedCheckpoint(m_checkpoint, change));
    };
    row("eval missing", {"eval", "@DIR@/none.safetensors"}, 2, "checkpoint @DIR@/none.safetensors does not exist");
    // A directory is read as a Hugging Face model folder (issue 19): one without config.json is refused naming it.
    row("eval directory", {"eval", "@DIR@"}, 2, "has no config.json");
    row("eval no checkpoint", {"eval"}, 2, "eval: expected 1 argument(s), got 0");
    // --precision of the verbs that run a model folder (core's HfPrecision names); a lab checkpoint has none.
    const QString qwen2 = QStringLiteral(POSITIONLAB_TEST_DATA) + "/hf/qwen2";
    const QString allowedPrecisions = "allowed: f32 (float32 products, the default) or bf16";
    row("logits precision f16", {"logits", qwen2, "--ids", "1", "-o", "@DIR@/x.npy", "--precision", "f16"}, 2,
        "--precision: precision 'f16' is not allowed; " + allowedPrecisions);
    row("eval folder precision fp32", {"eval", qwen2, "--precision", "fp32"}, 2,
        "--precision: precision 'fp32' is not allowed; " + allowedPrecisions);
    row("inspect precision half", {"inspect", qwen2, "--precision", "half"}, 2,
        "--precision: precision 'half' is not allowed; " + allowedPrecisions);
    row("eval checkpoint precision", eval({"--precision", "bf16"}), 2,
        "--precision: @DIR@/m.safetensors is a lab checkpoint, which always computes in float32",
        withModel(m_checkpoint));
    row("eval lengths 0", eval({"--lengths", "8,0"}), 2, "lengths = 0 is out of range", withModel(m_checkpoint));
    // Tasks (issue 21): the parameter, its value and what is allowed.
    auto evalTask = [](QStringList extra) { return QStringList{"eval", "@DIR@/m.safetensors"} + extra; };
    row("eval unknown task", evalTask({"--task", "sort"}), 2,
        "--task: task 'sort' is unknown; allowed: copy, reverse, addition, passkey", withModel(m_checkpoint));
    row("eval passkey depth above 1", evalTask({"--task", "passkey", "--depths", "0,1.5"}), 2,
        "--depths 0,1.5: passkey depth = 1.5 is out of range; allowed: numbers in [0, 1]", withModel(m_checkpoint));
    row("eval passkey depth below 0", evalTask({"--task", "passkey", "--depths", "-0.5"}), 2,
        "passkey depth = -0.5 is out of range", withModel(m_checkpoint));
    row("eval depths on copy", evalTask({"--task", "copy", "--depths", "0.5"}), 2,
        "--depths 0.5 applies only to --task passkey, not to --task copy", withModel(m_checkpoint));
    row("eval task examples 0", evalTask({"--task", "copy", "--examples", "0"}), 2, "examples = 0 is out of range",
        withModel(m_checkpoint));
    row("eval task with corpus", evalTask({"--task", "copy", "--corpus", "@DIR@/corpus.txt"}), 2,
        "eval --task: --corpus cannot be used here: they apply to a model folder's retrieval tasks",
        withModel(m_checkpoint));
    row("eval task npy", evalTask({"--task", "copy", "-o", "@DIR@/a.npy"}), 2,
        "unsupported extension '.npy'; allowed: .csv, .json", withModel(m_checkpoint));
    row("eval task and compare", evalTask({"--task", "copy", "--compare", "pi"}), 2,
        "eval --task: --compare cannot be used here: they apply to a model folder's retrieval tasks",
        withModel(m_checkpoint));
    row("eval scaling on alibi", eval({"--scaling", "pi"}), 2,
        "--scaling = pi is not allowed for scheme alibi; allowed: rotary schemes (rope, xpos)",
        withModel(m_checkpoint));
    // eval's --set sets the --scaling method's parameters (or the checkpoint's method's): a scheme parameter would
    // change the model, one of no method would be ignored.
    row("eval set a scheme parameter under a method", eval({"--scaling", "yarn", "--set", "base=500"}), 2,
        "--set base=500: method yarn has no parameter 'base' (base=500); its parameters: factor, beta-fast, "
        "beta-slow, attention-factor, original-context",
        withModel(m_ropeCheckpoint));
    row("eval logit-c below 0", eval({"--set", "logit-c=-0.5"}), 2,
        "--set logit-c=-0.5: logit-c = -0.5 is out of range; allowed: [0, 100]", withModel(m_checkpoint));
    row("eval compare logit-c below 0", eval({"--compare", "none:logit-c=-1"}), 2,
        "logit-c = -1 is out of range; allowed: [0, 100]", withModel(m_ropeCheckpoint));
    row("eval set dim without a method", eval({"--set", "dim=2"}), 2,
        "--set dim=2: method none has no parameter 'dim' (dim=2); its parameters: none (length-extension parameters "
        "need a method); name one with --scaling METHOD",
        withModel(m_ropeCheckpoint));
    row("eval set a window of no method", eval({"--set", "window=4"}), 2,
        "--set window=4: method none has no parameter 'window' (window=4)", withModel(m_checkpoint));
    row("eval original-context past the context",
        eval({"--scaling", "rerope", "--set", "window=6", "--set", "original-context=16"}), 2,
        "scaling rerope: original-context = 16 must not exceed the context 8; allowed: integers in [0, 8] (0: the "
        "context)",
        withModel(m_ropeCheckpoint));
    row("eval scaling empty", eval({"--scaling", ""}), 2,
        "--scaling = '' is not a known method; known methods: none, pi, ntk", withModel(m_ropeCheckpoint));
    // eval --compare (issue 13): one curve per method of a rotary model.
    auto compare = [&](const QString& methods, QStringList extra = {}) {
        return eval(QStringList{"--compare", methods} + extra);
    };
    const Files rope = withModel(m_ropeCheckpoint);
    row("compare unknown method", compare("none,foo"), 2,
        "methods: 'foo' is not a known method; known methods: none, pi, ntk, dynamic-ntk, yarn, llama3, rerope, "
        "leaky-rerope",
        rope);
    row("compare parameter not taken", compare("pi,yarn:window=3"), 2,
        "method yarn has no parameter 'window' (window=3); its parameters: factor, beta-fast, beta-slow, "
        "attention-factor",
        rope);
    row("compare scheme parameter", compare("pi:base=500"), 2,
        "method pi has no parameter 'base' (base=500); its parameters: factor", rope);
    row("compare setting without value", compare("yarn:factor"), 2, "method yarn: setting 'factor' is not NAME=VALUE",
        rope);
    row("compare duplicate method", compare("none,pi,pi:factor=2"), 2,
        "methods: method 'pi' is given twice; each method may appear once", rope);
    row("compare empty list", compare(""), 2, "methods: the list is empty; give at least one method", rope);
    row("compare empty item", compare("pi,,yarn"), 2, "methods: 'pi,,yarn' has an empty item", rope);
    row("compare factor below 1", compare("yarn:factor=0.5"), 2,
        "scaling yarn: factor = 0.5 is out of range; allowed: [1, 1000000]", rope);
    row("compare window at context", compare("rerope:window=8"), 2,
        "scaling rerope: window = 8 must be below the training context L = 8; allowed: integers in [1, 7]", rope);
    row("compare leak 0", compare("leaky-rerope:leak=0"), 2,
        "scaling leaky-rerope: leak = 0 is out of range; allowed: (0, 1000000]", rope);
    row("compare non-rotary model", compare("none,pi"), 2,
        "the model's scheme is alibi; evaluating under length-extension methods needs a rotary model (allowed: rope, "
        "xpos)",
        withModel(m_checkpoint));
    row("compare with scaling", compare("pi", {"--scaling", "yarn"}), 2,
        "eval: --scaling is not used by `positionlab-cli eval MODEL.safetensors --compare METHODS` "
        "and would be ignored (used by `positionlab-cli eval MODEL.safetensors`)",
        rope);
    row("compare with set", compare("pi", {"--set", "factor=2"}), 2,
        "eval: --set is not used by `positionlab-cli eval MODEL.safetensors --compare", rope);
    row("compare npy", compare("pi", {"-o", "@DIR@/out.npy"}), 2,
        "-o @DIR@/out.npy: unsupported extension '.npy'; allowed: .csv, .json, .png, .svg, .pdf (.npy is written by "
        "`positionlab-cli eval MODEL.safetensors`)",
        rope);
    row("eval picture without compare", eval({"-o", "@DIR@/out.png"}), 2,
        "-o @DIR@/out.png: unsupported extension '.png'; allowed: .csv, .json, .npy (.png is written by "
        "`positionlab-cli eval MODEL.safetensors|DIR --task NAME`)", // the first form that draws (a folder's task)
        rope);
    row("compare width with data", compare("pi", {"--width", "300"}), 2,
        "eval: --width applies only to a picture output", rope);
    row("eval mode", eval({"--mode", "fast"}), 2, "mode 'fast' is unknown; allowed: nonoverlapping, sliding",
        withModel(m_checkpoint));
    row("eval stride without sliding", eval({"--stride", "4"}), 2, "--stride only applies to --mode sliding",
        withModel(m_checkpoint));
    row("eval split", eval({"--split", "test"}), 2, "--split test is not allowed; allowed: validation, train, all",
        withModel(m_checkpoint));
    row("eval corpus binary", eval(), 2, "looks binary",
        Files{{"m.safetensors", m_checkpoint}, {"corpus.txt", QByteArray(3000, 0)}});
    row("eval npy as checkpoint", eval(), 2, "exceeds the limit of 100000000 bytes (not a safetensors file?)",
        withModel(goodNpy()));
    row("eval text as checkpoint", eval(), 2, "(not a safetensors file?)", withModel(text(3000)));
    row("eval empty checkpoint", eval(), 2, "file is 0 bytes, too short for a safetensors header length",
        withModel({}));
    row("eval header length past end", eval(), 2, "runs past the end of the file", withModel(m_checkpoint.left(500)));
    row("eval truncated data", eval(), 2, "outside the data buffer", withModel(m_checkpoint.chopped(10)));
    row("eval trailing data", eval(), 2, "trailing bytes that belong to no tensor", withModel(m_checkpoint + "junk"));
    row("eval bad json", eval(), 2, "header is not valid JSON", withModel(safetensorsRaw("{\"a\": [1, 2,}   ")));
    row("eval overlapping", eval(), 2, "overlaps the data of another tensor",
        withModel(safetensorsRaw("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                                 "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}",
                                 floats({1, 2, 3}))));
    row("eval offsets out of range", eval(), 2, "has data_offsets [0, 4000] outside the data buffer of 8 bytes",
        withModel(
            safetensorsRaw("{\"a\":{\"dtype\":\"F32\",\"shape\":[1000],\"data_offsets\":[0,4000]}}", floats({1, 2}))));
    row("eval not a model", eval(), 2, "__metadata__ has no 'format' (not a PositionLab model checkpoint?)",
        withModel(safetensorsFile({{"w", "F32", {2}, floats({1, 2})}})));
    row("eval missing tensor", eval(), 2, "tensor 'ln_f.bias' is missing",
        changed([](QJsonObject&, QList<StTensor>& t) {
            for (StTensor& x : t)
                if (x.name == "ln_f.bias")
                    x.name = "ln_f.bias_renamed"; // same total size, so only the name check can notice
        }));
    row("eval missing tensor, fewer values", eval(), 2,
        "checkpoint @DIR@/m.safetensors: ", changed([](QJsonObject&, QList<StTensor>& t) {
            t.removeIf([](const StTensor& x) { return x.name == "ln_f.bias"; });
        }));
    row("eval extra tensor", eval(), 2, "unexpected tensor 'extra.weight' for a alibi model of 1 layers",
        changed([](QJsonObject&, QList<StTensor>& t) {
            t.append({"extra.weight", "F32", {1}, floats({1})});
        }));
    row("eval wrong shape", eval(), 2, "tensor 'ln_f.bias' has shape (9,), the config needs (8,)",
        changed([](QJsonObject&, QList<StTensor>& t) {
            for (StTensor& x : t)
                if (x.name == "ln_f.bias")
                    x = {"ln_f.bias", "F32", {9}, floats(ramp(9))};
        }));
    row("eval nan weight", eval(), 2, "tensor 'ln_f.weight' holds a non-finite value",
        changed([](QJsonObject&, QList<StTensor>& t) {
            for (StTensor& x : t)
                if (x.name == "ln_f.weight")
                    x.data = floats({1, 1, 1, std::numeric_limits<float>::quiet_NaN(), 1, 1, 1, 1});
        }));
    row("eval int dtype", eval(), 2, "has dtype I32; allowed: F32",
        changed([](QJsonObject&, QList<StTensor>& t) { t[0].dtype = "I32"; }));
    row("eval wrong format", eval(), 2, "__metadata__ format is 'gpt2', expected",
        changed([](QJsonObject& m, QList<StTensor>&) { m["format"] = "gpt2"; }));
    row("eval format version", eval(), 2, "format_version 99 is not supported",
        changed([](QJsonObject& m, QList<StTensor>&) { m["format_version"] = "99"; }));
    row("eval config not json", eval(), 2, "the config in __metadata__ is not valid JSON",
        changed([](QJsonObject& m, QList<StTensor>&) { m["config"] = "{layers: 2"; }));
    row("eval config heads", eval(), 2, "is not divisible by heads", changed([](QJsonObject& m, QList<StTensor>&) {
            QJsonObject c = configOf(m);
            c["heads"] = 3;
            setConfig(m, c);
        }));
    row("eval config scheme unknown", eval(), 2, "unknown scheme 'alibj'",
        changed([](QJsonObject& m, QList<StTensor>&) {
            QJsonObject c = configOf(m);
            c["scheme"] = "alibj";
            setConfig(m, c);
            m["scheme"] = "alibj";
        }));
    row("eval scheme disagrees", eval(), 2, "__metadata__ scheme 'rope' disagrees with the config's 'alibi'",
        changed([](QJsonObject& m, QList<StTensor>&) { m["scheme"] = "rope"; }));
    row("eval step negative", eval(), 2, "__metadata__ step '-1' is not a non-negative integer",
        changed([](QJsonObject& m, QList<StTensor>&) { m["step"] = "-1"; }));
    row("eval metadata not string", eval(), 2, "__metadata__ value of 'step' is not a string", withModel([&] {
            QJsonObject m;
            QList<StTensor> t;
            splitSafetensors(m_checkpoint, m, t);
            QJsonObject header{{"__metadata__", QJsonObject{{"step", 1}}}};
            return safetensorsRaw(QJsonDocument(header).toJson(QJsonDocument::Compact));
        }()));
    row("eval memory bomb config", eval(), 2, "would need about", changed([](QJsonObject& m, QList<StTensor>&) {
            QJsonObject c = configOf(m);
            c["d_model"] = 8192;
            c["layers"] = 64;
            c["d_ff"] = 65536;
            setConfig(m, c);
        }),
        LimitMemory);
    row("eval /dev/zero", {"eval", "/dev/zero"}, 2, "checkpoint /dev/zero: header does not start with '{'", {},
        LimitMemory);

    // ---- issue 14, section 5: the command line's rough edges (each row failed before its fix) ----
    // (b) output paths are checked before any work: the refusal comes before the work estimate, the corpus, the
    // evaluation's progress lines (which made the message more than one line).
    row("(b) eval output missing dir", eval({"--lengths", "8", "-o", "@DIR@/no/x.csv"}), 2,
        "cannot write @DIR@/no/x.csv: No such file or directory", withModel(m_checkpoint));
    row("(b) eval output before the corpus",
        {"eval", "@DIR@/m.safetensors", "--corpus", "@DIR@/none.txt", "-o", "@DIR@/no/x.json"}, 2,
        "cannot write @DIR@/no/x.json", withModel(m_checkpoint));
    // (c) an evaluation length past the held-out text is refused, naming the text and its size.
    row("(c) eval length past the held-out text", eval({"--lengths", "8,1024"}), 2,
        "lengths 1024 exceed the text scored: the validation split of @DIR@/corpus.txt has ", withModel(m_checkpoint));
    row("(c) eval length past --max-bytes", eval({"--lengths", "8,64", "--max-bytes", "32"}), 2,
        "lengths 64 exceed the text scored", withModel(m_checkpoint));
    row("(f) eval extension", eval({"-o", "@DIR@/x.txt"}), 2,
        "-o @DIR@/x.txt: unsupported extension '.txt'; allowed: .csv, .json, .npy", withModel(m_checkpoint));
    row("(f) eval --compare extension", eval({"--compare", "pi", "-o", "@DIR@/x.txt"}), 2,
        "-o @DIR@/x.txt: unsupported extension '.txt'; allowed: .csv, .json, .png, .svg, .pdf",
        withModel(m_checkpoint));
}

void TestBadInputEval::cli()
{
    QFETCH(QStringList, args);
    QFETCH(Files, files);
    QFETCH(int, exitCode);
    QFETCH(QString, message);
    QFETCH(int, flags);
    checkCliRow(args, files, exitCode, message, flags);
}

void TestBadInputEval::interruptEval_data()
{
    QTest::addColumn<int>("signal");
    QTest::addColumn<QString>("output");  // -o file name, empty: CSV on standard output
    QTest::addColumn<bool>("previous");   // an earlier result is already at -o
    QTest::addColumn<bool>("afterFirst"); // wait for the first length's progress line; false: signal at once
    QTest::newRow("Ctrl-C during the long length, csv kept") << int(SIGINT) << "out.csv" << true << true;
    QTest::newRow("Ctrl-C during the long length, json") << int(SIGINT) << "out.json" << false << true;
    QTest::newRow("Ctrl-C, npy kept") << int(SIGINT) << "out.npy" << true << true;
    QTest::newRow("Ctrl-C, stdout") << int(SIGINT) << "" << false << true;
    QTest::newRow("SIGTERM, csv kept") << int(SIGTERM) << "out.csv" << true << true;
    QTest::newRow("Ctrl-C at once, csv kept") << int(SIGINT) << "out.csv" << true << false;
}

// Ctrl-C during `eval`: exit 130 with one clear line, -o never written half (nor at all), nothing else left behind.
void TestBadInputEval::interruptEval()
{
    QFETCH(int, signal);
    QFETCH(QString, output);
    QFETCH(bool, previous);
    QFETCH(bool, afterFirst);
    QTemporaryDir temp;
    const QString dir = temp.path();
    // Length 8 takes a moment; length 65536 over 1 MB of text takes minutes: the signal lands inside it.
    Files files{{"m.safetensors", m_checkpoint}, {"corpus.txt", text(1 << 20)}};
    const QByteArray old("length,loss,perplexity,bits_per_byte\n8,1,2.7,1.4\n");
    if (previous)
        files[output] = old;
    materialise(dir, files);
    QStringList args{"eval",   dir + "/m.safetensors", "--corpus", dir + "/corpus.txt", "--split", "all", "--lengths",
                     "8,65536"};
    if (!output.isEmpty())
        args << "-o" << dir + "/" + output;
    QProcess p;
    startWithDefaultSignals(p, args);
    QVERIFY(p.waitForStarted());
    QByteArray err;
    for (int i = 0; afterFirst && i < 1200 && !err.contains("length 8:"); ++i) {
        p.waitForReadyRead(100);
        err += p.readAllStandardError();
    }
    QVERIFY2(!afterFirst || err.contains("length 8:"), err.constData());
    QVERIFY2(p.state() == QProcess::Running, "eval ended on its own before the signal");
    ::kill(pid_t(p.processId()), signal);
    QVERIFY2(p.waitForFinished(120000), "eval did not stop within 120 s of the signal");
    err += p.readAllStandardError();
    const QByteArray out = p.readAllStandardOutput();
    if (afterFirst) { // the handler is surely installed: the CLI's own stop
        QCOMPARE(p.exitStatus(), QProcess::NormalExit);
        QCOMPARE(p.exitCode(), 130);
        const QByteArray last = err.trimmed().split('\n').last();
        QVERIFY2(last.startsWith("interrupted at length 65536; nothing written"), err.constData());
        QVERIFY2(output.isEmpty() || last.contains(" is unchanged)"), err.constData());
    } else {
        // The CLI's own stop, or (before its handler is installed) death by this very signal, not by another.
        QVERIFY2((p.exitStatus() == QProcess::NormalExit && p.exitCode() == 130) ||
                     (p.exitStatus() == QProcess::CrashExit && p.exitCode() == signal),
                 qPrintable(QString("%1 %2: %3")
                                .arg(p.exitStatus() == QProcess::CrashExit ? "signal" : "exit")
                                .arg(p.exitCode())
                                .arg(QString::fromUtf8(err))));
    }
    QVERIFY2(out.isEmpty(), out.constData()); // no half table on standard output either
    QCOMPARE(listTree(dir), expectedTree(files));
    if (previous) {
        QFile f(dir + "/" + output);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QCOMPARE(f.readAll(), old);
    }
}

PLAB_QTEST_GUILESS_MAIN(TestBadInputEval)
#include "tst_bad_input_eval.moc"
