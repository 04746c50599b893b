// Bad input for the command line before a verb and for the scheme views (bias, dot, frequencies, schemes, lessons):
// each must end in its one-line message and exit code; Ctrl-C while bias writes leaves no partial file.
#include "bad_input.h"
#include "test_main.h"

using namespace plab::test::bad_input;

class TestBadInputViews : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();
    void cli_data();
    void cli();
    void interruptLeavesNoPartialFile_data();
    void interruptLeavesNoPartialFile();
};

void TestBadInputViews::initTestCase()
{
    QVERIFY2(QFileInfo(QStringLiteral(POSITIONLAB_CLI)).isExecutable(), POSITIONLAB_CLI);
}

void TestBadInputViews::cli_data()
{
    addCliColumns();

    // ---- verbs and options ----
    row("no verb", {}, 2, "usage: positionlab-cli VERB", {}, MultiLine);
    row("unknown verb", {"frobnicate"}, 2, "unknown verb 'frobnicate'; verbs: ");
    row("empty verb", {""}, 2, "unknown verb ''");
    row("verb as option", {"--bias"}, 2, "unknown verb '--bias'");
    row("unknown option", {"bias", "alibi", "--frob", "1"}, 2,
        "bias: unknown option '--frob'; allowed: --scheme, --heads");
    row("unknown short option", {"bias", "alibi", "-x"}, 2, "unknown option '-x'");
    row("unknown --output=", {"lessons", "--output=@DIR@/x.json"}, 2,
        "lessons: unknown option '--output'; allowed: --lang, --folder, --json");
    row("option needs value", {"bias", "alibi", "--length"}, 2, "option --length needs a value");
    row("-o needs value", {"bias", "alibi", "-o"}, 2, "option -o needs a value");
    row("flag with value", {"bias", "alibi", "--bidirectional=yes"}, 2, "option --bidirectional takes no value");
    row("missing scheme", {"bias"}, 2, "bias: a scheme is required: the SCHEME word or --scheme S");
    row("extra positional", {"bias", "alibi", "rope"}, 2, "unexpected 'rope'");
    row("schemes extra", {"schemes", "x"}, 2, "schemes: expected 0 argument(s), got 1");
    row("dot positional", {"dot", "5"}, 2, "dot: expected 0 argument(s), got 1");
    row("unknown scheme", {"bias", "alibj"}, 2, "unknown scheme 'alibj'; known schemes: none, sinusoidal");
    row("empty scheme", {"bias", ""}, 2, "unknown scheme ''");
    row("scheme case", {"bias", "ALiBi"}, 2, "unknown scheme 'ALiBi'");

    // ---- sizes: non-numeric, out of range, N = 0, absurd N (refused with an estimate, nothing allocated) ----
    row("length 0", {"bias", "alibi", "--length", "0"}, 2,
        "length = 0 is out of range; allowed: integers in [1, 1048576]");
    row("length negative", {"bias", "alibi", "--length", "-5"}, 2, "length = -5 is out of range");
    row("length text", {"bias", "alibi", "--length", "ten"}, 2, "length: 'ten' is not an integer");
    row("length fraction", {"bias", "alibi", "--length", "2.5"}, 2, "length: '2.5' is not an integer");
    row("length exponent", {"bias", "alibi", "--length", "1e3"}, 2, "length: '1e3' is not an integer");
    row("length empty", {"bias", "alibi", "--length="}, 2, "length: '' is not an integer");
    row("length space", {"bias", "alibi", "--length", " 4"}, 2, "length: ' 4' is not an integer");
    row("length huge", {"bias", "alibi", "--length", "99999999999999999999999"}, 2,
        "length = 99999999999999999999999 is out of range");
    row("length past max", {"bias", "alibi", "--length", "1048577"}, 2, "length = 1048577 is out of range");
    row("length absurd", {"bias", "alibi", "--length", "1048576"}, 2,
        "would need about 4096.0 GiB of memory; the limit is 8 GiB", {}, LimitMemory);
    row("length too big for memory", {"bias", "rope", "--length", "50000", "--head", "0"}, 2,
        "would need about 9.3 GiB", {}, LimitMemory);
    row("t5 buckets absurd", {"bias", "t5", "--buckets", "--length", "60000"}, 2, "would need about", {}, LimitMemory);
    row("heads 0", {"bias", "alibi", "--heads", "0"}, 2, "heads = 0 is out of range; allowed: integers in [1, 1024]");
    row("heads 1025", {"bias", "alibi", "--heads", "1025"}, 2, "heads = 1025 is out of range");
    row("heads text", {"bias", "alibi", "--heads", "eight"}, 2, "heads: 'eight' is not an integer");
    row("head out of range", {"bias", "alibi", "--heads", "4", "--head", "4"}, 2,
        "head = 4 is out of range; allowed: integers in [0, 3]");
    row("head negative", {"bias", "alibi", "--head", "-1"}, 2, "head = -1 is out of range");
    row("head text", {"bias", "alibi", "--head", "first"}, 2, "head: 'first' is not an integer");
    row("context 0", {"bias", "alibi", "--context", "0"}, 2, "context = 0 is out of range");
    row("context text", {"bias", "local", "--context", "x"}, 2, "context: 'x' is not an integer");
    row("logn without context", {"bias", "alibi", "--logn"}, 2, "--logn needs --context L");
    row("logn context 1", {"bias", "alibi", "--logn", "--context", "1"}, 2, "needs a training context >= 2 (got 1)");

    // ---- rotary length extension (issue 13 section 5) ----
    row("scaling factor below 1", {"bias", "rope", "--scaling", "pi", "--set", "factor=0.5"}, 2,
        "scaling pi: factor = 0.5 is out of range; allowed: [1, 1000000]");
    row("yarn factor below 1", {"frequencies", "--scaling", "yarn", "--set", "factor=0.99"}, 2,
        "scaling yarn: factor = 0.99 is out of range; allowed: [1, 1000000]");
    row("rerope window at the context",
        {"bias", "rope", "--scaling", "rerope", "--context", "64", "--set", "window=64"}, 2,
        "scaling rerope: window = 64 must be below the training context L = 64; allowed: integers in [1, 63]");
    // Self-Extend (issue 20 §4): a window at or past the context, a group below 1.
    row("self-extend window at the context",
        {"bias", "rope", "--scaling", "self-extend", "--context", "64", "--set", "window=64"}, 2,
        "scaling self-extend: window = 64 must be below the training context L = 64; allowed: integers in [1, 63]");
    row("self-extend group 0", {"bias", "rope", "--scaling", "self-extend", "--context", "64", "--set", "group=0"}, 2,
        "scaling self-extend: group = 0 is out of range; allowed: integers in [1, 1000000]");
    row("original-context negative", {"frequencies", "--scaling", "yarn", "--set", "original-context=-5"}, 2,
        "scaling yarn: original-context = -5 is out of range; allowed: integers in [0, 1000000]");
    row("original-context not whole", {"frequencies", "--scaling", "llama3", "--set", "original-context=64.5"}, 2,
        "scaling llama3: original-context = 64.5 is out of range; allowed: integers in [0, 1000000]");
    row("original-context on pi", {"bias", "rope", "--scaling", "pi", "--set", "original-context=64"}, 2,
        "pi's parameters: factor");
    row("rerope window past the original context",
        {"bias", "rope", "--scaling", "rerope", "--context", "64", "--set", "original-context=16", "--set",
         "window=20"},
        2, "scaling rerope: window = 20 must be below the original-context L = 16; allowed: integers in [1, 15]");
    row("leak 0", {"bias", "rope", "--scaling", "leaky-rerope", "--context", "64", "--set", "leak=0"}, 2,
        "scaling leaky-rerope: leak = 0 is out of range; allowed: (0, 1000000]");
    row("scaling on alibi", {"bias", "alibi", "--scaling", "yarn"}, 2,
        "--scaling = yarn is not allowed for scheme alibi; allowed: rotary schemes (rope, xpos)");
    row("unknown method", {"bias", "rope", "--scaling", "magic"}, 2,
        "--scaling = 'magic' is not a known method; known methods: none, pi, ntk, dynamic-ntk, yarn, llama3, rerope, "
        "leaky-rerope");
    row("unknown method, frequencies", {"frequencies", "--scaling", "YaRN"}, 2,
        "--scaling = 'YaRN' is not a known method");
    row("set a parameter the method does not take", {"bias", "rope", "--scaling", "pi", "--set", "beta-fast=8"}, 2,
        "--set: scheme rope with scaling pi has no parameter 'beta-fast'; its parameters: dim, base, keep, "
        "rotary-fraction; pi's "
        "parameters: factor");
    row("set a method parameter without a method", {"bias", "rope", "--set", "factor=2"}, 2,
        "scheme rope has no parameter 'factor'; its parameters: dim, base, keep, rotary-fraction (length-extension "
        "parameters need a method)");
    row("rerope bidirectional", {"bias", "rope", "--scaling", "rerope", "--context", "32", "--bidirectional"}, 2,
        "--bidirectional: scaling rerope: bidirectional attention is not allowed; the position remapping is causal "
        "only");
    row("yarn beta-fast below beta-slow",
        {"frequencies", "--scaling", "yarn", "--set", "beta-fast=1", "--set", "beta-slow=2"}, 2,
        "scaling yarn: beta-fast = 1 must be at least beta-slow = 2; allowed: beta-fast >= beta-slow");
    row("llama3 bands reversed",
        {"frequencies", "--scaling", "llama3", "--set", "low-freq-factor=4", "--set", "high-freq-factor=1"}, 2,
        "scaling llama3: high-freq-factor = 1 must exceed low-freq-factor = 4");
    row("yarn beta-fast below beta-slow, bias", {"bias", "rope", "--scaling", "yarn", "--set", "beta-slow=33"}, 2,
        "scaling yarn: beta-fast = 32 must be at least beta-slow = 33");
    row("original-context past the context",
        {"bias", "rope", "--context", "32", "--scaling", "rerope", "--set", "window=40", "--set",
         "original-context=64"},
        2,
        "scaling rerope: original-context = 64 must not exceed the context 32; allowed: integers in [0, 32] (0: the "
        "context)");
    row("scaling empty", {"bias", "rope", "--scaling", ""}, 2,
        "--scaling = '' is not a known method; known methods: none, pi, ntk, dynamic-ntk, yarn, llama3, rerope, "
        "leaky-rerope");
    row("scheme word rope+", {"bias", "rope+"}, 2,
        "'rope+' names no method after '+'; allowed: SCHEME+METHOD with a known method: none, pi, ntk, dynamic-ntk, "
        "yarn, llama3, rerope, leaky-rerope");
    row("ntk on dim 2", {"frequencies", "--dim", "2", "--scaling", "ntk"}, 2,
        "scaling ntk: dim = 2 is not allowed; allowed: even dims >= 4 (the base grows as s^(d/(d-2)))");
    row("dynamic-ntk on dim 2", {"frequencies", "--dim", "2", "--scaling", "dynamic-ntk"}, 2,
        "scaling dynamic-ntk: dim = 2 is not allowed");
    row("frequencies json to csv", {"frequencies", "--json", "-o", "@DIR@/f.csv"}, 2,
        "frequencies: --json contradicts -o @DIR@/f.csv; allowed: --json without -o (JSON on stdout), --json with -o "
        "FILE.json, or -o FILE without --json");
    row("frequencies json to an existing csv", {"frequencies", "--json", "-o", "@DIR@/f.csv"}, 2,
        "frequencies: --json contradicts -o @DIR@/f.csv", Files{{"f.csv", "kept\n"}});
    row("frequencies json to png", {"frequencies", "--json", "-o", "@DIR@/f.png"}, 2,
        "frequencies: --json contradicts -o @DIR@/f.png");
    row("frequencies set dim beside --dim", {"frequencies", "--dim", "22", "--set", "dim=8"}, 2,
        "frequencies: --set dim=8 is not allowed; rope's dim is --dim (allowed with --set: keep, rotary-fraction and "
        "the parameters of the --scaling method)");
    row("frequencies keep above 1", {"frequencies", "--set", "keep=1.5"}, 2,
        "scheme rope: keep = 1.5 is out of range; allowed: (0, 1]");
    row("frequencies rotary-fraction 0", {"frequencies", "--set", "rotary-fraction=0"}, 2,
        "scheme rope: rotary-fraction = 0 is out of range; allowed: (0, 1]");
    row("frequencies set base", {"frequencies", "--scaling", "pi", "--set", "base=500"}, 2,
        "frequencies: --set base=500 is not allowed; rope's base is --base");
    row("frequencies set a scheme parameter of no method", {"frequencies", "--set", "gamma=1"}, 2,
        "--set gamma=1: method none has no parameter 'gamma' (gamma=1); its parameters: none (length-extension "
        "parameters need a method); name one with --scaling METHOD");
    row("frequencies npy", {"frequencies", "-o", "@DIR@/f.npy"}, 2,
        "-o @DIR@/f.npy: unsupported extension '.npy'; allowed: .csv, .json, .png, .svg, .pdf");
    row("sinks negative", {"bias", "local", "--set", "sinks=-1"}, 2,
        "scheme local: sinks = -1 is out of range; allowed: integers in [0, 1000000]");
    row("sinks on alibi", {"bias", "alibi", "--set", "sinks=4"}, 2,
        "sinks = 4 needs a window or a chunk (every key is visible without one); allowed: with window=W or chunk=C");
    row("frequencies odd dim", {"frequencies", "--dim", "7"}, 2,
        "scheme rope: dim = 7 is out of range; allowed: even integers in [2, 4096]");
    row("buckets not t5", {"bias", "alibi", "--buckets"}, 2,
        "--buckets: bucket maps are only defined for the t5 scheme, not alibi");
    row("causal only xpos", {"bias", "xpos", "--bidirectional"}, 2,
        "--bidirectional: scheme xpos is causal only; bidirectional attention is not allowed with it");
    row("causal only bca", {"bias", "bca", "--bidirectional"}, 2, "scheme bca is causal only");

    // ---- every scheme parameter: below, above, not a number ----
    struct ParamCase {
        const char* scheme;
        const char* assignment;
        const char* message;
    };
    const ParamCase params[] = {
        {"sinusoidal", "dim=0", "sinusoidal: dim = 0 is out of range; allowed: even integers in [2, 4096]"},
        {"sinusoidal", "dim=3", "dim = 3 is out of range; allowed: even integers"},
        {"sinusoidal", "dim=4098", "dim = 4098 is out of range"},
        {"sinusoidal", "dim=64.5", "dim = 64.5 is out of range"},
        {"sinusoidal", "dim=abc", "dim = 'abc' is not a number"},
        {"sinusoidal", "base=1", "base = 1 is out of range; allowed: (1, 1e+12]"},
        {"sinusoidal", "base=-3", "base = -3 is out of range"},
        {"sinusoidal", "base=2e12", "base = 2e+12 is out of range"},
        {"sinusoidal", "base=nan", "base = 'nan' is not a number"},
        {"sinusoidal", "base=inf", "base = 'inf' is not a number"},
        {"sinusoidal", "base=1e999", "base = '1e999' is not a number"},
        {"sinusoidal", "base=", "base = '' is not a number"},
        {"rope", "dim=1", "rope: dim = 1 is out of range"},
        {"rope", "dim=8192", "rope: dim = 8192 is out of range"},
        {"rope", "base=0.5", "rope: base = 0.5 is out of range"},
        {"rope", "base=0x10", "rope: base = '0x10' is not a number"},
        {"xpos", "gamma=0", "xpos: gamma = 0 is out of range; allowed: (0, 10]"},
        {"xpos", "gamma=11", "gamma = 11 is out of range"},
        {"xpos", "gamma=-1", "gamma = -1 is out of range"},
        {"xpos", "gamma=big", "gamma = 'big' is not a number"},
        {"xpos", "scale-base=0.5", "scale-base = 0.5 is out of range; allowed: [1, 1000000000]"},
        {"xpos", "scale-base=2e9", "scale-base = 2000000000 is out of range"},
        {"xpos", "dim=7", "xpos: dim = 7 is out of range"},
        {"xpos", "base=1", "xpos: base = 1 is out of range"},
        {"t5", "num-buckets=1", "t5: num-buckets = 1 is out of range; allowed: integers in [2, 1024]"},
        {"t5", "num-buckets=1025", "num-buckets = 1025 is out of range"},
        {"t5", "num-buckets=2.5", "num-buckets = 2.5 is out of range"},
        {"t5", "num-buckets=x", "num-buckets = 'x' is not a number"},
        {"t5", "max-distance=1", "max-distance = 1 is out of range; allowed: integers in [2, 1000000]"},
        {"t5", "max-distance=1000001", "max-distance = 1000001 is out of range"},
        {"t5", "max-distance=16", "t5: max-distance = 16 must exceed num-buckets/2 = 16"},
        {"kerple-power", "r1=0", "kerple-power: r1 = 0 is out of range; allowed: (0, 1000]"},
        {"kerple-power", "r1=-1", "r1 = -1 is out of range"},
        {"kerple-power", "r1=1001", "r1 = 1001 is out of range"},
        {"kerple-power", "r2=0", "kerple-power: r2 = 0 is out of range; allowed: (0, 2]"},
        {"kerple-power", "r2=3", "r2 = 3 is out of range"},
        {"kerple-power", "r2=-0", "r2 = -0 is out of range"},
        {"kerple-power", "r2=two", "r2 = 'two' is not a number"},
        {"kerple-log", "r1=0", "kerple-log: r1 = 0 is out of range"},
        {"kerple-log", "r2=0", "kerple-log: r2 = 0 is out of range; allowed: (0, 1000]"},
        {"kerple-log", "r2=1e4", "r2 = 10000 is out of range"},
        {"sandwich", "dim=5", "sandwich: dim = 5 is out of range"},
        {"sandwich", "base=0", "sandwich: base = 0 is out of range"},
        {"local", "window=0", "local: window = 0 is out of range; allowed: integers in [1, 1000000]"},
        {"local", "window=1.5", "window = 1.5 is out of range"},
        {"local", "window=1000001", "window = 1000001 is out of range"},
        {"local", "window=-4", "window = -4 is out of range"},
        {"bca", "window=3", "bca: window = 3 is out of range; allowed: even integers in [2, 1000000]"},
        {"bca", "window=0", "bca: window = 0 is out of range"},
        {"none", "dim=4", "scheme none has no parameter 'dim'; its parameters: none"},
        {"alibi", "slope=1", "scheme alibi has no parameter 'slope'"},
        {"learned", "dim=4", "scheme learned has no parameter 'dim'"},
        {"rope", "gamma=1", "scheme rope has no parameter 'gamma'; its parameters: dim, base, keep, rotary-fraction"},
        {"rope", "keep=0", "scheme rope: keep = 0 is out of range; allowed: (0, 1]"},
        {"rope", "keep=-0.5", "scheme rope: keep = -0.5 is out of range; allowed: (0, 1]"},
        {"rope", "keep=1.01", "scheme rope: keep = 1.01 is out of range; allowed: (0, 1]"},
        {"rope", "keep=half", "scheme rope: keep = 'half' is not a number; allowed: (0, 1]"},
        {"rope", "rotary-fraction=0", "scheme rope: rotary-fraction = 0 is out of range; allowed: (0, 1]"},
        {"rope", "rotary-fraction=2", "scheme rope: rotary-fraction = 2 is out of range; allowed: (0, 1]"},
        // 64 x 0.01 rotates no pair, 64 x 0.3 = 19.2 an odd number of dims.
        {"rope", "rotary-fraction=0.01",
         "scheme rope: rotary-fraction = 0.01 rotates ⌊f × dim⌋ = ⌊0.01 × 64⌋ = 0 dims; allowed: fractions in (0, 1] "
         "that rotate an even number of dims >= 2"},
        {"rope", "rotary-fraction=0.3", "rotary-fraction = 0.3 rotates ⌊f × dim⌋ = ⌊0.3 × 64⌋ = 19 dims"},
        {"xpos", "keep=0.5", "scheme xpos has no parameter 'keep'"},
        {"rope", "dim", "--set: a setting is NAME=VALUE, got 'dim'"},
        {"rope", "=64", "--set: a setting is NAME=VALUE, got '=64'"},
    };
    for (const ParamCase& p : params) {
        const QByteArray name = QByteArray("set ") + p.scheme + " " + p.assignment;
        row(name.constData(), {"bias", p.scheme, "--set", p.assignment}, 2, p.message);
    }
    row("t5 bidirectional odd buckets", {"bias", "t5", "--bidirectional", "--set", "num-buckets=5"}, 2,
        "num-buckets = 5 must be an even integer >= 4 when bidirectional");

    // ---- dot ----
    row("dot dim odd", {"dot", "--dim", "7"}, 2, "dim = 7 is out of range; allowed: even integers in [2, 4096]");
    row("dot dim 0", {"dot", "--dim", "0"}, 2, "dim = 0 is out of range");
    row("dot dim text", {"dot", "--dim", "x"}, 2, "dim: 'x' is not an integer");
    row("dot base 1", {"dot", "--base", "1"}, 2, "base = 1 is out of range; allowed: (1, 1e+12]");
    row("dot base huge", {"dot", "--base", "1e13"}, 2, "base = 1e+13 is out of range");
    row("dot base nan", {"dot", "--base", "nan"}, 2, "base: 'nan' is not a finite number");
    row("dot base text", {"dot", "--base", "ten"}, 2, "base: 'ten' is not a finite number");
    row("dot distance negative", {"dot", "--max-distance", "-1"}, 2, "max-distance = -1 is out of range");
    row("dot distance huge", {"dot", "--max-distance", "10000001"}, 2, "max-distance = 10000001 is out of range");

    // ---- eval and checkpoints ----
    row("bias task", {"bias", "alibi", "--task", "copy"}, 2, "bias: unknown option '--task' (read by eval, ");

    // ---- render (pictures; only with the GUI library) ----
    row("bias picture unknown language", {"bias", "alibi", "--lang", "zh", "-o", "@DIR@/x.png"}, 2,
        "--lang: language zh is not allowed; allowed: en, zh_CN");
    row("dot data unknown language", {"dot", "--lang", "fr"}, 2,
        "--lang: language fr is not allowed; allowed: en, zh_CN");
    row("bias picture read-only", {"bias", "alibi", "-o", "@DIR@/x.png"}, 2, "Permission denied",
        {{"x.png", "old picture"}}, NeedsRender | ReadOnlyDir);

    // ---- issue 14, section 5: the command line's rough edges (each row failed before its fix) ----
    row("(b) bias picture output before the picture", {"bias", "alibi", "--length", "1048576", "-o", "@DIR@/no/x.png"},
        2, "cannot write @DIR@/no/x.png: No such file or directory", {}, LimitMemory);
    row("(e) bias --context nothing reads", {"bias", "alibi", "--context", "8"}, 2,
        "bias: --context 8 is not read by alibi and would be ignored; allowed with --logn (its threshold), the schemes "
        "local, bca (their window's default, unless the window is set) or the rotary methods dynamic-ntk, yarn, "
        "llama3, rerope, leaky-rerope, self-extend, longrope (their L)");
    row("(e) bias local --set window --context",
        {"bias", "local", "--set", "window=4", "--length", "8", "--context", "32"}, 2,
        "bias: --context 32 is not read by local and would be ignored");
    row("(e) bias rope+pi --context", {"bias", "rope+pi", "--context", "8"}, 2,
        "bias: --context 8 is not read by rope+pi and would be ignored");
    row("(e) bias picture option with CSV", {"bias", "alibi", "--width", "300"}, 2,
        "bias: --width applies only to a picture output (-o FILE.png, .svg or .pdf) and would be ignored here");
    row("(e) dot picture options with JSON", {"dot", "--log-x", "--lang", "zh_CN", "-o", "@DIR@/d.json"}, 2,
        "dot: --log-x, --lang apply only to a picture output");
    // (f) a wrong output extension names the allowed ones, for the verb at hand.
    row("(f) bias extension lists pictures too", {"bias", "alibi", "-o", "@DIR@/x.txt"}, 2,
        "-o @DIR@/x.txt: unsupported extension '.txt'; allowed: .csv, .json, .npy, .png, .svg, .pdf");
    // (i) the scheme as a word or as --scheme, never two different ones.
    row("(i) bias word and --scheme differ", {"bias", "alibi", "--scheme", "rope"}, 2,
        "bias: the scheme is given twice and differently, as 'alibi' and --scheme rope; give it once");

    // ---- output paths: nothing is created or changed on failure ----
    row("output missing directory", {"bias", "alibi", "-o", "@DIR@/missing/out.csv"}, 2,
        "cannot write @DIR@/missing/out.csv: No such file or directory");
    row("output parent is a file", {"bias", "alibi", "-o", "@DIR@/file.csv/out.csv"}, 2, "Not a directory",
        {{"file.csv", "keep me\n"}});
    row("output is a directory", {"bias", "alibi", "-o", "@DIR@/sub.csv"}, 2,
        "cannot write @DIR@/sub.csv: it is a directory", {{"sub.csv/", {}}});
    row("output directory no extension", {"bias", "alibi", "-o", "@DIR@"}, 2, "unsupported extension ''");
    row("output bad extension", {"bias", "alibi", "-o", "@DIR@/out.txt"}, 2,
        "unsupported extension '.txt'; allowed: .csv, .json, .npy");
    row("output empty", {"bias", "alibi", "-o", ""}, 2, "unsupported extension ''");
    row("output unknown image extension", {"dot", "-o", "@DIR@/x.gif"}, 2, "unsupported extension '.gif'");
    row("output read-only directory", {"bias", "alibi", "-o", "@DIR@/out.csv"}, 2,
        "cannot write @DIR@/out.csv: Permission denied", {{"out.csv", "old,contents\n1,2\n"}}, ReadOnlyDir);
    row("output disk full", {"bias", "alibi", "--length", "300", "-o", "@DIR@/out.csv"}, 1,
        "writing @DIR@/out.csv failed (disk full or I/O error); the previous file is unchanged",
        {{"out.csv", QByteArray("previous\0bytes\xff", 15)}}, FileSizeLimit);
    row("stdout full", {"bias", "alibi", "--length", "64"}, 1, "writing to standard output failed", {}, StdoutFull);
}

void TestBadInputViews::cli()
{
    QFETCH(QStringList, args);
    QFETCH(Files, files);
    QFETCH(int, exitCode);
    QFETCH(QString, message);
    QFETCH(int, flags);
    checkCliRow(args, files, exitCode, message, flags);
}

void TestBadInputViews::interruptLeavesNoPartialFile_data()
{
    QTest::addColumn<int>("signal");
    QTest::newRow("SIGINT") << int(SIGINT);
    QTest::newRow("SIGTERM") << int(SIGTERM);
    QTest::newRow("SIGHUP") << int(SIGHUP);
}

// Ctrl-C while a big output is being written: the old file stays byte for byte, no temporary is left.
void TestBadInputViews::interruptLeavesNoPartialFile()
{
    QFETCH(int, signal);
    QTemporaryDir temp;
    const QString out = temp.filePath("out.csv");
    const QByteArray old("the previous result\n");
    {
        QFile f(out);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(old);
    }
    QProcess p;
    startWithDefaultSignals(p, {"bias", "sinusoidal", "--length", "12000", "--head", "0", "-o", out});
    QVERIFY(p.waitForStarted());
    // Wait until the temporary exists (the write is under way), then interrupt.
    QString tempName;
    for (int i = 0; i < 6000 && tempName.isEmpty() && p.state() == QProcess::Running; ++i) {
        const QStringList names = QDir(temp.path()).entryList(QDir::Files | QDir::Hidden);
        for (const QString& n : names)
            if (n.startsWith(".out.csv.tmp"))
                tempName = n;
        if (tempName.isEmpty())
            QTest::qWait(10);
    }
    QVERIFY2(!tempName.isEmpty(), "the CLI finished or never began writing");
    ::kill(pid_t(p.processId()), signal);
    QVERIFY(p.waitForFinished(60000));
    // Ended by the signal itself, as the cleanup handler intends (it re-raises it): not a crash of another kind.
    QCOMPARE(p.exitStatus(), QProcess::CrashExit);
    QCOMPARE(p.exitCode(), signal); // QProcess's exit code of a CrashExit is the signal's number
    QCOMPARE(QDir(temp.path()).entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot),
             QStringList{"out.csv"});
    QFile f(out);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QCOMPARE(f.readAll(), old);
}

PLAB_QTEST_GUILESS_MAIN(TestBadInputViews)
#include "tst_bad_input_views.moc"
