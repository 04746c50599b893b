// Bad input for `positionlab-cli attention` (.npy inputs, checkpoints) and `bench`: each must end in its one-line
// message and exit code.
#include "bad_input.h"
#include "test_main.h"

using namespace plab::test::bad_input;

class TestBadInputAttention : public QObject, private Checkpoints {
    Q_OBJECT

private slots:
    void initTestCase();
    void cli_data();
    void cli();
};

void TestBadInputAttention::initTestCase()
{
    QVERIFY2(QFileInfo(QStringLiteral(POSITIONLAB_CLI)).isExecutable(), POSITIONLAB_CLI);
    const QString problem = makeCheckpoints();
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    QVERIFY(m_ropeCheckpoint.size() > 1000);
    QVERIFY(m_checkpoint.size() > 1000);
}

void TestBadInputAttention::cli_data()
{
    addCliColumns();
    if (const QString problem = makeCheckpoints(); !problem.isEmpty())
        qFatal("%s", qPrintable(problem)); // rows built from empty checkpoints would test nothing

    // ---- verbs and options ----
    // An option a verb does not take is named as it was typed ('--o' said for -o before).
    row("unknown -o", {"bench", "gemm", "-o", "@DIR@/x.json"}, 2, "bench: unknown option '-o'; allowed: --scheme");

    // ---- rotary length extension (issue 13 section 5) ----
    row("self-extend group not whole",
        {"bench", "attention", "--scheme", "rope", "--scaling", "self-extend", "--context", "64", "--set", "group=2.5"},
        2, "scaling self-extend: group = 2.5 is out of range; allowed: integers in [1, 1000000]");
    row("leak negative",
        {"bench", "attention", "--scheme", "rope", "--scaling", "leaky-rerope", "--context", "64", "--set", "leak=-2"},
        2, "scaling leaky-rerope: leak = -2 is out of range; allowed: (0, 1000000]");
    row("original-context past the context, bench",
        {"bench", "attention", "rope", "--context", "32", "--scaling", "yarn", "--set", "original-context=33"}, 2,
        "scaling yarn: original-context = 33 must not exceed the context 32");
    row("scaling empty, bench", {"bench", "attention", "rope", "--scaling="}, 2,
        "--scaling = '' is not a known method; known methods: none, pi");

    // ---- entropy ----
    row("bench rotary dim vs --dim", {"bench", "attention", "--scheme", "xpos", "--dim", "32", "--set", "dim=64"}, 2,
        "scheme xpos: dim = 64 must equal the head dim --dim (32)");

    // ---- compute-time guard: refused at once with the estimate, before any table or tensor is allocated ----
    row("bench for hours", {"bench", "attention", "--length", "1048576", "--heads", "2"}, 2,
        "bench attention N=1048576 H=2 D=64 with 5 repeats would take about", {}, LimitMemory);
    row("bench repeat for hours", {"bench", "attention", "--length", "16384", "--repeat", "100000"}, 2,
        "a smaller --length, --heads, --dim or --repeat", {}, LimitMemory);
    row("bench backward counted", {"bench", "attention", "--length", "16384", "--repeat", "20", "--backward"}, 2,
        "with 20 repeats and --backward would take about", {}, LimitMemory);

    // ---- attention: .npy inputs ----
    const QByteArray q = goodNpy(); // (2, 4, 8)
    const Files qkv{{"q.npy", q}, {"k.npy", q}, {"v.npy", q}};
    auto attention = [](const QString& qFile, QStringList extra = {}) {
        QStringList a{"attention", "alibi",       "--q", "@DIR@/" + qFile, "--k", "@DIR@/k.npy",
                      "--v",       "@DIR@/v.npy", "-o",  "@DIR@/out.npy"};
        return a + extra;
    };
    auto withQ = [&](const QByteArray& bytes) {
        Files f = qkv;
        f["q.npy"] = bytes;
        return f;
    };
    row("attention no -o", {"attention", "alibi", "--q", "@DIR@/q.npy", "--k", "@DIR@/k.npy", "--v", "@DIR@/v.npy"}, 2,
        "attention: -o OUT.npy is required", qkv);
    row("attention rotary dim vs D", attention("q.npy", {"--set", "dim=64"}).replaceInStrings("alibi", "rope"), 2,
        "scheme rope: dim = 64 must equal the head dim D of --q (8); rope and xpos rotate whole heads", qkv);
    {
        // (1, 1048576, 2): 8 MiB per file, a causal pass of 5.5e11 visible pairs.
        const QByteArray big = npyFile(npyDict("<f4", "(1, 1048576, 2)"), QByteArray(8 << 20, 0));
        const Files bigQkv{{"q.npy", big}, {"k.npy", big}, {"v.npy", big}};
        row("attention for hours", attention("q.npy"), 2,
            "attention of 1 heads x 1048576 positions x 2 dims would take about", bigQkv, LimitMemory);
    }
    row("attention no --v", {"attention", "alibi", "--q", "@DIR@/q.npy", "--k", "@DIR@/k.npy", "-o", "@DIR@/o.npy"}, 2,
        "attention: --v FILE.npy is required", qkv);
    row("attention csv output", attention("q.npy").mid(0, 8) + QStringList{"-o", "@DIR@/out.csv"}, 2,
        "-o @DIR@/out.csv: unsupported extension '.csv'; allowed: .npy", qkv);
    row("attention csv probs", attention("q.npy", {"--probs", "@DIR@/p.csv"}), 2,
        "--probs @DIR@/p.csv: unsupported extension '.csv'; allowed: .npy", qkv);
    row("attention unknown scheme",
        {"attention", "alibj", "--q", "@DIR@/q.npy", "--k", "@DIR@/k.npy", "--v", "@DIR@/v.npy", "-o", "@DIR@/out.npy"},
        2, "unknown scheme 'alibj'", qkv);
    row("attention heads mismatch", attention("q.npy", {"--heads", "3"}), 2,
        "--heads 3 differs from the 2 heads of --q", qkv);
    row("attention bad param", attention("q.npy", {"--set", "slope=2"}), 2, "scheme alibi has no parameter 'slope'",
        qkv);
    row("attention missing file", attention("nothere.npy"), 2,
        "cannot open @DIR@/nothere.npy: No such file or directory", qkv);
    row("attention directory", attention("sub"), 2, "cannot read @DIR@/sub: it is a directory", [&] {
        Files f = qkv;
        f["sub/"] = {};
        return f;
    }());
    row("attention /dev/zero",
        {"attention", "alibi", "--q", "/dev/zero", "--k", "@DIR@/k.npy", "--v", "@DIR@/v.npy", "-o", "@DIR@/out.npy"},
        2, "/dev/zero: not a usable .npy file: missing the \\x93NUMPY magic", qkv, LimitMemory);
    row("attention text", attention("q.npy"), 2, "q.npy: not a usable .npy file: missing", withQ("0.1,0.2\n"));
    row("attention shape mismatch", attention("q.npy"), 2,
        "q, k and v must have the same shape (H, N, D); got q (2, 4, 7)",
        withQ(npyFile(npyDict("<f4", "(2, 4, 7)"), floats(ramp(56)))));
    row("attention 2-D", attention("q.npy"), 2, "shape (4, 8) is not allowed; expected (H, N, D) with H, N, D >= 1",
        withQ(npyFile(npyDict("<f4", "(4, 8)"), floats(ramp(32)))));
    row("attention N = 0", attention("q.npy"), 2, "shape (2, 0, 8) is not allowed",
        withQ(npyFile(npyDict("<f4", "(2, 0, 8)"), {})));
    row("attention H = 0", attention("q.npy"), 2, "shape (0, 4, 8) is not allowed",
        withQ(npyFile(npyDict("<f4", "(0, 4, 8)"), {})));
    row("attention D too big",
        {"attention", "alibi", "--q", "@DIR@/q.npy", "--k", "@DIR@/q.npy", "--v", "@DIR@/q.npy", "-o", "@DIR@/out.npy"},
        2, "shape (1, 1, 4097) is too large",
        Files{{"q.npy", npyFile(npyDict("<f4", "(1, 1, 4097)"), floats(ramp(4097)))}});
    row("attention nan", attention("q.npy"), 2, "q.npy: element 5 is NaN; inputs must be finite", withQ([] {
            QList<float> v = ramp(64);
            v[5] = std::numeric_limits<float>::quiet_NaN();
            return npyFile(npyDict("<f4", "(2, 4, 8)"), floats(v));
        }()));
    row("attention inf", attention("q.npy"), 2, "element 63 is infinite", withQ([] {
            QList<float> v = ramp(64);
            v[63] = std::numeric_limits<float>::infinity();
            return npyFile(npyDict("<f4", "(2, 4, 8)"), floats(v));
        }()));
    row("attention int32", attention("q.npy"), 2, "dtype '<i4' is not supported",
        withQ(npyFile(npyDict("<i4", "(2, 4, 8)"), QByteArray(256, 0))));
    row("attention big-endian", attention("q.npy"), 2, "big-endian data ('>f4')",
        withQ(npyFile(npyDict(">f4", "(2, 4, 8)"), bigEndianFloats(ramp(64)))));
    row("attention fortran", attention("q.npy"), 2, "Fortran-order arrays are not supported",
        withQ(npyFile(npyDict("<f4", "(2, 4, 8)", "True"), floats(ramp(64)))));
    row("attention truncated", attention("q.npy"), 2,
        "truncated: shape (2, 4, 8) needs 256 bytes of data, the file has 200", withQ(goodNpy().chopped(56)));
    row("attention trailing", attention("q.npy"), 2, "unexpected bytes after the data",
        withQ(goodNpy() + QByteArray(4, 0)));
    row("attention absurd shape", attention("q.npy"), 2, "an array of shape (1024, 1048576, 4096) would need about",
        withQ(npyFile(npyDict("<f4", "(1024, 1048576, 4096)"), floats(ramp(8)))), LimitMemory);
    row("attention rotary odd D",
        {"attention", "rope", "--q", "@DIR@/q.npy", "--k", "@DIR@/q.npy", "--v", "@DIR@/q.npy", "-o", "@DIR@/out.npy"},
        2, "head dim D of --q = 3 is not allowed for the rotary scheme rope; allowed: even head dims",
        Files{{"q.npy", npyFile(npyDict("<f4", "(1, 2, 3)"), floats(ramp(6)))}});
    {
        // Probabilities of (1, 60000, 60000) would be 13.4 GiB: refused before anything is computed.
        const QByteArray long1 = npyFile(npyDict("<f4", "(1, 60000, 1)"), floats(ramp(60000)));
        row("attention absurd probabilities",
            {"attention", "alibi", "--q", "@DIR@/q.npy", "--k", "@DIR@/q.npy", "--v", "@DIR@/q.npy", "--probs",
             "@DIR@/p.npy", "-o", "@DIR@/out.npy"},
            2, "probabilities (H, N, N) would need about 13.4 GiB", Files{{"q.npy", long1}}, LimitMemory);
    }
    row("attention output missing dir", attention("q.npy").mid(0, 8) + QStringList{"-o", "@DIR@/no/out.npy"}, 2,
        "cannot write @DIR@/no/out.npy: No such file or directory", qkv);

    // ---- bench ----
    row("bench unknown", {"bench", "sorting"}, 2, "bench: unknown benchmark 'sorting'; allowed: attention, gemm");
    row("bench no subject", {"bench"}, 2, "bench: expected 1 to 2 argument(s), got 0");
    row("bench length 0", {"bench", "attention", "--length", "0"}, 2, "length = 0 is out of range");
    row("bench threads 0", {"bench", "attention", "--threads", "0"}, 2, "threads = 0 is out of range");
    row("bench repeat 0", {"bench", "attention", "--repeat", "0"}, 2, "repeat = 0 is out of range");
    row("bench window without window", {"bench", "attention", "--scheme", "alibi", "--window", "8"}, 2,
        "--window: alibi has no window; allowed with the schemes local, bca and the rotary methods rerope, "
        "leaky-rerope, self-extend (--scaling METHOD or SCHEME rope+METHOD)");
    row("bench window of rope under a method without one",
        {"bench", "attention", "rope+yarn", "--context", "64", "--window", "8"}, 2,
        "--window: rope+yarn has no window; allowed with the schemes local, bca and the rotary methods rerope");
    row("bench window given twice",
        {"bench", "attention", "rope+rerope", "--context", "64", "--window", "8", "--set", "window=16"}, 2,
        "--window 8 and --set window=16 both set the window; allowed: one of them");
    row("bench rerope window past L", {"bench", "attention", "rope", "--scaling", "rerope", "--window", "16"}, 2,
        "scaling rerope: window = 16 must be below the training context L = 16");
    row("bench absurd", {"bench", "attention", "--length", "1048576", "--heads", "1024", "--dim", "4096"}, 2,
        "would need about", {}, LimitMemory);
    row("bench gemm absurd", {"bench", "gemm", "--flops", "1e20"}, 2, "--flops 1e20 is out of range");

    // ---- eval and checkpoints ----
    auto withModel = [&](const QByteArray& model) {
        return Files{{"m.safetensors", model}, {"corpus.txt", text(4096)}};
    };
    // --precision of the verbs that run a model folder (core's HfPrecision names); a lab checkpoint has none.
    const QString qwen2 = QStringLiteral(POSITIONLAB_TEST_DATA) + "/hf/qwen2";
    const QString allowedPrecisions = "allowed: f32 (float32 products, the default) or bf16";
    row("bench model precision BF16", {"bench", "model", qwen2, "--precision", "BF16"}, 2,
        "--precision: precision 'BF16' is not allowed; " + allowedPrecisions);
    row("attention checkpoint scaling on alibi",
        {"attention", "alibi", "--checkpoint", "@DIR@/m.safetensors", "--scaling", "yarn", "-o", "@DIR@/o.npy"}, 2,
        "--scaling = yarn is not allowed for scheme alibi", withModel(m_checkpoint));
    row("attention checkpoint layer",
        {"attention", "alibi", "--checkpoint", "@DIR@/m.safetensors", "--corpus", "@DIR@/corpus.txt", "--layer", "3",
         "-o", "@DIR@/o.npy"},
        2, "layer = 3 is out of range; allowed: integers in [0, 0]", withModel(m_checkpoint));
    row("attention checkpoint for hours",
        {"attention", "alibi", "--checkpoint", "@DIR@/m.safetensors", "--corpus", "@DIR@/corpus.txt", "--length",
         "1048576", "-o", "@DIR@/o.npy"},
        2, "allowed: a shorter --length, or --allow-long", withModel(m_checkpoint), LimitMemory);

    // ---- issue 14, section 5: the command line's rough edges (each row failed before its fix) ----
    {
        const QByteArray big = npyFile(npyDict("<f4", "(1, 1048576, 2)"), QByteArray(8 << 20, 0));
        row("(b) attention probs checked before the estimate",
            {"attention", "alibi", "--q", "@DIR@/q.npy", "--k", "@DIR@/q.npy", "--v", "@DIR@/q.npy", "--probs",
             "@DIR@/no/p.npy", "-o", "@DIR@/out.npy"},
            2, "cannot write @DIR@/no/p.npy: No such file or directory", Files{{"q.npy", big}}, LimitMemory);
    }
    row("(e) attention --length without --checkpoint", attention("q.npy", {"--length", "4"}), 2,
        "attention: --length is not used by `positionlab-cli attention SCHEME --q Q.npy --k K.npy --v V.npy`", qkv);
    row("(e) bench gemm --size with --flops", {"bench", "gemm", "--size", "64", "--flops", "1e6"}, 2,
        "bench gemm: --size cannot be used here: --size and --flops both set n; allowed: one of them");
    row("(e) bench attention local --window --context",
        {"bench", "attention", "local", "--window", "4", "--length", "32", "--context", "32"}, 2,
        "bench attention: --context 32 is not read by local and would be ignored");
    row("(e) attention --context nothing reads", attention("q.npy", {"--context", "8"}), 2,
        "attention: --context 8 is not read by alibi", qkv);
    row("(e) bench attention --context nothing reads", {"bench", "attention", "--context", "8"}, 2,
        "bench attention: --context 8 is not read by alibi");
    row("(e) bench gemm --scheme", {"bench", "gemm", "--scheme", "rope"}, 2,
        "bench: --scheme is not used by `positionlab-cli bench gemm`");
    row("(e) bench attention --size", {"bench", "attention", "--size", "64"}, 2,
        "bench: --size is not used by `positionlab-cli bench attention [SCHEME]`");
    row("(g) bench logn", {"bench", "attention", "--logn"}, 2, "--logn needs --context L");
    row("(i) attention word and --scheme differ", attention("q.npy", {"--scheme", "rope"}), 2,
        "attention: the scheme is given twice and differently", qkv);
    row("(i) bench attention word and --scheme differ", {"bench", "attention", "rope", "--scheme", "alibi"}, 2,
        "bench attention: the scheme is given twice and differently");
    row("(i) bench gemm takes no scheme", {"bench", "gemm", "rope"}, 2, "bench gemm: unexpected 'rope'");
}

void TestBadInputAttention::cli()
{
    QFETCH(QStringList, args);
    QFETCH(Files, files);
    QFETCH(int, exitCode);
    QFETCH(QString, message);
    QFETCH(int, flags);
    checkCliRow(args, files, exitCode, message, flags);
}

PLAB_QTEST_GUILESS_MAIN(TestBadInputAttention)
#include "tst_bad_input_attention.moc"
