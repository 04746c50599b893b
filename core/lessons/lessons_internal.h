// What the lesson files share (lessons.cpp, lesson_state.cpp, lesson_render.cpp): number and list text, a state read.
#pragma once

#include "lessons/lessons.h"

#include <charconv>
#include <string>
#include <vector>

namespace plab::lessons_internal {

// The shortest text that reads back as `value` (std::to_chars), as a state's settings are written.
inline std::string shortNumber(double value)
{
    char buffer[64];
    const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
    return std::string(buffer, result.ptr);
}

inline std::string joined(const std::vector<std::string>& items)
{
    std::string out;
    for (const std::string& s : items)
        out += (out.empty() ? "" : ", ") + s;
    return out;
}

// One ```json block of file `name` (its lines, the first at 1-based line `firstLine`) read and checked into a state;
// every message starts "NAME:LINE: " with the line of the key at fault (lesson_state.cpp).
LessonState readLessonState(const std::string& name, int firstLine, const std::vector<std::string>& lines);

} // namespace plab::lessons_internal
