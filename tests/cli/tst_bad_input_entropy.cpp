// Bad input for `positionlab-cli entropy` (schemes and checkpoints): each must end in its one-line message and exit
// code.
#include "bad_input.h"
#include "test_main.h"

using namespace plab::test::bad_input;

class TestBadInputEntropy : public QObject, private Checkpoints {
    Q_OBJECT

private slots:
    void initTestCase();
    void cli_data();
    void cli();
};

void TestBadInputEntropy::initTestCase()
{
    QVERIFY2(QFileInfo(QStringLiteral(POSITIONLAB_CLI)).isExecutable(), POSITIONLAB_CLI);
    const QString problem = makeCheckpoints();
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    QVERIFY(m_ropeCheckpoint.size() > 1000);
    QVERIFY(m_checkpoint.size() > 1000);
}

void TestBadInputEntropy::cli_data()
{
    addCliColumns();
    if (const QString problem = makeCheckpoints(); !problem.isEmpty())
        qFatal("%s", qPrintable(problem)); // rows built from empty checkpoints would test nothing

    // ---- verbs and options ----
    row("entropy unknown scheme", {"entropy", "ropee"}, 2, "unknown scheme 'ropee'");

    // ---- rotary length extension (issue 13 section 5) ----
    row("rerope window past the context",
        {"entropy", "rope", "--scaling", "leaky-rerope", "--context", "32", "--set", "window=100"}, 2,
        "scaling leaky-rerope: window = 100 must be below the training context L = 32");
    row("self-extend window past the context",
        {"entropy", "rope", "--scaling", "self-extend", "--context", "32", "--set", "window=40"}, 2,
        "scaling self-extend: window = 40 must be below the training context L = 32");
    row("scaling on local", {"entropy", "local", "--scaling", "pi"}, 2,
        "--scaling = pi is not allowed for scheme local; allowed: rotary schemes (rope, xpos)");

    // ---- every scheme parameter: below, above, not a number ----
    row("entropy param", {"entropy", "kerple-log", "--set", "r1=0"}, 2, "kerple-log: r1 = 0 is out of range");

    // ---- entropy ----
    row("entropy lengths empty", {"entropy", "alibi", "--lengths", ""}, 2, "lengths: '' is not an integer");
    row("entropy lengths hole", {"entropy", "alibi", "--lengths", "16,,32"}, 2, "lengths: '' is not an integer");
    row("entropy lengths trailing comma", {"entropy", "alibi", "--lengths", "16,"}, 2, "lengths: '' is not an integer");
    row("entropy lengths 0", {"entropy", "alibi", "--lengths", "16,0"}, 2, "lengths = 0 is out of range");
    row("entropy lengths text", {"entropy", "alibi", "--lengths", "16,x"}, 2, "lengths: 'x' is not an integer");
    row("entropy lengths past max", {"entropy", "alibi", "--lengths", "2000000"}, 2,
        "lengths = 2000000 is out of range");
    row("entropy qk", {"entropy", "alibi", "--qk", "ones"}, 2, "--qk ones is not allowed; allowed: zero, random");
    row("entropy seed negative", {"entropy", "alibi", "--qk", "random", "--seed", "-1"}, 2,
        "seed = -1 is out of range");
    row("entropy head-dim 0", {"entropy", "alibi", "--qk", "random", "--head-dim", "0"}, 2,
        "head-dim = 0 is out of range");
    // One rule for rotary dim vs head dim (core's makeSchemeSpecForHeadDim): dim follows D, another dim is refused.
    row("entropy rotary dim vs head-dim", {"entropy", "rope", "--qk", "random", "--set", "dim=32"}, 2,
        "scheme rope: dim = 32 must equal the head dim --head-dim (64); rope and xpos rotate whole heads");
    // With --qk zero (the default) q.k = 0: a rotary dim changes nothing, and the head dim it must equal is --qk
    // random's. It said "must equal the head dim --head-dim (64)", and --head-dim was then refused with --qk zero.
    row("entropy rotary dim with qk zero", {"entropy", "rope", "--set", "dim=32"}, 2,
        "entropy: --set dim=32 cannot be used with --qk zero: q.k = 0, so rope's rotary dim changes nothing; allowed: "
        "--qk random --head-dim 32 (rope's dim follows the head dim)");
    row("entropy rotary dim equal to the head dim with qk zero", {"entropy", "xpos+pi", "--set", "dim=64"}, 2,
        "entropy: --set dim=64 cannot be used with --qk zero: q.k = 0, so xpos's rotary dim changes nothing");
    row("entropy rotary dim vs given head-dim",
        {"entropy", "xpos", "--qk", "random", "--head-dim", "16", "--set", "dim=32"}, 2,
        "scheme xpos: dim = 32 must equal the head dim --head-dim (16)");
    row("entropy rotary odd head-dim", {"entropy", "rope", "--qk", "random", "--head-dim", "7"}, 2,
        "head dim --head-dim = 7 is not allowed for the rotary scheme rope; allowed: even head dims");

    // ---- compute-time guard: refused at once with the estimate, before any table or tensor is allocated ----
    row("entropy for hours", {"entropy", "alibi", "--lengths", "1048576", "--heads", "1024"}, 2,
        "entropy of 1024 heads over --lengths 1048576 would take about", {}, LimitMemory);
    row("entropy for hours names the way out", {"entropy", "alibi", "--lengths", "1048576", "--heads", "1024"}, 2,
        "allowed: fewer or shorter --lengths, fewer --heads, or --allow-long to run it anyway", {}, LimitMemory);
    row("entropy many lengths", {"entropy", "none", "--heads", "64", "--lengths", "131072,131072,131072,131072,131072"},
        2, "the limit is 10 min", {}, LimitMemory);
    row("entropy random big head-dim",
        {"entropy", "kerple-log", "--qk", "random", "--head-dim", "4096", "--lengths", "65536"}, 2,
        "a smaller --head-dim", {}, LimitMemory);
    // --allow-long lifts only the time guard: this job then meets the memory check (nothing big is allocated first).
    row("entropy allow-long still checks memory",
        {"entropy", "alibi", "--qk", "random", "--head-dim", "4096", "--lengths", "1048576", "--heads", "64",
         "--allow-long"},
        2, "would need about", {}, LimitMemory);
    row("entropy absurd q and k",
        {"entropy", "alibi", "--qk", "random", "--head-dim", "4096", "--lengths", "65536", "--allow-long"}, 2,
        "random q and k of 8 heads x 65536 positions x 4096 dims would need about 16.0 GiB", {}, LimitMemory);

    // ---- eval and checkpoints ----
    auto withModel = [&](const QByteArray& model) {
        return Files{{"m.safetensors", model}, {"corpus.txt", text(4096)}};
    };
    row("entropy checkpoint set a scheme parameter",
        {"entropy", "rope", "--checkpoint", "@DIR@/m.safetensors", "--corpus", "@DIR@/corpus.txt", "--set", "base=5"},
        2, "--set base=5: method none has no parameter 'base' (base=5)", withModel(m_ropeCheckpoint));
    row("entropy checkpoint method disagrees",
        {"entropy", "rope+pi", "--checkpoint", "@DIR@/m.safetensors", "--scaling", "yarn"}, 2,
        "--scaling = yarn disagrees with the method in rope+pi; allowed: one of them, or both the same",
        withModel(m_ropeCheckpoint));
    row("entropy checkpoint rope+", {"entropy", "rope+", "--checkpoint", "@DIR@/m.safetensors"}, 2,
        "'rope+' names no method after '+'; allowed: SCHEME+METHOD with a known method: none, pi",
        withModel(m_ropeCheckpoint));
    row("entropy checkpoint heads", {"entropy", "alibi", "--checkpoint", "@DIR@/m.safetensors", "--heads", "4"}, 2,
        "entropy: --heads is not used by `positionlab-cli entropy SCHEME --checkpoint MODEL.safetensors`",
        withModel(m_checkpoint));
    row("entropy checkpoint scheme",
        {"entropy", "rope", "--checkpoint", "@DIR@/m.safetensors", "--corpus", "@DIR@/corpus.txt"}, 2,
        "the checkpoint was trained with alibi, not rope", withModel(m_checkpoint));
    row("entropy checkpoint layer",
        {"entropy", "alibi", "--checkpoint", "@DIR@/m.safetensors", "--corpus", "@DIR@/corpus.txt", "--layer", "1"}, 2,
        "layer = 1 is out of range", withModel(m_checkpoint));
    row("entropy checkpoint missing", {"entropy", "alibi", "--checkpoint", "@DIR@/none.safetensors"}, 2,
        "checkpoint @DIR@/none.safetensors does not exist");
    row("entropy checkpoint layer negative",
        {"entropy", "alibi", "--checkpoint", "@DIR@/m.safetensors", "--corpus", "@DIR@/corpus.txt", "--layer", "-1"}, 2,
        "layer = -1 is out of range; allowed: integers in [0, 0] (the model has 1 layer)", withModel(m_checkpoint));
    row("entropy checkpoint layer text", {"entropy", "alibi", "--checkpoint", "@DIR@/m.safetensors", "--layer", "last"},
        2, "layer: 'last' is not an integer", withModel(m_checkpoint));
    row("entropy checkpoint for hours",
        {"entropy", "alibi", "--checkpoint", "@DIR@/m.safetensors", "--corpus", "@DIR@/corpus.txt", "--lengths",
         "1048576"},
        2, "entropy of the model's layer 0 over --lengths 1048576 would take about", withModel(m_checkpoint),
        LimitMemory);

    // ---- issue 14, section 5: the command line's rough edges (each row failed before its fix) ----
    row("(b) entropy output checked before the estimate",
        {"entropy", "alibi", "--lengths", "1048576", "--heads", "1024", "-o", "@DIR@/no/x.csv"}, 2,
        "cannot write @DIR@/no/x.csv: No such file or directory", {}, LimitMemory);
    row("(b) entropy output read-only before the estimate",
        {"entropy", "alibi", "--lengths", "1048576", "--heads", "1024", "-o", "@DIR@/x.json"}, 2,
        "cannot write @DIR@/x.json: Permission denied", {}, LimitMemory | ReadOnlyDir);
    // (e) options the verb would ignore are refused, named.
    row("(e) entropy --layer without --checkpoint", {"entropy", "alibi", "--layer", "0"}, 2,
        "entropy: --layer is not used by `positionlab-cli entropy SCHEME` and would be ignored (used by "
        "`positionlab-cli entropy SCHEME --checkpoint MODEL.safetensors`)");
    row("(e) entropy --corpus and --threads without --checkpoint",
        {"entropy", "alibi", "--corpus", "x.txt", "--threads", "1"}, 2,
        "entropy: --corpus, --threads are not used by `positionlab-cli entropy SCHEME`");
    row("(e) entropy --qk with --checkpoint",
        {"entropy", "alibi", "--checkpoint", "@DIR@/m.safetensors", "--qk", "random"}, 2,
        "entropy: --qk is not used by", withModel(m_checkpoint));
    row("(e) entropy --seed with --qk zero", {"entropy", "alibi", "--seed", "3"}, 2,
        "entropy: --seed cannot be used here: --seed and --head-dim set the random q and k of --qk random, and --qk "
        "zero draws none");
    row("(e) entropy --head-dim with --qk zero", {"entropy", "alibi", "--qk", "zero", "--head-dim", "8"}, 2,
        "entropy: --head-dim cannot be used here: --seed and --head-dim set the random q and k of --qk random");
    row("(e) entropy --context nothing reads", {"entropy", "t5", "--context", "8"}, 2,
        "entropy: --context 8 is not read by t5");
    // (g) --logn without --context names --context, in every verb that takes it.
    row("(g) entropy logn", {"entropy", "alibi", "--logn"}, 2, "--logn needs --context L");
    row("(i) entropy --scheme unknown", {"entropy", "--scheme", "alibj"}, 2, "unknown scheme 'alibj'");
    row("(i) scheme missing", {"entropy"}, 2, "entropy: a scheme is required: the SCHEME word or --scheme S");

    // ---- output paths: nothing is created or changed on failure ----
    row("output disk full npy", {"entropy", "alibi", "--lengths", "16", "--heads", "300", "-o", "@DIR@/out.npy"}, 1,
        "the previous file is unchanged", {{"out.npy", goodNpy()}}, FileSizeLimit);
}

void TestBadInputEntropy::cli()
{
    QFETCH(QStringList, args);
    QFETCH(Files, files);
    QFETCH(int, exitCode);
    QFETCH(QString, message);
    QFETCH(int, flags);
    checkCliRow(args, files, exitCode, message, flags);
}

PLAB_QTEST_GUILESS_MAIN(TestBadInputEntropy)
#include "tst_bad_input_entropy.moc"
