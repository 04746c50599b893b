// libFuzzer target for lesson files: parseLesson either accepts (states resolved, render arguments formed) or refuses
// with an InputError that names the file and a line inside it; never a crash, a hang or another exception.
#include "base/errors.h"
#include "lessons/lessons.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    const std::string text(reinterpret_cast<const char*>(data), size);
    const size_t lines = 1 + static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
    try {
        const plab::Lesson lesson = plab::parseLesson({"07-fuzz.md", text});
        if (lesson.states.empty() || lesson.title.empty())
            std::abort();
        for (const plab::LessonState& state : lesson.states) {
            if (state.line < 1 || static_cast<size_t>(state.line) > lines)
                std::abort();
            if (plab::lessonRenderArguments(state, "m.safetensors").empty())
                std::abort();
        }
    } catch (const plab::InputError& e) {
        // "07-fuzz.md:LINE: ..." with LINE inside the file (or one past its last line for an empty last line).
        const std::string message = e.what();
        if (message.rfind("07-fuzz.md:", 0) != 0)
            std::abort();
        const long line = std::strtol(message.c_str() + 11, nullptr, 10);
        if (line < 0 || static_cast<size_t>(line) > lines + 1)
            std::abort();
    }
    return 0;
}
