// Untrusted JSON (model folders, safetensors headers) parsed with a nesting limit, and short excerpts for messages.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace plab {

// The deepest nesting of arrays and objects accepted. nlohmann's parser is iterative, but copying, comparing and
// serialising a value recurse once per level: a value nested 100000 deep overflows the stack there. Real files nest
// a few levels (a tokenizer.json's Sequence of Sequences about ten).
constexpr int kMaxJsonDepth = 64;

// The one parser of JSON read from files the user hands us. InputError "SOURCE is not valid JSON at line L, column C
// (byte B): WHAT" for a syntax error or a truncated text, and "SOURCE is nested deeper than 64 levels at line L,
// column C (byte B); allowed: at most 64 levels of arrays and objects" before anything is built.
nlohmann::json parseUntrustedJson(std::string_view text, const std::string& source, int maxDepth = kMaxJsonDepth);
// The text of `path` parsed as above (source = the path). InputError when the file cannot be read.
nlohmann::json readUntrustedJsonFile(const std::string& path, int maxDepth = kMaxJsonDepth);

// At most about `maxChars` characters of `value` as JSON, "..." marking a cut; never serialises the whole value (a
// message quotes what it refuses, not a megabyte of it).
std::string jsonExcerpt(const nlohmann::json& value, size_t maxChars = 60);
// "a string", "an integer", "an object", ...: what a value is, for "must be X, not Y" messages.
std::string jsonKindName(const nlohmann::json& value);

} // namespace plab
