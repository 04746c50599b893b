// positionlab-cli: the headless twin of every GUI view (thin main; the verbs live in the CLI library).
#include "cli.h"

#include <iostream>

int main(int argc, char** argv)
{
    std::ios::sync_with_stdio(false);
    return plab::cli::runCli(std::vector<std::string>(argv + 1, argv + argc), std::cout, std::cerr);
}
