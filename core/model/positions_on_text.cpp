// positionsOnText: cope's positions and bias from the model's own q and k on the text, the static schemes' bias.
#include "model/positions_on_text.h"

#include "model/fox_bias.h"

#include "base/errors.h"
#include "schemes/cope.h"
#include "schemes/position_bias.h"

#include <string>

namespace plab {

const std::vector<std::string>& textViewNames()
{
    static const std::vector<std::string> names = {"weights", "bias", "positions"}; // in TextView order
    return names;
}

TextView textViewByName(std::string_view name)
{
    const std::vector<std::string>& names = textViewNames();
    for (size_t i = 0; i < names.size(); ++i)
        if (names[i] == name)
            return static_cast<TextView>(i);
    throw InputError("show = " + std::string(name) + " is not allowed; allowed: weights, bias, positions");
}

std::string textViewName(TextView view)
{
    return textViewNames().at(static_cast<size_t>(view));
}

bool hasContextualPositions(SchemeKind kind)
{
    return kind == SchemeKind::Cope;
}

void checkTextView(TextView view, SchemeKind kind)
{
    if (view == TextView::Positions && !hasContextualPositions(kind))
        throw InputError("show = positions needs a scheme with contextual positions (cope); " + schemeInfo(kind).name +
                         " has none; allowed: weights, bias");
}

TextPositions positionsOnText(Model& model, const std::vector<uint8_t>& text, int layer, int head)
{
    checkIntegerRange("layer", layer, 0, model.config().layers - 1);
    checkIntegerRange("head", head, 0, model.config().heads - 1);
    if (text.empty())
        throw InputError("the text is empty");
    const int length = static_cast<int>(text.size());
    if (length > model.maxLength())
        throw InputError("text of " + std::to_string(length) +
                         " bytes is unsupported: the learned position table has " + std::to_string(model.maxLength()) +
                         " rows");
    model.forward(text.data(), nullptr, 1, length);
    return positionsOfLastForward(model, length, layer, head);
}

TextPositions positionsOfLastForward(const Model& model, int length, int layer, int head)
{
    checkIntegerRange("layer", layer, 0, model.config().layers - 1);
    checkIntegerRange("head", head, 0, model.config().heads - 1);
    const int D = model.config().headDim();
    if (model.layerQueries(layer).size() != static_cast<size_t>(model.config().heads) * length * D)
        throw std::logic_error("positionsOfLastForward: the last forward was not one sequence of this length");
    const SchemeSpec spec = model.layerSchemeSpec(layer); // NoPE on the schedule's NoPE layers
    TextPositions view;
    view.bias.setConstant(length, length, PositionBias::kMasked);
    if (spec.kind == SchemeKind::Cope) {
        // q and k (1, H, T, D) of the layer; E (D, npos-max) of the layer, in float as the kernel reads it.
        const size_t offset = static_cast<size_t>(head) * length * D;
        const float* q = model.layerQueries(layer).data() + offset;
        const float* k = model.layerKeys(layer).data() + offset;
        const std::vector<float> embeddings(spec.copeEmbeddings.begin(), spec.copeEmbeddings.end());
        const CopeDims dims{1, length, D, spec.intParam("npos-max")};
        view.positions.setConstant(length, length, PositionBias::kMasked);
        CopeRow row;
        for (int m = 0; m < length; ++m) {
            copeRow(dims, q + static_cast<size_t>(m) * D, k, embeddings.empty() ? nullptr : embeddings.data(), m, row);
            for (int n = 0; n <= m; ++n) {
                view.bias(m, n) = static_cast<float>(row.bias[n]);
                view.positions(m, n) = static_cast<float>(row.positions[n]);
            }
        }
        return view;
    }
    if (spec.kind == SchemeKind::Fox && !model.layerLogForget(layer).empty()) {
        // F of this text's forget gates (1, H, T): the bias F_m - F_n, masked above the diagonal as the kernel masks.
        view.bias = foxBiasFromLogForget(model.layerLogForget(layer).data() + static_cast<size_t>(head) * length,
                                         length);
        for (int m = 0; m < length; ++m)
            for (int n = m + 1; n < length; ++n)
                view.bias(m, n) = PositionBias::kMasked;
        return view;
    }
    // Other data-dependent schemes add their branch above; a static scheme's bias is its ordinary view.
    if (spec.info().dataDependent)
        throw InputError("scheme " + spec.name() + " has no per-input bias view yet");
    const PositionBias bias(spec, length);
    std::vector<float> rows(static_cast<size_t>(length) * length); // (T, T) row-major
    bias.fillView(head, length, 0, length, rows.data());
    for (int m = 0; m < length; ++m)
        for (int n = 0; n < length; ++n)
            view.bias(m, n) = rows[static_cast<size_t>(m) * length + n];
    return view;
}

} // namespace plab
