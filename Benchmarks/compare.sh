#!/usr/bin/env bash
# Compares `muxctl merge` with the ffmpeg CLI doing the same stream copy, and
# with `cp` of the video as the floor, on a 10-minute 720p30 H.264 file
# (~450 MB) plus a 10-minute AAC track: into a new file, and over the
# existing output of the run before (`--force`, `ffmpeg -y`). Also checks that muxctl's peak memory
# does not grow with the input: 10-second inputs vs 10-minute inputs.
# Then runs download.sh (`muxctl download` vs `curl -o` from a local nginx),
# preview.sh (`muxctl preview` thumbnails and clip vs the ffmpeg CLI) and
# transcode.sh (a merge that encodes a 10-minute WAV vs ffmpeg's) and
# batch.sh (`muxctl batch` of 100 short phone clips vs xargs -P 2 ffmpeg).
#
# Usage: bash Benchmarks/compare.sh [--inputs-only | --merge-only]   (from anywhere)
#        --merge-only: without download.sh, preview.sh, transcode.sh and batch.sh
# Env:   RUNS=5              timed runs of each command (median is reported)
#        MAX_RATIO=1.0       fail if median(ours) / median(ffmpeg) is above this, new or over an existing output
#        MAX_RSS_SHARE=0.85  fail if ours' peak RSS (10 min input) is above this share of ffmpeg's in the same run
#        MAX_RSS_MIB=...     or above this many MiB, when set (instead of the share)
#        MAX_GROWTH_MIB=8    fail if ours' peak RSS grows more than this from 10 s to 10 min
#        MAX_STREAM_RATIO=0.8, MAX_STREAM_RSS=0.85: the same merge as fragmented MP4 on
#                            standard output (`muxctl merge V A - >/dev/null`) against
#                            `ffmpeg ... -movflags frag_keyframe+empty_moov -f mp4 - >/dev/null`:
#                            fail if its wall time or peak RSS is above this share of ffmpeg's
#        KEEP_OUTPUTS=1      keep the merged outputs in Benchmarks/work/
#        (download.sh's MAX_DL_*, preview.sh's MAX_THUMB_RATIO, MAX_CLIP_RATIO and
#        transcode.sh's MAX_TRANSCODE_* and batch.sh's MAX_BATCH_* limits, see there)
#
# Inputs are made once into Benchmarks/work/ (ignored by git) and reused.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

MAX_RATIO="${MAX_RATIO:-1.0}"
MAX_RSS_SHARE="${MAX_RSS_SHARE:-0.85}"
MAX_GROWTH_MIB="${MAX_GROWTH_MIB:-8}"
MAX_STREAM_RATIO="${MAX_STREAM_RATIO:-0.8}"
MAX_STREAM_RSS="${MAX_STREAM_RSS:-0.85}"
MODE="${1:-}"
case "$MODE" in "" | --inputs-only | --merge-only) ;; *) die "usage: compare.sh [--inputs-only | --merge-only]" ;; esac
command -v ffprobe >/dev/null || die "ffprobe not found (apt-get install ffmpeg)"

make_inputs
if [[ "$MODE" == "--inputs-only" ]]; then ls -l "$V_LONG" "$A_LONG" "$AV_LONG" "$V_SHORT" "$A_SHORT" "$AV_SHORT"; exit 0; fi
build_muxctl

# ---------------------------------------------------------------- runs
OUT_OURS="$WORK/out_ours.mp4"
OUT_FF="$WORK/out_ff.mp4"
OUT_CP="$WORK/copy.mp4"
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
        # Fragmented MP4 to standard output, piped to /dev/null.
        stream) CMD=(sh -c 'exec "$0" merge --quiet "$1" "$2" - >/dev/null' "$MUXCTL" "$2" "$3") ;;
        ffstream)
            CMD=(sh -c 'exec ffmpeg -nostdin -v error -i "$0" -i "$1" -map 0:v -map 1:a -c copy -shortest -movflags frag_keyframe+empty_moov -f mp4 - >/dev/null' "$2" "$3") ;;
    esac
}
# The file a command writes (none for the streamed ones).
out_for() { case $1 in ours) echo "$OUT_OURS" ;; ffmpeg) echo "$OUT_FF" ;; cp) echo "$OUT_CP" ;; *) echo "" ;; esac; }

# measure NAME VIDEO AUDIO -> T_SECS, T_KIB (see timed). Each run writes a new
# file: the old output is removed and dirty pages are flushed first, untimed.
measure() {
    local name=$1 video=$2 audio=$3 out
    out=$(out_for "$name")
    [[ -n "$out" ]] && rm -f "$out"
    sync
    argv_for "$name" "$video" "$audio" "$out"
    timed "${CMD[@]}"
}

# measure_over NAME: the 10-minute merge over the output an earlier run of
# the same command left (made first if there is none), flushed to disk first.
measure_over() {
    local name=$1 out
    out=$(out_for "$name")
    argv_for "$name" "$V_LONG" "$A_LONG" "$out"
    [[ -f "$out" ]] || "${CMD[@]}" >/dev/null
    sync
    timed "${CMD[@]}"
}

say "== merge warm-up (untimed): page cache and binaries"
cat "$V_LONG" "$A_LONG" "$V_SHORT" "$A_SHORT" >/dev/null
for name in ours ffmpeg cp stream ffstream; do measure "$name" "$V_LONG" "$A_LONG"; done
measure ours "$V_SHORT" "$A_SHORT"

declare -A WALL RSS OVER
for name in ours ffmpeg cp stream ffstream; do WALL[$name]=""; RSS[$name]=""; OVER[$name]=""; done
RSS_SHORT=""

for ((run = 1; run <= RUNS; run++)); do
    mapfile -t order < <(in_order "$run" ours ffmpeg cp stream ffstream)
    for name in "${order[@]}"; do
        measure "$name" "$V_LONG" "$A_LONG"
        record "$name" "$run"
    done
    for name in "${order[@]}"; do
        [[ $name == ours || $name == ffmpeg ]] || continue
        measure_over "$name"
        OVER[$name]+="$T_SECS"$'\n'
        say "   run $run/$RUNS  $(printf '%-6s' "$name")  ${T_SECS} s  over the existing output"
    done
    measure ours "$V_SHORT" "$A_SHORT"
    RSS_SHORT+="$T_KIB"$'\n'
done

# Keep one output of each for a sanity check of what was written.
measure ours "$V_LONG" "$A_LONG"
measure ffmpeg "$V_LONG" "$A_LONG"
dur() { ffprobe -v error -show_entries format=duration -of default=nw=1:nk=1 "$1"; }
med_wall() { printf '%s' "${WALL[$1]}" | median; }

W_OURS=$(med_wall ours); W_FF=$(med_wall ffmpeg); W_CP=$(med_wall cp)
O_OURS=$(printf '%s' "${OVER[ours]}" | median); O_FF=$(printf '%s' "${OVER[ffmpeg]}" | median)
RATIO_OVER=$(ratio "$O_OURS" "$O_FF")
M_OURS=$(med_mib "${RSS[ours]}"); M_FF=$(med_mib "${RSS[ffmpeg]}"); M_CP=$(med_mib "${RSS[cp]}")
# The memory limit follows the machine: a share of what ffmpeg needs here, in this run.
MAX_RSS_MIB="${MAX_RSS_MIB:-$(awk -v f="$M_FF" -v s="$MAX_RSS_SHARE" 'BEGIN { printf "%.1f", f * s }')}"
M_SHORT=$(med_mib "$RSS_SHORT")
RATIO=$(ratio "$W_OURS" "$W_FF")
GROWTH=$(minus "$M_OURS" "$M_SHORT")
W_STREAM=$(med_wall stream); W_FFSTREAM=$(med_wall ffstream)
M_STREAM=$(med_mib "${RSS[stream]}"); M_FFSTREAM=$(med_mib "${RSS[ffstream]}")
STREAM_RATIO=$(ratio "$W_STREAM" "$W_FFSTREAM")
STREAM_RSS=$(ratio "$M_STREAM" "$M_FFSTREAM")

echo
echo "MediaMux vs ffmpeg: 10 min 1280x720 H.264 ($(size_mib "$V_LONG") MiB) + 10 min AAC ($(size_mib "$A_LONG") MiB), median of $RUNS runs"
printf '%-28s %12s %14s %14s\n' "command" "wall (s)" "peak RSS (MiB)" "output (MiB)"
printf '%-28s %12s %14s %14s\n' "muxctl merge (faststart)" "$W_OURS" "$M_OURS" "$(size_mib "$OUT_OURS")"
printf '%-28s %12s %14s %14s\n' "ffmpeg -c copy -shortest" "$W_FF" "$M_FF" "$(size_mib "$OUT_FF")"
printf '%-28s %12s %14s %14s\n' "cp (floor)" "$W_CP" "$M_CP" "$(size_mib "$OUT_CP")"
printf '%-28s %12s %14s\n' "muxctl merge V A - (fMP4)" "$W_STREAM" "$M_STREAM"
printf '%-28s %12s %14s\n' "ffmpeg frag_keyframe -f mp4 -" "$W_FFSTREAM" "$M_FFSTREAM"
printf '%-28s %12s\n' "muxctl merge --force, over" "$O_OURS"
printf '%-28s %12s\n' "ffmpeg -y, over" "$O_FF"
echo
echo "ratio ours/ffmpeg (wall):      $RATIO   (limit $MAX_RATIO)"
echo "  over an existing output:     $RATIO_OVER   (limit $MAX_RATIO)"
echo "ours peak RSS, 10 s inputs:    $M_SHORT MiB"
echo "ours peak RSS, 10 min inputs:  $M_OURS MiB   (limit $MAX_RSS_MIB: ${MAX_RSS_SHARE} x ffmpeg's $M_FF MiB unless MAX_RSS_MIB is set)"
echo "growth 10 s -> 10 min:         $GROWTH MiB   (limit $MAX_GROWTH_MIB)"
echo "output durations (s):          ours $(dur "$OUT_OURS"), ffmpeg $(dur "$OUT_FF")"
echo "streamed fMP4, ours/ffmpeg:    wall $STREAM_RATIO (limit $MAX_STREAM_RATIO), peak RSS $STREAM_RSS (limit $MAX_STREAM_RSS)"

check_max "$RATIO" "$MAX_RATIO" "muxctl is slower than ffmpeg (ratio $RATIO > $MAX_RATIO)"
check_max "$RATIO_OVER" "$MAX_RATIO" "muxctl over an existing output is slower than ffmpeg -y (ratio $RATIO_OVER > $MAX_RATIO)"
check_max "$M_OURS" "$MAX_RSS_MIB" "muxctl peak RSS $M_OURS MiB > $MAX_RSS_MIB MiB"
check_max "$GROWTH" "$MAX_GROWTH_MIB" "muxctl peak RSS grows $GROWTH MiB from 10 s to 10 min inputs (> $MAX_GROWTH_MIB MiB)"
check_max "$STREAM_RATIO" "$MAX_STREAM_RATIO" "muxctl streaming fragmented MP4 is not fast enough against ffmpeg's (ratio $STREAM_RATIO > $MAX_STREAM_RATIO)"
check_max "$STREAM_RSS" "$MAX_STREAM_RSS" "muxctl streaming fragmented MP4 peaks too high against ffmpeg's (ratio $STREAM_RSS > $MAX_STREAM_RSS)"
((STATUS == 0)) && echo "OK"

# ---------------------------------------------------------------- download, preview, transcode, batch
if [[ "$MODE" != "--merge-only" ]]; then
    for script in download.sh preview.sh transcode.sh batch.sh; do
        echo
        script_status=0
        bash "$HERE/$script" || script_status=$?
        ((script_status > STATUS)) && STATUS=$script_status
    done
fi
exit "$STATUS"
