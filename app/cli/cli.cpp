// Argument parsing, the verb table and the top-level error policy of positionlab-cli.
#include "cli.h"

#include "base/atomic_file.h"
#include "base/limits.h"
#include "base/errors.h"
#include "base/picture_limits.h"
#include "hf/hf_config.h"
#include "schemes/rotary_scaling.h"

#include <omp.h>

#include <algorithm>
#include <csignal>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <new>

namespace plab::cli {

namespace {

std::map<std::string, VerbDef>& verbTable()
{
    static std::map<std::string, VerbDef> table;
    return table;
}

void registerBuiltins()
{
    static std::once_flag once;
    std::call_once(once, [] {
        registerSchemeVerbs();
        registerModelVerbs();
        registerLessonVerbs();
        registerAttentionVerbs();
        registerSweepVerbs();
        registerTokenizeVerbs();
        registerHfVerbs();
        registerGenerateVerbs();
        registerExportVerbs();
    });
}

// Said in the overview and in the --help of every verb with a head or layer option.
const char* const kNumberingNote =
    "numbering: positions, heads (--head h = 0..H-1) and layers (--layer l = 0..layers-1) count from 0, in the "
    "options\n"
    "and in every output (CSV, JSON, messages, picture titles); the GUI shows heads and layers from 1.\n";

void printOverview(std::ostream& out)
{
    out << "positionlab-cli: positional encodings and length extrapolation, headless.\n\n"
           "usage: positionlab-cli VERB [options]    (positionlab-cli VERB --help for a verb's options)\n\nverbs:\n";
    for (const auto& [name, verb] : verbTable())
        out << "  " << name << std::string(name.size() < 12 ? 12 - name.size() : 1, ' ') << verb.summary << '\n';
    out << "\nexit codes: 0 ok, 1 failure while running, 2 bad usage or input\n" << kNumberingNote;
}

std::string optionWord(const OptionDef& o)
{
    return o.name == "o" ? "-o" : "--" + o.name;
}

// "--length N", "--bidirectional", "--set NAME=VALUE ...": an option as the usage line and --help show it.
std::string optionText(const OptionDef& o)
{
    if (o.kind == OptionKind::Flag)
        return optionWord(o);
    return optionWord(o) + " " + (o.metavar.empty() ? "VALUE" : o.metavar) +
           (o.kind == OptionKind::Repeated ? " ..." : "");
}

const OptionDef* findOption(const VerbDef& verb, const std::string& name)
{
    for (const OptionDef& o : verb.options)
        if (o.name == name)
            return &o;
    return nullptr;
}

std::vector<UsageForm> formsOf(const VerbDef& verb)
{
    if (!verb.forms.empty())
        return verb.forms;
    UsageForm all{verb.words, {}, {}, {}};
    for (const OptionDef& o : verb.options)
        all.options.push_back(o.name);
    return {all};
}

bool mentions(const std::string& words, const OptionDef& o)
{
    const std::string word = optionWord(o);
    for (size_t at = words.find(word); at != std::string::npos; at = words.find(word, at + 1)) {
        const size_t end = at + word.size();
        if ((at == 0 || words[at - 1] == ' ' || words[at - 1] == '|' || words[at - 1] == '[') &&
            (end == words.size() || words[end] == ' ' || words[end] == ']'))
            return true;
    }
    return false;
}

std::string formLine(const VerbDef& verb, const UsageForm& form)
{
    std::string line = "positionlab-cli " + verb.name + (form.words.empty() ? "" : " " + form.words);
    std::string required;
    for (const std::string& name : form.options) {
        const OptionDef* o = findOption(verb, name);
        if (!o || mentions(form.words, *o))
            continue;
        if (o->required)
            required += " " + optionText(*o);
        else
            line += " [" + optionText(*o) + "]";
    }
    return line + required;
}

// The form in use: the one named by the first word, else the one named by a given option, else the plain one.
const UsageForm* formInUse(const std::vector<UsageForm>& forms, const ParsedArgs& args)
{
    if (!args.positional.empty())
        for (const UsageForm& f : forms)
            if (!f.whenWord.empty() && f.whenWord == args.positional[0])
                return &f;
    for (const UsageForm& f : forms)
        if (!f.whenOption.empty() && args.has(f.whenOption))
            return &f;
    for (const UsageForm& f : forms)
        if (f.whenWord.empty() && f.whenOption.empty())
            return &f;
    return nullptr;
}

std::string joinOptions(const std::vector<std::string>& names)
{
    std::string text;
    for (const std::string& n : names)
        text += (text.empty() ? "" : ", ") + (n == "o" ? std::string("-o") : "--" + n);
    return text;
}

// Options the form in use would ignore are refused, naming them and where they apply.
void refuseUnusedOptions(const VerbDef& verb, const ParsedArgs& args)
{
    const std::vector<UsageForm> forms = formsOf(verb);
    const UsageForm* form = formInUse(forms, args);
    if (!form)
        return; // an unknown first word: the verb refuses it with its own message
    std::vector<std::string> unused;
    std::string elsewhere;
    for (const auto& [name, values] : args.values) {
        if (std::find(form->options.begin(), form->options.end(), name) != form->options.end())
            continue;
        unused.push_back(name);
        for (const UsageForm& f : forms)
            if (&f != form && std::find(f.options.begin(), f.options.end(), name) != f.options.end() &&
                elsewhere.empty())
                elsewhere = "positionlab-cli " + verb.name + (f.words.empty() ? "" : " " + f.words);
    }
    if (unused.empty())
        return;
    const std::string here = "positionlab-cli " + verb.name + (form->words.empty() ? "" : " " + form->words);
    throw InputError(verb.name + ": " + joinOptions(unused) + (unused.size() == 1 ? " is" : " are") + " not used by `" +
                     here + "` and would be ignored" +
                     (elsewhere.empty() ? std::string() : " (used by `" + elsewhere + "`)") +
                     "; allowed here: " + joinOptions(form->options));
}

std::string extensionOf(const std::string& path)
{
    const auto dot = path.find_last_of('.');
    const auto slash = path.find_last_of('/');
    std::string ext = (dot == std::string::npos || (slash != std::string::npos && dot < slash)) ? "" : path.substr(dot);
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
    return ext;
}

// The outputs of the form in use: its own when it has them, else the verb's.
const std::vector<OutputDef>& outputsInUse(const VerbDef& verb, const ParsedArgs& args)
{
    const UsageForm* form = formInUse(verb.forms, args); // none for a verb of one form: its outputs are the verb's
    return form && !form->outputs.empty() ? form->outputs : verb.outputs;
}

bool contains(const std::vector<std::string>& list, const std::string& item)
{
    return std::find(list.begin(), list.end(), item) != list.end();
}

// Every output path of the form in use, before any work. An extension that another form writes is named with that
// form, as refuseUnusedOptions names where an option applies: "(.png is written by `positionlab-cli eval ...`)".
void checkOutputsInUse(const VerbDef& verb, const ParsedArgs& args)
{
    for (const OutputDef& output : outputsInUse(verb, args)) {
        if (!args.has(output.option))
            continue;
        const std::string path = args.text(output.option), ext = extensionOf(path);
        std::string elsewhere;
        if (!contains(output.extensions, ext))
            for (const UsageForm& f : verb.forms)
                for (const OutputDef& other : f.outputs)
                    if (elsewhere.empty() && other.option == output.option && contains(other.extensions, ext))
                        elsewhere = ext + " is written by `positionlab-cli " + verb.name +
                                    (f.words.empty() ? "" : " " + f.words) + "`";
        checkOutputDef(output, path, elsewhere);
        // --json asks for JSON: with -o, that is FILE.json (a verb's --json of another kind, train's progress lines,
        // has no .json output).
        if (args.has("json") && contains(output.extensions, std::string(".json")) && ext != ".json")
            throw InputError(verb.name + ": --json contradicts -" + (output.option.size() > 1 ? "-" : "") +
                             output.option + " " + path +
                             "; allowed: --json without -o (JSON on stdout), --json with -o FILE.json, or -o FILE "
                             "without --json (the format of its extension)");
    }
}

// Picture options (--width, --colormap, --lang ...) with a data output would be ignored: refused.
void refusePictureOptionsWithData(const VerbDef& verb, const ParsedArgs& args)
{
    if (outputsInUse(verb, args).empty() || (args.has("o") && isImagePath(args.text("o"))))
        return;
    std::vector<std::string> given;
    for (const OptionDef& o : verb.options)
        if (o.pictureOnly && args.has(o.name))
            given.push_back(o.name);
    if (!given.empty())
        throw InputError(verb.name + ": " + joinOptions(given) + (given.size() == 1 ? " applies" : " apply") +
                         " only to a picture output (-o FILE.png, .svg or .pdf) and would be ignored here");
}

void printVerbHelp(const VerbDef& verb, std::ostream& out)
{
    out << "usage: " << usageText(verb) << "\n\n" << verb.summary << "\n";
    if (!verb.notes.empty())
        out << "\n" << verb.notes << (verb.notes.back() == '\n' ? "" : "\n");
    out << "\noptions:\n";
    bool numbered = false;
    for (const OptionDef& o : verb.options) {
        const std::string left = optionText(o);
        out << "  " << left << std::string(std::max<size_t>(2, 28 - std::min<size_t>(28, left.size())), ' ') << o.help
            << '\n';
        numbered = numbered || o.name == "head" || o.name == "layer";
    }
    if (numbered)
        out << '\n' << kNumberingNote;
}

std::atomic<bool> g_interrupted{false};

extern "C" void onInterrupt(int sig)
{
    g_interrupted.store(true);
    // A second Ctrl-C ends the process at once (glibc's signal() would keep this handler), but first removes the
    // temporary of a save it interrupts (a plain SIG_DFL left ".m.safetensors.tmp..." beside the checkpoint).
    std::signal(sig, plab::removeTemporariesAndDieHandler());
}

} // namespace

std::atomic<bool>& interruptFlag()
{
    return g_interrupted;
}

InterruptGuard::InterruptGuard()
{
    g_interrupted = false;
    m_int = std::signal(SIGINT, onInterrupt);
    m_term = std::signal(SIGTERM, onInterrupt);
}

InterruptGuard::~InterruptGuard()
{
    std::signal(SIGINT, m_int);
    std::signal(SIGTERM, m_term);
}

std::string ParsedArgs::text(const std::string& name, const std::string& fallback) const
{
    auto it = values.find(name);
    return it == values.end() ? fallback : it->second.back();
}

const std::vector<std::string>& ParsedArgs::all(const std::string& name) const
{
    static const std::vector<std::string> empty;
    auto it = values.find(name);
    return it == values.end() ? empty : it->second;
}

long long ParsedArgs::integer(const std::string& name, long long fallback, long long lo, long long hi) const
{
    if (!has(name))
        return fallback;
    return parseInteger(text(name), name, lo, hi);
}

double ParsedArgs::number(const std::string& name, double fallback) const
{
    if (!has(name))
        return fallback;
    return parseNumber(text(name), name);
}

std::vector<int> ParsedArgs::integerList(const std::string& name, const std::vector<int>& fallback, long long lo,
                                         long long hi) const
{
    if (!has(name))
        return fallback;
    std::vector<int> out;
    const std::string s = text(name);
    size_t start = 0;
    while (true) {
        const size_t comma = s.find(',', start);
        out.push_back(static_cast<int>(parseInteger(s.substr(start, comma - start), name, lo, hi)));
        if (comma == std::string::npos)
            break;
        start = comma + 1;
    }
    return out;
}

namespace {
ImageExporter& imageExporter()
{
    static ImageExporter exporter;
    return exporter;
}
} // namespace

bool isImagePath(const std::string& path)
{
    auto endsWith = [&](const char* ext) {
        const size_t n = std::char_traits<char>::length(ext);
        if (path.size() < n)
            return false;
        for (size_t i = 0; i < n; ++i)
            if (std::tolower(static_cast<unsigned char>(path[path.size() - n + i])) != ext[i])
                return false;
        return true;
    };
    return endsWith(".png") || endsWith(".svg") || endsWith(".pdf");
}

void setImageExporter(ImageExporter exporter)
{
    imageExporter() = std::move(exporter);
}

void exportImage(const std::string& verb, const ParsedArgs& args, const std::string& path)
{
    if (!imageExporter())
        throw InputError("-o " + path + ": this build has no image renderer (built without the GUI library)");
    imageExporter()(verb, args, path);
}

OptionDef jsonOption()
{
    return {"json", OptionKind::Flag, "JSON on stdout instead of CSV: what -o FILE.json writes"};
}

void writeDataOutput(const ParsedArgs& args, VerbContext& ctx, bool npyAllowed,
                     const std::function<void(std::ostream&, DataFormat)>& write)
{
    if (!args.has("o")) {
        write(ctx.out, args.has("json") ? DataFormat::Json : DataFormat::Csv); // --json where a verb offers it
        return;
    }
    const std::string path = args.text("o");
    const DataFormat format = dataFormatForPath(path, npyAllowed);
    AtomicFile file(path);
    write(file.stream(), format);
    file.commit();
}

void registerVerb(VerbDef verb)
{
    verbTable()[verb.name] = std::move(verb);
}

namespace {

// The number of words after the verb, with the usage's first line when it is wrong.
void checkPositionalCount(const VerbDef& verb, const ParsedArgs& parsed)
{
    const int count = static_cast<int>(parsed.positional.size());
    if (count < verb.minPositional || count > verb.maxPositional) {
        const std::string usage = usageText(verb);
        std::string extra =
            count > verb.maxPositional ? " (unexpected '" + parsed.positional[verb.maxPositional] + "')" : "";
        throw InputError(
            verb.name + ": expected " +
            (verb.minPositional == verb.maxPositional
                 ? std::to_string(verb.minPositional)
                 : std::to_string(verb.minPositional) + " to " + std::to_string(verb.maxPositional)) +
            " argument(s), got " + std::to_string(count) + extra +
            "; usage: " + usage.substr(0, usage.find('\n')) + // the message stays one line
            (usage.find('\n') == std::string::npos ? "" : " (see positionlab-cli " + verb.name + " --help)"));
    }
}

} // namespace

ParsedArgs parseArgs(const VerbDef& verb, const std::vector<std::string>& argv)
{
    ParsedArgs parsed;
    auto findOption = [&](const std::string& name) { return plab::cli::findOption(verb, name); };
    for (size_t i = 0; i < argv.size(); ++i) {
        const std::string& a = argv[i];
        const bool isOption = (a.size() > 2 && a.compare(0, 2, "--") == 0) || a == "-o";
        if (!isOption) {
            if (a.size() > 1 && a[0] == '-' && !(a[1] >= '0' && a[1] <= '9') && a[1] != '.')
                throw InputError(verb.name + ": unknown option '" + a + "' (see positionlab-cli " + verb.name +
                                 " --help)");
            parsed.positional.push_back(a);
            continue;
        }
        std::string name = a == "-o" ? "o" : a.substr(2);
        std::string inlineValue;
        bool hasInline = false;
        if (auto eq = name.find('='); eq != std::string::npos) {
            inlineValue = name.substr(eq + 1);
            name = name.substr(0, eq);
            hasInline = true;
        }
        if (name == "output")
            name = "o";
        const OptionDef* def = findOption(name);
        if (!def) {
            std::string names;
            for (const OptionDef& o : verb.options)
                names += (names.empty() ? "" : ", ") + optionWord(o);
            // An option of a few other verbs (train's and eval's --task on sweep) is named as theirs, so the refusal
            // says where it applies; one most verbs read (-o) needs no list.
            std::string readBy;
            int readers = 0;
            for (const auto& [other, otherVerb] : verbTable())
                if (other != verb.name && plab::cli::findOption(otherVerb, name)) {
                    readBy += (readBy.empty() ? "" : ", ") + other;
                    ++readers;
                }
            readBy = readers >= 1 && readers <= 4 ? " (read by " + readBy + ", not by " + verb.name + ")" : "";
            // As the user spelled it: '-o', '--output', '--frob' (without an '=VALUE')
            throw InputError(verb.name + ": unknown option '" + a.substr(0, a.find('=')) + "'" + readBy +
                             "; allowed: " + names);
        }
        if (def->kind == OptionKind::Flag) {
            if (hasInline)
                throw InputError(verb.name + ": option --" + name + " takes no value");
            parsed.values[name] = {"1"};
            continue;
        }
        std::string value;
        if (hasInline) {
            value = inlineValue;
        } else {
            if (i + 1 >= argv.size())
                throw InputError(verb.name + ": option " + (name == "o" ? "-o" : "--" + name) + " needs a value");
            value = argv[++i];
        }
        if (def->kind == OptionKind::Repeated)
            parsed.values[name].push_back(value);
        else
            parsed.values[name] = {value};
    }
    if (parsed.has("lang")) // refused before any work, whatever the output
        languageFromArgs(parsed);
    checkPositionalCount(verb, parsed);
    for (const OptionDef& o : verb.options)
        if (o.required && !parsed.has(o.name))
            throw InputError(verb.name + ": " + optionText(o) + " is required (see positionlab-cli " + verb.name +
                             " --help)");
    refuseUnusedOptions(verb, parsed);
    refusePictureOptionsWithData(verb, parsed);
    return parsed;
}

std::string usageText(const VerbDef& verb)
{
    std::string text;
    for (const UsageForm& form : formsOf(verb))
        text += (text.empty() ? "" : "\n       ") + formLine(verb, form);
    return text;
}

void checkOutputPath(const std::string& option, const std::string& path, const std::vector<std::string>& extensions,
                     const std::string& note)
{
    const std::string ext = extensionOf(path);
    if (std::find(extensions.begin(), extensions.end(), ext) == extensions.end()) {
        std::string allowed;
        for (const std::string& e : extensions)
            allowed += (allowed.empty() ? "" : ", ") + e;
        throw InputError((option == "o" ? "-o " : "--" + option + " ") + path + ": unsupported extension '" + ext +
                         "'; allowed: " + allowed + (note.empty() ? "" : " (" + note + ")"));
    }
    checkWritable(path);
}

void checkOutputDef(const OutputDef& output, const std::string& path, const std::string& note)
{
    if (!output.nameRule)
        return checkOutputPath(output.option, path, output.extensions, note);
    output.nameRule(path, output.option == "o" ? "-o" : "--" + output.option);
    checkWritable(path);
}

void refuseOptions(const std::string& verb, const ParsedArgs& args, const std::vector<std::string>& options,
                   const std::string& reason)
{
    std::vector<std::string> given;
    for (const std::string& o : options)
        if (args.has(o))
            given.push_back(o);
    if (!given.empty())
        throw InputError(verb + ": " + joinOptions(given) + " cannot be used here: " + reason);
}

std::vector<std::string> dataExtensions(bool npy)
{
    return npy ? std::vector<std::string>{".csv", ".json", ".npy"} : std::vector<std::string>{".csv", ".json"};
}

std::vector<std::string> pictureExtensions()
{
    return {".png", ".svg", ".pdf"};
}

std::vector<std::string> dataAndPictureExtensions(bool npy)
{
    std::vector<std::string> all = dataExtensions(npy);
    for (const std::string& e : pictureExtensions())
        all.push_back(e);
    return all;
}

std::vector<OptionDef> pictureOptions()
{
    const std::string range = std::to_string(kMinPictureSide) + ".." + std::to_string(kMaxPictureSide);
    return {{"width", OptionKind::Value,
             "picture output: width in pixels, " + range + " (default depends on the picture)", "PX", true},
            {"height", OptionKind::Value,
             "picture output: height in pixels, " + range + " (default depends on the picture)", "PX", true},
            {"lang", OptionKind::Value, "picture output: language of titles, axes and legends: en (default), zh_CN",
             "CODE", true}};
}

std::vector<OptionDef> pictureStyleOptions()
{
    return {{"dpi", OptionKind::Value, "picture output: resolution stored in PNG / used for SVG and PDF (default 96)",
             "DPI", true},
            {"dark", OptionKind::Flag, "picture output: the dark palette", {}, true}};
}

const std::vector<std::string>& pictureLanguages()
{
    return supportedLanguages();
}

std::string languageFromArgs(const ParsedArgs& args)
{
    return checkLanguage(args.text("lang", "en"));
}

OptionDef threadsOption(const std::string& when, const std::string& note)
{
    return {"threads", OptionKind::Value,
            (when.empty() ? "" : when + ": ") + "OpenMP threads (default: all cores)" +
                (note.empty() ? "" : "; " + note),
            "T"};
}

std::vector<OptionDef> checkpointOptions(const std::string& help)
{
    return {{"checkpoint", OptionKind::Value,
             help + "; or a Hugging Face model folder DIR (lengths and positions then count its tokens)",
             "MODEL.safetensors"},
            {"layer", OptionKind::Value, "with --checkpoint: layer l = 0..layers-1 (default the last)", "l"},
            corpusOption("with --checkpoint", "its validation part is read (a folder: in its tokenizer's tokens)")};
}

OptionDef precisionOption()
{
    return {"precision", OptionKind::Value,
            "a model folder's matrix products: f32 (default) or bf16 (BF16 weights and product inputs, float32 "
            "accumulation: about twice as fast, logits within the tolerance docs/your-model.md states; generate's "
            "key/value cache is then BF16 too; needs avx512_bf16)",
            "f32|bf16"};
}

HfPrecision precisionFromArgs(const ParsedArgs& args)
{
    try {
        return hfPrecisionFromName(args.text("precision", "f32"));
    } catch (const InputError& e) {
        throw InputError(std::string("--precision: ") + e.what());
    }
}

OptionDef corpusOption(const std::string& when, const std::string& note)
{
    return {"corpus", OptionKind::Value,
            (when.empty() ? "" : when + ": ") + "UTF-8 text file (default: the Debian fortunes files)" +
                (note.empty() ? "" : "; " + note),
            "FILE"};
}

std::vector<OptionDef> schemeOptions()
{
    return {
        {"scheme", OptionKind::Value, "the scheme, instead of the SCHEME word (see `schemes`)", "S"},
        {"heads", OptionKind::Value, "number of heads H, 1..1024 (default 8)", "H"},
        {"bidirectional", OptionKind::Flag, "no causal mask (schemes that allow it)"},
        {"set", OptionKind::Repeated, "a scheme parameter (see `schemes`)", "NAME=VALUE"},
        contextOption(),
        {"logn", OptionKind::Flag, "scale row m's scores by log(m+1)/log(L) past the context L (needs --context)"},
        scalingOption(),
    };
}

OptionDef contextOption(const std::string& when)
{
    return {
        "context", OptionKind::Value,
        (when.empty() ? "" : when + ": ") +
            "training context L (window default of local/bca, logn threshold, L of the rotary methods that read it)",
        "L"};
}

OptionDef scalingOption()
{
    return {"scaling", OptionKind::Value,
            "rope/xpos length extension: none, pi, ntk, dynamic-ntk, yarn, llama3, rerope, leaky-rerope, self-extend "
            "(default none; its parameters by --set, see `frequencies`)",
            "METHOD"};
}

void checkScalingSet(const RotaryMethodInfo& method, const std::string& setting)
{
    try {
        checkMethodSetting(method, setting);
    } catch (const InputError& e) {
        throw InputError("--set " + setting + ": " + e.what() +
                         (method.method == RotaryMethod::None ? "; name one with --scaling METHOD" : ""));
    }
}

std::vector<std::string> schemeOptionNames()
{
    std::vector<std::string> names;
    for (const OptionDef& o : schemeOptions())
        names.push_back(o.name);
    return names;
}

std::string schemeFromArgs(const ParsedArgs& args, size_t index, const std::string& usage)
{
    const bool word = args.positional.size() > index;
    if (word && args.has("scheme") && args.text("scheme") != args.positional[index])
        throw InputError(usage + ": the scheme is given twice and differently, as '" + args.positional[index] +
                         "' and --scheme " + args.text("scheme") + "; give it once");
    if (word)
        return args.positional[index];
    if (args.has("scheme"))
        return args.text("scheme");
    throw InputError(usage + ": a scheme is required: the SCHEME word or --scheme S (see positionlab-cli schemes)");
}

int contextFromArgs(const ParsedArgs& args)
{
    if (args.has("logn") && !args.has("context"))
        throw InputError("--logn needs --context L: the training context past which row m's scores are scaled by "
                         "log(m+1)/log(L)");
    return static_cast<int>(args.integer("context", 0, 1, kMaxLength));
}

SchemeWord schemeWordFromArgs(const std::string& word, const ParsedArgs& args)
{
    // SCHEME may name a method too, "rope+yarn" (as the compare view does); --scaling then must agree.
    const auto [scheme, labelMethod] = splitSchemeLabel(word);
    SchemeWord out{scheme, std::nullopt};
    if (labelMethod != "none")
        out.method = labelMethod;
    if (args.has("scaling")) {
        if (out.method && args.text("scaling") != *out.method)
            throw InputError("--scaling = " + args.text("scaling") + " disagrees with the method in " + word +
                             "; allowed: one of them, or both the same");
        out.method = args.text("scaling");
    }
    return out;
}

void refuseUnreadContext(const std::string& verb, const std::vector<std::string>& schemes, const ParsedArgs& args)
{
    std::vector<std::string> settings = args.all("set");
    if (args.has("window")) // bench attention's --window W is window=W
        settings.push_back("window=" + args.text("window"));
    if (!args.has("context") || schemesReadContext(schemes, args.has("logn"), args.text("scaling", "none"), settings))
        return;
    std::string named, windowed, methods;
    for (const std::string& s : schemes)
        named += (named.empty() ? "" : ", ") + s;
    for (const SchemeInfo& s : schemeCatalog())
        if (s.hasWindow)
            windowed += (windowed.empty() ? "" : ", ") + s.name;
    for (const RotaryMethodInfo& m : rotaryMethodCatalog())
        if (m.usesContext)
            methods += (methods.empty() ? "" : ", ") + m.name;
    throw InputError(verb + ": --context " + args.text("context") + " is not read by " + named +
                     " and would be ignored; allowed with --logn (its threshold), the schemes " + windowed +
                     " (their window's default, unless the window is set) or the rotary methods " + methods +
                     " (their L)");
}

std::string qkFromArgs(const std::string& verb, const ParsedArgs& args, const std::string& scheme)
{
    const std::string qk = args.text("qk", "zero");
    if (qk != "zero" && qk != "random")
        throw InputError("--qk " + qk + " is not allowed; allowed: zero, random");
    if (qk != "zero")
        return qk;
    refuseOptions(verb, args, {"seed", "head-dim"},
                  "--seed and --head-dim set the random q and k of --qk random, and --qk zero draws none");
    // A rotary dim rotates q and k, which --qk zero leaves zero: it would change nothing, and it must equal the head
    // dim, which only --qk random takes.
    const SchemeInfo& info = schemeByName(splitSchemeLabel(scheme).first);
    std::string dim;
    if (info.rotary && findAssignment(args.all("set"), "dim", dim))
        throw InputError(verb + ": --set dim=" + dim + " cannot be used with --qk zero: q.k = 0, so " + info.name +
                         "'s rotary dim changes nothing; allowed: --qk random --head-dim " + dim + " (" + info.name +
                         "'s dim follows the head dim)");
    return qk;
}

SchemeSpec schemeSpecFromArgs(const std::string& name, const ParsedArgs& args, int defaultHeads, int headDim,
                              const std::string& headDimName)
{
    const int heads = static_cast<int>(args.integer("heads", defaultHeads, 1, kMaxHeads));
    const int context = contextFromArgs(args);
    const SchemeWord word = schemeWordFromArgs(name, args);
    const std::string scaling = word.method.value_or("none");
    if (headDim > 0)
        return makeSchemeSpecForHeadDim(word.scheme, heads, args.has("bidirectional"), args.all("set"), headDim,
                                        headDimName, context, args.has("logn"), scaling);
    return makeSchemeSpec(word.scheme, heads, args.has("bidirectional"), args.all("set"), context, args.has("logn"),
                          scaling);
}

SchemeSpec frequenciesSpecFromArgs(const ParsedArgs& args)
{
    if (args.has("model")) {
        // A model folder's own rope (its dims, theta, scaling and longrope's lists); --scaling/--set as with eval.
        refuseOptions("frequencies", args, {"dim", "base", "context"}, "--model DIR's config.json sets them");
        const HfConfig config = readHfConfig(args.text("model"));
        if (config.scheme != "rope")
            throw InputError("frequencies --model " + args.text("model") + ": its positions are " + config.scheme +
                             "; rotary frequencies exist for rope models only");
        const std::string scaling = args.text("scaling");
        const RotaryMethodInfo& method = rotaryMethodByName(scaling.empty() ? config.scaling : scaling);
        for (const std::string& a : args.all("set"))
            checkScalingSet(method, a);
        return hfPositionSpec(config, scaling, args.all("set"));
    }
    refuseScalingLayers(args, "frequencies without --model");
    // --set sets rope's keep and rotary-fraction and the method's parameters, as its help says: rope's dim and base
    // are --dim and --base (a --set dim= beside --dim would be ignored).
    const std::string scaling = args.text("scaling", "none");
    for (const std::string& a : args.all("set")) {
        const std::string name = a.substr(0, a.find('='));
        if (name == "dim" || name == "base")
            throw InputError("frequencies: --set " + a + " is not allowed; rope's " + name + " is --" + name +
                             " (allowed with --set: keep, rotary-fraction and the parameters of the --scaling method)");
        const std::vector<ParamInfo>& ropeParams = schemeInfo(SchemeKind::Rope).params;
        if (std::none_of(ropeParams.begin(), ropeParams.end(), [&](const ParamInfo& p) { return p.name == name; }))
            checkScalingSet(rotaryMethodByName(scaling), a);
    }
    std::vector<std::string> sets = args.all("set");
    if (args.has("dim"))
        sets.push_back("dim=" + std::to_string(args.integer("dim", 64, 2, 4096)));
    if (args.has("base"))
        sets.push_back("base=" + exactText(args.number("base", 10000)));
    const int context = static_cast<int>(args.integer("context", 0, 1, kMaxLength));
    return makeSchemeSpec("rope", 1, false, sets, context, false, scaling);
}

int frequenciesLengthFromArgs(const ParsedArgs& args, const SchemeSpec& spec)
{
    return static_cast<int>(args.integer("length", scalingContext(spec), 1, kMaxLength));
}

OptionDef allowLongOption()
{
    return {"allow-long", OptionKind::Flag,
            "run even when the work estimate exceeds 10 minutes (refused by default, before computing)"};
}

void checkWork(const ParsedArgs& args, double flops, const std::string& what, const std::string& howToProceed)
{
    if (!args.has("allow-long"))
        checkWorkEstimate(flops, what, "allowed: " + howToProceed + ", or --allow-long to run it anyway");
}

void checkWorkSeconds(const ParsedArgs& args, double seconds, const std::string& what, const std::string& howToProceed)
{
    if (!args.has("allow-long"))
        checkEstimatedSeconds(seconds, what, "allowed: " + howToProceed + ", or --allow-long to run it anyway");
}

int applyThreadsOption(const ParsedArgs& args)
{
    if (args.has("threads"))
        omp_set_num_threads(static_cast<int>(args.integer("threads", 0, 1, 1024)));
    return omp_get_max_threads();
}

double processCpuSeconds()
{
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + t.tv_nsec * 1e-9;
}

std::string cliMessage(const ParameterError& e)
{
    const std::string& parameter = e.parameter();
    const std::string message = e.what();
    if (parameter.empty())
        return message;
    // "scaling = 'x' is not a known method" names its parameter already: the option is that name with its dashes,
    // also after a prefix ("cell scheme=alibi seed=1: scaling = yarn is not allowed ...").
    const std::string named = parameter + " = ";
    if (message.rfind(named, 0) == 0)
        return "--" + message;
    if (const size_t at = message.find(": " + named); at != std::string::npos)
        return message.substr(0, at + 2) + "--" + message.substr(at + 2);
    return "--" + parameter + ": " + message;
}

int runCli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err)
{
    registerBuiltins();
    try {
        if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
            printOverview(args.empty() ? err : out);
            return args.empty() ? 2 : 0;
        }
        if (args[0] == "--version") {
            out << "positionlab-cli 0.1.0\n";
            return 0;
        }
        auto it = verbTable().find(args[0]);
        if (it == verbTable().end()) {
            std::string names;
            for (const auto& [name, verb] : verbTable())
                names += (names.empty() ? "" : ", ") + name;
            throw InputError("unknown verb '" + args[0] + "'; verbs: " + names);
        }
        const VerbDef& verb = it->second;
        std::vector<std::string> rest(args.begin() + 1, args.end());
        if (std::find(rest.begin(), rest.end(), "--help") != rest.end() ||
            std::find(rest.begin(), rest.end(), "-h") != rest.end()) {
            printVerbHelp(verb, out);
            return 0;
        }
        const ParsedArgs parsed = parseArgs(verb, rest);
        checkOutputsInUse(verb, parsed); // before any work: no minutes of computing for an unwritable file
        VerbContext ctx{out, err};
        return verb.run(parsed, ctx);
    } catch (const InputError& e) {
        err << "positionlab-cli: error: " << cliMessage(e) << '\n';
        return 2;
    } catch (const RunError& e) {
        err << "positionlab-cli: failed: " << cliMessage(e) << '\n';
        return 1;
    } catch (const std::bad_alloc&) {
        err << "positionlab-cli: failed: out of memory\n";
        return 1;
    } catch (const std::exception& e) {
        err << "positionlab-cli: failed: " << e.what() << '\n';
        return 1;
    }
}

bool isModelFolder(const std::string& path)
{
    std::error_code ec;
    return std::filesystem::is_directory(path, ec);
}

} // namespace plab::cli
