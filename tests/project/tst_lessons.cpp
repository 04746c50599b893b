// Lessons: parsing and checking of lesson files (core/lessons/lessons.h), the lessons that ship in both languages, and
// the CLI's `lessons` and `render lesson` verbs (a broken file: exit 2 naming the file and the line).
#include "cli_runner.h"
#include "base/errors.h"
#include "lessons/lessons.h"
#include "test_main.h"

#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>

using namespace plab;

namespace {

const char* const kGoodLesson = R"(# ALiBi's slopes

ALiBi adds a bias.

```json
{"view": "bias", "scheme": "alibi", "heads": 8, "head": 7, "length": 64,
 "caption": "Head 7"}
```

Some prose between, with a code block that is not a state:

```sh
positionlab-cli bias alibi
```

```json
{"view": "compare", "schemes": ["local", "alibi"], "difference": true, "context": 32,
 "params": {"window": 8}}
```
)";

void writeFile(const QString& path, const QByteArray& text)
{
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(text);
}

} // namespace

class TestLessons : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void parsesStatesAndProse();
    void renderArguments_data();
    void renderArguments();
    void refusesBrokenLessons_data();
    void refusesBrokenLessons();
    void twinsReplaceEnglish();
    void shippedLessons_data();
    void shippedLessons();
    void twinsHaveTheSameStates();
    void cliListsLessons();
    void cliRendersALesson();
    void cliRendersDropThePositions_data();
    void cliRendersDropThePositions();
    void cliRendersNewSchemeLessons_data();
    void cliRendersNewSchemeLessons();
    void cliRefusesABrokenFolder();
};

void TestLessons::parsesStatesAndProse()
{
    const Lesson l = parseLesson({"05-alibi-slopes.md", kGoodLesson});
    QCOMPARE(l.number, 5);
    QCOMPARE(l.slug, std::string("alibi-slopes"));
    QCOMPARE(l.language, std::string("en"));
    QCOMPARE(l.title, std::string("ALiBi's slopes"));
    QCOMPARE(l.states.size(), size_t(2));
    // prose, state 0, prose (with the sh block kept as prose), state 1
    QCOMPARE(l.segments.size(), size_t(4));
    QCOMPARE(l.segments[1].state, 0);
    QVERIFY(l.segments[2].markdown.find("positionlab-cli bias alibi") != std::string::npos);
    QCOMPARE(l.segments[3].state, 1);
    const LessonState& bias = l.states[0];
    QCOMPARE(bias.line, 6);
    QCOMPARE(bias.view, LessonView::Bias);
    QCOMPARE(bias.head, 7);
    QCOMPARE(bias.length, 64);
    QCOMPARE(bias.caption, std::string("Head 7"));
    const LessonState& compare = l.states[1];
    QCOMPARE(compare.line, 17);
    QCOMPARE(compare.schemes, (std::vector<std::string>{"local", "alibi"}));
    QVERIFY(compare.difference);
    QCOMPARE(compare.settings(), std::vector<std::string>{"window=8"});
    QCOMPARE(parseLesson({"05-alibi-slopes.zh_CN.md", kGoodLesson}).language, std::string("zh_CN"));
}

void TestLessons::renderArguments_data()
{
    QTest::addColumn<QString>("state");
    QTest::addColumn<QString>("arguments");
    QTest::newRow("bias")
        << R"({"view": "bias", "scheme": "kerple-power", "params": {"r1": 0.5, "r2": 1.5}, "length": 16})"
        << "bias kerple-power --length 16 --heads 8 --head 0 --set r1=0.5 --set r2=1.5";
    QTest::newRow("bias, logn") << R"({"view": "bias", "scheme": "alibi", "context": 64, "logn": true, "heads": 4})"
                                << "bias alibi --length 32 --heads 4 --head 0 --context 64 --logn";
    QTest::newRow("t5 buckets, bidirectional")
        << R"({"view": "bias", "scheme": "t5", "buckets": true, "bidirectional": true})"
        << "bias t5 --length 32 --heads 8 --head 0 --bidirectional --buckets";
    QTest::newRow("compare") << R"({"view": "compare", "schemes": ["local", "alibi"], "difference": true})"
                             << "compare local alibi --length 32 --heads 8 --head 0 --difference";
    QTest::newRow("dot")
        << R"({"view": "dot", "curves": [[64, 500], [128, 10000]], "log_x": true, "max_distance": 1000})"
        << "dot --curves 64:500,128:10000 --max-distance 1000 --log-x";
    QTest::newRow("entropy")
        << R"({"view": "entropy", "schemes": ["none", "alibi"], "lengths": [16, 256], "qk": "random", "seed": 3})"
        << "entropy none alibi --lengths 16,256 --heads 8 --head 0 --qk random --seed 3 --measure last";
    QTest::newRow("attention")
        << R"({"view": "attention", "model": "alibi", "text": "To be", "layer": 1, "repeat_to": 200})"
        << "attention --checkpoint M.safetensors --text To be --layer 1 --head 0 --repeat-to 200";
    QTest::newRow("attention, cope's positions")
        << R"({"view": "attention", "model": "cope", "text": "To be", "show": "positions"})"
        << "attention --checkpoint M.safetensors --text To be --head 0 --show positions";
    QTest::newRow("attention, the bias")
        << R"({"view": "attention", "model": "alibi", "text": "To be", "show": "bias"})"
        << "attention --checkpoint M.safetensors --text To be --head 0 --show bias";
    QTest::newRow("train") << R"({"view": "train", "schemes": ["sinusoidal", "alibi"]})"
                           << "train sinusoidal alibi --preset demo";
    // The Train tab's model options, parsed and passed on as `train` names them.
    QTest::newRow("train, NoPE every 2 and the temperature")
        << R"({"view": "train", "schemes": ["rope", "xpos"], "nope_every": 2, "attn_temperature_tuning": true,
              "floor_scale": 32})"
        << "train rope xpos --preset demo --nope-every 2 --attn-temperature-tuning --floor-scale 32 --attn-scale 0.1";
    QTest::newRow("train, ssmax and sink logit")
        << R"({"view": "train", "schemes": ["alibi"], "preset": "tiny", "task": "copy", "ssmax": true,
              "sink_logit": true})"
        << "train alibi --preset tiny --task copy --ssmax --sink-logit";
    QTest::newRow("train, every option off as written")
        << R"({"view": "train", "schemes": ["rope"], "nope_every": 0, "ssmax": false, "sink_logit": false,
              "attn_temperature_tuning": false})"
        << "train rope --preset demo";
    // rope's dim and base are render frequencies' own options; keep, rotary-fraction and a method's go by --set.
    QTest::newRow("frequencies, keep")
        << R"({"view": "frequencies", "params": {"dim": 64, "keep": 0.25}, "context": 32})"
        << "frequencies --dim 64 --set keep=0.25 --context 32";
    QTest::newRow("frequencies, method and length")
        << R"({"view": "frequencies", "scheme": "rope+yarn", "params": {"rotary-fraction": 0.5, "base": 500,
              "factor": 4}, "context": 64, "length": 256})"
        << "frequencies --scaling yarn --base 500 --set factor=4 --set rotary-fraction=0.5 --context 64 --length 256";
    QTest::newRow("fire curve") << R"({"view": "bias", "scheme": "fire", "curve": true, "heads": 4, "head": 2})"
                                << "bias fire --length 32 --heads 4 --head 2 --curve --checkpoint M.safetensors";
}

void TestLessons::renderArguments()
{
    QFETCH(QString, state);
    QFETCH(QString, arguments);
    const std::string text = "# T\n\n```json\n" + state.toStdString() + "\n```\n";
    const Lesson l = parseLesson({"01-t.md", text});
    const std::vector<std::string> args = lessonRenderArguments(l.states.at(0), "M.safetensors");
    QStringList words;
    for (const std::string& w : args)
        words << QString::fromStdString(w);
    QCOMPARE(words.join(QLatin1Char(' ')), arguments);
}

void TestLessons::refusesBrokenLessons_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("where"); // the message starts with this
    QTest::addColumn<QString>("what");  // and contains this
    const QString head = QStringLiteral("# Title\n\nProse.\n\n```json\n");
    QTest::newRow("bad JSON, line of the fault")
        << "03-x.md" << head + "{\"view\": \"bias\",\n \"scheme\": \"alibi\"\n \"length\": 3}\n```\n"
        << "03-x.md:8:"
        << "not valid JSON";
    QTest::newRow("unknown view") << "03-x.md" << head + "{\"view\": \"heatmap\"}\n```\n"
                                  << "03-x.md:6:"
                                  << "allowed: bias, compare, dot, entropy, attention, train";
    QTest::newRow("unknown show") << "03-x.md"
                                  << head + "{\"view\": \"attention\", \"model\": \"cope\", \"text\": \"a\",\n"
                                            "\"show\": \"gates\"}\n```\n"
                                  << "03-x.md:7:"
                                  << "\"show\" = 'gates' is not allowed; allowed: weights, bias, positions";
    QTest::newRow("positions without cope")
        << "03-x.md"
        << head + "{\"view\": \"attention\", \"model\": \"alibi\", \"text\": \"a\", \"show\": \"positions\"}\n```\n"
        << "03-x.md:6:"
        << "show = positions needs a scheme with contextual positions (cope); alibi has none";
    QTest::newRow("no view") << "03-x.md" << head + "{\"scheme\": \"alibi\"}\n```\n"
                             << "03-x.md:6:"
                             << "has no \"view\"";
    QTest::newRow("unknown scheme") << "03-x.md" << head + "{\"view\": \"bias\",\n \"scheme\": \"rop\"}\n```\n"
                                    << "03-x.md:7:"
                                    << "unknown scheme 'rop'";
    QTest::newRow("unknown scheme in a list")
        << "03-x.md" << head + "{\"view\": \"compare\",\n\"schemes\": [\"alibi\", \"xx\"]}\n```\n"
        << "03-x.md:7:"
        << "unknown scheme 'xx'";
    QTest::newRow("unknown key") << "03-x.md"
                                 << head + "{\"view\": \"bias\", \"scheme\": \"alibi\",\n \"lenght\": 3}\n```\n"
                                 << "03-x.md:7:"
                                 << "unknown key \"lenght\"";
    QTest::newRow("key of another view") << "03-x.md" << head + "{\"view\": \"dot\", \"schemes\": [\"alibi\"]}\n```\n"
                                         << "03-x.md:6:"
                                         << "unknown key \"schemes\" for the dot view";
    QTest::newRow("parameter out of range")
        << "03-x.md" << head + "{\"view\": \"bias\", \"scheme\": \"kerple-power\",\n\"params\": {\"r2\": 3}}\n```\n"
        << "03-x.md:7:"
        << "r2 = 3 is out of range; allowed: (0, 2]";
    QTest::newRow("unknown parameter")
        << "03-x.md" << head + "{\"view\": \"bias\", \"scheme\": \"alibi\", \"params\": {\"slope\": 1}}\n```\n"
        << "03-x.md:6:"
        << "has no parameter 'slope'";
    QTest::newRow("head past heads")
        << "03-x.md" << head + "{\"view\": \"bias\", \"scheme\": \"alibi\", \"heads\": 4, \"head\": 4}\n```\n"
        << "03-x.md:6:"
        << "\"head\" = 4 is out of range; allowed: integers in [0, 3]";
    QTest::newRow("length not an integer")
        << "03-x.md" << head + "{\"view\": \"bias\", \"scheme\": \"alibi\", \"length\": 1.5}\n```\n"
        << "03-x.md:6:"
        << "\"length\" = 1.5 is not an integer";
    QTest::newRow("logn without context")
        << "03-x.md" << head + "{\"view\": \"bias\", \"scheme\": \"alibi\", \"logn\": true}\n```\n"
        << "03-x.md:6:"
        << "\"logn\" needs \"context\"";
    QTest::newRow("xpos is causal only")
        << "03-x.md" << head + "{\"view\": \"bias\", \"scheme\": \"xpos\", \"bidirectional\": true}\n```\n"
        << "03-x.md:6:"
        << "xpos";
    QTest::newRow("entropy rope dim must be the head dim")
        << "03-x.md" << head + "{\"view\": \"entropy\", \"schemes\": [\"rope\"], \"params\": {\"dim\": 32}}\n```\n"
        << "03-x.md:6:"
        << "must equal the entropy view's head dim";
    QTest::newRow("buckets on alibi") << "03-x.md"
                                      << head + "{\"view\": \"bias\", \"scheme\": \"alibi\", \"buckets\": true}\n```\n"
                                      << "03-x.md:6:"
                                      << "for the t5 scheme only";
    QTest::newRow("compare needs two") << "03-x.md" << head + "{\"view\": \"compare\", \"schemes\": [\"alibi\"]}\n```\n"
                                       << "03-x.md:6:"
                                       << "2 to 4 scheme names";
    QTest::newRow("odd dot dim") << "03-x.md" << head + "{\"view\": \"dot\", \"curves\": [[63, 10000]]}\n```\n"
                                 << "03-x.md:6:"
                                 << "even dim";
    QTest::newRow("unknown preset")
        << "03-x.md" << head + "{\"view\": \"train\", \"schemes\": [\"alibi\"], \"preset\": \"huge\"}\n```\n"
        << "03-x.md:6:"
        << "allowed: demo, tiny, quick, large";
    // The model options of a train state: core's validateModelConfig decides, the message names the lesson, the
    // line of the key, the key, its value and what is allowed.
    QTest::newRow("nope_every past the layers")
        << "14-x.md" << head + "{\"view\": \"train\", \"schemes\": [\"rope\"],\n \"nope_every\": 5}\n```\n"
        << "14-x.md:7:"
        << "\"nope_every\" = 5 is not allowed with scheme rope and preset demo (2 layers): nope-every = 5 is out of "
           "range; allowed: 0 (off) or integers in [2, 2]";
    QTest::newRow("nope_every on alibi")
        << "14-x.md" << head + "{\"view\": \"train\", \"schemes\": [\"rope\", \"alibi\"], \"nope_every\": 2}\n```\n"
        << "14-x.md:6:"
        << "\"nope_every\" = 2 is not allowed with scheme alibi and preset demo (2 layers): nope-every = 2 needs a "
           "rotary scheme";
    QTest::newRow("nope_every not an integer")
        << "14-x.md" << head + "{\"view\": \"train\", \"schemes\": [\"rope\"], \"nope_every\": 2.5}\n```\n"
        << "14-x.md:6:"
        << "\"nope_every\" = 2.5 is not an integer; allowed: 0 (off) or K >= 2";
    QTest::newRow("temperature without NoPE layers")
        << "14-x.md"
        << head + "{\"view\": \"train\", \"schemes\": [\"rope\"], \"attn_temperature_tuning\": true}\n```\n"
        << "14-x.md:6:"
        << "\"attn_temperature_tuning\" = true is not allowed with scheme rope and preset demo (2 layers): "
           "attn_temperature_tuning acts on NoPE layers only";
    QTest::newRow("floor_scale without the temperature")
        << "14-x.md"
        << head + "{\"view\": \"train\", \"schemes\": [\"rope\"], \"nope_every\": 2,\n \"floor_scale\": 32}\n```\n"
        << "14-x.md:7:"
        << "\"floor_scale\" sets Llama 4's temperature; allowed only with \"attn_temperature_tuning\": true";
    QTest::newRow("floor_scale out of range")
        << "14-x.md"
        << head +
               "{\"view\": \"train\", \"schemes\": [\"rope\"], \"nope_every\": 2, \"attn_temperature_tuning\": true,\n"
               " \"floor_scale\": 0.5}\n```\n"
        << "14-x.md:7:"
        << "\"floor_scale\" = 0.5 is not allowed with scheme rope and preset demo (2 layers): attention temperature: "
           "floor_scale = 0.5 is out of range; allowed: [1, 1000000000]";
    QTest::newRow("ssmax not a boolean") << "14-x.md"
                                         << head + "{\"view\": \"train\", \"schemes\": [\"rope\"], \"ssmax\": 1}\n```\n"
                                         << "14-x.md:6:"
                                         << "\"ssmax\" = 1 is not allowed; allowed: true, false";
    QTest::newRow("model options on another view")
        << "14-x.md" << head + "{\"view\": \"bias\", \"scheme\": \"rope\", \"nope_every\": 2}\n```\n"
        << "14-x.md:6:"
        << "unknown key \"nope_every\" for the bias view";
    QTest::newRow("attention without text")
        << "03-x.md" << head + "{\"view\": \"attention\", \"model\": \"alibi\"}\n```\n"
        << "03-x.md:6:"
        << "needs \"text\"";
    QTest::newRow("frequencies of xpos") << "03-x.md"
                                         << head + "{\"view\": \"frequencies\", \"scheme\": \"xpos\"}\n```\n"
                                         << "03-x.md:6:"
                                         << "draws rope: rope or rope+METHOD";
    QTest::newRow("frequencies, keep out of range")
        << "03-x.md" << head + "{\"view\": \"frequencies\",\n \"params\": {\"keep\": 1.5}}\n```\n"
        << "03-x.md:7:"
        << "keep = 1.5 is out of range";
    QTest::newRow("frequencies, a bias key") << "03-x.md" << head + "{\"view\": \"frequencies\", \"heads\": 4}\n```\n"
                                             << "03-x.md:6:"
                                             << "unknown key \"heads\" for the frequencies view";
    QTest::newRow("curve of alibi") << "03-x.md"
                                    << head + "{\"view\": \"bias\", \"scheme\": \"alibi\", \"curve\": true}\n```\n"
                                    << "03-x.md:6:"
                                    << "\"curve\" is for the fire scheme only";
    QTest::newRow("not an object") << "03-x.md" << head + "[1, 2]\n```\n"
                                   << "03-x.md:6:"
                                   << "must be a JSON object";
    QTest::newRow("unclosed block") << "03-x.md" << head + "{\"view\": \"dot\"}\n"
                                    << "03-x.md:5:"
                                    << "never closed";
    QTest::newRow("no title") << "03-x.md"
                              << "Prose first.\n\n```json\n{\"view\": \"dot\"}\n```\n"
                              << "03-x.md:1:"
                              << "starts with its title line";
    QTest::newRow("no state") << "03-x.md"
                              << "# Title\n\nOnly prose.\n"
                              << "03-x.md:3:"
                              << "no ```json state block";
    QTest::newRow("bad file name") << "alibi.md" << head + "{\"view\": \"dot\"}\n```\n"
                                   << "alibi.md:1:"
                                   << "NN-slug.md";
}

void TestLessons::refusesBrokenLessons()
{
    QFETCH(QString, name);
    QFETCH(QString, text);
    QFETCH(QString, where);
    QFETCH(QString, what);
    try {
        parseLesson({name.toStdString(), text.toStdString()});
        QFAIL("the broken lesson was accepted");
    } catch (const InputError& e) {
        const QString message = QString::fromUtf8(e.what());
        QVERIFY2(message.startsWith(where), qPrintable(message));
        QVERIFY2(message.contains(what), qPrintable(message));
    }
}

void TestLessons::twinsReplaceEnglish()
{
    const std::string state = "\n\n```json\n{\"view\": \"dot\"}\n```\n";
    const std::vector<LessonSource> sources = {
        {"01-a.md", "# One" + state},      {"01-a.zh_CN.md", "# 一" + state},
        {"02-b.md", "# Two" + state},      {"03-c.md", "# Three\n\n```json\n{\"view\": \"nope\"}\n```\n"},
        {"04-d.zh_CN.md", "# 四" + state}, {"02-other.md", "# Two again" + state},
    };
    const LessonSet en = readLessons(sources, "en");
    QCOMPARE(en.lessons.size(), size_t(2));
    QCOMPARE(en.lessons[0].title, std::string("One"));
    QCOMPARE(en.lessons[1].title, std::string("Two")); // by name 02-b.md comes first; 02-other.md is refused
    QCOMPARE(en.errors.size(), size_t(2));             // 03-c broken; 02 taken twice
    QCOMPARE(en.brokenFiles.size(), en.errors.size());
    const LessonSet zh = readLessons(sources, "zh_CN");
    QCOMPARE(zh.lessons.size(), size_t(3)); // 1 (twin), 2, 4 (only in Chinese)
    QCOMPARE(zh.lessons[0].title, std::string("一"));
    QCOMPARE(zh.lessons[0].language, std::string("zh_CN"));
    QCOMPARE(zh.lessons[2].number, 4);
    QVERIFY_THROWS_EXCEPTION(InputError, readLessons(sources, "fr"));
}

void TestLessons::shippedLessons_data()
{
    QTest::addColumn<QString>("language");
    QTest::newRow("English") << "en";
    QTest::newRow("Chinese") << "zh_CN";
}

void TestLessons::shippedLessons()
{
    QFETCH(QString, language);
    const LessonSet set = readLessons(builtinLessonSources(), language.toStdString());
    for (const std::string& e : set.errors)
        qWarning("%s", e.c_str());
    QVERIFY(set.errors.empty());
    QVERIFY2(set.lessons.size() >= 10, qPrintable(QStringLiteral("%1 lessons").arg(set.lessons.size())));
    for (const Lesson& l : set.lessons) {
        QCOMPARE(l.language, language.toStdString()); // every lesson has its Chinese twin
        QVERIFY(!l.title.empty());
        QVERIFY(!l.states.empty());
    }
}

// A twin shows the same figures: the same states in the same order, only captions and prose differ.
void TestLessons::twinsHaveTheSameStates()
{
    const LessonSet en = readLessons(builtinLessonSources(), "en");
    const LessonSet zh = readLessons(builtinLessonSources(), "zh_CN");
    QCOMPARE(zh.lessons.size(), en.lessons.size());
    for (size_t i = 0; i < en.lessons.size(); ++i) {
        const Lesson& a = en.lessons[i];
        const Lesson& b = zh.lessons[i];
        QCOMPARE(b.number, a.number);
        QCOMPARE(b.slug, a.slug);
        QCOMPARE(b.states.size(), a.states.size());
        for (size_t k = 0; k < a.states.size(); ++k) {
            nlohmann::json x = a.states[k].json, y = b.states[k].json;
            x.erase("caption");
            y.erase("caption");
            if (x.contains("text") && y.contains("text")) { // the text a model reads may be translated
                x.erase("text");
                y.erase("text");
            }
            QVERIFY2(x == y, qPrintable(QString::fromStdString(b.file + ": state " + std::to_string(k + 1) + " " +
                                                               y.dump() + " differs from " + x.dump())));
        }
    }
}

void TestLessons::cliListsLessons()
{
    for (const QString& language : {QStringLiteral("en"), QStringLiteral("zh_CN")}) {
        const plab::test::CliResult r = plab::test::runCli({"lessons", "--json", "--lang", language});
        QCOMPARE(r.exitCode, 0);
        const nlohmann::json doc = nlohmann::json::parse(r.out.toStdString());
        QVERIFY(doc.at("lessons").is_array());
        QVERIFY(doc.at("lessons").size() >= 10);
        for (const nlohmann::json& l : doc.at("lessons")) {
            QVERIFY(l.at("number").is_number_integer());
            QVERIFY(l.at("figures").is_number_integer());
            QVERIFY(l.at("figures").get<int>() >= 1);
            QCOMPARE(QString::fromStdString(l.at("language").get<std::string>()), language);
        }
    }
    const plab::test::CliResult text = plab::test::runCli({"lessons"});
    QCOMPARE(text.exitCode, 0);
    QVERIFY(text.out.count('\n') >= 10);
}

// Lesson 13's figures render headless in both languages, its DroPE recipe on a few steps: every figure a picture.
void TestLessons::cliRendersDropThePositions_data()
{
    QTest::addColumn<QString>("language");
    QTest::newRow("en") << "en";
    QTest::newRow("zh_CN") << "zh_CN";
}

void TestLessons::cliRendersDropThePositions()
{
    QFETCH(QString, language);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString out = dir.filePath(QStringLiteral("out"));
    const plab::test::CliResult r = plab::test::runCli({"render", "lesson", "13", "--lang", language, "--steps", "4",
                                                        "-o", out, "--width", "600", "--height", "400", "--quiet"});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const std::vector<std::string> views{"compare", "entropy", "train"};
    for (size_t figure = 1; figure <= views.size(); ++figure) {
        const QString stem = out + QStringLiteral("/13-drop-the-positions-fig%1").arg(figure);
        const QImage image(stem + QStringLiteral(".png"));
        QVERIFY2(!image.isNull(), qPrintable(stem));
        QCOMPARE(image.width(), 600);
        QFile sidecar(stem + QStringLiteral(".json"));
        QVERIFY(sidecar.open(QIODevice::ReadOnly));
        const nlohmann::json j = nlohmann::json::parse(sidecar.readAll().toStdString());
        QCOMPARE(j.at("state").at("view").get<std::string>(), views[figure - 1]);
        if (views[figure - 1] == "train") // the recipe on passkey, as the command says
            QVERIFY2(j.at("command").get<std::string>().find("--task passkey --recalibration 12.5") !=
                         std::string::npos,
                     j.at("command").get<std::string>().c_str());
    }
}

// Lessons 14 (NoPE layers, trained with NoPE every 2 and the temperature, keep, rotary-fraction) and 15 (FIRE's matrix
// and learned curve, CoPE's positions and FoX's bias on a text of demo models trained for a few steps) render headless
// in both languages: the frequencies states through `render frequencies`, the curve through `render bias --curve` with
// a fire model trained for a few steps beside the output.
void TestLessons::cliRendersNewSchemeLessons_data()
{
    QTest::addColumn<QString>("lesson");
    QTest::addColumn<QString>("language");
    QTest::addColumn<QStringList>("views");
    QTest::addColumn<QStringList>("commands"); // a piece of each figure's command
    const QStringList nope{"compare", "train", "train", "frequencies", "frequencies"};
    const QStringList nopeCommands{"compare rope none", "train rope --preset demo --nope-every 2 --lang",
                                   "--nope-every 2 --attn-temperature-tuning --floor-scale 32 --attn-scale 0.1",
                                   "frequencies --dim 64 --set keep=0.25",
                                   "frequencies --dim 64 --set rotary-fraction=0.25"};
    const QStringList fire{"bias", "bias", "attention", "attention"};
    const QStringList fireCommands{"bias fire --length 64", "--curve --checkpoint", "--show positions", "--show bias"};
    // Lesson 16: a window's band on rope, a NoPE global layer beside it, Gemma 3's two tables, an RNoPE-SWA model.
    const QStringList hybrid{"bias", "compare", "frequencies", "frequencies", "train"};
    const QStringList hybridCommands{"bias rope --length 48 --heads 8 --head 0 --set window=8",
                                     "compare rope none --length 48", "frequencies --base 10000 --dim 64",
                                     "frequencies --scaling pi --base 1e+06 --dim 64 --set factor=8",
                                     "train rope --preset demo --layer-types sliding,full --window 8 --full-scheme none"};
    for (const QString language : {"en", "zh_CN"}) {
        QTest::addRow("16 %s", qPrintable(language))
            << "16-sliding-global-layers" << language << hybrid << hybridCommands;
        QTest::addRow("14 %s", qPrintable(language))
            << "14-nope-layers-temperature" << language << nope << nopeCommands;
        QTest::addRow("15 %s", qPrintable(language))
            << "15-learned-contextual-positions" << language << fire << fireCommands;
    }
}

void TestLessons::cliRendersNewSchemeLessons()
{
    QFETCH(QString, lesson);
    QFETCH(QString, language);
    QFETCH(QStringList, views);
    QFETCH(QStringList, commands);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString out = dir.filePath(QStringLiteral("out"));
    const plab::test::CliResult r =
        plab::test::runCli({"render", "lesson", lesson.left(2), "--lang", language, "--steps", "4", "-o", out,
                            "--width", "600", "--height", "400", "--quiet"});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    for (int figure = 1; figure <= views.size(); ++figure) {
        const QString stem = out + QStringLiteral("/%1-fig%2").arg(lesson).arg(figure);
        const QImage image(stem + QStringLiteral(".png"));
        QVERIFY2(!image.isNull(), qPrintable(stem));
        QCOMPARE(image.width(), 600);
        QFile sidecar(stem + QStringLiteral(".json"));
        QVERIFY(sidecar.open(QIODevice::ReadOnly));
        const nlohmann::json j = nlohmann::json::parse(sidecar.readAll().toStdString());
        QCOMPARE(QString::fromStdString(j.at("state").at("view").get<std::string>()), views[figure - 1]);
        const QString command = QString::fromStdString(j.at("command").get<std::string>());
        QVERIFY2(command.contains(commands[figure - 1]), qPrintable(command));
    }
}

void TestLessons::cliRendersALesson()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    writeFile(dir.filePath(QStringLiteral("05-alibi-slopes.md")), kGoodLesson);
    const QString out = dir.filePath(QStringLiteral("out"));
    const plab::test::CliResult r = plab::test::runCli(
        {"render", "lesson", "5", "--folder", dir.path(), "-o", out, "--width", "400", "--height", "300"});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    for (int figure = 1; figure <= 2; ++figure) {
        const QString stem = out + QStringLiteral("/05-alibi-slopes-fig%1").arg(figure);
        QImage image(stem + QStringLiteral(".png"));
        QVERIFY2(!image.isNull(), qPrintable(stem));
        QCOMPARE(image.width(), 400);
        QFile sidecar(stem + QStringLiteral(".json"));
        QVERIFY(sidecar.open(QIODevice::ReadOnly));
        const nlohmann::json j = nlohmann::json::parse(sidecar.readAll().toStdString());
        QCOMPARE(j.at("figure").get<int>(), figure);
        QCOMPARE(j.at("state").at("view").get<std::string>(), std::string(figure == 1 ? "bias" : "compare"));
        QVERIFY(j.at("command").get<std::string>().rfind("positionlab-cli render ", 0) == 0);
    }
    const plab::test::CliResult missing =
        plab::test::runCli({"render", "lesson", "6", "--folder", dir.path(), "-o", out});
    QCOMPARE(missing.exitCode, 2);
    QVERIFY2(missing.err.contains("there is no lesson 6; lessons: 5"), missing.err.constData());
}

void TestLessons::cliRefusesABrokenFolder()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    writeFile(dir.filePath(QStringLiteral("01-good.md")), kGoodLesson);
    writeFile(dir.filePath(QStringLiteral("02-bad.md")),
              "# Bad\n\n```json\n{\"view\": \"bias\",\n \"scheme\": \"rop\"}\n```\n");
    const plab::test::CliResult list = plab::test::runCli({"lessons", "--folder", dir.path()});
    QCOMPARE(list.exitCode, 2);
    QVERIFY2(list.out.contains("good"), list.out.constData()); // the good lesson is still listed
    QVERIFY2(list.err.contains("02-bad.md:5: unknown scheme 'rop'"), list.err.constData());
    const plab::test::CliResult render = plab::test::runCli(
        {"render", "lesson", "2", "--folder", dir.path(), "-o", dir.filePath(QStringLiteral("out"))});
    QCOMPARE(render.exitCode, 2);
    QVERIFY2(render.err.contains("02-bad.md:5:"), render.err.constData());
    const plab::test::CliResult noFolder =
        plab::test::runCli({"lessons", "--folder", dir.filePath(QStringLiteral("none"))});
    QCOMPARE(noFolder.exitCode, 2);
    QVERIFY2(noFolder.err.contains("not a folder"), noFolder.err.constData());
}

PLAB_QTEST_GUILESS_MAIN(TestLessons)
#include "tst_lessons.moc"
