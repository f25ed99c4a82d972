#!/usr/bin/env bash
# Compares `muxctl merge` of compare.sh's 10-minute 720p30 H.264 video with a
# 10-minute WAV (48 kHz stereo 16-bit PCM, which MP4 cannot carry: muxctl
# encodes it AAC in the same pass that copies the video) with
# `ffmpeg -i VIDEO -i WAV -map 0:v -map 1:a -c:v copy -c:a aac -shortest`, the
# same AAC encoder at ffmpeg's default bit rate (128 kb/s for stereo; muxctl's
# default is 192, so ours is given 128k too).
# Run by compare.sh; runs on its own too.
#
# Usage: bash Benchmarks/transcode.sh   (from anywhere)
# Env:   RUNS=5                  timed runs of each command (median is reported)
#        MAX_TRANSCODE_RATIO=1.0 fail if median(ours) / median(ffmpeg) is above this
#        MAX_TRANSCODE_MIB=60    fail if ours' median peak RSS is above this
#        KEEP_OUTPUTS=1          keep the outputs in Benchmarks/work/
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

MAX_TRANSCODE_RATIO="${MAX_TRANSCODE_RATIO:-1.0}"
MAX_TRANSCODE_MIB="${MAX_TRANSCODE_MIB:-60}"
command -v ffprobe >/dev/null || die "ffprobe not found (apt-get install ffmpeg)"

make_inputs
WAV="$WORK/audio_10m.wav"
if [[ ! -s "$WAV" ]]; then
    say "== making $WAV (600 s 48 kHz stereo pcm_s16le sine)"
    ffmpeg -nostdin -v error -y -f lavfi -i "sine=frequency=440:sample_rate=48000:duration=600" -ac 2 -c:a pcm_s16le -f wav "$WAV.part"
    mv -f "$WAV.part" "$WAV"
fi
build_muxctl

NAMES=(ours ffmpeg)
OUT_OURS="$WORK/transcode_ours.mp4"
OUT_FF="$WORK/transcode_ff.mp4"
cleanup() {
    rm -f "$TIMES"
    if [[ -z "${KEEP_OUTPUTS:-}" ]]; then rm -f "$OUT_OURS" "$OUT_FF"; fi
}
trap cleanup EXIT

argv_for() {
    case $1 in
        ours)   CMD=("$MUXCTL" merge --force --quiet --audio-bitrate 128k "$V_LONG" "$WAV" "$OUT_OURS") ;;
        ffmpeg) CMD=(ffmpeg -nostdin -v error -y -i "$V_LONG" -i "$WAV" -map 0:v -map 1:a -c:v copy -c:a aac -b:a 128k -shortest "$OUT_FF") ;;
    esac
}
out_for() { case $1 in ours) echo "$OUT_OURS" ;; ffmpeg) echo "$OUT_FF" ;; esac; }

measure() {
    rm -f "$(out_for "$1")"
    sync
    argv_for "$1"
    timed "${CMD[@]}"
}

say "== transcode warm-up (untimed): page cache and binaries"
cat "$V_LONG" "$WAV" >/dev/null
for name in "${NAMES[@]}"; do measure "$name"; done

declare -A WALL RSS W M
rounds "${NAMES[@]}"
# The last run's outputs: what each holds, and how long its audio plays.
probe() { ffprobe -v error -show_entries stream=codec_name,duration -of csv=p=0 "$1" | tr '\n' ' '; }

echo "muxctl merge vs ffmpeg, 10 min 720p H.264 (copied) + 10 min WAV (encoded AAC 128k), median of $RUNS runs"
printf '%-44s %9s %15s\n' command "wall (s)" "peak RSS (MiB)"
printf '%-44s %9s %15s\n' "muxctl merge --audio-bitrate 128k" "${W[ours]}" "${M[ours]}"
printf '%-44s %9s %15s\n' "ffmpeg -c:v copy -c:a aac -b:a 128k -shortest" "${W[ffmpeg]}" "${M[ffmpeg]}"
echo
echo "outputs:                       ours $(probe "$OUT_OURS")"
echo "                               ffmpeg $(probe "$OUT_FF")"
TRANSCODE_RATIO=$(ratio "${W[ours]}" "${W[ffmpeg]}")
echo "ratio ours/ffmpeg (wall):      $TRANSCODE_RATIO   (limit $MAX_TRANSCODE_RATIO)"
echo "ours peak RSS:                 ${M[ours]} MiB   (limit $MAX_TRANSCODE_MIB)"
check_max "$TRANSCODE_RATIO" "$MAX_TRANSCODE_RATIO" "muxctl's transcoding merge is slower than ffmpeg's (ratio $TRANSCODE_RATIO > $MAX_TRANSCODE_RATIO)"
check_max "${M[ours]}" "$MAX_TRANSCODE_MIB" "muxctl's transcoding merge peaks above $MAX_TRANSCODE_MIB MiB (${M[ours]})"
[[ $STATUS -eq 0 ]] && echo OK
exit "$STATUS"
