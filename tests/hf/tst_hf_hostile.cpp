// Hostile Hugging Face folders (issue 29 s.6's fuzz findings) refused with a short message, and Pythia as shipped.
#include "base/errors.h"
#include "base/npy.h"
#include "cli_runner.h"
#include "hf/hf_config.h"
#include "hf/hf_model.h"
#include "hf/tokenizer.h"
#include "test_main.h"

#include <QRegularExpression>
#include <QtTest>

#include <nlohmann/json.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

using namespace plab;
namespace fs = std::filesystem;
using nlohmann::json;
using nlohmann::ordered_json;

namespace {

std::string hfData(const std::string& name)
{
    return std::string(POSITIONLAB_TEST_DATA) + "/hf/" + name;
}

std::string readText(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

void writeText(const std::string& path, const std::string& text)
{
    std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

// `core` wrapped in `depth` arrays: [[[...core...]]].
std::string nested(int depth, const std::string& core)
{
    return std::string(depth, '[') + core + std::string(depth, ']');
}

std::string repeated(const std::string& piece, int times)
{
    std::string out;
    for (int i = 0; i < times; ++i)
        out += piece;
    return out;
}

// A JSON file with the value at `pointer` replaced by `raw` text (which need not be JSON nlohmann would build: the
// point is a file as an attacker writes it).
void setRaw(const std::string& path, const std::string& pointer, const std::string& raw)
{
    ordered_json doc = ordered_json::parse(readText(path));
    doc[ordered_json::json_pointer(pointer)] = "@@RAW@@";
    std::string text = doc.dump(2);
    text.replace(text.find("\"@@RAW@@\""), 9, raw);
    writeText(path, text);
}

void setJson(const std::string& path, const std::string& pointer, const ordered_json& value)
{
    ordered_json doc = ordered_json::parse(readText(path));
    doc[ordered_json::json_pointer(pointer)] = value;
    writeText(path, doc.dump(2));
}

// A safetensors file as (name, dtype, shape, bytes) in file order, read and written without the core's reader.
struct RawTensor {
    std::string name, dtype;
    std::vector<int64_t> shape;
    std::string bytes;
};

std::vector<RawTensor> readRawSafetensors(const std::string& path)
{
    const std::string file = readText(path);
    uint64_t n = 0;
    std::memcpy(&n, file.data(), 8);
    const ordered_json header = ordered_json::parse(file.substr(8, n));
    std::vector<RawTensor> tensors;
    for (const auto& [name, entry] : header.items()) {
        if (name == "__metadata__")
            continue;
        const auto begin = entry["data_offsets"][0].get<size_t>(), end = entry["data_offsets"][1].get<size_t>();
        tensors.push_back({name, entry["dtype"], entry["shape"].get<std::vector<int64_t>>(),
                           file.substr(8 + n + begin, end - begin)});
    }
    return tensors;
}

void writeRawSafetensors(const std::string& path, const std::vector<RawTensor>& tensors)
{
    ordered_json header = ordered_json::object();
    std::string data;
    for (const RawTensor& t : tensors) {
        header[t.name] = {
            {"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {data.size(), data.size() + t.bytes.size()}}};
        data += t.bytes;
    }
    std::string text = header.dump();
    text.append((8 - text.size() % 8) % 8, ' ');
    const uint64_t n = text.size();
    writeText(path, std::string(reinterpret_cast<const char*>(&n), 8) + text + data);
}

// What a row opens: config.json alone, config.json and its positions (what inspect shows), the whole model, the
// tokenizer, or inspect's list of skipped tensors.
enum class Target { Config, Positions, Model, Tokenizer, Inspect };

struct Hostile {
    Target target;
    std::string folder; // the tests/data/hf folder copied and then broken
    std::function<void(const std::string& dir)> breakIt;
};

std::function<void(const std::string&)> configRaw(const std::string& pointer, const std::string& raw)
{
    return [=](const std::string& dir) { setRaw(dir + "/config.json", pointer, raw); };
}

std::function<void(const std::string&)> configSet(const std::string& pointer, const ordered_json& value)
{
    return [=](const std::string& dir) { setJson(dir + "/config.json", pointer, value); };
}

std::function<void(const std::string&)> tokenizerRaw(const std::string& pointer, const std::string& raw)
{
    return [=](const std::string& dir) { setRaw(dir + "/tokenizer.json", pointer, raw); };
}

// A `kind` Sequence (normalizer, pre_tokenizer, decoder, post_processor) nested `depth` deep around one plain step.
std::function<void(const std::string&)> nestedSequence(const std::string& kind, int depth)
{
    static const std::map<std::string, std::pair<std::string, std::string>> lists = {
        {"normalizer", {"normalizers", "{\"type\":\"Lowercase\"}"}},
        {"pre_tokenizer", {"pretokenizers", "{\"type\":\"Digits\",\"individual_digits\":false}"}},
        {"decoder", {"decoders", "{\"type\":\"Fuse\"}"}},
        {"post_processor", {"processors", "{\"type\":\"ByteLevel\"}"}}};
    const auto& [list, leaf] = lists.at(kind);
    return [=](const std::string& dir) {
        std::string raw;
        for (int i = 0; i < depth; ++i)
            raw += "{\"type\":\"Sequence\",\"" + list + "\":[";
        raw += leaf;
        for (int i = 0; i < depth; ++i)
            raw += "]}";
        setRaw(dir + "/tokenizer.json", "/" + kind, raw);
    };
}

// s.6's crashes: values and Sequences nested deep in every JSON file of a folder.
void addNestingRows(std::map<std::string, Hostile>& rows)
{
    const std::string deep1 = nested(100000, "1");
    rows.insert({
        // s.6's 11 crashes: values nested 100000 deep (the messages once dumped them whole, recursing per level)
        {"config hidden_size nested 100000", {Target::Config, "qwen2", configRaw("/hidden_size", deep1)}},
        {"config n_embd nested 100000", {Target::Config, "gpt2", configRaw("/n_embd", deep1)}},
        {"config hidden_act nested 100000",
         {Target::Config, "qwen2", configRaw("/hidden_act", nested(100000, "\"silu\""))}},
        {"config tie_word_embeddings nested 100000",
         {Target::Config, "qwen2", configRaw("/tie_word_embeddings", nested(100000, "true"))}},
        {"config rope_scaling.factor nested 200000",
         {Target::Config, "mistral_linear", configRaw("/rope_scaling/factor", nested(200000, "2"))}},
        {"tokenizer merge nested 100000", {Target::Tokenizer, "gpt2", tokenizerRaw("/model/merges/0", deep1)}},
        {"tokenizer vocab id nested 100000", {Target::Tokenizer, "gpt2", tokenizerRaw("/model/vocab/on", deep1)}},
        {"tokenizer added token id nested 100000",
         {Target::Tokenizer, "gpt2", tokenizerRaw("/added_tokens/0/id", deep1)}},
        {"tokenizer normalizer Sequence 12000 deep", {Target::Tokenizer, "gpt2", nestedSequence("normalizer", 12000)}},
        // Sequences within the JSON limit but past the reader's own bound of 16
        {"tokenizer normalizer Sequence 20 deep", {Target::Tokenizer, "gpt2", nestedSequence("normalizer", 20)}},
        {"tokenizer pre_tokenizer Sequence 20 deep", {Target::Tokenizer, "gpt2", nestedSequence("pre_tokenizer", 20)}},
        {"tokenizer decoder Sequence 20 deep", {Target::Tokenizer, "gpt2", nestedSequence("decoder", 20)}},
        {"tokenizer post_processor Sequence 20 deep",
         {Target::Tokenizer, "gpt2", nestedSequence("post_processor", 20)}},
        {"safetensors header nested 100000",
         {Target::Model, "gpt2",
          [](const std::string& dir) {
              std::string header = "{\"a\":" + nested(100000, "0") + "}";
              header.append((8 - header.size() % 8) % 8, ' ');
              const uint64_t n = header.size();
              writeText(dir + "/model.safetensors", std::string(reinterpret_cast<const char*>(&n), 8) + header);
          }}},
        {"index weight_map nested 100000",
         {Target::Model, "llama_yarn_v5_shards",
          [](const std::string& dir) {
              setRaw(dir + "/model.safetensors.index.json", "/weight_map/model.norm.weight",
                     nested(100000, "\"model-00001-of-00002.safetensors\""));
          }}},
    });
}

// Excerpts instead of whole values, and ids past a tokenizer's declared size.
void addIdAndExcerptRows(std::map<std::string, Hostile>& rows)
{
    rows.insert({
        // an excerpt, not the whole value
        {"config hidden_size a 100 KB array",
         {Target::Config, "qwen2", configRaw("/hidden_size", "[" + repeated("7,", 50000) + "7]")}},
        {"config hidden_size a 100000-digit number",
         {Target::Config, "qwen2", configRaw("/hidden_size", std::string(100000, '7'))}},
        {"config hidden_size 60 deep", {Target::Config, "qwen2", configRaw("/hidden_size", nested(60, "1"))}},
        // s.6's 2 KB tokenizer.json asking for 32 GiB
        {"tokenizer vocab id 2^30", {Target::Tokenizer, "gpt2", tokenizerRaw("/model/vocab/on", "1073741824")}},
        {"tokenizer added token id 2^25", {Target::Tokenizer, "gpt2", tokenizerRaw("/added_tokens/0/id", "33554432")}},
        {"tokenizer template id 2^40",
         {Target::Tokenizer, "gpt2",
          tokenizerRaw(
              "/post_processor",
              R"({"type":"BertProcessing","cls":["<|endoftext|>",1099511627776],"sep":["<|endoftext|>",1]})")}},
    });
}

// Sizes whose products overflow, and s.6's rough messages.
void addSizeAndMessageRows(std::map<std::string, Hostile>& rows)
{
    rows.insert({
        // s.6's undefined behaviour: sizes near 2^30 whose products overflow
        {"config sizes near 2^30",
         {Target::Config, "qwen2",
          [](const std::string& dir) {
              for (const char* key : {"hidden_size", "intermediate_size", "vocab_size"})
                  setJson(dir + "/config.json", std::string("/") + key, 1 << 30);
              setJson(dir + "/config.json", "/num_hidden_layers", 1 << 30);
          }}},
        {"config head_dim x heads past 2^30",
         {Target::Config, "qwen2",
          [](const std::string& dir) { setJson(dir + "/config.json", "/head_dim", 1 << 30); }}},
        {"config gpt2 4 x n_embd past 2^30", {Target::Config, "gpt2", configSet("/n_embd", 1 << 29)}},
        // s.6's rough messages
        {"config model_type 7", {Target::Config, "qwen2", configSet("/model_type", 7)}},
        {"config truncated",
         {Target::Config, "qwen2",
          [](const std::string& dir) {
              const std::string text = readText(dir + "/config.json");
              writeText(dir + "/config.json", text.substr(0, text.size() / 2));
          }}},
        {"tokenizer truncated",
         {Target::Tokenizer, "gpt2",
          [](const std::string& dir) {
              const std::string text = readText(dir + "/tokenizer.json");
              writeText(dir + "/tokenizer.json", text.substr(0, 1000));
          }}},
        {"config rope_theta 2^63", {Target::Positions, "qwen2", configRaw("/rope_theta", "9223372036854775808")}},
    });
}

// Families and tensors out of scope, and a tensor the forward reads stored as BOOL.
void addScopeRows(std::map<std::string, Hostile>& rows)
{
    rows.insert({
        // families out of scope, by model_type, with the reason
        {"config mixtral", {Target::Config, "qwen2", configSet("/model_type", "mixtral")}},
        {"config qwen3_moe", {Target::Config, "qwen2", configSet("/model_type", "qwen3_moe")}},
        {"config gpt_oss", {Target::Config, "qwen2", configSet("/model_type", "gpt_oss")}},
        {"config deepseek_v3", {Target::Config, "qwen2", configSet("/model_type", "deepseek_v3")}},
        {"config jamba", {Target::Config, "qwen2", configSet("/model_type", "jamba")}},
        {"config falcon_h1", {Target::Config, "qwen2", configSet("/model_type", "falcon_h1")}},
        {"config llava", {Target::Config, "qwen2", configSet("/model_type", "llava")}},
        // weights: a multimodal folder's vision tower, and a tensor the forward reads stored as BOOL
        {"model vision tower",
         {Target::Model, "qwen2",
          [](const std::string& dir) {
              auto tensors = readRawSafetensors(dir + "/model.safetensors");
              tensors.push_back({"model.vision_tower.patch_embed.weight", "F32", {2}, std::string(8, '\0')});
              writeRawSafetensors(dir + "/model.safetensors", tensors);
          }}},
        {"model read tensor stored as BOOL",
         {Target::Model, "gpt_neox",
          [](const std::string& dir) {
              auto tensors = readRawSafetensors(dir + "/model.safetensors");
              for (RawTensor& t : tensors)
                  if (t.name == "gpt_neox.final_layer_norm.bias")
                      t = {t.name, "BOOL", {32}, std::string(32, '\1')};
              writeRawSafetensors(dir + "/model.safetensors", tensors);
          }}},
    });
}

// Every hostile row by name: what it opens, from which folder, how it is broken.
const std::map<std::string, Hostile>& hostileRows()
{
    static const std::map<std::string, Hostile> rows = [] {
        std::map<std::string, Hostile> all;
        addNestingRows(all);
        addIdAndExcerptRows(all);
        addSizeAndMessageRows(all);
        addScopeRows(all);
        return all;
    }();
    return rows;
}

// Runs a row's target on `dir`; the InputError's message, or "" when it opened.
std::string openTarget(Target target, const std::string& dir)
{
    try {
        switch (target) {
        case Target::Config:
            (void)readHfConfig(dir);
            break;
        case Target::Positions:
            (void)hfPositionSpec(readHfConfig(dir));
            break;
        case Target::Model:
            (void)HfModel(dir);
            break;
        case Target::Tokenizer:
            (void)hf::Tokenizer::fromFolder(dir).encode("a, b");
            break;
        case Target::Inspect:
            (void)HfModel::unreadTensors(dir);
            break;
        }
    } catch (const InputError& e) {
        return e.what();
    }
    return {};
}

std::vector<float> floatsOf(const HfMatrix& m)
{
    return std::vector<float>(m.data(), m.data() + m.size());
}

} // namespace

class TestHfHostile : public QObject {
    Q_OBJECT

private slots:
    void hostileFolderRefused_data();
    void hostileFolderRefused();
    void pythiaAsShippedOpens();
    void inspectListsSkippedTensors_data();
    void inspectListsSkippedTensors();
};

void TestHfHostile::hostileFolderRefused_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<QStringList>("expected"); // every part must be in the message
    const auto row = [](const char* name, QStringList expected) { QTest::newRow(name) << QString(name) << expected; };
    const QString deep = "is nested deeper than 64 levels at line";
    row("config hidden_size nested 100000", {"config.json", deep});
    row("config n_embd nested 100000", {"config.json", deep});
    row("config hidden_act nested 100000", {"config.json", deep});
    row("config tie_word_embeddings nested 100000", {"config.json", deep});
    row("config rope_scaling.factor nested 200000", {"config.json", deep});
    row("tokenizer merge nested 100000", {"tokenizer.json", deep});
    row("tokenizer vocab id nested 100000", {"tokenizer.json", deep});
    row("tokenizer added token id nested 100000", {"tokenizer.json", deep});
    row("tokenizer normalizer Sequence 12000 deep", {"tokenizer.json", deep});
    row("tokenizer normalizer Sequence 20 deep", {"normalizer", "nests Sequence steps more than 16 deep"});
    row("tokenizer pre_tokenizer Sequence 20 deep", {"pre_tokenizer", "nests Sequence steps more than 16 deep"});
    row("tokenizer decoder Sequence 20 deep", {"decoder", "nests Sequence steps more than 16 deep"});
    row("tokenizer post_processor Sequence 20 deep", {"post_processor", "nests Sequence steps more than 16 deep"});
    row("safetensors header nested 100000", {"model.safetensors", "header is nested deeper than 64 levels"});
    row("index weight_map nested 100000", {"model.safetensors.index.json", deep});
    row("config hidden_size a 100 KB array",
        {"field 'hidden_size' = [7,7,7,7", "...", "is not allowed (it is an array); allowed: a positive integer"});
    row("config hidden_size a 100000-digit number", {"config.json is not valid JSON: number overflow parsing '7777"});
    row("config hidden_size 60 deep", {"field 'hidden_size' = [[[[", "is not allowed (it is an array)"});
    row("tokenizer vocab id 2^30",
        {"model.vocab.\"on\" has id 1073741824, far past the declared size; allowed: ids below 848",
         "(twice the 295 model.vocab entries + 1 added tokens, plus 256)"});
    row("tokenizer added token id 2^25",
        {"added_tokens[0] (\"<|endoftext|>\") has id 33554432, far past the declared size"});
    row("tokenizer template id 2^40", {"post_processor.cls must be [token, id]"});
    row("config sizes near 2^30", {"config.json", "is absurd; allowed: at most 2^"});
    row("config head_dim x heads past 2^30",
        {"config.json",
         "the attention width (heads x head_dim): 4 x 1073741824 values is absurd; allowed: at most 2^30"});
    row("config gpt2 4 x n_embd past 2^30", {"config.json", "the MLP width 4 x n_embd = 2147483648 is not allowed"});
    row("config model_type 7",
        {"config.json: field 'model_type' = 7 is not allowed (it is an integer); allowed: a string", "qwen2"});
    row("config truncated", {"config.json is not valid JSON at line", "column", "(byte"});
    row("tokenizer truncated", {"tokenizer.json' is not valid JSON at line 1, column 1001 (byte 1000)"});
    row("config rope_theta 2^63",
        {"config.json: scheme rope: base = 9.223372037e+18 is out of range; allowed: (1, 1e+12]", "rope_theta"});
    row("config mixtral", {"model_type \"mixtral\" is out of scope: a mixture-of-experts model"});
    row("config qwen3_moe", {"model_type \"qwen3_moe\" is out of scope: a mixture-of-experts model"});
    row("config gpt_oss", {"model_type \"gpt_oss\" is out of scope: a mixture-of-experts model"});
    row("config deepseek_v3", {"model_type \"deepseek_v3\" is out of scope: multi-head latent attention"});
    row("config jamba", {"model_type \"jamba\" is out of scope: a state-space or recurrent hybrid"});
    row("config falcon_h1", {"model_type \"falcon_h1\" is out of scope: a state-space or recurrent hybrid"});
    row("config llava", {"model_type \"llava\" is out of scope: a multimodal model"});
    row("model vision tower",
        {"tensor 'model.vision_tower.patch_embed.weight'", "is not supported: it belongs to a vision encoder"});
    row("model read tensor stored as BOOL",
        {"tensor 'gpt_neox.final_layer_norm.bias'", "has dtype BOOL, and the forward reads it; allowed: F32"});
}

// Each row: a tiny folder copied and broken as s.6's fuzz run broke it, refused with InputError naming the file and the
// problem, in a message short enough to read (never the offending value serialised whole). With HOSTILE_KEEP=DIR the
// broken folders are kept under DIR (to run another build's positionlab-cli over them).
void TestHfHostile::hostileFolderRefused()
{
    QFETCH(QString, name);
    QFETCH(QStringList, expected);
    const Hostile& row = hostileRows().at(name.toStdString());
    QTemporaryDir tmp;
    const std::string dir = (tmp.path() + "/folder").toStdString();
    fs::copy(hfData(row.folder), dir, fs::copy_options::recursive);
    row.breakIt(dir);
    if (const QByteArray keep = qgetenv("HOSTILE_KEEP"); !keep.isEmpty()) {
        QString slug = name;
        slug.replace(QRegularExpression("[^A-Za-z0-9_.]+"), "_");
        const std::string to = keep.toStdString() + "/" + slug.toStdString();
        fs::remove_all(to);
        fs::copy(dir, to, fs::copy_options::recursive);
    }
    const std::string message = openTarget(row.target, dir);
    QVERIFY2(!message.empty(), "the hostile folder opened");
    for (const QString& part : expected)
        QVERIFY2(QString::fromStdString(message).contains(part),
                 qPrintable(QString("'%1' not in: %2").arg(part, QString::fromStdString(message))));
    QVERIFY2(message.size() < 600, qPrintable(QString("a %1-byte message").arg(message.size())));
}

// make_hf_tiny.py's pythia_shipped: gpt_neox's weights plus a BOOL attention.bias, attention.masked_bias and
// attention.rotary_emb.inv_freq per layer. It opens, skips exactly those six, and its logits are the plain folder's
// (bit for bit: the same tensors are read) and match the NumPy reference within issue 19's bound.
void TestHfHostile::pythiaAsShippedOpens()
{
    const std::string shipped = hfData("pythia_shipped"), plain = hfData("gpt_neox");
    const HfModel model(shipped), twin(plain);
    std::vector<std::string> buffers;
    for (int layer = 0; layer < 2; ++layer)
        for (const char* buffer : {"bias", "masked_bias", "rotary_emb.inv_freq"})
            buffers.push_back("gpt_neox.layers." + std::to_string(layer) + ".attention." + buffer);
    std::sort(buffers.begin(), buffers.end());
    QCOMPARE(model.skippedTensors(), buffers);
    QVERIFY(twin.skippedTensors().empty());
    const std::vector<int> ids = json::parse(readText(shipped + "/ids.json")).get<std::vector<int>>();
    const SchemeSpec positions = hfPositionSpec(model.config());
    const HfMatrix ours = model.logits(ids, positions);
    QCOMPARE(floatsOf(ours), floatsOf(twin.logits(ids, positions)));
    const NpyArray ref = readNpy(shipped + "/ref_config.npy");
    QCOMPARE(ref.shape, (std::vector<int64_t>{ours.rows(), ours.cols()}));
    double largest = 0;
    for (const double v : ref.data)
        largest = std::max(largest, std::abs(v));
    const double bound = 1e-3 * std::max(1.0, largest);
    for (Eigen::Index i = 0; i < ours.size(); ++i) {
        const double diff = std::abs(static_cast<double>(ours.data()[i]) - ref.data[i]);
        if (!(diff <= bound)) // a NaN fails too
            QFAIL(qPrintable(QString("logit %1: |ours - ref| = %2 > %3").arg(i).arg(diff).arg(bound)));
    }
}

void TestHfHostile::inspectListsSkippedTensors_data()
{
    QTest::addColumn<QString>("folder");
    QTest::addColumn<int>("skipped");
    QTest::newRow("pythia as shipped") << "pythia_shipped" << 6;
    QTest::newRow("gpt_neox without buffers") << "gpt_neox" << 0;
    QTest::newRow("gpt2 (its F32 attn.bias masks)") << "gpt2" << 2;
    QTest::newRow("llama shards") << "llama_yarn_v5_shards" << 0;
    QTest::newRow("qwen3 q/k norms") << "qwen3" << 0;
}

// inspect --json's skipped_tensors come from the loader itself run over the headers (HfModel::unreadTensors): the same
// list a real load skips, through the command line.
void TestHfHostile::inspectListsSkippedTensors()
{
    QFETCH(QString, folder);
    QFETCH(int, skipped);
    const std::string dir = hfData(folder.toStdString());
    const std::vector<std::string> unread = HfModel::unreadTensors(dir);
    QCOMPARE(static_cast<int>(unread.size()), skipped);
    QCOMPARE(unread, HfModel(dir).skippedTensors());
    const test::CliResult r = test::runCli({"inspect", QString::fromStdString(dir), "--json"});
    QCOMPARE(r.exitCode, 0);
    QCOMPARE(json::parse(r.out.toStdString())["skipped_tensors"].get<std::vector<std::string>>(), unread);
}

PLAB_QTEST_GUILESS_MAIN(TestHfHostile)
#include "tst_hf_hostile.moc"
