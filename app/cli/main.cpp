// positionlab-cli: the headless twin of every GUI view (thin main; the verbs live in the CLI library).
#include "cli.h"

#include <iostream>

int main(int argc, char** argv)
{
    std::ios::sync_with_stdio(false);
#ifdef POSITIONLAB_HAVE_UI
    plab::cli::registerRenderVerbs(); // `render` and pictures for bias/dot/entropy -o FILE.png|svg|pdf
#endif
    const int code = plab::cli::runCli(std::vector<std::string>(argv + 1, argv + argc), std::cout, std::cerr);
    // Output to a full disk or a closed pipe must not look like success.
    std::cout.flush();
    if (!std::cout && code == 0) {
        std::cerr << "positionlab-cli: failed: writing to standard output failed (disk full or closed pipe)\n";
        return 1;
    }
    return code;
}
