// Parsing and checking of lesson files: Markdown prose with ```json state blocks, every error naming file and line.
#include "lessons/lessons.h"
#include "lessons/lessons_internal.h"

#include "base/errors.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

namespace plab {

using lessons_internal::joined;

namespace {

constexpr size_t kMaxLessonBytes = 1 << 20;

struct LessonName {
    int number = 0;
    std::string slug;
    std::string language;
};

std::optional<LessonName> lessonName(const std::string& path)
{
    static const std::regex pattern(R"(^([0-9]{2,4})-([a-z0-9][a-z0-9-]*)(\.([A-Za-z_]+))?\.md$)");
    const std::string base = std::filesystem::path(path).filename().string();
    std::smatch m;
    if (!std::regex_match(base, m, pattern))
        return std::nullopt;
    return LessonName{std::stoi(m[1].str()), m[2].str(), m[4].matched ? m[4].str() : std::string("en")};
}

std::vector<std::string> splitLines(const std::string& text)
{
    std::vector<std::string> lines;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        if (!line.empty() && line.back() == '\r')
            line.pop_back();
        lines.push_back(line);
    }
    return lines;
}

std::string trimmed(const std::string& s)
{
    const size_t a = s.find_first_not_of(" \t");
    if (a == std::string::npos)
        return {};
    return s.substr(a, s.find_last_not_of(" \t") - a + 1);
}

} // namespace

const std::vector<std::string>& lessonViewNames()
{
    static const std::vector<std::string> names = {"bias",      "compare", "dot",   "entropy",
                                                   "attention", "train",   "model", "frequencies"};
    return names;
}

std::string lessonViewName(LessonView view)
{
    return lessonViewNames().at(static_cast<size_t>(view));
}

Lesson parseLesson(const LessonSource& source)
{
    const std::string& name = source.name;
    const std::optional<LessonName> parsedName = lessonName(name);
    if (!parsedName)
        throw InputError(name + ":1: a lesson file is named NN-slug.md or NN-slug.LANG.md (e.g. 05-alibi-slopes.md, "
                                "05-alibi-slopes.zh_CN.md)");
    if (source.text.size() > kMaxLessonBytes)
        throw InputError(name + ":1: too large for a lesson (" + std::to_string(source.text.size()) +
                         " bytes; allowed: up to " + std::to_string(kMaxLessonBytes) + ")");
    Lesson lesson;
    lesson.file = name;
    lesson.number = parsedName->number;
    lesson.slug = parsedName->slug;
    lesson.language = parsedName->language;

    const std::vector<std::string> lines = splitLines(source.text);
    size_t i = 0;
    while (i < lines.size() && trimmed(lines[i]).empty())
        ++i;
    if (i == lines.size() || lines[i].rfind("# ", 0) != 0 || trimmed(lines[i].substr(2)).empty())
        throw InputError(name + ":" + std::to_string(i + 1) + ": a lesson starts with its title line, \"# Title\"");
    lesson.title = trimmed(lines[i].substr(2));
    ++i;

    std::string prose;
    auto flushProse = [&] {
        if (!trimmed(prose).empty())
            lesson.segments.push_back({prose, -1});
        prose.clear();
    };
    while (i < lines.size()) {
        const std::string t = trimmed(lines[i]);
        if (t.rfind("```", 0) == 0) {
            const std::string info = trimmed(t.substr(3));
            const size_t open = i;
            size_t close = i + 1;
            while (close < lines.size() && trimmed(lines[close]) != "```")
                ++close;
            if (close == lines.size())
                throw InputError(name + ":" + std::to_string(open + 1) + ": this ``` block is never closed");
            if (info == "json") {
                flushProse();
                const std::vector<std::string> body(lines.begin() + open + 1, lines.begin() + close);
                lesson.states.push_back(lessons_internal::readLessonState(name, static_cast<int>(open) + 2, body));
                lesson.segments.push_back({{}, static_cast<int>(lesson.states.size()) - 1});
            } else {
                for (size_t k = open; k <= close; ++k)
                    prose += lines[k] + "\n";
            }
            i = close + 1;
            continue;
        }
        prose += lines[i] + "\n";
        ++i;
    }
    flushProse();
    if (lesson.states.empty())
        throw InputError(name + ":" + std::to_string(lines.size()) +
                         ": the lesson has no ```json state block; every lesson shows at least one figure");
    return lesson;
}

const std::vector<std::string>& supportedLanguages()
{
    static const std::vector<std::string> languages = {"en", "zh_CN"};
    return languages;
}

std::string checkLanguage(const std::string& code)
{
    const std::vector<std::string>& allowed = supportedLanguages();
    if (std::find(allowed.begin(), allowed.end(), code) == allowed.end())
        throw InputError("language " + code + " is not allowed; allowed: " + joined(allowed), "lang");
    return code;
}

LessonSet readLessons(const std::vector<LessonSource>& sources, const std::string& language)
{
    checkLanguage(language);
    std::vector<const LessonSource*> sorted;
    for (const LessonSource& s : sources)
        sorted.push_back(&s);
    std::sort(sorted.begin(), sorted.end(), [](auto* a, auto* b) { return a->name < b->name; });

    LessonSet set;
    std::map<int, Lesson> english, translated;
    for (const LessonSource* s : sorted) {
        const std::optional<LessonName> n = lessonName(s->name);
        if (n && n->language != "en" && n->language != language)
            continue; // another language's twin
        try {
            Lesson lesson = parseLesson(*s);
            std::map<int, Lesson>& into = lesson.language == "en" ? english : translated;
            if (into.count(lesson.number)) {
                set.errors.push_back(s->name + ":1: lesson number " + std::to_string(lesson.number) + " is taken by " +
                                     into.at(lesson.number).file + "; allowed: one lesson per number");
                set.brokenFiles.push_back(s->name);
                continue;
            }
            into.emplace(lesson.number, std::move(lesson));
        } catch (const InputError& e) {
            set.errors.push_back(e.what());
            set.brokenFiles.push_back(s->name);
        }
    }
    for (auto& [number, lesson] : translated)
        english[number] = std::move(lesson); // the twin replaces the English page
    for (auto& [number, lesson] : english)
        set.lessons.push_back(std::move(lesson));
    return set;
}

std::vector<LessonSource> lessonSourcesInFolder(const std::string& folder)
{
    namespace fs = std::filesystem;
    std::error_code ec;
    if (!fs::is_directory(folder, ec))
        throw InputError("lesson folder " + folder + ": not a folder that can be read");
    std::vector<LessonSource> sources;
    for (const fs::directory_entry& e : fs::directory_iterator(folder, ec)) {
        const std::string base = e.path().filename().string();
        if (e.path().extension() != ".md" || !lessonName(base))
            continue;
        std::ifstream in(e.path(), std::ios::binary);
        if (!in)
            throw InputError(e.path().string() + ": cannot be read");
        std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        if (text.size() > kMaxLessonBytes)
            text.resize(kMaxLessonBytes + 1); // parseLesson refuses it with its size rule
        sources.push_back({e.path().string(), std::move(text)});
    }
    if (ec)
        throw InputError("lesson folder " + folder + ": " + ec.message());
    if (sources.empty())
        throw InputError("lesson folder " + folder + ": holds no lesson file (NN-slug.md, e.g. 01-why-position.md)");
    return sources;
}

} // namespace plab
