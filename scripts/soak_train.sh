#!/usr/bin/env bash
# Training soak: runs `positionlab-cli train` for a fixed time, samples its resident memory (VmRSS) every 10 s,
# then stops it with Ctrl-C (SIGINT) and checks that the checkpoint it leaves is complete and nothing else is.
#   scripts/soak_train.sh [SECONDS=600] [CLI=build/bin/positionlab-cli] [extra train options...]
# Prints one line per sample (seconds, VmRSS kB) and a summary: first/last/max RSS and the growth after warm-up.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}
cli=${2:-build/bin/positionlab-cli}
shift $(( $# > 2 ? 2 : $# ))
work=$(mktemp -d /tmp/positionlab-soak.XXXXXX)
trap 'rm -rf "$work"' EXIT

# Default corpus (fortunes), quick preset, a checkpoint every 100 steps so saving is part of the soak.
"$cli" train --scheme alibi --steps 100000000 --save-every 100 --log-every 100 -o "$work/m.safetensors" "$@" \
    2>"$work/train.log" &
pid=$!
rss() { awk '/^VmRSS:/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0; }
samples=()
for ((t = 0; t <= seconds; t += 10)); do
    kill -0 "$pid" 2>/dev/null || { echo "train ended early:"; tail -5 "$work/train.log"; exit 1; }
    r=$(rss)
    samples+=("$r")
    echo "t=${t}s VmRSS=${r} kB"
    [ "$t" -lt "$seconds" ] && sleep 10
done
kill -INT "$pid"
set +e
wait "$pid"
code=$?
set -e
echo "train exit code after SIGINT: $code (130 = stopped and saved)"
tail -2 "$work/train.log"
leftovers=$(ls -A "$work" | grep -v -e '^m.safetensors$' -e '^train.log$' || true)
[ -z "$leftovers" ] && echo "directory clean (only m.safetensors)" || echo "LEFTOVER FILES: $leftovers"
"$cli" eval "$work/m.safetensors" --lengths 64 --max-bytes 4096 --quiet >/dev/null && echo "checkpoint loads and evaluates"
first=${samples[0]}
warm=${samples[$(( ${#samples[@]} > 6 ? 6 : ${#samples[@]} - 1 ))]} # after 60 s
last=${samples[-1]}
max=$(printf '%s\n' "${samples[@]}" | sort -n | tail -1)
echo "RSS kB: first $first, at 60 s $warm, last $last, max $max; growth after warm-up $(( last - warm )) kB"
