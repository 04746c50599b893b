// Bad input for `positionlab-cli train` (options, corpora, --init, tasks) and `sweep`: each must end in its one-line
// message and exit code; Ctrl-C at any moment of training leaves the previous checkpoint or a whole new one.
#include "bad_input.h"
#include "model/checkpoint.h"
#include "base/safetensors.h"
#include "test_main.h"

using namespace plab::test::bad_input;

class TestBadInputTrain : public QObject, private Checkpoints {
    Q_OBJECT

private slots:
    void initTestCase();
    void cli_data();
    void cli();
    void interruptTraining_data();
    void interruptTraining();
};

void TestBadInputTrain::initTestCase()
{
    QVERIFY2(QFileInfo(QStringLiteral(POSITIONLAB_CLI)).isExecutable(), POSITIONLAB_CLI);
    const QString problem = makeCheckpoints();
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    QVERIFY(m_ropeCheckpoint.size() > 1000);
    QVERIFY(m_checkpoint.size() > 1000);
}

void TestBadInputTrain::cli_data()
{
    addCliColumns();
    if (const QString problem = makeCheckpoints(); !problem.isEmpty())
        qFatal("%s", qPrintable(problem)); // rows built from empty checkpoints would test nothing

    // ---- rotary length extension (issue 13 section 5) ----
    row("scaling empty, train", {"train", "rope", "--scaling", "", "-o", "@DIR@/m.safetensors"}, 2,
        "--scaling = '' is not a known method; known methods: none, pi");
    row("scheme word and --scaling disagree, train",
        {"train", "rope+yarn", "--scaling", "pi", "-o", "@DIR@/m.safetensors"}, 2,
        "--scaling = pi disagrees with the method in rope+yarn");

    // ---- train: refused before any training ----
    const Files corpusFile{{"corpus.txt", text(4096)}};
    auto train = [](QStringList extra) {
        return QStringList{"train", "--scheme", "alibi", "--corpus", "@DIR@/corpus.txt", "-o", "@DIR@/m.safetensors"} +
               extra;
    };
    row("train no scheme", {"train", "-o", "@DIR@/m.safetensors"}, 2,
        "train: a scheme is required: the SCHEME word or --scheme S");
    row("train no output", {"train", "--scheme", "alibi"}, 2, "train: -o MODEL.safetensors is required");
    row("train unknown scheme",
        {"train", "--scheme", "alibj", "--corpus", "@DIR@/corpus.txt", "-o", "@DIR@/m.safetensors"}, 2,
        "unknown scheme 'alibj'", corpusFile);
    row("train positional", {"train", "alibi", "rope", "-o", "@DIR@/m.safetensors"}, 2,
        "train: expected 0 to 1 argument(s), got 2 (unexpected 'rope')");
    row("train preset", train({"--preset", "huge"}), 2, "preset 'huge' is unknown; allowed: demo, tiny, quick, large",
        corpusFile);
    row("train heads divide", train({"--d-model", "100", "--heads", "8"}), 2,
        "d-model = 100 is not divisible by heads = 8", corpusFile);
    row("train layers 0", train({"--layers", "0"}), 2, "layers = 0 is out of range", corpusFile);
    row("train context 1", train({"--context", "1"}), 2, "context = 1 is out of range", corpusFile);
    row("train context huge", train({"--context", "65537"}), 2, "context = 65537 is out of range", corpusFile);
    row("train steps 0", train({"--steps", "0"}), 2, "steps = 0 is out of range", corpusFile);
    row("train batch 0", train({"--batch", "0"}), 2, "batch = 0 is out of range", corpusFile);
    row("train batch text", train({"--batch", "many"}), 2, "batch: 'many' is not an integer", corpusFile);
    row("train lr negative", train({"--lr", "-1"}), 2, "lr = -1 is out of range", corpusFile);
    row("train lr nan", train({"--lr", "nan"}), 2, "lr: 'nan' is not a finite number", corpusFile);
    row("train min-lr above lr", train({"--min-lr", "1"}), 2, "min-lr = 1 is out of range", corpusFile);
    row("train grad-clip negative", train({"--grad-clip", "-1"}), 2, "grad-clip = -1 is out of range", corpusFile);
    row("train threads 0", train({"--threads", "0"}), 2, "threads = 0 is out of range", corpusFile);
    row("train scheme param",
        {"train", "--scheme", "kerple-power", "--set", "r2=3", "--corpus", "@DIR@/corpus.txt", "-o",
         "@DIR@/m.safetensors"},
        2, "r2 = 3 is out of range", corpusFile);
    row("train rope keep above 1",
        {"train", "--scheme", "rope", "--set", "keep=2", "--corpus", "@DIR@/corpus.txt", "-o", "@DIR@/m.safetensors"},
        2, "scheme rope: keep = 2 is out of range; allowed: (0, 1]", corpusFile);
    row("train rope rotary-fraction odd dims",
        {"train", "--scheme", "rope", "--set", "rotary-fraction=0.1", "--corpus", "@DIR@/corpus.txt", "-o",
         "@DIR@/m.safetensors"},
        2, "scheme rope: rotary-fraction = 0.1 rotates", corpusFile);
    row("train nope-every 1", train({"--nope-every", "1"}), 2,
        "nope-every = 1 is out of range; allowed: integers in [2, 64]", corpusFile);
    row("train nope-every past the layers",
        {"train", "--scheme", "rope", "--layers", "2", "--nope-every", "3", "--corpus", "@DIR@/corpus.txt", "-o",
         "@DIR@/m.safetensors"},
        2, "nope-every = 3 is out of range; allowed: 0 (off) or integers in [2, 2]", corpusFile);
    row("train nope-every on alibi", train({"--layers", "2", "--nope-every", "2"}), 2,
        "nope-every = 2 needs a rotary scheme (rope, xpos) on the other layers; scheme alibi is not rotary",
        corpusFile);
    row("train temperature without NoPE layers",
        {"train", "--scheme", "rope", "--attn-temperature-tuning", "--corpus", "@DIR@/corpus.txt", "-o",
         "@DIR@/m.safetensors"},
        2, "attn_temperature_tuning acts on NoPE layers only and this model has none", corpusFile);
    row("train floor-scale without temperature",
        {"train", "--scheme", "rope", "--layers", "2", "--nope-every", "2", "--floor-scale", "8", "--corpus",
         "@DIR@/corpus.txt", "-o", "@DIR@/m.safetensors"},
        2, "--floor-scale sets Llama 4's temperature; allowed only with --attn-temperature-tuning", corpusFile);
    row("train floor-scale 0",
        {"train", "--scheme", "none", "--attn-temperature-tuning", "--floor-scale", "0", "--corpus", "@DIR@/corpus.txt",
         "-o", "@DIR@/m.safetensors"},
        2, "attention temperature: floor_scale = 0 is out of range; allowed: [1, 1000000000]", corpusFile);
    row("train unknown option", train({"--epochs", "3"}), 2, "train: unknown option '--epochs'", corpusFile);
    row("train output extension", {"train", "--scheme", "alibi", "--corpus", "@DIR@/corpus.txt", "-o", "@DIR@/m.txt"},
        2,
        "-o @DIR@/m.txt: a checkpoint is written as MODEL.safetensors; the file name must end in .safetensors (the "
        "only "
        "allowed extension)",
        corpusFile);
    // One rule with the GUI's (core's checkCheckpointFileName): the suffix is case-sensitive, so the CLI refuses what
    // the GUI's save refuses.
    row("train output extension upper case",
        {"train", "--scheme", "alibi", "--corpus", "@DIR@/corpus.txt", "-o", "@DIR@/m.SAFETENSORS"}, 2,
        "-o @DIR@/m.SAFETENSORS: a checkpoint is written as MODEL.safetensors", corpusFile);
    row("train output missing dir",
        {"train", "--scheme", "alibi", "--corpus", "@DIR@/corpus.txt", "-o", "@DIR@/no/m.safetensors"}, 2,
        "cannot write @DIR@/no/m.safetensors: No such file or directory", corpusFile);
    row("train output is dir",
        {"train", "--scheme", "alibi", "--corpus", "@DIR@/corpus.txt", "-o", "@DIR@/m.safetensors"}, 2,
        "it is a directory", Files{{"corpus.txt", text(4096)}, {"m.safetensors/", {}}});
    row("train output read-only", train({}), 2, "cannot write @DIR@/m.safetensors: Permission denied",
        Files{{"corpus.txt", text(4096)}, {"m.safetensors", m_checkpoint}}, ReadOnlyDir);
    row("train absurd model", train({"--d-model", "8192", "--layers", "64", "--d-ff", "65536"}), 2, "would need about",
        Files{{"corpus.txt", text(300000)}}, LimitMemory);
    // corpora
    auto withCorpus = [](const QByteArray& bytes) { return Files{{"corpus.txt", bytes}}; };
    row("corpus empty", train({}), 2,
        "corpus @DIR@/corpus.txt is empty; a UTF-8 text file of at least 2048 bytes is needed", withCorpus({}));
    row("corpus binary", train({}), 2, "looks binary (NUL byte at offset 10)",
        withCorpus(text(10) + QByteArray(1, 0) + text(4000)));
    row("corpus utf-16", train({}), 2, "looks binary (NUL byte at offset 3)",
        withCorpus(QByteArray("\xff\xfeT\0r\0a\0", 8) + text(4000)));
    row("corpus latin-1", train({}), 2, "is not valid UTF-8 (byte offset 103); convert it to UTF-8 first",
        withCorpus(text(100) + "caf\xe9" + text(4000)));
    row("corpus overlong", train({}), 2, "is not valid UTF-8 (byte offset 5)",
        withCorpus(text(5) + "\xc0\xaf" + text(4000)));
    row("corpus surrogate", train({}), 2, "is not valid UTF-8 (byte offset 7)",
        withCorpus(text(7) + "\xed\xa0\x80" + text(4000)));
    row("corpus above U+10FFFF", train({}), 2, "is not valid UTF-8 (byte offset 0)",
        withCorpus("\xf4\x90\x80\x80" + text(4000)));
    row("corpus cut sequence", train({}), 2, "is not valid UTF-8 (byte offset 4000)",
        withCorpus(text(4000) + "\xe2\x82"));
    row("corpus too short", train({}), 2, "is too short (100 bytes); at least 2048 bytes are needed",
        withCorpus(text(100)));
    row("corpus shorter than context", train({"--context", "4096"}), 2,
        "error: the training split of @DIR@/corpus.txt (2700 bytes) is shorter than context + 1 = 4097; allowed: a "
        "longer text or a smaller context",
        withCorpus(text(3000)));
    row("corpus missing", train({}), 2, "corpus @DIR@/corpus.txt does not exist");
    row("corpus directory", train({}), 2, "corpus @DIR@/corpus.txt is a directory", Files{{"corpus.txt/", {}}});
    row("corpus /dev/zero", {"train", "--scheme", "alibi", "--corpus", "/dev/zero", "-o", "@DIR@/m.safetensors"}, 2,
        "corpus /dev/zero is not a regular file", {}, LimitMemory);

    // ---- eval and checkpoints ----
    auto withModel = [&](const QByteArray& model) {
        return Files{{"m.safetensors", model}, {"corpus.txt", text(4096)}};
    };
    row("train unknown task", {"train", "alibi", "--task", "sort", "-o", "@DIR@/m.safetensors"}, 2,
        "--task: task 'sort' is unknown; allowed: copy, reverse, addition, passkey");
    row("train task length past the context",
        {"train", "alibi", "--preset", "demo", "--task", "copy", "--task-length", "20", "-o", "@DIR@/m.safetensors"}, 2,
        "--task copy --task-length 20 at --context 17: task copy: length = 20 needs examples of up to 42 bytes, read "
        "as 41 positions, more than the context 17 holds; allowed: lengths in [1, 8] at context 17, or a longer "
        "context");
    row("train task context holds no example",
        {"train", "alibi", "--task", "passkey", "--context", "16", "-o", "@DIR@/m.safetensors"}, 2,
        "task passkey: the context 16 holds no example: length 1 needs 22 bytes, read as 21 positions; allowed: a "
        "context of at least 21 (length 1)");
    row("train task length 0", {"train", "alibi", "--task", "copy", "--task-length", "0", "-o", "@DIR@/m.safetensors"},
        2, "task-length = 0 is out of range");
    row("train task length without task", {"train", "alibi", "--task-length", "3", "-o", "@DIR@/m.safetensors"}, 2,
        "--task-length 3 applies only with --task");
    row("train task with corpus",
        {"train", "alibi", "--task", "copy", "--corpus", "@DIR@/c.txt", "-o", "@DIR@/m.safetensors"}, 2,
        "train: --corpus cannot be used here: --task trains on generated examples, not on text");
    row("sweep unknown task", {"sweep", "--schemes", "alibi", "--seeds", "1", "--task", "sort", "-o", "@DIR@/runs"}, 2,
        "--task: task 'sort' is unknown; allowed: copy, reverse, addition, passkey");
    row("sweep task length past the context",
        {"sweep", "--schemes", "alibi", "--seeds", "1", "--preset", "demo", "--task", "copy", "--task-length", "30",
         "-o", "@DIR@/runs"},
        2, "--task copy --task-length 30 at --context");
    row("sweep task with corpus",
        {"sweep", "--schemes", "alibi", "--seeds", "1", "--task", "copy", "--corpus", "@DIR@/c.txt", "-o", "@DIR@/r"},
        2, "sweep: --corpus cannot be used here: --task trains and scores generated examples, not text");
    row("sweep examples without task",
        {"sweep", "--schemes", "alibi", "--seeds", "1", "--examples", "5", "-o", "@DIR@/runs"}, 2,
        "--examples 5 applies only with --task");
    row("sweep passkey depth past 1 via lengths 0",
        {"sweep", "--schemes", "alibi", "--seeds", "1", "--task", "passkey", "--lengths", "0", "-o", "@DIR@/runs"}, 2,
        "lengths = 0 is out of range");
    // train --init (issue 13): a checkpoint of another scheme or shape is refused before any training.
    auto init = [](QStringList extra) {
        return QStringList{"train", "--init", "@DIR@/m.safetensors",  "--corpus", "@DIR@/corpus.txt", "--steps",
                           "1",     "-o",     "@DIR@/out.safetensors"} +
               extra;
    };
    const QString initAllowed = "; allowed: the checkpoint's scheme and shapes (scheme alibi, layers 1, d-model 8, "
                                "heads 2, d-ff 8); the context, the scheme's parameters, the length-extension method "
                                "and its parameters, and the schedule may change";
    row("train init other scheme", init({"--scheme", "rope"}), 2,
        "--init @DIR@/m.safetensors: this run asks for scheme rope where the checkpoint has alibi" + initAllowed,
        withModel(m_checkpoint));
    row("train drop positions of alibi", init({"--drop-positions"}), 2,
        "--drop-positions: --init @DIR@/m.safetensors was trained with scheme alibi; allowed: a rope checkpoint",
        withModel(m_checkpoint));
    row("train init other shape", init({"--d-model", "16"}), 2,
        "--init @DIR@/m.safetensors: this run asks for d-model 16 where the checkpoint has 8" + initAllowed,
        withModel(m_checkpoint));
    row("train init more layers", init({"--layers", "2"}), 2,
        "this run asks for layers 2 where the checkpoint has 1" + initAllowed, withModel(m_checkpoint));
    // Scheme and sizes are compared before the checkpoint's settings (rope's dim, base) join the run: the message
    // names what differs, not a parameter the other scheme or head dim lacks.
    row("train init non-rotary from rope", init({"alibi"}), 2,
        "--init @DIR@/m.safetensors: this run asks for scheme alibi where the checkpoint has rope; allowed: the "
        "checkpoint's scheme and shapes (scheme rope, layers 1, d-model 8, heads 2, d-ff 8)",
        withModel(m_ropeCheckpoint));
    row("train init rope, other heads", init({"rope", "--heads", "4"}), 2,
        "--init @DIR@/m.safetensors: this run asks for heads 4 where the checkpoint has 2; allowed: the checkpoint's "
        "scheme and shapes (scheme rope",
        withModel(m_ropeCheckpoint));
    row("train init scheme and heads differ", init({"alibi", "--heads", "1"}), 2,
        "this run asks for scheme alibi where the checkpoint has rope, heads 1 where the checkpoint has 2",
        withModel(m_ropeCheckpoint));
    row("train init preset of another shape", init({"--preset", "demo"}), 2,
        "--init @DIR@/m.safetensors: this run (--preset demo) asks for layers 2 where the checkpoint has 1, d-model "
        "128 where the checkpoint has 8",
        withModel(m_checkpoint));
    row("train init learned at another context", init({"--context", "16"}), 2,
        "--init @DIR@/m.safetensors: this run asks for tensor wpe.weight (16, 8) where the checkpoint has tensor "
        "wpe.weight (8, 8) (a learned table has one row per position of the context 16); allowed: the checkpoint's "
        "scheme and shapes (scheme learned",
        withModel(m_learnedCheckpoint));
    // The user's original-context is validated as without --init: it was taken as unset and replaced by 8.
    row("train init original-context negative",
        init({"--set", "original-context=-5", "--context", "64", "--scaling", "yarn"}), 2,
        "scaling yarn: original-context = -5 is out of range; allowed: integers in [0, 1000000]",
        withModel(m_ropeCheckpoint));
    row("train init original-context past the context", init({"--scaling", "yarn", "--set", "original-context=16"}), 2,
        "scaling yarn: original-context = 16 must not exceed the context 8; allowed: integers in [0, 8]",
        withModel(m_ropeCheckpoint));
    row("train init scaling on alibi", init({"--scaling", "yarn"}), 2,
        "--scaling = yarn is not allowed for scheme alibi; allowed: rotary schemes (rope, xpos)",
        withModel(m_checkpoint));
    row("train init missing", init({}), 2, "checkpoint @DIR@/m.safetensors does not exist");

    // ---- issue 14, section 5: the command line's rough edges (each row failed before its fix) ----
    row("(e) train --log-every with --quiet", train({"--quiet", "--log-every", "5"}), 2,
        "train: --log-every cannot be used here: --quiet prints no step progress", corpusFile);
    row("(f) train extension", train({"-o", "@DIR@/m.ckpt"}), 2,
        "-o @DIR@/m.ckpt: a checkpoint is written as MODEL.safetensors; the file name must end in .safetensors (the "
        "only "
        "allowed extension)",
        corpusFile);
    row("(i) train word and --scheme differ", {"train", "rope", "--scheme", "alibi", "-o", "@DIR@/m.safetensors"}, 2,
        "train: the scheme is given twice and differently");
}

void TestBadInputTrain::cli()
{
    QFETCH(QStringList, args);
    QFETCH(Files, files);
    QFETCH(int, exitCode);
    QFETCH(QString, message);
    QFETCH(int, flags);
    checkCliRow(args, files, exitCode, message, flags);
}

void TestBadInputTrain::interruptTraining_data()
{
    QTest::addColumn<int>("delayMs"); // when the signal comes: 0 at once, else this long after the first step line
    QTest::addColumn<int>("signal");
    QTest::addColumn<bool>("previous");     // a checkpoint from an earlier run is already at -o
    QTest::addColumn<bool>("saveEvery");    // --save-every 1: the signal often lands in the middle of a save
    QTest::addColumn<int>("secondAfterMs"); // > 0: a second Ctrl-C this long after the first (the impatient user)
    QTest::newRow("at once, previous kept") << 0 << int(SIGINT) << true << false << 0;
    QTest::newRow("0.3 s") << 300 << int(SIGINT) << false << false << 0;
    QTest::newRow("1 s") << 1000 << int(SIGINT) << false << false << 0;
    QTest::newRow("1 s, previous") << 1000 << int(SIGINT) << true << false << 0;
    QTest::newRow("1 s, saving every step") << 1000 << int(SIGINT) << true << true << 0;
    QTest::newRow("2.5 s, saving every step") << 2500 << int(SIGINT) << false << true << 0;
    QTest::newRow("1 s SIGTERM") << 1000 << int(SIGTERM) << true << true << 0;
    QTest::newRow("first step SIGTERM") << 1 << int(SIGTERM) << false << false << 0;
    for (int second : {1, 5, 20, 60})
        QTest::newRow(qPrintable(QString("double Ctrl-C, %1 ms apart").arg(second)))
            << 1000 << int(SIGINT) << true << true << second;
}

// Ctrl-C at any moment of `train`: afterwards -o holds either the previous checkpoint byte for byte or a complete,
// loadable new one, and nothing else is left in the directory.
void TestBadInputTrain::interruptTraining()
{
    QFETCH(int, delayMs);
    QFETCH(int, signal);
    QFETCH(bool, previous);
    QFETCH(bool, saveEvery);
    QFETCH(int, secondAfterMs);
    QTemporaryDir temp;
    const QString dir = temp.path();
    materialise(dir, {{"corpus.txt", text(20000)}});
    const QString out = dir + "/m.safetensors";
    if (previous)
        materialise(dir, {{"m.safetensors", m_checkpoint}});
    QStringList args{"train",    "--scheme",    "alibi",     "--corpus",  dir + "/corpus.txt",
                     "--layers", "1",           "--d-model", "8",         "--heads",
                     "2",        "--d-ff",      "8",         "--context", "8",
                     "--batch",  "1",           "--steps",   "10000000",  "--eval-bytes",
                     "0",        "--log-every", "1",         "-o",        out};
    if (saveEvery)
        args << "--save-every"
             << "1";
    QProcess p;
    startWithDefaultSignals(p, args);
    QVERIFY(p.waitForStarted());
    QByteArray err;
    if (delayMs) {
        // The first step line comes from inside trainModel, after the CLI installed its handler: from there on a
        // signal must end the run the CLI's own way (exit 130), whatever the delay.
        const QByteArray stepLine("/10000000  loss"); // "step        1/10000000  loss ..."
        for (int i = 0; i < 1200 && !err.contains(stepLine) && p.state() == QProcess::Running; ++i) {
            p.waitForReadyRead(100);
            err += p.readAllStandardError();
        }
        QVERIFY2(err.contains(stepLine), err.constData());
        QTest::qWait(delayMs);
    }
    QVERIFY2(p.state() == QProcess::Running, "training ended on its own before the signal");
    const pid_t pid = pid_t(p.processId());
    ::kill(pid, signal);
    if (secondAfterMs) {
        ::usleep(useconds_t(secondAfterMs) * 1000);
        ::kill(pid, signal); // the process may have exited already: then this does nothing (not yet reaped)
    }
    QVERIFY2(p.waitForFinished(120000), "training did not stop within 120 s of the signal");
    err += p.readAllStandardError();
    const QString how = QString("%1 %2: %3")
                            .arg(p.exitStatus() == QProcess::CrashExit ? "signal" : "exit")
                            .arg(p.exitCode())
                            .arg(QString::fromUtf8(err.right(2000)));
    const bool stopped = p.exitStatus() == QProcess::NormalExit && p.exitCode() == 130;
    // Death by this very signal (exitCode() of a CrashExit is its number), never by another (SIGSEGV, SIGABRT):
    // before the handler is installed (a signal at once), or from a second Ctrl-C, which ends the process at once.
    const bool killedBySignal = p.exitStatus() == QProcess::CrashExit && p.exitCode() == signal;
    if (delayMs && !secondAfterMs)
        QVERIFY2(stopped, qPrintable(how)); // the handler is installed: the CLI's own stop
    else
        QVERIFY2(stopped || killedBySignal, qPrintable(how));

    QStringList expected{"corpus.txt"};
    if (QFile::exists(out))
        expected << "m.safetensors";
    QCOMPARE(listTree(dir), expected);
    if (previous)
        QVERIFY2(QFile::exists(out), "the previous checkpoint is gone");
    if (!QFile::exists(out))
        return;
    QFile f(out);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QByteArray bytes = f.readAll();
    if (previous && bytes == m_checkpoint)
        return; // untouched
    try {
        const plab::SafetensorsFile file =
            plab::parseSafetensors(std::string_view(bytes.constData(), size_t(bytes.size())), "m");
        const plab::LoadedCheckpoint loaded = plab::checkpointFromSafetensors(file, "m");
        QVERIFY(loaded.info.step >= 1);
    } catch (const std::exception& e) {
        QFAIL(qPrintable(QString("the checkpoint left behind does not load: ") + e.what()));
    }
}

PLAB_QTEST_GUILESS_MAIN(TestBadInputTrain)
#include "tst_bad_input_train.moc"
