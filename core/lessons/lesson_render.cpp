// The command line a lesson state renders with (`positionlab-cli render VIEW ...`), built option by option.
#include "lessons/lessons_internal.h"

#include "schemes/rotary_scaling.h"
#include "schemes/schemes.h"

#include <sstream>
#include <string>
#include <vector>

namespace plab {

using lessons_internal::shortNumber;

namespace {

// The command line a lesson state renders with, built option by option.
struct RenderArguments {
    std::vector<std::string> words;
    void add(const std::string& option, const std::string& value)
    {
        words.push_back("--" + option);
        words.push_back(value);
    }
    void flag(const std::string& option) { words.push_back("--" + option); }
    void schemes(const LessonState& s) { words.insert(words.end(), s.schemes.begin(), s.schemes.end()); }
    // What every scheme view shares: heads, the head shown, settings, mask, context and logn.
    void schemeOptions(const LessonState& s)
    {
        add("heads", std::to_string(s.heads));
        add("head", std::to_string(s.head));
        for (const std::string& setting : s.settings())
            add("set", setting);
        if (s.bidirectional)
            flag("bidirectional");
        if (s.context > 0 && schemesReadContext(s.schemes, s.logn, "none", s.settings())) // else refused, unread
            add("context", std::to_string(s.context));
        if (s.logn)
            flag("logn");
    }
};

void addBiasArguments(RenderArguments& r, const LessonState& s, const std::string& checkpoint)
{
    r.schemes(s);
    r.add("length", std::to_string(s.length));
    r.schemeOptions(s);
    if (s.buckets)
        r.flag("buckets");
    if (s.difference)
        r.flag("difference");
    if (s.separateScales)
        r.flag("separate-scales");
    if (s.curve) { // the demo fire model's curve, as an attention state names its model
        r.flag("curve");
        r.add("checkpoint", checkpoint.empty() ? "MODEL.safetensors" : checkpoint);
    }
}

void addFrequencyArguments(RenderArguments& r, const LessonState& s)
{
    // rope's dim and base are options of their own there; keep, rotary-fraction and the method's go by --set.
    const auto [scheme, method] = splitSchemeLabel(s.schemes.front());
    if (method != "none")
        r.add("scaling", method);
    for (const auto& [name, value] : s.params)
        if (name == "dim" || name == "base")
            r.add(name, shortNumber(value));
        else
            r.add("set", name + "=" + shortNumber(value));
    if (s.context > 0)
        r.add("context", std::to_string(s.context));
    if (s.json.contains("length"))
        r.add("length", std::to_string(s.length));
}

void addDotArguments(RenderArguments& r, const LessonState& s)
{
    std::string curves;
    for (const auto& [dim, base] : s.curves)
        curves += (curves.empty() ? "" : ",") + std::to_string(dim) + ":" + shortNumber(base);
    r.add("curves", curves);
    r.add("max-distance", std::to_string(s.maxDistance));
    if (s.logX)
        r.flag("log-x");
}

void addEntropyArguments(RenderArguments& r, const LessonState& s)
{
    r.schemes(s);
    std::string lengths;
    for (int n : s.lengths)
        lengths += (lengths.empty() ? "" : ",") + std::to_string(n);
    r.add("lengths", lengths);
    r.schemeOptions(s);
    r.add("qk", s.qk);
    if (s.qk == "random") // --qk zero draws nothing to seed: the CLI refuses --seed there
        r.add("seed", std::to_string(s.seed));
    r.add("measure", s.measure);
}

// The text views of a model: the lab's checkpoint (attention) or a Hugging Face folder (model).
void addTextArguments(RenderArguments& r, const LessonState& s)
{
    r.add("text", s.text);
    if (s.layer)
        r.add("layer", std::to_string(*s.layer));
    r.add("head", std::to_string(s.head));
    if (s.repeatTo > 0)
        r.add("repeat-to", std::to_string(s.repeatTo));
}

void addTrainArguments(RenderArguments& r, const LessonState& s)
{
    r.schemes(s);
    r.add("preset", s.preset);
    if (!s.task.empty())
        r.add("task", s.task);
    if (s.taskLength > 0)
        r.add("task-length", std::to_string(s.taskLength));
    if (s.recalibration > 0) {
        std::ostringstream percent;
        percent << s.recalibration;
        r.add("recalibration", percent.str());
    }
    if (s.nopeEvery > 0)
        r.add("nope-every", std::to_string(s.nopeEvery));
    if (s.temperature.tuning) {
        r.flag("attn-temperature-tuning");
        r.add("floor-scale", shortNumber(s.temperature.floorScale));
        r.add("attn-scale", shortNumber(s.temperature.attnScale));
    }
    if (s.ssmax)
        r.flag("ssmax");
    if (s.sinkLogit)
        r.flag("sink-logit");
    if (!s.layerTypes.empty()) {
        std::string types;
        for (const std::string& t : s.layerTypes)
            types += (types.empty() ? "" : ",") + t;
        r.add("layer-types", types);
    }
    if (s.window > 0)
        r.add("window", std::to_string(s.window));
    if (s.chunk > 0)
        r.add("chunk", std::to_string(s.chunk));
    if (!s.fullScheme.empty())
        r.add("full-scheme", s.fullScheme);
    for (const std::string& setting : s.fullSettings)
        r.add("full-set", setting);
}

} // namespace

std::vector<std::string> lessonRenderArguments(const LessonState& s, const std::string& checkpoint)
{
    RenderArguments r{{lessonViewName(s.view)}};
    switch (s.view) {
    case LessonView::Bias:
    case LessonView::Compare:
        addBiasArguments(r, s, checkpoint);
        break;
    case LessonView::Frequencies:
        addFrequencyArguments(r, s);
        break;
    case LessonView::Dot:
        addDotArguments(r, s);
        break;
    case LessonView::Entropy:
        addEntropyArguments(r, s);
        break;
    case LessonView::Attention:
        r.add("checkpoint", checkpoint.empty() ? "MODEL.safetensors" : checkpoint);
        addTextArguments(r, s);
        if (s.show != "weights")
            r.add("show", s.show);
        break;
    case LessonView::Train:
        addTrainArguments(r, s);
        break;
    case LessonView::Model:
        if (!checkpoint.empty())
            r.add("model", checkpoint);
        r.add("page", s.page);
        addTextArguments(r, s);
        break;
    }
    return r.words;
}

} // namespace plab
