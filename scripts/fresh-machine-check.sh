#!/usr/bin/env bash
# Does the README's set-up work on a machine that has nothing? Builds a minimal Debian 12 (bookworm) root, clones the
# repository into it, runs `bash scripts/setup.sh build` there as root, renders one picture headless and copies it
# out, then runs `bash scripts/setup.sh python` and, in a new shell with the PYTHONPATH line it prints, imports the
# `positionlab` module and calls it once. Run it by hand (as root, it needs chroot and mounts) whenever the set-up changes: scripts/setup.sh, CMake's
# find_package()s, a new library or tool. Too slow for CI: a few hundred MB of downloads and a full build.
#
#   scripts/fresh-machine-check.sh [--keep] [--dir DIR] [--test] [SOURCE]
#     SOURCE   a repository folder (checked at its HEAD) or a commit of this repository; default: this repository's
#              HEAD. Only committed work is checked.
#     --keep   keep the root (DIR/root) for inspection: chroot DIR/root /bin/bash
#     --dir    work folder: DIR/root is the root, DIR/logs the logs, DIR/check.png the picture
#              (default: a new folder /var/tmp/positionlab-fresh.XXXXXX)
#     --test   also run the README's test command `bash scripts/setup.sh test` in the root (slow: a second, ASan build)
# Exit code 0 only when every step passed.
set -euo pipefail

usage() { echo "usage: $0 [--keep] [--dir DIR] [--test] [SOURCE (repository folder or commit; default this repository's HEAD)]"; }
die() { echo "fresh-machine-check: error: $*" >&2; exit 2; }

here=$(cd "$(dirname "$0")/.." && pwd)
keep=0 run_tests=0 dir="" source_arg=""
while [ $# -gt 0 ]; do
    case "$1" in
        --keep) keep=1 ;;
        --test) run_tests=1 ;;
        --dir) [ $# -ge 2 ] || { usage >&2; exit 2; }; dir=$2; shift ;;
        --dir=*) dir=${1#--dir=} ;;
        -h|--help) usage; exit 0 ;;
        -*) usage >&2; die "unknown option $1" ;;
        *) [ -z "$source_arg" ] || { usage >&2; die "only one SOURCE, got '$source_arg' and '$1'"; }; source_arg=$1 ;;
    esac
    shift
done

[ "$(id -u)" -eq 0 ] || die "run as root (it needs chroot and mount), e.g. sudo $0"

# --- what to check: a repository and one commit in it ---
if [ -z "$source_arg" ]; then
    src_repo=$here; src_rev=HEAD
elif [ -d "$source_arg" ]; then
    src_repo=$(cd "$source_arg" && pwd); src_rev=HEAD
else
    src_repo=$here; src_rev=$source_arg
fi
git -C "$src_repo" rev-parse --git-dir >/dev/null 2>&1 || die "$src_repo is not a git repository"
commit=$(git -C "$src_repo" rev-parse --verify --quiet "$src_rev^{commit}") || die "'$src_rev' is not a commit in $src_repo"
if [ "$src_rev" = HEAD ] && [ -n "$(git -C "$src_repo" status --porcelain --untracked-files=no)" ]; then
    echo "note: $src_repo has uncommitted changes; they are not part of the check (only commit ${commit:0:12} is)"
fi

# --- the host's Debian mirrors: every enabled 'deb' entry for bookworm, bookworm-updates, bookworm-security ---
# Read from /etc/apt/sources.list (one-line format) and /etc/apt/sources.list.d/*.list|*.sources (deb822), so the
# root downloads from the same mirror as this machine; third-party suites (other names) are left out.
suite_ok() { [[ $1 =~ ^bookworm(-updates|-security)?$ ]]; }
mirrors=()
add_mirror() { # URI SUITE COMPONENTS...
    local uri=$1 suite=$2; shift 2
    suite_ok "$suite" || return 0
    local line="deb $uri $suite $*"
    local m; for m in "${mirrors[@]}"; do [ "$m" = "$line" ] && return 0; done
    mirrors+=("$line")
}
read_one_line_file() { # sources.list format: deb [options] URI SUITE COMPONENTS...
    local f=$1 type rest
    while read -r type rest; do
        [ "$type" = deb ] || continue
        rest=$(sed -E 's/^\[[^]]*\][[:space:]]*//' <<<"$rest")
        # shellcheck disable=SC2086  # split URI SUITE COMPONENTS
        add_mirror $rest
    done < <(sed -e 's/#.*//' "$f")
}
read_deb822_file() { # stanzas separated by blank lines; Types/URIs/Suites/Components/Enabled fields
    local f=$1 types="" uris="" suites="" comps="" enabled=yes key value u s
    flush() {
        if [[ " $types " == *" deb "* ]] && [ "${enabled,,}" != no ]; then
            for u in $uris; do for s in $suites; do
                # shellcheck disable=SC2086
                add_mirror "$u" "$s" $comps
            done; done
        fi
        types="" uris="" suites="" comps="" enabled=yes
    }
    while IFS= read -r line || [ -n "$line" ]; do
        [[ $line =~ ^[[:space:]]*# ]] && continue   # a comment line does not end a stanza
        line=${line%%#*}
        if [[ -z "${line//[[:space:]]/}" ]]; then flush; continue; fi
        [[ $line == [[:space:]]* ]] && continue   # continuation lines (e.g. an inline Signed-By key)
        key=${line%%:*}; value=${line#*:}; read -r value <<<"$value" || true
        case "${key,,}" in
            types) types=$value ;; uris) uris=$value ;; suites) suites=$value ;;
            components) comps=$value ;; enabled) enabled=$value ;;
        esac
    done < "$f"
    flush
}
[ -f /etc/apt/sources.list ] && read_one_line_file /etc/apt/sources.list
for f in /etc/apt/sources.list.d/*.list; do [ -f "$f" ] && read_one_line_file "$f"; done
for f in /etc/apt/sources.list.d/*.sources; do [ -f "$f" ] && read_deb822_file "$f"; done
have_main=0
for m in "${mirrors[@]}"; do [[ $m == *" bookworm "* ]] && have_main=1; done
[ $have_main -eq 1 ] || die "no 'deb ... bookworm ...' entry in /etc/apt/sources.list or /etc/apt/sources.list.d/*.{list,sources}"

# --- work folder ---
if [ -z "$dir" ]; then
    dir=$(mktemp -d /var/tmp/positionlab-fresh.XXXXXX)
else
    mkdir -p "$dir"; dir=$(cd "$dir" && pwd)
    [ ! -e "$dir/root" ] || die "$dir/root already exists; remove it or choose another --dir"
fi
root=$dir/root logs=$dir/logs
mkdir -p "$logs"
rm -f "$logs"/*.log "$dir/check.png"

# --- mounts, and their removal on any exit (success, failure, Ctrl-C) ---
mounted=()
mount_in_root() { # TARGET-inside-root mount-args...
    local target=$root$1; shift
    mkdir -p "$target"
    mount "$@" "$target" || return 1
    mounted+=("$target")
}
mounts_under_root() { findmnt -rn -o TARGET | awk -v r="$root" 'index($0, r "/") == 1' | sort -r; }
unmount_all() {
    local i t
    for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
        t=${mounted[i]}
        umount "$t" 2>/dev/null || umount -l "$t" 2>/dev/null || echo "warning: could not unmount $t" >&2
    done
    mounted=()
    # anything else mounted below the root (e.g. left by an interrupted bootstrap)
    while read -r t; do [ -n "$t" ] && { umount "$t" 2>/dev/null || umount -l "$t" 2>/dev/null || true; }; done \
        < <(mounts_under_root)
}
descendants() { local c; for c in $(ps -o pid= --ppid "$1" 2>/dev/null); do echo "$c"; descendants "$c"; done; }
in_root_pids() { local p; for p in /proc/[0-9]*; do [ "$(readlink "$p/root" 2>/dev/null)" = "$root" ] && echo "${p#/proc/}"; done; true; }
cleaned=0
cleanup() {
    [ $cleaned -eq 0 ] || return 0
    cleaned=1
    # an interrupted step: end its processes (this script's descendants, and anything left running inside the root)
    # before the mounts go
    local pids p
    pids=$( { descendants $$; in_root_pids; } | sort -u)
    # the listing's own subshells and ps are among them and gone by now
    for p in $pids; do kill -0 "$p" 2>/dev/null || pids=$(grep -vx "$p" <<<"$pids" || true); done
    if [ -n "$pids" ]; then
        echo "ending the interrupted step's processes"
        # shellcheck disable=SC2086
        kill -TERM $pids 2>/dev/null || true
        wait 2>/dev/null || true
        sleep 1
        pids=$(in_root_pids)
        # shellcheck disable=SC2086
        [ -z "$pids" ] || kill -KILL $pids 2>/dev/null || true
    fi
    unmount_all
    if [ -d "$root" ]; then
        if [ $keep -eq 1 ]; then
            echo "kept the root: $root (chroot $root /bin/bash; remove with rm -rf --one-file-system $root)"
        elif [ -n "$(mounts_under_root)" ]; then
            echo "warning: something is still mounted below $root; not removing it" >&2
        else
            echo "removing the root $root (--keep keeps it)"
            rm -rf --one-file-system "$root"
        fi
    fi
}
trap cleanup EXIT
trap 'echo; echo "interrupted"; exit 130' INT TERM HUP

# --- steps: each one's output goes to logs/NN-NAME.log with seconds since the step started ---
step_names=() step_secs=()
stamp() { local start=$SECONDS line; while IFS= read -r line || [ -n "$line" ]; do printf '[%5ds] %s\n' $((SECONDS - start)) "$line"; done; }
hms() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }
step() { # NAME COMMAND...
    local name=$1; shift
    local log
    log=$logs/$(printf '%02d' $((${#step_names[@]} + 1)))-$name.log
    echo "== $name ... (log: $log)"
    local t0=$SECONDS rc
    # In the background and waited for, so that Ctrl-C reaches the trap at once (apt-get ignores SIGINT while dpkg
    # runs); the trap then ends the step's processes.
    ( set -e; "$@" ) < /dev/null 2>&1 | stamp > "$log" &
    wait $! && rc=0 || rc=$?
    local took=$((SECONDS - t0))
    step_names+=("$name"); step_secs+=("$took")
    if [ "$rc" -ne 0 ]; then
        echo
        echo "FAILED: step '$name' (exit code $rc after $(hms $took)); last 40 lines of $log:"
        echo "--------"
        tail -n 40 "$log"
        echo "--------"
        echo "all logs: $logs"
        [ $keep -eq 1 ] || echo "(run again with --keep to inspect the root)"
        exit 1
    fi
    echo "   ok, $(hms $took)"
}
in_root() { # COMMAND... as root in the root, with the environment a fresh login would have, not this shell's
    chroot "$root" /usr/bin/env -i HOME=/root USER=root LOGNAME=root SHELL=/bin/bash TERM=dumb LANG=C.UTF-8 \
        PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$@"
}

bootstrap() {
    printf 'mirror: %s\n' "${mirrors[@]}"
    # A bare machine: minbase (essential + required packages + apt). git and ca-certificates are the only extras: what
    # a user needs to clone the repository. Everything else must come from scripts/setup.sh.
    # The checker's own tool: a new machine has neither, so install mmdebstrap from the host's mirrors first.
    if ! command -v mmdebstrap >/dev/null && ! command -v debootstrap >/dev/null; then
        echo "installing mmdebstrap on this machine (the checker's own tool)"
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends mmdebstrap
    fi
    if command -v mmdebstrap >/dev/null; then
        mmdebstrap --variant=minbase --include=git,ca-certificates bookworm "$root" "${mirrors[@]}"
    else
        local main_uri
        main_uri=$(printf '%s\n' "${mirrors[@]}" | awk '$3 == "bookworm" { print $2; exit }')
        debootstrap --variant=minbase --include=git,ca-certificates bookworm "$root" "$main_uri"
        printf '%s\n' "${mirrors[@]}" > "$root/etc/apt/sources.list"
    fi
    echo "root: $(du -sh --one-file-system "$root" | cut -f1)"
}

mount_all() {
    mount_in_root /proc -t proc proc
    mount_in_root /sys -t sysfs sysfs 2>/dev/null || mount_in_root /sys --bind /sys
    mount_in_root /dev --bind /dev
    mount_in_root /dev/pts --bind /dev/pts
    mount_in_root /dev/shm -t tmpfs -o mode=1777,nosuid,nodev shm
    cp -L /etc/resolv.conf "$root/etc/resolv.conf"
    findmnt -rn -o TARGET,FSTYPE | awk -v r="$root" 'index($0, r "/") == 1'
}

clone() {
    # The host's git only stages the one commit as a bare repository inside the root; the root's own git clones it,
    # as a user would.
    local staging=$root/var/tmp/positionlab-source.git
    git init -q --bare "$staging"
    git -C "$staging" fetch -q --no-tags "$src_repo" "$commit:refs/heads/check"
    in_root git clone -q --branch check /var/tmp/positionlab-source.git /root/positionlab
    rm -rf "$staging"
    in_root git -C /root/positionlab log -1 --format='%h %s'
}

setup_build() { in_root bash -c 'cd /root/positionlab && bash scripts/setup.sh build'; }
# The README's Python set-up as a user follows it: run the command, paste the export line it prints into a new shell,
# import the module there and make one call whose answer is known (ALiBi's bias at distance 1 is -slope of head 1).
setup_python() {
    in_root bash -c 'cd /root/positionlab && bash scripts/setup.sh python' | tee "$dir/python-setup.txt"
    local export_line
    export_line=$(grep -E '^export PYTHONPATH=' "$dir/python-setup.txt" | tail -n1)
    [ -n "$export_line" ] || { echo "setup.sh python printed no 'export PYTHONPATH=...' line"; return 1; }
    echo "new shell with: $export_line"
    in_root bash -c "cd /root && $export_line && python3 -c '
import positionlab, numpy as np
print(\"positionlab\", positionlab.__version__, \"from\", positionlab.__file__)
b = positionlab.bias(\"alibi\", 8, heads=2)
assert b.shape == (2, 8, 8) and b.dtype == np.float32, (b.shape, b.dtype)
slope = 2.0 ** -4   # head 1 of 2: 2^(-8/2 * 1)
assert abs(b[0, 5, 4] + slope) < 1e-6 and np.isneginf(b[0, 4, 5]), b[0]
print(\"bias(alibi, 8, heads=2) ok: row 5 of head 1 =\", b[0, 5, :6])
'"
}
setup_test() { in_root bash -c 'cd /root/positionlab && bash scripts/setup.sh test'; }

png_ok() { # FILE: non-empty PNG (signature, IHDR with non-zero width and height)
    local f=$1
    [ -s "$f" ] || { echo "$f is missing or empty"; return 1; }
    local sig; sig=$(od -An -tx1 -N8 "$f" | tr -d ' \n')
    [ "$sig" = 89504e470d0a1a0a ] || { echo "$f is not a PNG (starts with $sig)"; return 1; }
    local w h; w=$(od -An -tu4 --endian=big -j16 -N4 "$f" | tr -d ' '); h=$(od -An -tu4 --endian=big -j20 -N4 "$f" | tr -d ' ')
    if [ "$w" -eq 0 ] || [ "$h" -eq 0 ]; then echo "$f has an empty image (${w}x$h)"; return 1; fi
    echo "$f: PNG ${w}x$h, $(stat -c %s "$f") bytes"
}
render() {
    in_root bash -c 'cd /root/positionlab && QT_QPA_PLATFORM=offscreen build/bin/positionlab-cli render bias alibi --length 32 -o /tmp/check.png'
    cp "$root/tmp/check.png" "$dir/check.png"
    png_ok "$dir/check.png"
    # Chinese titles and axes too, when this version of the CLI has --lang
    local help
    help=$(in_root bash -c 'cd /root/positionlab && QT_QPA_PLATFORM=offscreen build/bin/positionlab-cli render --help' 2>&1 || true)
    if grep -q -- '--lang' <<<"$help"; then
        in_root bash -c 'cd /root/positionlab && QT_QPA_PLATFORM=offscreen build/bin/positionlab-cli render bias alibi --length 32 --lang zh_CN -o /tmp/check-zh_CN.png'
        cp "$root/tmp/check-zh_CN.png" "$dir/check-zh_CN.png"
        png_ok "$dir/check-zh_CN.png"
    else
        echo "(this version of positionlab-cli render has no --lang: no Chinese picture)"
    fi
}

cjk_font() {
    # fc-list is in the 'fontconfig' package, which the app does not need (Qt links libfontconfig1 only); install it
    # here, after setup.sh and the render, just to ask fontconfig what it sees.
    if ! in_root sh -c 'command -v fc-list' >/dev/null; then
        echo "installing fontconfig (fc-list) for this check only"
        in_root apt-get update -qq
        in_root apt-get install -y -qq --no-install-recommends fontconfig
    fi
    echo "fonts for Chinese (fc-list :lang=zh family):"
    in_root fc-list :lang=zh family | sort | tee "$dir/zh-fonts.txt"
    [ -s "$dir/zh-fonts.txt" ] || { echo "no font covers Chinese: Chinese text would draw as boxes"; return 1; }
    echo "sans-serif for zh-cn resolves to: $(in_root fc-match 'sans-serif:lang=zh-cn')"
    echo "font holding 中 (U+4E2D) first: $(in_root fc-match 'sans-serif:charset=4e2d')"
}

echo "checking $src_repo at ${commit:0:12} in a fresh Debian 12 root: $root"
total0=$SECONDS
step bootstrap bootstrap
step mount mount_all
step clone clone
step setup-build setup_build
step render render
step cjk-font cjk_font
step setup-python setup_python
[ $run_tests -eq 0 ] || step setup-test setup_test
total=$((SECONDS - total0))

echo
echo "PASSED: a fresh Debian 12 builds PositionLab with scripts/setup.sh, renders a picture and imports the Python module."
for i in "${!step_names[@]}"; do printf '  %-12s %8s\n' "${step_names[i]}" "$(hms "${step_secs[i]}")"; done
# setup.sh's own split: installing packages until the build's first line ('[1/N] ...')
build_start=$(grep -m1 -E '^\[ *[0-9]+s\] \[1/[0-9]+\]' "$logs"/*-setup-build.log | sed -E 's/^\[ *([0-9]+)s\].*/\1/' || true)
for i in "${!step_names[@]}"; do [ "${step_names[i]}" = setup-build ] && setup_secs=${step_secs[i]}; done
if [ -n "$build_start" ] && [ -n "${setup_secs:-}" ]; then
    printf '  (setup-build: about %s installing packages and configuring, then %s compiling)\n' \
        "$(hms "$build_start")" "$(hms $((setup_secs - build_start)))"
fi
printf '  %-12s %8s\n' total "$(hms $total)"
echo "picture: $dir/check.png; logs: $logs"
