# Helpers shared by compare.sh and download.sh: paths, packages, the inputs,
# muxctl, timing and statistics. Sourced, not run.

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(dirname "$HERE")"
WORK="$HERE/work"
RUNS="${RUNS:-5}"
TIMES="$WORK/.time.$$"

say() { printf '%s\n' "$*" >&2; }
die() { say "${0##*/}: $*"; exit 2; }

[[ "$RUNS" =~ ^[1-9][0-9]*$ ]] || die "RUNS must be a positive integer (got '$RUNS')"
mkdir -p "$WORK"

# ---------------------------------------------------------------- packages
# need_package COMMAND PACKAGE: installs the Debian PACKAGE unless COMMAND is
# there (apt-get as root, else through sudo; apt-get update only if needed).
need_package() {
    command -v "$1" >/dev/null && return 0
    local sudo=()
    [[ $(id -u) -eq 0 ]] || sudo=(sudo)
    say "== $1 missing: installing Debian's '$2' package"
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q "$2" >/dev/null ||
        { "${sudo[@]}" apt-get update -q >/dev/null &&
            DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q "$2" >/dev/null; } ||
        die "could not install $2"
    command -v "$1" >/dev/null || die "$2 installed but $1 still not found"
}
need_package /usr/bin/time time

# ---------------------------------------------------------------- inputs
# Each input is written to a .part file and renamed, so an interrupted run
# never leaves a truncated file that looks finished.
make_video() { # SECONDS OUT
    local seconds=$1 out=$2
    [[ -s "$out" ]] && return 0
    say "== making $out (${seconds}s 1280x720 30 fps H.264, ~6 Mb/s; 10 min takes a few minutes)"
    ffmpeg -nostdin -v error -y \
        -f lavfi -i "testsrc2=size=1280x720:rate=30:duration=${seconds}" \
        -c:v libx264 -preset ultrafast -b:v 6M -maxrate 6M -bufsize 12M -g 60 -bf 2 \
        -pix_fmt yuv420p -an -f mp4 "$out.part"
    mv -f "$out.part" "$out"
}
make_audio() { # SECONDS OUT
    local seconds=$1 out=$2
    [[ -s "$out" ]] && return 0
    say "== making $out (${seconds}s AAC 128k sine)"
    ffmpeg -nostdin -v error -y \
        -f lavfi -i "sine=frequency=440:sample_rate=48000:duration=${seconds}" \
        -ac 2 -c:a aac -b:a 128k -f mp4 "$out.part"
    mv -f "$out.part" "$out"
}
# The video and the audio in one file, for download.sh: `muxctl download`
# refuses bodies without an audio stream.
make_av() { # VIDEO AUDIO OUT
    local out=$3
    [[ -s "$out" ]] && return 0
    say "== making $out (stream copy of $1 + $2)"
    ffmpeg -nostdin -v error -y -i "$1" -i "$2" -map 0:v -map 1:a -c copy -shortest -f mp4 "$out.part"
    mv -f "$out.part" "$out"
}

V_LONG="$WORK/video_10m.mp4"
A_LONG="$WORK/audio_10m.m4a"
AV_LONG="$WORK/av_10m.mp4"
V_SHORT="$WORK/video_10s.mp4"
A_SHORT="$WORK/audio_10s.m4a"
AV_SHORT="$WORK/av_10s.mp4"

make_inputs() {
    command -v ffmpeg >/dev/null || die "ffmpeg not found (apt-get install ffmpeg)"
    make_video 600 "$V_LONG"
    make_audio 600 "$A_LONG"
    make_video 10 "$V_SHORT"
    make_audio 10 "$A_SHORT"
    make_av "$V_LONG" "$A_LONG" "$AV_LONG"
    make_av "$V_SHORT" "$A_SHORT" "$AV_SHORT"
}

# ---------------------------------------------------------------- muxctl
# Sets and exports MUXCTL; builds once (compare.sh hands it to download.sh).
build_muxctl() {
    if [[ -z "${MUXCTL:-}" || ! -x "$MUXCTL" ]]; then
        say "== building muxctl as shipped (make build: release, static Swift runtime)"
        make -C "$ROOT" build >&2
        MUXCTL="$(cd "$ROOT" && swift build -c release --show-bin-path)/muxctl"
        [[ -x "$MUXCTL" ]] || die "muxctl not found at $MUXCTL"
        export MUXCTL
    fi
    uncache_binaries "$MUXCTL"
}

# uncache_binaries FILE...: drops FILE..., ffmpeg and the FFmpeg libraries
# both sides map from the page cache (dd's nocache), so that the warm-up
# reads them back the way a program's first run does. Peak RSS counts the
# binary's resident pages, and how many a fault maps depends on how the file
# came into the cache: a muxctl just written by the linker peaked 2 MiB
# higher than the same file read back from disk.
uncache_binaries() {
    local f
    for f in "$@" "$(command -v ffmpeg)" /usr/lib/x86_64-linux-gnu/lib{avformat,avcodec,avutil,swscale,swresample}.so.*; do
        [[ -f "$f" ]] && sync "$f" && dd if="$f" iflag=nocache count=0 status=none 2>/dev/null
    done
    return 0
}

# The Benchmarks package's download-only executable: the MediaMuxDownload
# product alone, in release.
build_download_only() {
    if [[ -z "${DOWNLOAD_ONLY:-}" || ! -x "$DOWNLOAD_ONLY" ]]; then
        say "== building download-only (the MediaMuxDownload product alone, release)"
        (cd "$ROOT/Benchmarks" && swift build -c release --product download-only >&2)
        DOWNLOAD_ONLY="$(cd "$ROOT/Benchmarks" && swift build -c release --show-bin-path)/download-only"
        [[ -x "$DOWNLOAD_ONLY" ]] || die "download-only not found at $DOWNLOAD_ONLY"
        export DOWNLOAD_ONLY
    fi
    uncache_binaries "$DOWNLOAD_ONLY"
}

# ---------------------------------------------------------------- timing
# timed COMMAND...: runs COMMAND under GNU time and sets T_SECS (wall seconds,
# %e) and T_KIB (peak RSS in KiB, %M). Dies if COMMAND fails. The command's
# stdout goes to stderr, so callers may capture nothing by mistake.
timed() {
    /usr/bin/time -f "%e %M" -o "$TIMES" "$@" >&2 || die "failed: $*"
    read -r T_SECS T_KIB < <(tail -n 1 "$TIMES")
}

# in_order RUN NAME...: the NAMEs one a line, reversed on even runs, so that
# no command always runs right after the same other one.
in_order() {
    local run=$1
    shift
    if ((run % 2)); then printf '%s\n' "$@"; else printf '%s\n' "$@" | tac; fi
}
# record NAME RUN: adds the last timed run (T_SECS, T_KIB) to the caller's
# WALL[NAME] and RSS[NAME] lists and says it.
record() {
    WALL[$1]+="$T_SECS"$'\n'
    RSS[$1]+="$T_KIB"$'\n'
    say "   run $2/$RUNS  $(printf '%-11s' "$1")  ${T_SECS} s  $((T_KIB / 1024)) MiB"
}

# median: of the numbers on stdin, one a line.
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# med_mib LIST: median of a newline-separated list of KiB, in MiB.
med_mib() { printf '%s' "$1" | median | awk '{ printf "%.1f", $1 / 1024 }'; }
# medians NAME...: W[NAME] = median wall seconds, M[NAME] = median peak RSS
# in MiB, from the newline-separated lists WALL[NAME] and RSS[NAME]. The
# caller declares the four associative arrays.
medians() {
    local name
    for name in "$@"; do
        W[$name]=$(printf '%s' "${WALL[$name]}" | median)
        M[$name]=$(med_mib "${RSS[$name]}")
    done
}
# rounds NAME...: RUNS rounds of the caller's `measure NAME` for each NAME,
# in in_order's order, each recorded; then W[NAME] and M[NAME], the medians.
# The caller declares WALL, RSS, W and M (declare -A) first.
rounds() {
    local run name
    local -a order
    for name in "$@"; do WALL[$name]=""; RSS[$name]=""; done
    for ((run = 1; run <= RUNS; run++)); do
        mapfile -t order < <(in_order "$run" "$@")
        for name in "${order[@]}"; do
            measure "$name"
            record "$name" "$run"
        done
    done
    medians "$@"
}
size_mib() { awk -v b="$(stat -c %s "$1")" 'BEGIN { printf "%.1f", b / 1048576 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print "inf" }'; }
minus() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", a - b }'; }

# check_max VALUE LIMIT MESSAGE: prints "FAIL: MESSAGE" and sets STATUS=1 if
# VALUE is above LIMIT ("inf" always is).
STATUS=0
check_max() {
    if awk -v v="$1" -v m="$2" 'BEGIN { exit !(v == "inf" || v + 0 > m + 0) }'; then
        echo "FAIL: $3"
        STATUS=1
    fi
}
