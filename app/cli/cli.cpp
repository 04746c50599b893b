// Argument parsing, the verb table and the top-level error policy of positionlab-cli.
#include "cli.h"

#include "atomic_file.h"
#include "bias_views.h"
#include "errors.h"

#include <omp.h>

#include <algorithm>
#include <csignal>
#include <ctime>
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
    });
}

void printOverview(std::ostream& out)
{
    out << "positionlab-cli: positional encodings and length extrapolation, headless.\n\n"
           "usage: positionlab-cli VERB [options]    (positionlab-cli VERB --help for a verb's options)\n\nverbs:\n";
    for (const auto& [name, verb] : verbTable())
        out << "  " << name << std::string(name.size() < 12 ? 12 - name.size() : 1, ' ') << verb.summary << '\n';
    out << "\nexit codes: 0 ok, 1 failure while running, 2 bad usage or input\n";
}

void printVerbHelp(const VerbDef& verb, std::ostream& out)
{
    out << "usage: " << verb.synopsis << "\n\n" << verb.summary << "\n\noptions:\n";
    for (const OptionDef& o : verb.options) {
        std::string left = (o.name == "o" ? "-o" : "--" + o.name) + (o.kind == OptionKind::Flag ? "" : " VALUE");
        out << "  " << left << std::string(left.size() < 24 ? 24 - left.size() : 1, ' ') << o.help << '\n';
    }
}

std::atomic<bool> g_interrupted{false};

extern "C" void onInterrupt(int sig)
{
    g_interrupted.store(true);
    std::signal(sig, SIG_DFL); // a second Ctrl-C kills at once (glibc's signal() would keep this handler)
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

void writeDataOutput(const ParsedArgs& args, VerbContext& ctx, bool npyAllowed,
                     const std::function<void(std::ostream&, DataFormat)>& write)
{
    if (!args.has("o")) {
        write(ctx.out, DataFormat::Csv);
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

ParsedArgs parseArgs(const VerbDef& verb, const std::vector<std::string>& argv)
{
    ParsedArgs parsed;
    auto findOption = [&](const std::string& name) -> const OptionDef* {
        for (const OptionDef& o : verb.options)
            if (o.name == name)
                return &o;
        return nullptr;
    };
    for (size_t i = 0; i < argv.size(); ++i) {
        const std::string& a = argv[i];
        const bool isOption = (a.size() > 2 && a.compare(0, 2, "--") == 0) || a == "-o";
        if (!isOption) {
            if (a.size() > 1 && a[0] == '-' && !(a[1] >= '0' && a[1] <= '9') && a[1] != '.')
                throw InputError(verb.name + ": unknown option '" + a + "' (see positionlab-cli " + verb.name + " --help)");
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
                names += (names.empty() ? "" : ", ") + (o.name == "o" ? std::string("-o") : "--" + o.name);
            throw InputError(verb.name + ": unknown option '--" + name + "'; allowed: " + names);
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
    const int count = static_cast<int>(parsed.positional.size());
    if (count < verb.minPositional || count > verb.maxPositional) {
        std::string extra = count > verb.maxPositional ? " (unexpected '" + parsed.positional[verb.maxPositional] + "')" : "";
        throw InputError(verb.name + ": expected " +
                         (verb.minPositional == verb.maxPositional ? std::to_string(verb.minPositional)
                                                                   : std::to_string(verb.minPositional) + " to " +
                                                                         std::to_string(verb.maxPositional)) +
                         " argument(s), got " + std::to_string(count) + extra + "; usage: " +
                         verb.synopsis.substr(0, verb.synopsis.find('\n')) + // the message stays one line
                         (verb.synopsis.find('\n') == std::string::npos ? "" : " (see positionlab-cli " + verb.name + " --help)"));
    }
    return parsed;
}

const std::vector<std::string>& pictureLanguages()
{
    return supportedLanguages();
}

std::string languageFromArgs(const ParsedArgs& args)
{
    return checkLanguage(args.text("lang", "en"));
}

OptionDef languageOption()
{
    return {"lang", OptionKind::Value, "image output: language of titles, axes and legends: en (default), zh_CN"};
}

std::vector<OptionDef> schemeOptions()
{
    return {
        {"heads", OptionKind::Value, "number of heads H, 1..1024 (default 8)"},
        {"bidirectional", OptionKind::Flag, "no causal mask (schemes that allow it)"},
        {"set", OptionKind::Repeated, "NAME=VALUE: a scheme parameter (see `schemes`)"},
        {"context", OptionKind::Value, "training context L (window default of local/bca, logn threshold)"},
        {"logn", OptionKind::Flag, "scale row m's scores by log(m+1)/log(context) past the context"},
    };
}

SchemeSpec schemeSpecFromArgs(const std::string& name, const ParsedArgs& args, int defaultHeads, int headDim,
                              const std::string& headDimName)
{
    const int heads = static_cast<int>(args.integer("heads", defaultHeads, 1, kMaxHeads));
    const int context = static_cast<int>(args.integer("context", 0, 1, 1 << 20));
    if (headDim > 0)
        return makeSchemeSpecForHeadDim(name, heads, args.has("bidirectional"), args.all("set"), headDim, headDimName,
                                        context, args.has("logn"));
    return makeSchemeSpec(name, heads, args.has("bidirectional"), args.all("set"), context, args.has("logn"));
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
        VerbContext ctx{out, err};
        return verb.run(parsed, ctx);
    } catch (const InputError& e) {
        err << "positionlab-cli: error: " << e.what() << '\n';
        return 2;
    } catch (const RunError& e) {
        err << "positionlab-cli: failed: " << e.what() << '\n';
        return 1;
    } catch (const std::bad_alloc&) {
        err << "positionlab-cli: failed: out of memory\n";
        return 1;
    } catch (const std::exception& e) {
        err << "positionlab-cli: failed: " << e.what() << '\n';
        return 1;
    }
}

} // namespace plab::cli
