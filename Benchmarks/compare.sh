#!/usr/bin/env bash
# Compares `muxctl merge` with the ffmpeg CLI doing the same stream copy, and
# with `cp` of the video as the floor, on a 10-minute 720p30 H.264 file
# (~450 MB) plus a 10-minute AAC track. Also checks that muxctl's peak memory
# does not grow with the input: 10-second inputs vs 10-minute inputs.
#
# Usage: bash Benchmarks/compare.sh [--inputs-only]   (from anywhere)
# Env:   RUNS=5              timed runs of each command (median is reported)
#        MAX_RATIO=1.0       fail if median(ours) / median(ffmpeg) is above this
#        MAX_RSS_MIB=40      fail if ours' peak RSS (10 min input) is above this
#        MAX_GROWTH_MIB=8    fail if ours' peak RSS grows more than this from 10 s to 10 min
#        KEEP_OUTPUTS=1      keep the merged outputs in Benchmarks/work/
#
# Inputs are made once into Benchmarks/work/ (ignored by git) and reused.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(dirname "$HERE")"
WORK="$HERE/work"
RUNS="${RUNS:-5}"
MAX_RATIO="${MAX_RATIO:-1.0}"
MAX_RSS_MIB="${MAX_RSS_MIB:-40}"
MAX_GROWTH_MIB="${MAX_GROWTH_MIB:-8}"

say() { printf '%s\n' "$*" >&2; }
die() { say "compare.sh: $*"; exit 2; }

[[ "$RUNS" =~ ^[1-9][0-9]*$ ]] || die "RUNS must be a positive integer (got '$RUNS')"
command -v ffmpeg >/dev/null || die "ffmpeg not found (apt-get install ffmpeg)"
command -v ffprobe >/dev/null || die "ffprobe not found (apt-get install ffmpeg)"
if [[ ! -x /usr/bin/time ]]; then
    say "== /usr/bin/time missing: installing Debian's 'time' package"
    if [[ $(id -u) -eq 0 ]]; then
        apt-get install -y -q time >/dev/null || { apt-get update -q >/dev/null && apt-get install -y -q time >/dev/null; }
    else
        sudo apt-get install -y -q time >/dev/null
    fi
fi

mkdir -p "$WORK"

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

V_LONG="$WORK/video_10m.mp4"
A_LONG="$WORK/audio_10m.m4a"
V_SHORT="$WORK/video_10s.mp4"
A_SHORT="$WORK/audio_10s.m4a"
make_video 600 "$V_LONG"
make_audio 600 "$A_LONG"
make_video 10 "$V_SHORT"
make_audio 10 "$A_SHORT"
if [[ "${1:-}" == "--inputs-only" ]]; then ls -l "$V_LONG" "$A_LONG" "$V_SHORT" "$A_SHORT"; exit 0; fi

# ---------------------------------------------------------------- muxctl
say "== building muxctl as shipped (make build: release, static Swift runtime)"
make -C "$ROOT" build >&2
MUXCTL="$(cd "$ROOT" && swift build -c release --show-bin-path)/muxctl"
[[ -x "$MUXCTL" ]] || die "muxctl not found at $MUXCTL"

# ---------------------------------------------------------------- runs
OUT_OURS="$WORK/out_ours.mp4"
OUT_FF="$WORK/out_ff.mp4"
OUT_CP="$WORK/copy.mp4"
TIMES="$WORK/.time.$$"
cleanup() {
    rm -f "$TIMES"
    if [[ -z "${KEEP_OUTPUTS:-}" ]]; then rm -f "$OUT_OURS" "$OUT_FF" "$OUT_CP"; fi
}
trap cleanup EXIT

# argv_for NAME VIDEO AUDIO OUT: fills CMD with the command line to time.
argv_for() {
    case $1 in
        ours)   CMD=("$MUXCTL" merge --force --quiet "$2" "$3" "$4") ;;
        ffmpeg) CMD=(ffmpeg -nostdin -v error -y -i "$2" -i "$3" -map 0:v -map 1:a -c copy -shortest "$4") ;;
        cp)     CMD=(cp "$2" "$4") ;;
    esac
}
out_for() { case $1 in ours) echo "$OUT_OURS" ;; ffmpeg) echo "$OUT_FF" ;; cp) echo "$OUT_CP" ;; esac; }

# measure NAME VIDEO AUDIO -> prints "SECONDS KIB" (GNU time: %e wall, %M peak
# RSS in KiB). Each run writes a new file: the old output is removed and dirty
# pages are flushed first, untimed.
measure() {
    local name=$1 video=$2 audio=$3 out
    out=$(out_for "$name")
    rm -f "$out"
    sync
    argv_for "$name" "$video" "$audio" "$out"
    /usr/bin/time -f "%e %M" -o "$TIMES" "${CMD[@]}" || die "$name failed on $video + $audio"
    tail -n 1 "$TIMES"
}

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

say "== warm-up (untimed): page cache and binaries"
cat "$V_LONG" "$A_LONG" "$V_SHORT" "$A_SHORT" >/dev/null
for name in ours ffmpeg cp; do measure "$name" "$V_LONG" "$A_LONG" >/dev/null; done
measure ours "$V_SHORT" "$A_SHORT" >/dev/null

declare -A WALL RSS
for name in ours ffmpeg cp; do WALL[$name]=""; RSS[$name]=""; done
RSS_SHORT=""

for ((run = 1; run <= RUNS; run++)); do
    if ((run % 2)); then order=(ours ffmpeg cp); else order=(cp ffmpeg ours); fi
    for name in "${order[@]}"; do
        read -r secs kib < <(measure "$name" "$V_LONG" "$A_LONG")
        WALL[$name]+="$secs"$'\n'
        RSS[$name]+="$kib"$'\n'
        say "   run $run/$RUNS  $(printf '%-6s' "$name")  ${secs} s  $((kib / 1024)) MiB"
    done
    read -r _ kib < <(measure ours "$V_SHORT" "$A_SHORT")
    RSS_SHORT+="$kib"$'\n'
done

# Keep one output of each for a sanity check of what was written.
measure ours "$V_LONG" "$A_LONG" >/dev/null
measure ffmpeg "$V_LONG" "$A_LONG" >/dev/null
dur() { ffprobe -v error -show_entries format=duration -of default=nw=1:nk=1 "$1"; }
size_mib() { awk -v b="$(stat -c %s "$1")" 'BEGIN { printf "%.1f", b / 1048576 }'; }

med_wall() { printf '%s' "${WALL[$1]}" | median; }
med_mib() { printf '%s' "$1" | median | awk '{ printf "%.1f", $1 / 1024 }'; }

W_OURS=$(med_wall ours); W_FF=$(med_wall ffmpeg); W_CP=$(med_wall cp)
M_OURS=$(med_mib "${RSS[ours]}"); M_FF=$(med_mib "${RSS[ffmpeg]}"); M_CP=$(med_mib "${RSS[cp]}")
M_SHORT=$(med_mib "$RSS_SHORT")
RATIO=$(awk -v a="$W_OURS" -v b="$W_FF" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print "inf" }')
GROWTH=$(awk -v a="$M_OURS" -v b="$M_SHORT" 'BEGIN { printf "%.1f", a - b }')

echo
echo "MediaMux vs ffmpeg: 10 min 1280x720 H.264 ($(size_mib "$V_LONG") MiB) + 10 min AAC ($(size_mib "$A_LONG") MiB), median of $RUNS runs"
printf '%-28s %12s %14s %14s\n' "command" "wall (s)" "peak RSS (MiB)" "output (MiB)"
printf '%-28s %12s %14s %14s\n' "muxctl merge (faststart)" "$W_OURS" "$M_OURS" "$(size_mib "$OUT_OURS")"
printf '%-28s %12s %14s %14s\n' "ffmpeg -c copy -shortest" "$W_FF" "$M_FF" "$(size_mib "$OUT_FF")"
printf '%-28s %12s %14s %14s\n' "cp (floor)" "$W_CP" "$M_CP" "$(size_mib "$OUT_CP")"
echo
echo "ratio ours/ffmpeg (wall):      $RATIO   (limit $MAX_RATIO)"
echo "ours peak RSS, 10 s inputs:    $M_SHORT MiB"
echo "ours peak RSS, 10 min inputs:  $M_OURS MiB   (limit $MAX_RSS_MIB)"
echo "growth 10 s -> 10 min:         $GROWTH MiB   (limit $MAX_GROWTH_MIB)"
echo "output durations (s):          ours $(dur "$OUT_OURS"), ffmpeg $(dur "$OUT_FF")"

status=0
if awk -v r="$RATIO" -v m="$MAX_RATIO" 'BEGIN { exit !(r == "inf" || r > m) }'; then
    echo "FAIL: muxctl is slower than ffmpeg (ratio $RATIO > $MAX_RATIO)"; status=1
fi
if awk -v a="$M_OURS" -v m="$MAX_RSS_MIB" 'BEGIN { exit !(a > m) }'; then
    echo "FAIL: muxctl peak RSS $M_OURS MiB > $MAX_RSS_MIB MiB"; status=1
fi
if awk -v g="$GROWTH" -v m="$MAX_GROWTH_MIB" 'BEGIN { exit !(g > m) }'; then
    echo "FAIL: muxctl peak RSS grows $GROWTH MiB from 10 s to 10 min inputs (> $MAX_GROWTH_MIB MiB)"; status=1
fi
((status == 0)) && echo "OK"
exit "$status"
