// hfLinear through oneDNN: measured on the forward's shapes against Eigen's GEMM and OpenBLAS (README, "Matrix
// products"); oneDNN matches OpenBLAS, beats Eigen's threaded GEMM by 1.3-2x, shares the kernels' OpenMP team, and has
// native BF16 products (brgemm with avx512_bf16: about twice float32's rate per CPU-second on Zen 4).
#include "hf/hf_products.h"

#include "base/errors.h"

#include <oneapi/dnnl/dnnl.hpp>

#include <cstring>
#include <immintrin.h>
#include <unordered_map>

namespace plab {

namespace {

const dnnl::engine& cpuEngine()
{
    static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
    return engine;
}

// x rounded to BF16, into a buffer reused by every product of the calling thread (no allocation after the first).
const uint16_t* toBf16(const HfMatrix& x)
{
    thread_local std::vector<uint16_t> buffer;
    const Eigen::Index n = x.size();
    if (static_cast<Eigen::Index>(buffer.size()) < n)
        buffer.resize(static_cast<size_t>(n));
    const float* in = x.data();
    uint16_t* out = buffer.data();
#pragma omp parallel for schedule(static) if (n > 65536)
    for (Eigen::Index i = 0; i < n; ++i)
        out[i] = floatToBf16(in[i]);
    return buffer.data();
}

// Bytes a few-row product asks for ahead of its reads of a weight row (which run on into the next row). Why: a decode
// step is the weights streamed once, and the hardware's own prefetch left one thread at about 70% of what it streams
// (Zen 4, bf16 decode at 512 tokens of context: 78 tokens/s without, 82-97 at 256 bytes, 79-84 at 1 KB, 69-82 at 4 KB).
constexpr uintptr_t kPrefetchAhead = 256;
// Asks for the cache line kPrefetchAhead bytes after p (an address, not a pointer into the array: past a matrix's end
// it is never read, and a prefetch never faults).
inline void prefetchAhead(const void* p)
{
    __builtin_prefetch(reinterpret_cast<const void*>(reinterpret_cast<uintptr_t>(p) + kPrefetchAhead));
}

// Dot product of n BF16 pairs accumulated in float32 (AVX-512 BF16's vdpbf16ps where the build has it).
float dotBf16(const uint16_t* a, const uint16_t* b, Eigen::Index n)
{
    Eigen::Index i = 0;
    float sum = 0;
#if defined(__AVX512BF16__)
    __m512 acc = _mm512_setzero_ps();
    for (; i + 32 <= n; i += 32) {
        prefetchAhead(a + i);
        acc = _mm512_dpbf16_ps(acc, reinterpret_cast<__m512bh>(_mm512_loadu_si512(a + i)),
                               reinterpret_cast<__m512bh>(_mm512_loadu_si512(b + i)));
    }
    sum = _mm512_reduce_add_ps(acc);
#endif
    for (; i < n; ++i)
        sum += bf16ToFloat(a[i]) * bf16ToFloat(b[i]);
    return sum;
}

// Dot product of n float pairs (a: a weight row, streamed), in 16 lanes where the build has AVX-512.
float dotFloats(const float* a, const float* b, Eigen::Index n)
{
    Eigen::Index i = 0;
    float sum = 0;
#if defined(__AVX512F__)
    __m512 acc = _mm512_setzero_ps();
    for (; i + 16 <= n; i += 16) {
        prefetchAhead(a + i);
        acc = _mm512_fmadd_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i), acc);
    }
    sum = _mm512_reduce_add_ps(acc);
#endif
    for (; i < n; ++i)
        sum += a[i] * b[i];
    return sum;
}

// Output o of one few-row product, every row t of x (xb: x rounded to BF16 when w is BF16).
inline void fewRowsOutput(const HfMatrix& x, const uint16_t* xb, const HfWeightMatrix& w, const Eigen::VectorXf& bias,
                          HfMatrix& y, Eigen::Index o)
{
    const Eigen::Index in = x.cols();
    for (Eigen::Index t = 0; t < x.rows(); ++t) {
        const float dot = xb ? dotBf16(w.bf16() + o * in, xb + t * in, in)
                             : dotFloats(w.floats().row(o).data(), x.row(t).data(), in);
        y(t, o) = bias.size() ? dot + bias[o] : dot;
    }
}

// y = x W^T + b for a few rows (decoding): one dot product per (row, output) over W's contiguous rows, threads over
// the outputs. oneDNN's matmul packs its weight blocks for a product of many rows; for one row that costs more than
// the product, which only streams the weights once.
void linearFewRows(const HfMatrix& x, const HfWeightMatrix& w, const Eigen::VectorXf& bias, HfMatrix& y)
{
    const Eigen::Index in = x.cols(), out = w.rows();
    const uint16_t* xb = w.precision() == HfPrecision::BFloat16 ? toBf16(x) : nullptr;
#pragma omp parallel for schedule(guided) if (out * in > 65536)
    for (Eigen::Index o = 0; o < out; ++o)
        fewRowsOutput(x, xb, w, bias, y, o);
}

} // namespace

HfPrecision hfPrecisionFromName(const std::string& name)
{
    if (name == "f32")
        return HfPrecision::Float32;
    if (name == "bf16")
        return HfPrecision::BFloat16;
    throw InputError("precision '" + name +
                     "' is not allowed; allowed: f32 (float32 products, the default) or bf16 (BF16 weights and "
                     "product inputs, float32 accumulation)");
}

const char* hfPrecisionName(HfPrecision precision)
{
    return precision == HfPrecision::BFloat16 ? "bf16" : "f32";
}

double hfWeightBytes(HfPrecision precision)
{
    return precision == HfPrecision::BFloat16 ? 2.0 : 4.0;
}

void checkHfPrecisionSupported(HfPrecision precision)
{
    if (precision != HfPrecision::BFloat16)
        return;
    // The CPU's own report (cpuid, with the OS's AVX-512 state checked by the compiler's runtime), not a core name.
    if (!__builtin_cpu_supports("avx512bf16"))
        throw InputError("precision bf16 needs the CPU feature avx512_bf16, which this CPU does not report (see the "
                         "flags in /proc/cpuinfo); without it the BF16 products would be emulated, slower than "
                         "float32; use f32");
}

HfWeightMatrix::HfWeightMatrix(HfMatrix w, HfPrecision precision)
    : m_precision(precision), m_rows(w.rows()), m_cols(w.cols())
{
    if (precision == HfPrecision::Float32) {
        m_floats = std::move(w);
        return;
    }
    m_bf16.resize(static_cast<size_t>(w.size()));
    const float* in = w.data();
    for (Eigen::Index i = 0; i < w.size(); ++i)
        m_bf16[static_cast<size_t>(i)] = floatToBf16(in[i]);
}

HfWeightMatrix::HfWeightMatrix(const uint16_t* mapped, Eigen::Index rows, Eigen::Index cols)
    : m_precision(HfPrecision::BFloat16), m_rows(rows), m_cols(cols), m_mapped(mapped)
{
}

void HfWeightMatrix::row(Eigen::Index r, float* out) const
{
    if (m_precision == HfPrecision::Float32) {
        std::copy_n(m_floats.row(r).data(), m_cols, out);
        return;
    }
    const uint16_t* in = bf16() + static_cast<size_t>(r) * m_cols;
    for (Eigen::Index c = 0; c < m_cols; ++c)
        out[c] = bf16ToFloat(in[c]);
}

void hfLinear(const HfMatrix& x, const HfWeightMatrix& w, const Eigen::VectorXf& bias, HfMatrix& y)
{
    using dnnl::memory;
    const memory::dim T = x.rows(), in = x.cols(), out = w.rows();
    y.resize(T, out);
    if (T == 0 || out == 0)
        return;
    if (in == 0) { // oneDNN refuses a zero inner dimension; the product is the bias alone
        y.setZero();
        if (bias.size())
            y.rowwise() += bias.transpose();
        return;
    }
    if (T <= kHfFewRows) {
        linearFewRows(x, w, bias, y);
        return;
    }
    const dnnl::engine& engine = cpuEngine();
    const bool bf16 = w.precision() == HfPrecision::BFloat16;
    const memory::data_type inputType = bf16 ? memory::data_type::bf16 : memory::data_type::f32;
    // W (out, in) row-major is W^T (in, out) in "ba" order: oneDNN reads it in place, no transposed copy (a weight
    // layout prepacked for BF16 measured 2-5 % faster on these shapes, not worth a second copy of the weights).
    const memory::desc src({T, in}, inputType, memory::format_tag::ab);
    const memory::desc weights({in, out}, inputType, memory::format_tag::ba);
    const memory::desc dst({T, out}, memory::data_type::f32, memory::format_tag::ab);
    const memory::desc biasDesc({1, out}, memory::data_type::f32, memory::format_tag::ab);
    // oneDNN's own primitive cache makes the 7 repeated shapes per layer cheap after their first layer.
    const auto desc =
        bias.size() ? dnnl::matmul::desc(src, weights, biasDesc, dst) : dnnl::matmul::desc(src, weights, dst);
    const dnnl::matmul product(dnnl::matmul::primitive_desc(desc, engine));
    dnnl::stream stream(engine);
    void* srcData = bf16 ? const_cast<uint16_t*>(toBf16(x)) : static_cast<void*>(const_cast<float*>(x.data()));
    void* weightData = bf16 ? static_cast<void*>(const_cast<uint16_t*>(w.bf16()))
                            : static_cast<void*>(const_cast<float*>(w.floats().data()));
    std::unordered_map<int, memory> args{{DNNL_ARG_SRC, memory(src, engine, srcData)},
                                         {DNNL_ARG_WEIGHTS, memory(weights, engine, weightData)},
                                         {DNNL_ARG_DST, memory(dst, engine, y.data())}};
    if (bias.size())
        args.emplace(DNNL_ARG_BIAS, memory(biasDesc, engine, const_cast<float*>(bias.data())));
    product.execute(stream, args);
    stream.wait();
}

void hfLinearSameInput(const HfMatrix& x, std::initializer_list<HfLinearJob> jobs)
{
    if (jobs.size() == 0)
        return;
    const Eigen::Index T = x.rows(), in = x.cols();
    bool fewRows = T > 0 && T <= kHfFewRows && in > 0;
    Eigen::Index total = 0;
    for (const HfLinearJob& j : jobs) {
        fewRows = fewRows && j.w->precision() == jobs.begin()->w->precision();
        total += j.w->rows();
    }
    if (!fewRows) {
        for (const HfLinearJob& j : jobs)
            hfLinear(x, *j.w, *j.bias, *j.y);
        return;
    }
    for (const HfLinearJob& j : jobs)
        j.y->resize(T, j.w->rows());
    const uint16_t* xb = jobs.begin()->w->precision() == HfPrecision::BFloat16 ? toBf16(x) : nullptr;
#pragma omp parallel for schedule(guided) if (total * in > 65536)
    for (Eigen::Index g = 0; g < total; ++g) {
        Eigen::Index o = g;
        for (const HfLinearJob& j : jobs) { // the job whose outputs hold g: at most three to pass
            if (o < j.w->rows()) {
                fewRowsOutput(x, xb, *j.w, *j.bias, *j.y, o);
                break;
            }
            o -= j.w->rows();
        }
    }
}

} // namespace plab
