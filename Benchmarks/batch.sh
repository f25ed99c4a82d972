#!/usr/bin/env bash
# Compares `muxctl batch` with the ffmpeg CLI run by `xargs -P` on 100 short
# phone clips: each job merges a clip (2-10 s of a real phone file from the
# samples folder, stream-copied by the ffmpeg CLI) with a 10-second AAC
# soundtrack, ending where the clip ends, and draws a 12-frame contact sheet
# of the output. SOURCE chooses the phone file:
# - h264 (default): the Apple H.264 640x428 .mov. Short clips of it cost
#   little to decode, so starting processes is most of ffmpeg's cost.
# - hevc: the iPhone HEVC 1920x1080 clip. Decoding the frames the sheet
#   needs (about 27 ms each on one core here) is most of the cost on both
#   sides, whoever starts the processes.
# - ours:   `muxctl batch jobs.json --jobs 2` (one process, two jobs at once)
# - ffmpeg: `xargs -P 2`, each job one `ffmpeg -c copy -shortest` merge and one
#           ffmpeg contact sheet (fps=12/duration, scale, tile) of its output
# Also `muxctl batch --jobs 1`, for the scaling from one job at a time to two.
# Run by compare.sh; runs on its own too.
#
# Usage: bash Benchmarks/batch.sh   (from anywhere)
# Env:   RUNS=5                 timed runs of each command (median is reported)
#        CLIPS=100              jobs in the batch
#        SOURCE=h264            the phone file: h264 or hevc (see above)
#        MAX_BATCH_RATIO=0.5    fail if median(batch --jobs 2) / median(xargs -P 2 ffmpeg) is above this
#        MAX_BATCH_MIB=150      fail if the batch's median peak RSS is above this
#        KEEP_OUTPUTS=1         keep the outputs in Benchmarks/work/batch/
#        MEDIAMUX_SAMPLES=DIR   the real files (default ../shared/media beside the package)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

MAX_BATCH_RATIO="${MAX_BATCH_RATIO:-0.5}"
MAX_BATCH_MIB="${MAX_BATCH_MIB:-150}"
CLIPS="${CLIPS:-100}"
[[ "$CLIPS" =~ ^[1-9][0-9]*$ ]] || die "CLIPS must be a positive integer (got '$CLIPS')"
SOURCE="${SOURCE:-h264}"
SAMPLES="${MEDIAMUX_SAMPLES:-../shared/media}"
[[ "$SAMPLES" == /* ]] || SAMPLES="$ROOT/$SAMPLES"
[ -d "$SAMPLES" ] || die "no samples folder at $SAMPLES (set MEDIAMUX_SAMPLES): the phone clips are real files"
case "$SOURCE" in
    h264) PHONE="$SAMPLES/apple_h264_bframes_audio_starts_44ms_late.mov"; COPIES=11 ;;
    hevc) PHONE="$SAMPLES/iphone_hevc_rot90_bframes_editlist_nonsync_start.mp4"; COPIES=4 ;;
    *) die "SOURCE must be h264 or hevc (got '$SOURCE')" ;;
esac
NAMES=(batch_j2 xargs_p2 batch_j1)
command -v ffprobe >/dev/null || die "ffprobe not found (apt-get install ffmpeg)"

make_inputs
build_muxctl

DIR="$WORK/batch-$SOURCE"
CLIPS_DIR="$DIR/clips"
OUT="$DIR/out"
cleanup() {
    rm -f "$TIMES"
    if [[ -z "${KEEP_OUTPUTS:-}" ]]; then rm -rf "$OUT"; fi
}
trap cleanup EXIT
mkdir -p "$CLIPS_DIR"

# The clips: the phone file over and over (the concat demuxer, stream copy,
# 11 s or more, with the file's own keyframes), then 2 to 10 s of it
# (2 + k mod 9 seconds), stream-copied; made once, kept.
BASE="$CLIPS_DIR/base.mp4"
if [[ ! -s "$BASE" ]]; then
    for ((copy = 0; copy < COPIES; copy++)); do printf "file '%s'\n" "$PHONE"; done >"$CLIPS_DIR/concat.txt"
    ffmpeg -nostdin -v error -y -f concat -safe 0 -i "$CLIPS_DIR/concat.txt" -c copy -f mp4 "$BASE.part"
    mv -f "$BASE.part" "$BASE"
fi
say "== making $CLIPS clips of 2-10 s from $(basename "$PHONE") (stream copy)"
for ((k = 0; k < CLIPS; k++)); do
    clip="$CLIPS_DIR/clip$k.mp4"
    [[ -s "$clip" ]] && continue
    ffmpeg -nostdin -v error -y -i "$BASE" -t $((2 + k % 9)) -c copy -f mp4 "$clip.part"
    mv -f "$clip.part" "$clip"
done

# The manifest for muxctl, and the job list for xargs (clip, output, sheet, duration).
MANIFEST="$DIR/jobs.json"
LIST="$DIR/jobs.txt"
{
    echo '{"jobs": ['
    for ((k = 0; k < CLIPS; k++)); do
        ((k == 0)) || echo ','
        printf '{"video": "%s", "audio": "%s", "output": "out/ours/job%d.mp4", "preview": {"sheet": true}}' \
            "$CLIPS_DIR/clip$k.mp4" "$A_SHORT" "$k"
    done
    echo ']}'
} >"$MANIFEST"
: >"$LIST"
for ((k = 0; k < CLIPS; k++)); do
    d=$(ffprobe -v error -select_streams v:0 -show_entries stream=duration -of default=nw=1:nk=1 "$CLIPS_DIR/clip$k.mp4")
    printf '%s %s %s %s\n' "$CLIPS_DIR/clip$k.mp4" "$OUT/ff/job$k.mp4" "$OUT/ff/job$k.sheet.png" "$d" >>"$LIST"
done

# One job as the ffmpeg CLI does it: the merge, then a 12-frame sheet of
# 320 px tiles of the output (4x3, as muxctl's default sheet is laid out).
FF_JOB='clip=$1 out=$2 sheet=$3 d=$4
ffmpeg -nostdin -v error -y -i "$clip" -i "'"$A_SHORT"'" -map 0:v:0 -map 1:a:0 -c copy -shortest -movflags +faststart "$out" &&
ffmpeg -nostdin -v error -y -i "$out" -vf "fps=12/$d,scale=320:-2,tile=4x3" -frames:v 1 "$sheet"'

argv_for() {
    case $1 in
        batch_j2) CMD=("$MUXCTL" batch "$MANIFEST" --jobs 2 --quiet) ;;
        batch_j1) CMD=("$MUXCTL" batch "$MANIFEST" --jobs 1 --quiet) ;;
        xargs_p2) CMD=(xargs -P 2 -n 4 -a "$LIST" bash -c "$FF_JOB" ff-job) ;;
    esac
}

# measure NAME -> T_SECS, T_KIB. Untimed before: the outputs (and muxctl's
# records, so that nothing is skipped) go, and dirty pages are flushed.
measure() {
    rm -rf "$OUT"
    mkdir -p "$OUT/ours" "$OUT/ff"
    sync
    argv_for "$1"
    timed "${CMD[@]}"
}

say "== batch warm-up (untimed): page cache and binaries"
cat "$CLIPS_DIR"/*.mp4 "$A_SHORT" >/dev/null
for name in "${NAMES[@]}"; do measure "$name"; done

declare -A WALL RSS W M
rounds "${NAMES[@]}"

# ---------------------------------------------------------------- sanity
# A batch once more, untimed, for its outputs: count them, and compare each
# output's video with where it should end, the shorter of the clip's video
# and the soundtrack.
measure batch_j2
ours_files=$(find "$OUT/ours" -name 'job*.mp4' | wc -l)
ours_sheets=$(find "$OUT/ours" -name 'job*.sheet.png' | wc -l)
audio_seconds=$(ffprobe -v error -select_streams a:0 -show_entries stream=duration -of default=nw=1:nk=1 "$A_SHORT")
worst=$(for ((k = 0; k < CLIPS; k++)); do
    clip=$(ffprobe -v error -select_streams v:0 -show_entries stream=duration -of default=nw=1:nk=1 "$CLIPS_DIR/clip$k.mp4")
    got=$(ffprobe -v error -select_streams v:0 -show_entries stream=duration -of default=nw=1:nk=1 "$OUT/ours/job$k.mp4")
    awk -v a="$clip" -v s="$audio_seconds" -v b="$got" 'BEGIN { if (s < a) a = s; d = a - b; if (d < 0) d = -d; printf "%.4f\n", d }'
done | sort -g | tail -n 1)

# ---------------------------------------------------------------- report
row() { printf '%-64s %9s %15s %8s\n' "$@"; }
R=$(ratio "${W[batch_j2]}" "${W[xargs_p2]}")
SCALE=$(ratio "${W[batch_j1]}" "${W[batch_j2]}")
echo "muxctl batch vs xargs -P 2 ffmpeg: $CLIPS jobs (merge a 2-10 s clip of $(basename "$PHONE") + 10 s AAC, 12-frame contact sheet), median of $RUNS runs"
row "command" "wall (s)" "peak RSS (MiB)" "ratio"
row "muxctl batch --jobs 2" "${W[batch_j2]}" "${M[batch_j2]}" "$R"
row "xargs -P 2: ffmpeg -c copy -shortest; ffmpeg fps,scale,tile" "${W[xargs_p2]}" "${M[xargs_p2]}" ""
row "muxctl batch --jobs 1" "${W[batch_j1]}" "${M[batch_j1]}" ""
echo
echo "outputs of the last batch:     $ours_files merges, $ours_sheets contact sheets; largest |expected - output| video duration: $worst s (ffprobe's stream durations; reported, not checked)"
echo "ratio batch / xargs ffmpeg:    $R   (limit $MAX_BATCH_RATIO)"
echo "peak RSS of the batch:         ${M[batch_j2]} MiB   (limit $MAX_BATCH_MIB)"
echo "scaling --jobs 1 -> --jobs 2:  ${W[batch_j1]} s -> ${W[batch_j2]} s, x$SCALE on $(nproc) cores"
check_max "$R" "$MAX_BATCH_RATIO" "muxctl batch --jobs 2 takes more than $MAX_BATCH_RATIO x xargs -P 2 ffmpeg (ratio $R)"
check_max "${M[batch_j2]}" "$MAX_BATCH_MIB" "muxctl batch peaks above $MAX_BATCH_MIB MiB (${M[batch_j2]})"
((ours_files == CLIPS && ours_sheets == CLIPS)) || { echo "FAIL: the batch made $ours_files merges and $ours_sheets sheets of $CLIPS"; STATUS=1; }
((STATUS == 0)) && echo "OK"
exit "$STATUS"
