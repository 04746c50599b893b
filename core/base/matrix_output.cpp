// CSV / JSON / NPY writers with fast %.9g formatting (std::to_chars) and OpenMP row formatting.
#include "base/matrix_output.h"

#include "base/errors.h"
#include "base/npy.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>

namespace plab {

DataFormat dataFormatForPath(const std::string& path, bool npyAllowed)
{
    const auto dot = path.find_last_of('.');
    const auto slash = path.find_last_of('/');
    std::string ext = (dot == std::string::npos || (slash != std::string::npos && dot < slash)) ? "" : path.substr(dot);
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
    if (ext == ".csv")
        return DataFormat::Csv;
    if (ext == ".json")
        return DataFormat::Json;
    if (ext == ".npy" && npyAllowed)
        return DataFormat::Npy;
    throw InputError("-o " + path + ": unsupported extension '" + ext + "'; allowed: .csv, .json" +
                     (npyAllowed ? ", .npy" : "") + " (and .png, .svg, .pdf with the render verb)");
}

nlohmann::json wholeNumbersAsIntegers(nlohmann::json j)
{
    if (j.is_number_float()) {
        const double v = j.get<double>();
        if (std::isfinite(v) && v == std::trunc(v) && std::abs(v) < 9007199254740992.0)
            return static_cast<long long>(v);
        return j;
    }
    if (j.is_object() || j.is_array())
        for (auto& e : j)
            e = wholeNumbersAsIntegers(std::move(e));
    return j;
}

int formatValue(double value, char* out)
{
    if (std::isnan(value)) {
        std::memcpy(out, "nan", 3);
        return 3;
    }
    if (std::isinf(value)) {
        std::memcpy(out, value < 0 ? "-inf" : "inf", value < 0 ? 4 : 3);
        return value < 0 ? 4 : 3;
    }
    if (value == 0.0) { // also -0.0, which reads oddly in a table
        out[0] = '0';
        return 1;
    }
    auto res = std::to_chars(out, out + 24, value, std::chars_format::general, 9);
    return static_cast<int>(res.ptr - out);
}

MatrixStackWriter::MatrixStackWriter(std::ostream& out, DataFormat format, int count, int rows, int cols, bool stacked,
                                     nlohmann::json meta, bool integerValues)
    : m_out(out), m_format(format), m_count(count), m_rows(rows), m_cols(cols), m_stacked(stacked),
      m_integer(integerValues)
{
    if (format == DataFormat::Npy) {
        std::vector<int64_t> shape;
        if (stacked)
            shape.push_back(count);
        shape.push_back(rows);
        shape.push_back(cols);
        m_out << npyHeader(shape);
    } else if (format == DataFormat::Json) {
        std::vector<int> shape;
        if (stacked)
            shape.push_back(count);
        shape.push_back(rows);
        shape.push_back(cols);
        meta["shape"] = shape;
        std::string head = wholeNumbersAsIntegers(meta).dump();
        head.pop_back(); // reopen the object to append "data"
        m_out << head << (meta.empty() ? "" : ",") << "\"data\":" << (stacked ? "[" : "");
    }
}

void MatrixStackWriter::write(int label, const float* data)
{
    if (m_format == DataFormat::Npy) {
        m_out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(sizeof(float)) * m_rows * m_cols);
        ++m_written;
        return;
    }
    const bool json = m_format == DataFormat::Json;
    if (m_format == DataFormat::Csv && m_stacked)
        m_out << "# head " << label << '\n';
    if (json)
        m_out << (m_written && m_stacked ? "," : "") << "[";
    // Format blocks of rows in parallel, write them in order.
    constexpr int kBlock = 128;
    std::vector<std::string> lines(kBlock);
    for (int r0 = 0; r0 < m_rows; r0 += kBlock) {
        const int r1 = std::min(m_rows, r0 + kBlock);
#pragma omp parallel for schedule(dynamic, 8) if (static_cast <long long>(m_cols) * (r1 - r0) > 20000)
        for (int r = r0; r < r1; ++r) {
            std::string& line = lines[r - r0];
            line.clear();
            line.reserve(static_cast<size_t>(m_cols) * 12 + 4);
            char buf[32];
            if (json)
                line += (r ? ",[" : "[");
            const float* row = data + static_cast<size_t>(r) * m_cols;
            for (int c = 0; c < m_cols; ++c) {
                if (c)
                    line += ',';
                const float v = row[c];
                if (json && !std::isfinite(v)) {
                    line += "null";
                } else if (m_integer) {
                    auto res = std::to_chars(buf, buf + 32, static_cast<long long>(v));
                    line.append(buf, res.ptr);
                } else {
                    line.append(buf, formatValue(v, buf));
                }
            }
            line += json ? "]" : "\n";
        }
        for (int r = r0; r < r1; ++r)
            m_out << lines[r - r0];
    }
    if (json)
        m_out << "]";
    ++m_written;
}

void MatrixStackWriter::finish()
{
    if (m_format == DataFormat::Json)
        m_out << (m_stacked ? "]" : "") << "}\n";
    m_out.flush();
}

void writeTable(std::ostream& out, DataFormat format, const Table& table)
{
    const size_t nc = table.columns.size();
    if (format == DataFormat::Csv) {
        for (size_t c = 0; c < nc; ++c)
            out << (c ? "," : "") << table.columns[c];
        out << '\n';
        char buf[32];
        for (const auto& row : table.rows) {
            for (size_t c = 0; c < nc; ++c) {
                if (c)
                    out << ',';
                out.write(buf, formatValue(row[c], buf));
            }
            out << '\n';
        }
    } else if (format == DataFormat::Json) {
        nlohmann::json doc = table.meta.is_object() ? wholeNumbersAsIntegers(table.meta) : nlohmann::json::object();
        doc["columns"] = table.columns;
        nlohmann::json rows = nlohmann::json::array();
        for (const auto& row : table.rows) {
            nlohmann::json obj;
            for (size_t c = 0; c < nc; ++c)
                obj[table.columns[c]] = !std::isfinite(row[c]) ? nlohmann::json(nullptr)
                                        : c < static_cast<size_t>(table.integerColumns)
                                            ? nlohmann::json(std::llround(row[c]))
                                            : nlohmann::json(row[c]);
            rows.push_back(std::move(obj));
        }
        doc["rows"] = std::move(rows);
        out << doc.dump(1) << '\n';
    } else {
        std::vector<float> flat;
        flat.reserve(table.rows.size() * nc);
        for (const auto& row : table.rows)
            for (double v : row)
                flat.push_back(static_cast<float>(v));
        out << npyHeader({static_cast<int64_t>(table.rows.size()), static_cast<int64_t>(nc)});
        out.write(reinterpret_cast<const char*>(flat.data()),
                  static_cast<std::streamsize>(flat.size() * sizeof(float)));
    }
    out.flush();
}

} // namespace plab
