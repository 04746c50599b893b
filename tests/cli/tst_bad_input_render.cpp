// Bad input for `positionlab-cli render` (pictures; only with the GUI library): each must end in its one-line
// message and exit code.
#include "bad_input.h"
#include "test_main.h"

using namespace plab::test::bad_input;

class TestBadInputRender : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();
    void cli_data();
    void cli();
};

void TestBadInputRender::initTestCase()
{
    QVERIFY2(QFileInfo(QStringLiteral(POSITIONLAB_CLI)).isExecutable(), POSITIONLAB_CLI);
}

void TestBadInputRender::cli_data()
{
    addCliColumns();

    // ---- rotary length extension (issue 13 section 5) ----
    row("scheme word rope+, compare", {"render", "compare", "rope", "rope+", "-o", "@DIR@/c.png"}, 2,
        "'rope+' names no method after '+'", {}, NeedsRender);

    // ---- entropy ----
    row("render entropy rotary dim with qk zero",
        {"render", "entropy", "rope", "alibi", "--set", "dim=32", "-o", "@DIR@/x.png"}, 2,
        "render entropy: --set dim=32 cannot be used with --qk zero: q.k = 0, so rope's rotary dim changes nothing; "
        "allowed: --qk random --head-dim 32",
        {}, NeedsRender);

    // ---- eval and checkpoints ----
    row("render lesson task", {"render", "lesson", "alibi-basics", "--task", "copy", "-o", "@DIR@/a.png"}, 2,
        "render: --task is not used by `positionlab-cli render lesson K`");
    row("render recalibration without task", {"render", "train", "--recalibration", "12.5", "-o", "@DIR@/t.png"}, 2,
        "render train: --recalibration 12.5 runs the DroPE recipe on a task; allowed: with --task");
    row("render recalibration out of range",
        {"render", "train", "--task", "copy", "--recalibration", "0", "-o", "@DIR@/t.png"}, 2,
        "render train: --recalibration 0 is out of range; allowed: a percent of the rope run's steps in [0.5, 100]");
    row("render task length past the context",
        {"render", "train", "rope", "--task", "copy", "--task-length", "20", "-o", "@DIR@/t.png"}, 2,
        "--task copy --task-length 20 at --context 32: task copy: length = 20");

    // ---- render (pictures; only with the GUI library) ----
    row("render unknown view", {"render", "heat", "-o", "@DIR@/x.png"}, 2, "render: unknown view 'heat'; views: bias",
        {}, NeedsRender);
    row("render no output", {"render", "bias", "alibi"}, 2, "render: -o FILE.png|svg|pdf is required", {}, NeedsRender);
    // --lang: the languages pictures can be drawn in; refused before any work, whatever the output.
    row("render unknown language", {"render", "bias", "alibi", "--lang", "xx", "-o", "@DIR@/x.png"}, 2,
        "--lang: language xx is not allowed; allowed: en, zh_CN", {}, NeedsRender);
    row("render language empty", {"render", "bias", "alibi", "--lang=", "-o", "@DIR@/x.png"}, 2,
        "--lang: language  is not allowed; allowed: en, zh_CN", {}, NeedsRender);
    row("render csv", {"render", "bias", "alibi", "-o", "@DIR@/x.csv"}, 2,
        "-o @DIR@/x.csv: unsupported extension '.csv'; allowed: .png, .svg, .pdf", {}, NeedsRender);
    row("render two schemes", {"render", "bias", "alibi", "rope", "-o", "@DIR@/x.png"}, 2, "expected one SCHEME, got 2",
        {}, NeedsRender);
    row("render compare one", {"render", "compare", "alibi", "-o", "@DIR@/x.png"}, 2, "needs 2 to 4 schemes, got 1", {},
        NeedsRender);
    row("render curves", {"render", "dot", "--curves", "12", "-o", "@DIR@/x.png"}, 2, "--curves expects DIM:BASE", {},
        NeedsRender);
    row("render colormap", {"render", "bias", "alibi", "--colormap", "jet", "-o", "@DIR@/x.png"}, 2,
        "--colormap jet is not allowed", {}, NeedsRender);
    row("render width 0", {"render", "bias", "alibi", "--width", "0", "-o", "@DIR@/x.png"}, 2,
        "width = 0 is out of range", {}, NeedsRender);
    row("render huge picture", {"render", "bias", "alibi", "--width", "100000", "-o", "@DIR@/x.png"}, 2,
        "width = 100000 is out of range", {}, NeedsRender);
    row("render absurd length", {"render", "bias", "alibi", "--length", "1048576", "-o", "@DIR@/x.png"}, 2,
        "would need about 8192.0 GiB", {}, NeedsRender | LimitMemory);
    row("render dpi", {"render", "bias", "alibi", "--dpi", "0", "-o", "@DIR@/x.svg"}, 2, "dpi = 0 is out of range", {},
        NeedsRender);
    row("render train --set no scheme takes",
        {"render", "train", "rope", "alibi", "--set", "factor=2", "-o", "@DIR@/x.png"}, 2,
        "render train: --set factor=2 names a parameter of none of the schemes; allowed: a parameter of a scheme or "
        "of its method: rope takes dim, base, keep, rotary-fraction; alibi takes none",
        {}, NeedsRender);
    row("render entropy no scheme", {"render", "entropy", "-o", "@DIR@/x.png"}, 2,
        "render entropy: name at least one scheme", {}, NeedsRender);
    row("render attention no checkpoint", {"render", "attention", "-o", "@DIR@/x.png"}, 2,
        "render attention: --checkpoint MODEL.safetensors (or a model folder DIR) is required", {}, NeedsRender);
    row("render missing dir", {"render", "bias", "alibi", "-o", "@DIR@/no/x.png"}, 2,
        "cannot write @DIR@/no/x.png: No such file or directory", {}, NeedsRender);

    // ---- issue 14, section 5: the command line's rough edges (each row failed before its fix) ----
    row("(e) render entropy --seed with --qk zero",
        {"render", "entropy", "alibi", "--seed", "3", "--head-dim", "8", "-o", "@DIR@/x.png"}, 2,
        "render entropy: --seed, --head-dim cannot be used here", {}, NeedsRender);
    row("(e) render compare --context nothing reads",
        {"render", "compare", "alibi", "t5", "--context", "8", "-o", "@DIR@/x.png"}, 2,
        "render compare: --context 8 is not read by alibi, t5", {}, NeedsRender);
    row("(e) render compare --scheme", {"render", "compare", "alibi", "rope", "--scheme", "rope", "-o", "@DIR@/x.png"},
        2,
        "render: --scheme is not used by `positionlab-cli render compare SCHEME SCHEME [SCHEME [SCHEME]]` and would "
        "be ignored (used by `positionlab-cli render bias SCHEME`)",
        {}, NeedsRender);
    row("(e) render dot --head", {"render", "dot", "--head", "1", "-o", "@DIR@/x.png"}, 2,
        "render: --head is not used by `positionlab-cli render dot`", {}, NeedsRender);
    row("(e) render bias --curves", {"render", "bias", "alibi", "--curves", "64:100", "-o", "@DIR@/x.png"}, 2,
        "render: --curves is not used by `positionlab-cli render bias SCHEME` and would be ignored (used by "
        "`positionlab-cli render dot`)",
        {}, NeedsRender);
    row("(e) render bias --curve of alibi", {"render", "bias", "alibi", "--curve", "-o", "@DIR@/x.png"}, 2,
        "render bias --curve: scheme alibi has no learned curve; allowed: fire", {}, NeedsRender);
    row("(e) render bias --checkpoint without --curve",
        {"render", "bias", "fire", "--checkpoint", "@DIR@/none.safetensors", "-o", "@DIR@/x.png"}, 2,
        "render bias: --checkpoint reads a model's FIRE curve; allowed only with --curve", {}, NeedsRender);
    row("(e) render lesson --preset", {"render", "lesson", "1", "--preset", "quick", "-o", "@DIR@/out"}, 2,
        "render: --preset is not used by `positionlab-cli render lesson K`", {}, NeedsRender);
    // (c) the Train tab's rule in `render train`: a length the held-out text cannot fill is refused before training
    // (exit 2), not drawn as a shorter window under the longer name.
    row("(c) render train held-out too short",
        {"render", "train", "alibi", "--preset", "demo", "--steps", "2", "--corpus", "@DIR@/corpus.txt", "--quiet",
         "-o", "@DIR@/x.png"},
        2, "Evaluation at length 512 needs more held-out text", Files{{"corpus.txt", text(3000)}}, NeedsRender);
    row("(g) render logn", {"render", "bias", "alibi", "--logn", "-o", "@DIR@/x.png"}, 2, "--logn needs --context L",
        {}, NeedsRender);
    row("(i) render word and --scheme differ", {"render", "bias", "alibi", "--scheme", "rope", "-o", "@DIR@/x.png"}, 2,
        "render bias: the scheme is given twice and differently", {}, NeedsRender);
}

void TestBadInputRender::cli()
{
    QFETCH(QStringList, args);
    QFETCH(Files, files);
    QFETCH(int, exitCode);
    QFETCH(QString, message);
    QFETCH(int, flags);
    checkCliRow(args, files, exitCode, message, flags);
}

PLAB_QTEST_GUILESS_MAIN(TestBadInputRender)
#include "tst_bad_input_render.moc"
