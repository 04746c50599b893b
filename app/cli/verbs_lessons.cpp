// `positionlab-cli lessons`: the lessons of the app (or of a teacher's folder) with their titles and figure counts.
#include "cli.h"

#include "base/errors.h"
#include "lessons/lessons.h"

#include <nlohmann/json.hpp>

namespace plab::cli {

LessonSet lessonsFromArgs(const ParsedArgs& args)
{
    const std::string language = languageFromArgs(args);
    return readLessons(args.has("folder") ? lessonSourcesInFolder(args.text("folder")) : builtinLessonSources(),
                       language);
}

namespace {

// Lists number, slug, title and figure count. A broken file is named with its line on stderr and makes the exit
// code 2, after the good lessons are listed.
int runLessons(const ParsedArgs& args, VerbContext& ctx)
{
    const LessonSet set = lessonsFromArgs(args);
    if (args.has("json")) {
        nlohmann::json list = nlohmann::json::array();
        for (const Lesson& l : set.lessons)
            list.push_back({{"number", l.number},
                            {"slug", l.slug},
                            {"title", l.title},
                            {"language", l.language},
                            {"figures", l.states.size()},
                            {"file", l.file}});
        nlohmann::json doc{{"lessons", list}};
        if (!set.errors.empty())
            doc["errors"] = set.errors;
        ctx.out << doc.dump(2) << '\n';
    } else {
        for (const Lesson& l : set.lessons)
            ctx.out << (l.number < 10 ? " " : "") << l.number << "  " << l.slug << "  " << l.title << "  ("
                    << l.states.size() << (l.states.size() == 1 ? " figure" : " figures") << ")\n";
    }
    if (set.errors.empty())
        return 0;
    for (const std::string& e : set.errors)
        ctx.err << "positionlab-cli: error: " << e << '\n';
    return 2;
}

} // namespace

OptionDef lessonFolderOption()
{
    return {"folder", OptionKind::Value,
            "lessons: a folder of NN-slug.md lesson files (default: the lessons that ship)", "DIR"};
}

void registerLessonVerbs()
{
    std::vector<OptionDef> options = {{"lang", OptionKind::Value,
                                       "en (default) or zh_CN: the Chinese twin of each lesson where there is one",
                                       "CODE"},
                                      lessonFolderOption()};
    options.push_back({"json", OptionKind::Flag, "machine-readable output: {\"lessons\": [...]}"});
    registerVerb(
        {"lessons", "",
         "list the lessons: number, slug, title and figure count (a broken lesson file: exit 2, named with its line)",
         options, 0, 0, runLessons});
}

} // namespace plab::cli
