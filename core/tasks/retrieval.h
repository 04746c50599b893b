// RULER-like retrieval tasks in a Hugging Face folder's own tokens (passkey, needles, variable tracking) and their
// scoring from teacher-forced logits: exact match of the greedy answer, or the answer's log-likelihood rank.
#pragma once

#include "base/random.h"
#include "hf/hf_products.h"

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace plab {

namespace hf {
class Tokenizer;
}

// The tasks, as RULER builds them (Hsieh et al. 2024), every answer a number so that exact match reads its tokens:
// | task              | needle (at depth d of the haystack)                                      | answer           |
// |-------------------|--------------------------------------------------------------------------|------------------|
// | passkey           | "The pass key is N. Remember it. N is the pass key."                      | N                |
// | niah-single       | "One of the special magic numbers for KEY is: N."                         | N                |
// | niah-multikey     | the same, and 3 more sentences of other keys at drawn depths (distractors) | N                |
// | niah-multivalue   | 4 sentences of the same KEY, one after the other                          | N1, N2, N3, N4   |
// | variable-tracking | "VAR A = N. VAR B = A. VAR C = B. VAR D = C. VAR E = D." (one chain)       | N (E's value)    |
// Every N is a 5-digit number (10000..99999); the keys are two words from a fixed list ("silent-river"); the variable
// names five capital letters. The needles of niah-multivalue and variable-tracking stand as one block at depth d, so
// needle_span is one span.
enum class RetrievalKind { Passkey, NiahSingle, NiahMultikey, NiahMultivalue, VariableTracking };

struct RetrievalTaskInfo {
    RetrievalKind kind;
    std::string name;    // as --task reads it
    std::string summary; // one line
};
const std::vector<RetrievalTaskInfo>& retrievalTaskTable();
std::vector<std::string> retrievalTaskNames();
// InputError "task 'x' is unknown; allowed: passkey, niah-single, ...".
const RetrievalTaskInfo& retrievalTaskByName(std::string_view name);
const RetrievalTaskInfo& retrievalTaskInfo(RetrievalKind kind);

// Candidates of `--score loglik`: the answer and 9 others of the same form, all distinct.
constexpr int kRetrievalCandidates = 10;

// One prompt. prompt = the tokenizer's leading special tokens (BOS where it adds one), the instruction, the haystack
// with the needle inside, the question; the answer follows the prompt. promptIds.size() is the length asked for,
// exactly. No chat template.
struct RetrievalExample {
    std::vector<int> promptIds;
    int needleStart = 0, needleEnd = 0;  // [start, end) of the (target) needle's tokens in promptIds
    int hayStart = 0, hayEnd = 0;        // [start, end) of the haystack (filler and needles) in promptIds
    double depth = 0;                    // asked: the needle starts after round(depth x filler tokens) filler tokens
    std::vector<int> answerIds;          // the answer's tokens (" 12345"), without special tokens
    std::string answerText;              // what answerIds decode to
    std::vector<std::vector<int>> candidates; // loglik: kRetrievalCandidates answers, candidates[correctCandidate]
    int correctCandidate = 0;                 // is answerIds
};

// The corpus cut in the folder's tokens, and the prompt's fixed parts. Built once per folder and corpus.
class RetrievalGenerator {
public:
    // `haystack`: the corpus's text (whole UTF-8 characters), tokenized here without special tokens; `source` names it
    // in messages. InputError when the tokenizer refuses the text.
    RetrievalGenerator(const hf::Tokenizer& tokenizer, const std::string& haystack, std::string source);

    // The fewest tokens a prompt of `kind` holds with no filler at all (special tokens, instruction, needles and
    // question); a length must exceed it by at least one filler token.
    int minimumLength(RetrievalKind kind) const;
    size_t haystackTokens() const { return m_hay.size(); }
    const std::string& source() const { return m_source; }
    // InputError naming the option: a length below minimumLength(kind) + 1 ("--lengths: 40 is too short for task
    // passkey: its needle and question take 57 tokens; allowed: lengths of at least 58"), a length whose filler the
    // haystack cannot give ("... the haystack corpus X has 1200 tokens, 3800 short of the 5000 the length needs"),
    // a depth outside [0, 1].
    void check(RetrievalKind kind, const std::vector<int>& lengths, const std::vector<double>& depths) const;

    // The example of (length, depth) drawn from `rng`: the filler a contiguous run of the haystack's tokens from a
    // drawn offset, the needle after round(depth x filler) of them. Same rng state -> same example.
    RetrievalExample make(RetrievalKind kind, int length, double depth, Rng& rng) const;

private:
    std::vector<int> encode(const std::string& text) const; // without special tokens
    const hf::Tokenizer& m_tokenizer;
    std::vector<int> m_hay;
    std::vector<int> m_prefix; // the special tokens the tokenizer puts before a text
    std::string m_source;
};

// The test examples of one (length, depth) cell: `count` examples from a generator seeded by (seed, length, depth),
// so the same seed gives the same prompts whatever the other cells are.
std::vector<RetrievalExample> retrievalExamples(const RetrievalGenerator& generator, RetrievalKind kind, int length,
                                                double depth, int count, uint64_t seed);

// The logits of the last `rows` positions of a sequence read whole from position 0 (rows x vocab): a model's forward
// under some positions (HfModel::tailLogits), or a fake in tests.
using TailLogits = std::function<HfMatrix(const std::vector<int>& ids, int rows)>;

struct RetrievalScore {
    bool correct = false;
    std::vector<int> outputIds; // exact: the greedy answer up to and including its first wrong token (runRetrieval
                                // completes it to the answer's length when examples are written)
    double answerLogLik = 0;    // sum of log p(answer token | prefix) in nats
    int rank = 0;               // loglik: 1 + candidates scoring at least the answer's log-likelihood (ties lose)
};

// Greedy decoding gives the answer exactly when, reading prompt + answer, the argmax (first of equal logits) at the
// position before every answer token is that token: where greedy decoding would first differ it had read the same
// tokens. One forward of prompt + answer[0..n-2] therefore scores it (n rows of logits).
RetrievalScore scoreRetrievalExact(const RetrievalExample& example, const TailLogits& logits);
// The answer's log-likelihood rank among the kRetrievalCandidates candidates (one forward each); correct iff rank 1.
RetrievalScore scoreRetrievalLoglik(const RetrievalExample& example, const TailLogits& logits);

} // namespace plab
