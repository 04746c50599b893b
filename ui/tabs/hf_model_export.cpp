// The Your model tab's picture and data export: the current page's figure, and its numbers as a table or matrix.
#include "tabs/hf_model_view.h"

#include "charts/curve_chart.h"
#include "tabs/retrieval_page.h"

#include "base/matrix_output.h"
#include "hf/hf_config.h"
#include "runs/method_comparison.h"

#include <QTabWidget>

namespace plab::ui {

bool HfModelView::hasPicture() const
{
    switch (m_pages->currentIndex()) {
    case EntropyPage:
        return m_attention.capture != nullptr;
    case SinksPage:
        return m_attention.sinks != nullptr;
    case MethodsPage:
        return !m_methods.curves.empty();
    case ContinuePage:
        return false; // text, no picture
    case RetrievalTab:
        return m_retrieval->hasResults();
    default:
        return m_map.map != nullptr;
    }
}

QString HfModelView::pictureTitle() const
{
    return m_pages->tabText(m_pages->currentIndex());
}

void HfModelView::paintPicture(QPainter& painter, const QRectF& target, const PictureStyle& style) const
{
    switch (m_pages->currentIndex()) {
    case EntropyPage:
        renderCurveFigure(painter, target, m_entropy->figure(), style);
        return;
    case SinksPage:
        m_sinks->heatmap().paint(painter, target, style);
        return;
    case MethodsPage:
        renderCurveFigure(painter, target, m_methodsPlot->figure(), style);
        return;
    case RetrievalTab:
        m_retrieval->heatmap()->heatmap().paint(painter, target, style);
        return;
    default:
        m_heatmap->heatmap().paint(painter, target, style, m_heatmap->window());
    }
}

void HfModelView::writeData(std::ostream& out, DataFormat format) const
{
    requirePicture();
    if (m_pages->currentIndex() == RetrievalTab) {
        m_retrieval->writeData(out, format, {{"model", m_model->folder.toStdString()}});
        return;
    }
    if (m_pages->currentIndex() == MethodsPage) {
        writeMethodComparison(out, format, m_methods.curves,
                              {{"model", m_model->folder.toStdString()},
                               {"precision", hfPrecisionName(m_methods.request.model->model->precision())},
                               {"text", m_methods.textSource.toStdString()},
                               {"text_tokens", m_methods.textTokens},
                               {"context", m_methods.context}});
        return;
    }
    const HfAttentionCapture& c = *m_attention.capture;
    nlohmann::json meta{
        {"model", m_model ? m_model->folder.toStdString() : std::string()},
        {"positions", hfPositionText(m_attention.request.positions.value_or(hfPositionSpec(m_model->model->config())))},
        {"precision", hfPrecisionName(m_attention.request.model->model->precision())},
        {"ids", m_attention.ids}};
    switch (m_pages->currentIndex()) {
    case EntropyPage: {
        Table t;
        t.columns = {"layer", "tokens_seen", "entropy_mean_over_heads"};
        t.integerColumns = 2;
        t.meta = meta;
        const std::vector<double> entropy = hfEntropyByPosition(c);
        for (int l = 0; l < c.layers; ++l)
            for (int m = 0; m < c.length; ++m)
                t.rows.push_back({double(l), double(m + 1), entropy[static_cast<size_t>(l) * c.length + m]});
        writeTable(out, format, t);
        return;
    }
    case SinksPage: {
        meta["values"] = "mean over queries of the attention probability on token 0, rows layers, columns heads";
        MatrixStackWriter writer(out, format, 1, c.layers, c.heads, false, meta);
        writer.write(0, m_attention.sinks->values.data());
        writer.finish();
        return;
    }
    default: {
        // The map as shown: the visible window, per token or in blocks (each block's max).
        const HfAttentionMap& g = m_heatmap->composedGeometry();
        const Matrix& shown = *m_heatmap->heatmap().figure().panels.front().matrix;
        meta["layer"] = m_map.request.layer;
        meta["head"] = m_map.request.head;
        meta["rows"] = {g.rowBegin, g.rowEnd};
        meta["cols"] = {g.colBegin, g.colEnd};
        meta["values"] = g.perToken()
                             ? "attention probability p(m, n), keys a query cannot see -inf"
                             : "largest attention probability over each block's visible pairs (level of detail)";
        nlohmann::json tokens = nlohmann::json::array();
        for (int n = g.colBegin; n < g.colEnd; ++n)
            tokens.push_back(m_attention.tokens[n].toStdString());
        meta["tokens"] = tokens;
        MatrixStackWriter writer(out, format, 1, shown.rows, shown.cols, false, meta);
        writer.write(0, shown.values.data());
        writer.finish();
    }
    }
}

} // namespace plab::ui
