// BF16 numbers as their 16 bits (the top half of a float32): the one home of the rounding to and widening from BF16.
#pragma once

#include <cstdint>
#include <cstring>

namespace plab {

// float32 -> BF16 bits, rounding to nearest even (NaN stays NaN).
inline uint16_t floatToBf16(float value)
{
    uint32_t bits;
    std::memcpy(&bits, &value, 4);
    if ((bits & 0x7fffffffu) > 0x7f800000u)
        return static_cast<uint16_t>((bits >> 16) | 0x40u); // a quiet NaN
    bits += 0x7fffu + ((bits >> 16) & 1u);
    return static_cast<uint16_t>(bits >> 16);
}

// BF16 bits -> float32, exactly.
inline float bf16ToFloat(uint16_t bits)
{
    const uint32_t wide = static_cast<uint32_t>(bits) << 16;
    float value;
    std::memcpy(&value, &wide, 4);
    return value;
}

} // namespace plab
