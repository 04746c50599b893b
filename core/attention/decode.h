// Attention of a few new query rows against a key/value cache: the decode entry of the attention code (generation).
#pragma once

#include "attention/attention.h"

#include <cstdint>

namespace plab {

// The shapes of one decode call. Queries q (heads, queries, D) sit at positions offset..offset+queries-1; the cache
// holds keys and values (kvHeads, capacity, D) whose rows 0..offset+queries-1 are filled (the new rows included), keys
// already rotated. Query head h reads key/value head h / (heads / kvHeads) (GQA).
struct DecodeDims {
    int heads = 1;
    int kvHeads = 1;
    int headDim = 1;
    int queries = 1;
    int offset = 0;   // the position of the first query: the tokens cached before this call
    int capacity = 1; // rows per head of the cache (its stride)
    // Rotary only: which dims turn and how they pair (AttentionDims' fields of the same names).
    RotaryPairing pairing = RotaryPairing::Interleaved;
    int rotaryDims = 0;
    int keys() const { return offset + queries; }
};

// Why `bias` cannot be decoded against a cache, or an empty string. A cache holds each key once, at one placement:
// methods that place a key by its distance to the query (rerope, leaky-rerope, self-extend) would need every key
// re-rotated per query, and schemes whose scores need more than the bias of a pair (fire, fox, cope, ssmax, a sink
// logit, xpos's per-query key scale) are not supported here. The one check of what the decode entry supports.
std::string decodeUnsupportedReason(const SchemeSpec& spec);

// Rows x (heads, count, D) turned in place as the kernel turns q (isKey false) or k (isKey true), head h's rows from
// x + h * headStride, row r at position first + r, with the rotary table of a sequence of `length` tokens
// (dynamic-ntk and longrope read it: transformers' convention, the new rows turned by the table of the current length,
// cached rows left as they are). Each position's cosines and sines are computed once for all the heads. Nothing
// happens for schemes that do not rotate.
void rotateRowsAt(const PositionBias& bias, const DecodeDims& dims, float* x, int heads, size_t headStride, int count,
                  int first, int length, bool isKey);

// out (heads, queries, D) = softmax over the visible cached keys of s(m, n) = cap((q_m . k_n / sqrt(D) +
// b_h(m, n)) * rowScale(m, keys)), times V: the kernel's score, mask (keyRange and sinkRange of a sequence of
// dims.keys() tokens), bias and soft cap, for rows m = offset..offset+queries-1 with q already rotated. The query heads
// that share a key/value head are scored together, so each cached key and value is read once per step, not once per
// query head; a row's keys are cut into chunks of 256 (flash-decoding), each chunk's softmax merged by its max. OpenMP
// over the chunks. InputError for a spec decodeUnsupportedReason names.
void attentionDecode(const PositionBias& bias, const DecodeDims& dims, const float* q, const float* kCache,
                     const float* vCache, float* out);
// The same over a cache held in BF16 (base/bf16.h; half the bytes a long decode step streams): each cached key and
// value widened to float32 exactly as it is read, everything else as above. Equals the float32 entry on a cache of
// the same BF16-rounded numbers, up to float rounding.
void attentionDecode(const PositionBias& bias, const DecodeDims& dims, const float* q, const uint16_t* kCache,
                     const uint16_t* vCache, float* out);

} // namespace plab
