#!/usr/bin/env bash
# One entry point for a fresh Debian machine: install what is missing, build, then run the app or the tests.
#   scripts/setup.sh run    install + release build + start the GUI
#   scripts/setup.sh test   install + release build + whole test suite, then the ASan/UBSan build + test suite
#   scripts/setup.sh build  install + release build only
#   scripts/setup.sh python install + the `positionlab` Python module (build/python), then the PYTHONPATH line to add
set -euo pipefail
cd "$(dirname "$0")/.."

mode=${1:-run}
# Qt6Charts' CMake package needs Qt6OpenGL's (libqt6opengl6-dev), which --no-install-recommends does not pull in;
# qt6-tools-dev and qt6-l10n-tools give Qt6LinguistTools (lupdate/lrelease for the Chinese translation); fonts-noto-cjk
# draws Chinese text instead of boxes; libpcre2-dev and libutf8proc-dev serve the tokenizer (regexes, NFC); libdnnl-dev
# (oneDNN) runs a Hugging Face model's matrix products. pybind11-dev, python3-dev and python3-numpy build the Python
# module (python/); python3-matplotlib draws its examples, python3-nbconvert and python3-ipykernel run the notebook.
packages=(cmake ninja-build g++ pkg-config qt6-base-dev qt6-base-dev-tools qt6-charts-dev qt6-svg-dev
          libqt6opengl6-dev libgl1-mesa-dev qt6-tools-dev qt6-tools-dev-tools qt6-l10n-tools libeigen3-dev
          nlohmann-json3-dev libpcre2-dev libutf8proc-dev libdnnl-dev fortunes fortunes-min fonts-noto-cjk xvfb xauth
          pybind11-dev python3-dev python3-numpy python3-matplotlib python3-nbconvert python3-ipykernel)
# `test` also runs tst_slurm (an emitted sweep on a real single-node Slurm, scripts/slurm-local.sh): the daemons, the
# client commands and munge, nothing more (the slurm-wlm metapackage only adds weight). Without them it is skipped.
test_packages=(slurmctld slurmd slurm-client munge)
[ "$mode" = test ] && packages+=("${test_packages[@]}")

install_missing() {
    local missing=()
    for p in "${packages[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        echo "== installing: ${missing[*]}"
        local sudo=""
        [ "$(id -u)" -ne 0 ] && sudo="sudo"
        $sudo apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
    fi
}

build() { # preset
    cmake --preset "$1" >/dev/null
    cmake --build --preset "$1" -j "$(nproc)"
}

# The whole suite of one preset. On failure, repeat each failed row (Qt Test's FAIL! line and what follows) at the end,
# where a log shortened in the middle still shows it.
run_tests() { # preset build-dir
    local status=0
    QT_QPA_PLATFORM=offscreen ctest --preset "$1" -j "$(nproc)" || status=$?
    if [ "$status" -ne 0 ]; then
        echo "== failed rows ($1):"
        grep -h -A6 -E '^(FAIL!|XPASS)|==ERROR: |runtime error: |QFATAL' "$2"/Testing/Temporary/LastTest*.log 2>/dev/null | cut -c1-400 || true
        exit "$status"
    fi
}

install_missing
case "$mode" in
    run)
        build release
        exec ./build/bin/positionlab
        ;;
    build)
        build release
        ;;
    test)
        build release
        run_tests release build
        build asan
        run_tests asan build-asan
        ;;
    python)
        cmake --preset release >/dev/null
        cmake --build --preset release -j "$(nproc)" --target positionlab_python positionlab_python_render
        PYTHONPATH="$PWD/build/python" /usr/bin/python3 -c "import positionlab; print('positionlab', positionlab.__version__)"
        echo "export PYTHONPATH=$PWD/build/python\${PYTHONPATH:+:\$PYTHONPATH}"
        ;;
    *)
        echo "usage: scripts/setup.sh run|test|build|python" >&2
        exit 2
        ;;
esac
