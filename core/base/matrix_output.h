// Output formats shared by the CLI and the GUI's data export: CSV, JSON and NPY for matrix stacks and tables.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace plab {

enum class DataFormat { Csv, Json, Npy };

// Chooses the format from a path's extension (.csv, .json, .npy; stdout is CSV). Throws InputError naming
// the extension and the allowed ones.
DataFormat dataFormatForPath(const std::string& path, bool npyAllowed = true);

// The one rule for counts in JSON: numbers that are whole (a length, a head count, a flop count, an integer scheme
// parameter stored as a double) become integers, "length": 16 rather than 16.0, in `j` and everything it holds; other
// numbers stay as they are. MatrixStackWriter and writeTable apply it to their metadata; the CLI's other JSON (the
// scheme catalogue, frequencies, bench) to their counts and parameters.
nlohmann::json wholeNumbersAsIntegers(nlohmann::json j);

// Formats a value like printf("%.9g"), with -inf/inf/nan spelled as Python and NumPy read them.
int formatValue(double value, char* out); // returns the number of characters (at most 24)

// Streams `count` matrices of rows x cols, one at a time, so a stack of heads never has to be in memory at once.
// CSV: rows of comma-separated values, `# head h` before each matrix when `labelled`.
// JSON: {"meta"..., "shape": [...], "data": [...]} with masked (-inf) cells as null.
// NPY: float32, shape (count, rows, cols) or (rows, cols) when not `stacked`.
class MatrixStackWriter {
public:
    MatrixStackWriter(std::ostream& out, DataFormat format, int count, int rows, int cols, bool stacked,
                      nlohmann::json meta, bool integerValues = false);
    // Writes matrix `label` (its head index); data is rows x cols row-major.
    void write(int label, const float* data);
    void finish();

private:
    std::ostream& m_out;
    DataFormat m_format;
    int m_count, m_rows, m_cols;
    bool m_stacked;
    bool m_integer;
    int m_written = 0;
};

// A table with named numeric columns (entropy, dot, eval curves).
struct Table {
    std::vector<std::string> columns;
    std::vector<std::vector<double>> rows;
    nlohmann::json meta;    // written in JSON beside the rows
    int integerColumns = 0; // the first columns hold counts (length, head, distance): JSON writes them as integers
};
// CSV: header line then rows; JSON: {meta..., "columns": [...], "rows": [{col: value}, ...]}; NPY: (rows, cols).
void writeTable(std::ostream& out, DataFormat format, const Table& table);

} // namespace plab
