#!/bin/bash
# Reproduces the README's rotary fine-tune table: the quick rope model at context 64 (seeds 1-3), fine-tuned for 300
# steps at context 256 under yarn and pi (factor 16), evaluated at 64, 256 and 1024. Usage: rotary_finetune.sh [BUILD_BIN] [OUT_DIR]
set -euo pipefail
B="${1:-build/bin}/positionlab-cli"
out="${2:-rotary-finetune}"
mkdir -p "$out"
for seed in 1 2 3; do
    base="$out/rope64_s$seed.safetensors"
    [ -f "$base" ] || "$B" train rope --preset quick --context 64 --seed "$seed" --quiet -o "$base"
    echo "== seed $seed base"
    "$B" eval "$base" --lengths 64,256,1024 --max-bytes 131072 --quiet
    for recipe in "yarn 2e-3" "pi 2e-3" "pi 2e-4"; do
        set -- $recipe
        tuned="$out/ft_${1}_${2}_s$seed.safetensors"
        "$B" train --init "$base" --context 256 --steps 300 --lr "$2" --scaling "$1" --set factor=16 --quiet -o "$tuned"
        echo "== seed $seed $1 lr $2"
        "$B" eval "$tuned" --lengths 64,256,1024 --max-bytes 131072 --quiet
    done
done
