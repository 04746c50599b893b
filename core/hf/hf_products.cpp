// hfLinear through oneDNN: measured on the forward's shapes against Eigen's GEMM and OpenBLAS (README, "Matrix
// products"); oneDNN matches OpenBLAS, beats Eigen's threaded GEMM by 1.3-2x, and shares the kernels' OpenMP team.
#include "hf/hf_products.h"

#include <oneapi/dnnl/dnnl.hpp>

#include <unordered_map>

namespace plab {

namespace {

const dnnl::engine& cpuEngine()
{
    static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
    return engine;
}

} // namespace

void hfLinear(const HfMatrix& x, const HfMatrix& w, const Eigen::VectorXf& bias, HfMatrix& y)
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
    const dnnl::engine& engine = cpuEngine();
    // W (out, in) row-major is W^T (in, out) in "ba" order: oneDNN reads it in place, no transposed copy.
    const memory::desc src({T, in}, memory::data_type::f32, memory::format_tag::ab);
    const memory::desc weights({in, out}, memory::data_type::f32, memory::format_tag::ba);
    const memory::desc dst({T, out}, memory::data_type::f32, memory::format_tag::ab);
    const memory::desc biasDesc({1, out}, memory::data_type::f32, memory::format_tag::ab);
    // oneDNN's own primitive cache makes the 7 repeated shapes per layer cheap after their first layer.
    const auto desc =
        bias.size() ? dnnl::matmul::desc(src, weights, biasDesc, dst) : dnnl::matmul::desc(src, weights, dst);
    const dnnl::matmul product(dnnl::matmul::primitive_desc(desc, engine));
    dnnl::stream stream(engine);
    std::unordered_map<int, memory> args{{DNNL_ARG_SRC, memory(src, engine, const_cast<float*>(x.data()))},
                                         {DNNL_ARG_WEIGHTS, memory(weights, engine, const_cast<float*>(w.data()))},
                                         {DNNL_ARG_DST, memory(dst, engine, y.data())}};
    if (bias.size())
        args.emplace(DNNL_ARG_BIAS, memory(biasDesc, engine, const_cast<float*>(bias.data())));
    product.execute(stream, args);
    stream.wait();
}

} // namespace plab
