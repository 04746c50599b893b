// The retrieval prompts in a folder's tokens (haystack cut from the corpus, needles at exact depths) and their scoring.
#include "tasks/retrieval.h"

#include "base/errors.h"
#include "hf/tokenizer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>

namespace plab {

namespace {

const char* const kKeyWords1[] = {"silent", "amber",  "hollow", "bright", "frozen", "gentle", "crimson", "quiet",
                                  "rapid",  "golden", "hidden", "narrow", "ancient", "wooden", "lonely", "misty"};
const char* const kKeyWords2[] = {"river",  "canoe",  "lantern", "meadow", "harbor", "falcon", "orchard", "bridge",
                                  "candle", "valley", "compass", "garden", "anchor", "willow", "signal",  "tower"};

constexpr const char* kPasskeyIntro = "There is an important info hidden inside a lot of irrelevant text. Find it and "
                                      "memorize it. I will quiz you about the important information there.\n\n";
constexpr const char* kNiahIntro = "Some special magic numbers are hidden within the following text. Make sure to "
                                   "memorize it. I will quiz you about the numbers afterwards.\n\n";
constexpr const char* kVariableIntro = "Memorize and track the chain of variable assignments hidden in the following "
                                       "text.\n\n";
constexpr int kMultikeyDistractors = 3;
constexpr int kMultivalueNeedles = 4;
constexpr int kVariableHops = 4;
constexpr int kProbeDraws = 16; // draws minimumLength takes the largest fixed part of

std::string number5(Rng& rng)
{
    return std::to_string(10000 + rng.below(90000));
}

std::string keyName(Rng& rng)
{
    return std::string(kKeyWords1[rng.below(16)]) + "-" + kKeyWords2[rng.below(16)];
}

std::string variableName(Rng& rng)
{
    std::string name(5, 'A');
    for (char& c : name)
        c = static_cast<char>('A' + rng.below(26));
    return name;
}

std::string magicSentence(const std::string& key, const std::string& value)
{
    return "One of the special magic numbers for " + key + " is: " + value + ".";
}

uint64_t mix(uint64_t a, uint64_t b)
{
    uint64_t z = a * 0x9E3779B97F4A7C15ULL + b + 0x632BE59BD9B4E019ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

// An example's text parts before they are tokenized: the needle, the distractors, the question, the answer's
// candidates (answers[0] is the answer).
struct Parts {
    std::string intro, needle, question;
    std::vector<std::string> distractors;
    std::vector<std::string> answers;
};

// kRetrievalCandidates distinct answers, the first `answer`, the others drawn by `draw`.
template <class Draw>
std::vector<std::string> candidatesOf(const std::string& answer, Rng& rng, Draw draw)
{
    std::vector<std::string> all{answer};
    std::set<std::string> seen{answer};
    while (static_cast<int>(all.size()) < kRetrievalCandidates) {
        std::string c = draw(rng);
        if (seen.insert(c).second)
            all.push_back(std::move(c));
    }
    return all;
}

Parts drawParts(RetrievalKind kind, Rng& rng)
{
    Parts p;
    switch (kind) {
    case RetrievalKind::Passkey: {
        const std::string n = number5(rng);
        p.intro = kPasskeyIntro;
        p.needle = "\nThe pass key is " + n + ". Remember it. " + n + " is the pass key.\n";
        p.question = "\n\nWhat is the pass key? The pass key is";
        p.answers = candidatesOf(" " + n, rng, [](Rng& r) { return " " + number5(r); });
        break;
    }
    case RetrievalKind::NiahSingle:
    case RetrievalKind::NiahMultikey: {
        const std::string key = keyName(rng), n = number5(rng);
        p.intro = kNiahIntro;
        p.needle = "\n" + magicSentence(key, n) + "\n";
        std::set<std::string> keys{key};
        for (int i = 0; kind == RetrievalKind::NiahMultikey && i < kMultikeyDistractors;) {
            const std::string other = keyName(rng);
            if (keys.insert(other).second) {
                p.distractors.push_back("\n" + magicSentence(other, number5(rng)) + "\n");
                ++i;
            }
        }
        p.question = "\n\nWhat is the special magic number for " + key + " mentioned in the provided text? The "
                     "special magic number for " + key + " mentioned in the provided text is";
        p.answers = candidatesOf(" " + n, rng, [](Rng& r) { return " " + number5(r); });
        break;
    }
    case RetrievalKind::NiahMultivalue: {
        const std::string key = keyName(rng);
        auto values = [&](Rng& r) {
            std::string list;
            for (int i = 0; i < kMultivalueNeedles; ++i)
                list += (i ? ", " : " ") + number5(r);
            return list;
        };
        const std::string answer = values(rng);
        p.intro = kNiahIntro;
        p.needle = "\n";
        for (size_t at = 1; at < answer.size(); at += 7) // " N1, N2, ...": each N is 5 digits and ", "
            p.needle += magicSentence(key, answer.substr(at, 5)) + "\n";
        p.question = "\n\nWhat are all the special magic numbers for " + key + " mentioned in the provided text? The "
                     "special magic numbers for " + key + " mentioned in the provided text are";
        p.answers = candidatesOf(answer, rng, values);
        break;
    }
    case RetrievalKind::VariableTracking: {
        std::vector<std::string> names;
        while (static_cast<int>(names.size()) <= kVariableHops) {
            const std::string v = variableName(rng);
            if (std::find(names.begin(), names.end(), v) == names.end())
                names.push_back(v);
        }
        const std::string n = number5(rng);
        p.intro = kVariableIntro;
        p.needle = "\nVAR " + names[0] + " = " + n + ".";
        for (size_t i = 1; i < names.size(); ++i)
            p.needle += " VAR " + names[i] + " = " + names[i - 1] + ".";
        p.needle += "\n";
        p.question = "\n\nWhat is the value of VAR " + names.back() + "? The value of VAR " + names.back() + " is";
        p.answers = candidatesOf(" " + n, rng, [](Rng& r) { return " " + number5(r); });
        break;
    }
    }
    return p;
}

} // namespace

const std::vector<RetrievalTaskInfo>& retrievalTaskTable()
{
    static const std::vector<RetrievalTaskInfo> table = {
        {RetrievalKind::Passkey, "passkey", "a 5-digit pass key in the filler"},
        {RetrievalKind::NiahSingle, "niah-single", "one special magic number for a key"},
        {RetrievalKind::NiahMultikey, "niah-multikey", "the magic number of one key among 4 keys' numbers"},
        {RetrievalKind::NiahMultivalue, "niah-multivalue", "all 4 magic numbers of one key, in order"},
        {RetrievalKind::VariableTracking, "variable-tracking", "the value at the end of a chain of 5 assignments"}};
    return table;
}

std::vector<std::string> retrievalTaskNames()
{
    std::vector<std::string> names;
    for (const RetrievalTaskInfo& t : retrievalTaskTable())
        names.push_back(t.name);
    return names;
}

const RetrievalTaskInfo& retrievalTaskByName(std::string_view name)
{
    for (const RetrievalTaskInfo& t : retrievalTaskTable())
        if (t.name == name)
            return t;
    std::string allowed;
    for (const std::string& n : retrievalTaskNames())
        allowed += (allowed.empty() ? "" : ", ") + n;
    throw InputError("task '" + std::string(name) + "' is unknown; allowed: " + allowed);
}

const RetrievalTaskInfo& retrievalTaskInfo(RetrievalKind kind)
{
    for (const RetrievalTaskInfo& t : retrievalTaskTable())
        if (t.kind == kind)
            return t;
    throw InputError("unknown retrieval task kind");
}

RetrievalGenerator::RetrievalGenerator(const hf::Tokenizer& tokenizer, const std::string& haystack,
                                       std::string source)
    : m_tokenizer(tokenizer), m_source(std::move(source))
{
    m_hay = encode(haystack);
    // The special tokens the tokenizer adds before a text (BOS), found as what encode adds in front of a probe.
    // Tokens added after the text (an EOS) are left out: the answer must follow the question.
    const std::vector<int> plain = encode("a"), full = tokenizer.encode("a", true).ids;
    for (size_t i = 0; i + plain.size() <= full.size(); ++i)
        if (std::equal(plain.begin(), plain.end(), full.begin() + static_cast<long>(i))) {
            m_prefix.assign(full.begin(), full.begin() + static_cast<long>(i));
            break;
        }
}

std::vector<int> RetrievalGenerator::encode(const std::string& text) const
{
    return m_tokenizer.encode(text, false).ids;
}

int RetrievalGenerator::minimumLength(RetrievalKind kind) const
{
    size_t most = 0;
    Rng rng(0x5EEDULL);
    for (int i = 0; i < kProbeDraws; ++i) {
        const Parts p = drawParts(kind, rng);
        size_t fixed = m_prefix.size() + encode(p.intro).size() + encode(p.needle).size() + encode(p.question).size();
        size_t longest = 0; // a filler at least this long places the needle exactly among distractors (make)
        for (const std::string& d : p.distractors) {
            fixed += encode(d).size();
            longest = std::max(longest, encode(d).size());
        }
        most = std::max(most, fixed + longest);
    }
    return static_cast<int>(most);
}

void RetrievalGenerator::check(RetrievalKind kind, const std::vector<int>& lengths,
                               const std::vector<double>& depths) const
{
    const std::string& name = retrievalTaskInfo(kind).name;
    const int minimum = minimumLength(kind);
    for (int length : lengths) {
        if (length <= minimum)
            throw InputError("--lengths: " + std::to_string(length) + " is too short for task " + name +
                             ": its needle and question take " + std::to_string(minimum) +
                             " tokens; allowed: lengths of at least " + std::to_string(minimum + 1));
        const size_t filler = static_cast<size_t>(length - minimum + kProbeDraws); // with room for longer draws
        if (filler > m_hay.size())
            throw InputError("--lengths: " + std::to_string(length) + " needs up to " + std::to_string(filler) +
                             " filler tokens, but the haystack corpus " + m_source + " has " +
                             std::to_string(m_hay.size()) + " tokens in the folder's tokenizer, " +
                             std::to_string(filler - m_hay.size()) +
                             " short; allowed: a longer --corpus or shorter --lengths");
    }
    for (double d : depths)
        if (!(d >= 0 && d <= 1))
            throw InputError("--depths: " + std::to_string(d) + " is outside [0, 1]; allowed: depths from 0 (the "
                             "haystack's start) to 1 (its end)");
}

namespace {

// Distractors in a drawn order go before the needle while they fit under q: the tokens before it are then within one
// distractor of q, and minimumLength keeps a filler of at least the longest distractor, so the filler closes the gap
// exactly. `tokensBefore` is set to the distractor tokens placed before.
std::vector<bool> distractorsBefore(const std::vector<std::vector<int>>& distractors, size_t q, Rng& rng,
                                    size_t& tokensBefore)
{
    std::vector<bool> before(distractors.size());
    std::vector<size_t> order(distractors.size());
    for (size_t i = 0; i < order.size(); ++i)
        order[i] = i;
    for (size_t i = order.size(); i > 1; --i)
        std::swap(order[i - 1], order[static_cast<size_t>(rng.below(i))]);
    tokensBefore = 0;
    for (const size_t i : order)
        if (tokensBefore + distractors[i].size() <= q) {
            before[i] = true;
            tokensBefore += distractors[i].size();
        }
    return before;
}

// One side of the needle: `count` filler tokens of the haystack from `from`, each distractor of the side
// (before[i] == wantBefore) after a drawn number of them.
void appendSide(const std::vector<int>& hay, size_t from, size_t count,
                const std::vector<std::vector<int>>& distractors, const std::vector<bool>& before, bool wantBefore,
                Rng& rng, std::vector<int>& out)
{
    std::vector<std::pair<size_t, size_t>> at; // (filler offset within the side, distractor)
    for (size_t i = 0; i < distractors.size(); ++i)
        if (before[i] == wantBefore)
            at.push_back({static_cast<size_t>(rng.below(count + 1)), i});
    std::sort(at.begin(), at.end());
    size_t done = 0;
    for (const auto& [cut, i] : at) {
        out.insert(out.end(), hay.begin() + static_cast<long>(from + done),
                   hay.begin() + static_cast<long>(from + cut));
        out.insert(out.end(), distractors[i].begin(), distractors[i].end());
        done = cut;
    }
    out.insert(out.end(), hay.begin() + static_cast<long>(from + done), hay.begin() + static_cast<long>(from + count));
}

} // namespace

RetrievalExample RetrievalGenerator::make(RetrievalKind kind, int length, double depth, Rng& rng) const
{
    const Parts p = drawParts(kind, rng);
    const std::vector<int> intro = encode(p.intro), needle = encode(p.needle), question = encode(p.question);
    std::vector<std::vector<int>> distractors;
    size_t fixed = m_prefix.size() + intro.size() + needle.size() + question.size(), distractorTokens = 0;
    for (const std::string& d : p.distractors) {
        distractors.push_back(encode(d));
        distractorTokens += distractors.back().size();
    }
    fixed += distractorTokens;
    if (static_cast<long long>(length) <= static_cast<long long>(fixed))
        throw InputError("--lengths: " + std::to_string(length) + " is too short for task " +
                         retrievalTaskInfo(kind).name + ": this example's needle and question take " +
                         std::to_string(fixed) + " tokens");
    const size_t filler = static_cast<size_t>(length) - fixed;
    if (filler > m_hay.size())
        throw InputError("--lengths: " + std::to_string(length) + " needs " + std::to_string(filler) +
                         " filler tokens; the haystack corpus " + m_source + " has " + std::to_string(m_hay.size()));
    const size_t offset = static_cast<size_t>(rng.below(m_hay.size() - filler + 1));
    // The target starts at q = round(depth x (haystack - needle)) of the haystack (filler and distractors); the
    // distractors go before or after it as drawn, then moved across so that q - (distractors before) is filler.
    const size_t hay = filler + distractorTokens;
    const size_t q = static_cast<size_t>(std::llround(depth * static_cast<double>(hay)));
    size_t tokensBefore = 0;
    const std::vector<bool> before = distractorsBefore(distractors, q, rng, tokensBefore);
    if (q > tokensBefore + filler)
        throw InputError("--lengths: " + std::to_string(length) + " is too short for task " +
                         retrievalTaskInfo(kind).name + " at depth " + std::to_string(depth) +
                         ": the filler cannot place the needle among its distractors; allowed: lengths of at least " +
                         std::to_string(minimumLength(kind) + 1));
    const size_t fillerBefore = std::min(filler, q - std::min(q, tokensBefore));
    auto side = [&](size_t from, size_t count, bool wantBefore, std::vector<int>& out) {
        appendSide(m_hay, from, count, distractors, before, wantBefore, rng, out);
    };
    RetrievalExample e;
    e.depth = depth;
    std::vector<int>& ids = e.promptIds;
    ids = m_prefix;
    ids.insert(ids.end(), intro.begin(), intro.end());
    e.hayStart = static_cast<int>(ids.size());
    side(offset, fillerBefore, true, ids);
    e.needleStart = static_cast<int>(ids.size());
    ids.insert(ids.end(), needle.begin(), needle.end());
    e.needleEnd = static_cast<int>(ids.size());
    side(offset + fillerBefore, filler - fillerBefore, false, ids);
    e.hayEnd = static_cast<int>(ids.size());
    ids.insert(ids.end(), question.begin(), question.end());
    for (const std::string& a : p.answers)
        e.candidates.push_back(encode(a));
    e.answerIds = e.candidates.front();
    e.answerText = p.answers.front();
    // The candidates in a drawn order, so the answer is not always first.
    e.correctCandidate = static_cast<int>(rng.below(e.candidates.size()));
    std::swap(e.candidates[0], e.candidates[static_cast<size_t>(e.correctCandidate)]);
    return e;
}

std::vector<RetrievalExample> retrievalExamples(const RetrievalGenerator& generator, RetrievalKind kind, int length,
                                                double depth, int count, uint64_t seed)
{
    Rng rng(mix(mix(seed, 0x4E1DULL + static_cast<uint64_t>(kind)),
                mix(static_cast<uint64_t>(length), static_cast<uint64_t>(std::llround(depth * 1e6) + 7))));
    std::vector<RetrievalExample> examples;
    examples.reserve(static_cast<size_t>(std::max(0, count)));
    for (int i = 0; i < count; ++i)
        examples.push_back(generator.make(kind, length, depth, rng));
    return examples;
}

namespace {

// log softmax(row)[token], in double.
double logProb(const float* row, int vocab, int token)
{
    const float top = *std::max_element(row, row + vocab);
    double sum = 0;
    for (int i = 0; i < vocab; ++i)
        sum += std::exp(static_cast<double>(row[i]) - top);
    return static_cast<double>(row[token]) - top - std::log(sum);
}

// The logits of the rows before each of `answer`'s tokens, reading prompt + answer[0..n-2].
HfMatrix answerRows(const RetrievalExample& example, const std::vector<int>& answer, const TailLogits& logits)
{
    if (answer.empty())
        throw InputError("a retrieval answer has no tokens");
    std::vector<int> ids = example.promptIds;
    ids.insert(ids.end(), answer.begin(), answer.end() - 1);
    HfMatrix rows = logits(ids, static_cast<int>(answer.size()));
    if (rows.rows() != static_cast<long>(answer.size()))
        throw RunError("the logits source gave " + std::to_string(rows.rows()) + " rows for " +
                       std::to_string(answer.size()) + " answer tokens");
    return rows;
}

double answerLogLik(const HfMatrix& rows, const std::vector<int>& answer)
{
    double sum = 0;
    for (size_t i = 0; i < answer.size(); ++i)
        sum += logProb(rows.row(static_cast<long>(i)).data(), static_cast<int>(rows.cols()), answer[i]);
    return sum;
}

} // namespace

RetrievalScore scoreRetrievalExact(const RetrievalExample& example, const TailLogits& logits)
{
    const HfMatrix rows = answerRows(example, example.answerIds, logits);
    RetrievalScore s;
    s.correct = true;
    for (size_t i = 0; i < example.answerIds.size(); ++i) {
        const float* row = rows.row(static_cast<long>(i)).data();
        const int argmax = static_cast<int>(std::max_element(row, row + rows.cols()) - row); // first of equal
        s.outputIds.push_back(argmax);
        if (argmax != example.answerIds[i]) {
            s.correct = false;
            break;
        }
    }
    s.answerLogLik = answerLogLik(rows, example.answerIds);
    s.rank = s.correct ? 1 : 0;
    return s;
}

RetrievalScore scoreRetrievalLoglik(const RetrievalExample& example, const TailLogits& logits)
{
    std::vector<double> ll;
    for (const std::vector<int>& c : example.candidates)
        ll.push_back(answerLogLik(answerRows(example, c, logits), c));
    RetrievalScore s;
    s.answerLogLik = ll[static_cast<size_t>(example.correctCandidate)];
    s.rank = 1;
    for (size_t i = 0; i < ll.size(); ++i)
        if (static_cast<int>(i) != example.correctCandidate && !(ll[i] < s.answerLogLik)) // ties (and NaN) lose
            ++s.rank;
    s.correct = s.rank == 1;
    // The best-scoring candidate stands for the model's output.
    s.outputIds = example.candidates[static_cast<size_t>(std::max_element(ll.begin(), ll.end()) - ll.begin())];
    return s;
}

} // namespace plab
