// libFuzzer target for the GUI's session reader (ui/settings/session.cpp, Qt Core only): parse, then read every field with
// every typed accessor, as restoring a window does; only InputError may come out.
#include "base/errors.h"
#include "settings/session.h"

#include <cstdint>
#include <string>

namespace {

void walk(const nlohmann::json& object, const std::string& where, int depth)
{
    if (!object.is_object() || depth > 8)
        return;
    for (const auto& item : object.items()) {
        const std::string key = item.key();
        auto attempt = [&](auto&& read) {
            try {
                read();
            } catch (const plab::InputError&) {
            }
        };
        attempt([&] { plab::ui::sessionInt(object, key.c_str(), 0, -1000, 1000, where); });
        attempt([&] { plab::ui::sessionInt(object, key.c_str(), 8, 1, 1024, where); });
        attempt([&] { plab::ui::sessionNumber(object, key.c_str(), 0.5, where); });
        attempt([&] { plab::ui::sessionBool(object, key.c_str(), false, where); });
        attempt([&] { plab::ui::sessionString(object, key.c_str(), "", where); });
        attempt([&] { walk(plab::ui::sessionObject(object, key.c_str(), where), where + "." + key, depth + 1); });
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    const std::string text(reinterpret_cast<const char*>(data), size);
    nlohmann::json session;
    try {
        session = plab::ui::parseSession(text, "fuzz.plab");
    } catch (const plab::InputError&) {
        return 0;
    }
    walk(session, "session", 0);
    return 0;
}
