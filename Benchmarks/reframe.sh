#!/usr/bin/env bash
# Compares `muxctl merge --orientation landscape` of a portrait phone clip
# (re-framed: decoded, turned, fitted with blurred sides, encoded) with the
# ffmpeg CLI doing the same work: the same libavfilter graph (muxctl prints
# it in --json; ffmpeg runs it with -noautorotate, the turn being in it), the
# same encoder, preset and CRF, and `-c:a copy`. Two clips, made once:
# - h264: 60 s, 1080x1920 as shown (coded 1920x1080, turned 90° by its
#   display matrix, as a phone writes it), 30 fps H.264; libx264 both sides.
# - hlg: 10 s of the same in 10-bit HLG HEVC (BT.2020); libx265 both sides,
#   10-bit out, hvc1.
# Also a copying merge of the H.264 clip, which must stay as fast as before.
# Run on its own (compare.sh does not: a few minutes of encoding).
#
# Usage: bash Benchmarks/reframe.sh   (from anywhere)
# Env:   RUNS=3                 timed runs of each command (median is reported)
#        MAX_REFRAME_RATIO=1.0  fail if median(ours) / median(ffmpeg) is above this, for either clip
#        MAX_REFRAME_RSS=1.0    fail if ours' median peak RSS / ffmpeg's is above this, for either clip
#        KEEP_OUTPUTS=1         keep the outputs in Benchmarks/work/
set -euo pipefail
RUNS="${RUNS:-3}"
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

MAX_REFRAME_RATIO="${MAX_REFRAME_RATIO:-1.0}"
MAX_REFRAME_RSS="${MAX_REFRAME_RSS:-1.0}"
command -v ffprobe >/dev/null || die "ffprobe not found (apt-get install ffmpeg)"
command -v python3 >/dev/null || die "python3 not found"

# make_phone NAME SECONDS ENCODER-ARGS...: a portrait phone clip as a phone
# writes it (coded landscape, 90° matrix) with a 48 kHz AAC track.
make_phone() {
    local out="$WORK/phone_$1.mp4" seconds=$2
    shift 2
    [[ -s "$out" ]] && return 0
    say "== making $out (${seconds}s, 1080x1920 shown)"
    ffmpeg -nostdin -v error -y \
        -f lavfi -i "testsrc2=size=1080x1920:rate=30:duration=${seconds}" \
        -f lavfi -i "sine=frequency=440:sample_rate=48000:duration=${seconds}" \
        -vf transpose=cclock "$@" -c:a aac -b:a 128k -ac 2 -movflags +faststart -f mp4 "$out.part"
    python3 "$ROOT/TestMedia/patch-rotation.py" "$out.part" 90 >/dev/null
    mv -f "$out.part" "$out"
}
make_phone h264 60 -c:v libx264 -preset veryfast -crf 20 -g 60 -bf 2 -pix_fmt yuv420p
make_phone hlg 10 -c:v libx265 -preset ultrafast -crf 22 -pix_fmt yuv420p10le -tag:v hvc1 \
    -color_primaries bt2020 -color_trc arib-std-b67 -colorspace bt2020nc \
    -x265-params log-level=error:colorprim=bt2020:transfer=arib-std-b67:colormatrix=bt2020nc
SONG="$WORK/audio_10m.m4a"
make_audio 600 "$SONG"
build_muxctl

cleanup() {
    rm -f "$TIMES"
    if [[ -z "${KEEP_OUTPUTS:-}" ]]; then rm -f "$WORK"/reframe_*.mp4; fi
}
trap cleanup EXIT

# The encoding muxctl chose, from a first (untimed) run's --json: the graph
# for ffmpeg, the encoder, its preset and CRF, the pixel format.
plan_for() { # CLIP
    "$MUXCTL" merge --force --json --orientation landscape "$WORK/phone_$1.mp4" "$SONG" "$WORK/reframe_plan_$1.mp4" |
        python3 -c '
import json, sys
r = json.load(sys.stdin)["video"]["reframed"]
print(r["filterGraph"].replace("[in0]", "[0:v]", 1) + "[v]")
print(r["encoder"]); print(r["preset"]); print(r["quality"]); print("yuv420p10le" if r["bitDepth"] > 8 else "yuv420p")'
}

declare -A GRAPH ENCODER PRESET CRF PIXELS
for clip in h264 hlg; do
    mapfile -t plan < <(plan_for "$clip")
    GRAPH[$clip]=${plan[0]}; ENCODER[$clip]=${plan[1]}; PRESET[$clip]=${plan[2]}; CRF[$clip]=${plan[3]}; PIXELS[$clip]=${plan[4]}
    say "== $clip: ${ENCODER[$clip]} -preset ${PRESET[$clip]} -crf ${CRF[$clip]} -pix_fmt ${PIXELS[$clip]}"
    say "   ${GRAPH[$clip]}"
done

argv_for() { # NAME: ours_CLIP, ffmpeg_CLIP, or copy_h264 (a merge that copies)
    local clip=${1#*_} out="$WORK/reframe_$1.mp4"
    case $1 in
        ours_*) CMD=("$MUXCTL" merge --force --quiet --orientation landscape "$WORK/phone_$clip.mp4" "$SONG" "$out") ;;
        copy_*) CMD=("$MUXCTL" merge --force --quiet "$WORK/phone_$clip.mp4" "$SONG" "$out") ;;
        ffmpeg_*)
            local extra=()
            [[ ${ENCODER[$clip]} == libx265 ]] && extra=(-x265-params log-level=error -tag:v hvc1)
            CMD=(ffmpeg -nostdin -v error -y -noautorotate -i "$WORK/phone_$clip.mp4" -i "$SONG"
                -filter_complex "${GRAPH[$clip]}" -map "[v]" -map 1:a
                -c:v "${ENCODER[$clip]}" -preset "${PRESET[$clip]}" -crf "${CRF[$clip]}" -pix_fmt "${PIXELS[$clip]}" "${extra[@]}"
                -c:a copy -shortest "$out") ;;
    esac
}
measure() {
    rm -f "$WORK/reframe_$1.mp4"
    sync
    argv_for "$1"
    timed "${CMD[@]}"
}

NAMES=(ours_h264 ffmpeg_h264 ours_hlg ffmpeg_hlg copy_h264)
say "== warm-up (untimed): page cache and binaries"
cat "$WORK/phone_h264.mp4" "$WORK/phone_hlg.mp4" "$SONG" >/dev/null
for name in "${NAMES[@]}"; do measure "$name"; done

declare -A WALL RSS W M
rounds "${NAMES[@]}"
probe() { ffprobe -v error -select_streams v -show_entries stream=codec_name,width,height,pix_fmt,color_transfer,nb_frames,duration -of csv=p=0 "$1"; }

echo "muxctl merge --orientation landscape vs ffmpeg (same graph, encoder, preset, CRF; -c:a copy), median of $RUNS runs"
printf '%-58s %9s %15s\n' command "wall (s)" "peak RSS (MiB)"
for clip in h264 hlg; do
    printf '%-58s %9s %15s\n' "muxctl, $clip (${ENCODER[$clip]} ${PRESET[$clip]} crf ${CRF[$clip]})" "${W[ours_$clip]}" "${M[ours_$clip]}"
    printf '%-58s %9s %15s\n' "ffmpeg, $clip" "${W[ffmpeg_$clip]}" "${M[ffmpeg_$clip]}"
done
printf '%-58s %9s %15s\n' "muxctl, h264 copied (no --orientation)" "${W[copy_h264]}" "${M[copy_h264]}"
echo
for clip in h264 hlg; do
    echo "outputs $clip: ours   $(probe "$WORK/reframe_ours_$clip.mp4")"
    echo "             ffmpeg $(probe "$WORK/reframe_ffmpeg_$clip.mp4")"
    WALL_RATIO=$(ratio "${W[ours_$clip]}" "${W[ffmpeg_$clip]}")
    RSS_RATIO=$(ratio "${M[ours_$clip]}" "${M[ffmpeg_$clip]}")
    echo "ratio ours/ffmpeg, $clip: wall $WALL_RATIO (limit $MAX_REFRAME_RATIO), peak RSS $RSS_RATIO (limit $MAX_REFRAME_RSS)"
    check_max "$WALL_RATIO" "$MAX_REFRAME_RATIO" "muxctl re-frames $clip slower than ffmpeg (ratio $WALL_RATIO)"
    check_max "$RSS_RATIO" "$MAX_REFRAME_RSS" "muxctl re-framing $clip peaks above ffmpeg (ratio $RSS_RATIO)"
done
[[ $STATUS -eq 0 ]] && echo OK
exit "$STATUS"
