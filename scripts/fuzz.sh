#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (build-fuzz/) and runs each for a fixed time on its seed corpus.
#   scripts/fuzz.sh [SECONDS] [TARGET...]     default: 60 s each, every target
# Findings (crash-*, leak-*, timeout-*, oom-*) land in fuzz/corpus-run/artifacts/<target>/; the exit code is 1
# when any target found something. Reproduce one with: build-fuzz/fuzz/<target> <artifact file>.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-60}
[ $# -gt 0 ] && shift
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(fuzz_npy fuzz_safetensors fuzz_corpus fuzz_lessons fuzz_cli_args fuzz_session fuzz_checkpoint fuzz_tokenizer)
build=${FUZZ_BUILD_DIR:-build-fuzz}

missing=()
for p in clang libclang-rt-14-dev libomp-14-dev cmake ninja-build; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER=clang++ -DPOSITIONLAB_FUZZ=ON \
      -DPOSITIONLAB_BUILD_GUI=OFF -DPOSITIONLAB_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" -j "$(nproc)" --target "${targets[@]}"

status=0
summary=()
for t in "${targets[@]}"; do
    # Absolute paths: fuzz_cli_args works inside its own scratch directory.
    run="$PWD/fuzz/corpus-run/$t"
    artifacts="$PWD/fuzz/corpus-run/artifacts/$t"
    mkdir -p "$run" "$artifacts"
    extra=()
    [ -f "tests/fuzz/$t.dict" ] && extra+=("-dict=$PWD/tests/fuzz/$t.dict")
    maxlen=4096
    [ "$t" = fuzz_cli_args ] && maxlen=512
    [ "$t" = fuzz_checkpoint ] && maxlen=16384 # the seed checkpoint is ~12 KB
    log="fuzz/corpus-run/$t.log"
    echo "== $t: ${seconds} s"
    set +e
    # detect_leaks: LeakSanitizer is on (libFuzzer's default); -timeout flags inputs slower than 20 s.
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
        "$build/fuzz/$t" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=4096 -malloc_limit_mb=2048 -max_len=$maxlen \
        -print_final_stats=1 -artifact_prefix="$artifacts/" "${extra[@]}" "$run" "$PWD/tests/fuzz/corpus/$t" >"$log" 2>&1
    code=$?
    set -e
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
    corpus=$(ls "$run" | wc -l)
    if [ $code -eq 0 ]; then
        result="no findings"
    else
        result="FINDING (exit $code): $(grep -m1 -E 'ERROR|SUMMARY|deadly signal|Test unit written' "$log" || tail -1 "$log")"
        status=1
    fi
    summary+=("$t: $execs executions, corpus $corpus inputs, $result")
done
echo
printf '%s\n' "${summary[@]}"
exit $status
