// Times core/hf's tokenizer on a text: load, encode (best of R rounds, MB/s) and decode of a model folder's tokenizer.
#include "hf/tokenizer.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

namespace {

double secondsSince(std::chrono::steady_clock::time_point start)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

} // namespace

int main(int argc, char** argv)
{
    if (argc < 3 || argc > 4) {
        std::cerr << "usage: positionlab-bench-tokenizer MODEL_DIR TEXT_FILE [ROUNDS (default 3)]\n";
        return 2;
    }
    std::ifstream file(argv[2], std::ios::binary);
    if (!file) {
        std::cerr << "cannot read " << argv[2] << '\n';
        return 2;
    }
    std::ostringstream buffer;
    buffer << file.rdbuf();
    const std::string text = buffer.str();
    const int rounds = argc == 4 ? std::max(1, std::atoi(argv[3])) : 3;
    try {
        auto start = std::chrono::steady_clock::now();
        const plab::hf::Tokenizer tokenizer = plab::hf::Tokenizer::fromFolder(argv[1]);
        const double load = secondsSince(start);
        double best = 1e30;
        plab::hf::Encoding encoding;
        for (int r = 0; r < rounds; ++r) {
            start = std::chrono::steady_clock::now();
            encoding = tokenizer.encode(text, false);
            best = std::min(best, secondsSince(start));
        }
        start = std::chrono::steady_clock::now();
        const bool roundTrip = tokenizer.decode(encoding.ids) == text;
        const double decode = secondsSince(start);
        std::cout << argv[1] << " (" << tokenizer.summary() << "): load " << load * 1e3 << " ms; encode " << text.size()
                  << " bytes in " << best * 1e3 << " ms (best of " << rounds << "), " << text.size() / best / 1e6
                  << " MB/s, " << encoding.ids.size() << " tokens; decode " << decode * 1e3 << " ms, round trip "
                  << (roundTrip ? "exact" : "DIFFERS") << '\n';
    } catch (const std::exception& e) {
        std::cerr << e.what() << '\n';
        return 2;
    }
    return 0;
}
