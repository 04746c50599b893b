#!/bin/sh
# Layout check: every view as the window opens on a 1366x768 and a 1920x1080 screen, Lessons dock open, in English
# and Chinese (positionlab --screenshots-layout under the offscreen platform with a screen of that size).
# Usage: scripts/layout_screenshots.sh OUTDIR [GUI [MODEL]]   -> OUTDIR/<W>x<H>-<lang>/layout-<view>.png
# MODEL: a Hugging Face folder for the Your model tab's pages (default: the tiny tests/data/hf/qwen2_text).
set -eu
out=${1:?usage: $0 OUTDIR [GUI]}
gui=${2:-build/bin/positionlab}
model=${3:-tests/data/hf/qwen2_text}
mkdir -p "$out"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
for size in 1366x768 1920x1080; do
    config="$scratch/screen-$size.json"
    printf '{"screens": [{"name": "screen", "x": 0, "y": 0, "width": %s, "height": %s, "logicalDpi": 96, "logicalBaseDpi": 96, "dpr": 1}]}\n' \
        "${size%x*}" "${size#*x}" > "$config"
    for lang in en zh_CN; do
        # Settings and kept models of their own: the first start on that screen, nothing of the user's touched.
        XDG_CONFIG_HOME="$scratch/config-$size-$lang" XDG_DATA_HOME="$scratch/data-$size-$lang" \
            QT_QPA_PLATFORM="offscreen:configfile=$config" \
            "$gui" --lang "$lang" --screenshots-layout "$out/$size-$lang" --model "$model"
        echo "$out/$size-$lang"
    done
done
