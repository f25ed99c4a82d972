#!/usr/bin/env bash
# A frame-exact cut inside a GOP (`muxctl compose --clip FILE@START-`),
# side by side in one run: the ten-minute 720p recording (30 fps, a keyframe
# every 2 s, B-frames, its own AAC sound) from 301.0 s, the middle of the
# GOP of 300-302 s, to its end. MediaMux encodes the 30 frames before the
# keyframe at 302 s and copies the rest. Against:
# - the plain copy: the same clip from the keyframe at 302 s (nothing encoded);
# - that GOP's 60 frames encoded with the same encoder and settings
#   (`ffmpeg -ss 300 -i FILE -frames:v 60 -c:v libx264 -preset veryfast -crf 18`);
# - the frame-exact alternative with the ffmpeg CLI: the trimmed clip
#   re-encoded with that encoder and settings, its sound copied
#   (`ffmpeg -ss 301 -i FILE -c:v libx264 -preset veryfast -crf 18 -c:a copy`).
#
# Usage: bash Benchmarks/cut.sh   (from anywhere)
# Env:   RUNS=5            timed runs of the cut, the copy and the GOP (medians)
#        REENCODE_RUNS=1   timed runs of the ffmpeg re-encode (about a minute each)
#        MAX_GOP_RATIO=1.5     fail above: (cut - copy) over the GOP's encode
#        MAX_REENCODE_RATIO=0.1  fail above: cut over the ffmpeg re-encode
#        MUXCTL   a muxctl to use instead of building one
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
command -v ffmpeg >/dev/null || die "ffmpeg not found (apt-get install ffmpeg)"
REENCODE_RUNS="${REENCODE_RUNS:-1}"
MAX_GOP_RATIO="${MAX_GOP_RATIO:-1.5}"
MAX_REENCODE_RATIO="${MAX_REENCODE_RATIO:-0.1}"
make_video 600 "$V_LONG"
make_audio 600 "$A_LONG"
make_av "$V_LONG" "$A_LONG" "$AV_LONG"
build_muxctl

OUT_CUT="$WORK/cut_exact.mp4"
OUT_COPY="$WORK/cut_copy.mp4"
OUT_GOP="$WORK/cut_gop.mp4"
OUT_REENCODE="$WORK/cut_reencode.mp4"
cleanup() { rm -f "$TIMES" "$OUT_CUT" "$OUT_COPY" "$OUT_GOP" "$OUT_REENCODE"; }
trap cleanup EXIT
# The encoder and settings MediaMux encodes a cut's frames with (CutEncoding's defaults).
X264=(-c:v libx264 -preset veryfast -crf 18)

measure() {
    sync
    case $1 in
        cut) rm -f "$OUT_CUT"; timed "$MUXCTL" compose --quiet "$OUT_CUT" --clip "$AV_LONG@301-" ;;
        copy) rm -f "$OUT_COPY"; timed "$MUXCTL" compose --quiet "$OUT_COPY" --clip "$AV_LONG@302-" ;;
        gop) rm -f "$OUT_GOP"; timed ffmpeg -nostdin -v error -y -ss 300 -i "$AV_LONG" -frames:v 60 "${X264[@]}" -an "$OUT_GOP" ;;
        reencode) rm -f "$OUT_REENCODE"; timed ffmpeg -nostdin -v error -y -ss 301 -i "$AV_LONG" "${X264[@]}" -c:a copy "$OUT_REENCODE" ;;
    esac
}

say "== warm-up (untimed): page cache and binaries"
cat "$AV_LONG" >/dev/null
for name in cut copy gop; do measure "$name"; done
declare -A WALL RSS W M
rounds cut copy gop
all=$RUNS
RUNS=$REENCODE_RUNS rounds reencode
RUNS=$all

frames() { ffprobe -v error -select_streams v -count_packets -show_entries stream=nb_read_packets -of default=nw=1:nk=1 "$1"; }
dur() { ffprobe -v error -show_entries format=duration -of default=nw=1:nk=1 "$1"; }
gop=$(minus "${W[cut]}" "${W[copy]}")
gop_ratio=$(ratio "$gop" "${W[gop]}")
reencode_ratio=$(ratio "${W[cut]}" "${W[reencode]}")

echo
echo "== a 10-minute 720p H.264 clip cut at 301.0 s, inside the GOP of 300-302 s (medians of $RUNS; the re-encode $REENCODE_RUNS)"
printf '%-46s %9s %10s %8s\n' command "wall (s)" "peak MiB" frames
printf '%-46s %9s %10s %8s\n' "muxctl compose @301- (30 frames encoded)" "${W[cut]}" "${M[cut]}" "$(frames "$OUT_CUT")"
printf '%-46s %9s %10s %8s\n' "muxctl compose @302- (plain copy)" "${W[copy]}" "${M[copy]}" "$(frames "$OUT_COPY")"
printf '%-46s %9s %10s %8s\n' "ffmpeg: the GOP's 60 frames encoded" "${W[gop]}" "${M[gop]}" "$(frames "$OUT_GOP")"
printf '%-46s %9s %10s %8s\n' "ffmpeg -ss 301: the clip re-encoded" "${W[reencode]}" "${M[reencode]}" "$(frames "$OUT_REENCODE")"
echo "durations: cut $(dur "$OUT_CUT") s, re-encoded $(dur "$OUT_REENCODE") s (299 s asked)"
echo "cut less copy over the GOP's encode: $gop s / ${W[gop]} s = $gop_ratio (at most $MAX_GOP_RATIO)"
echo "cut over the ffmpeg re-encode: $reencode_ratio (at most $MAX_REENCODE_RATIO)"
check_max "$gop_ratio" "$MAX_GOP_RATIO" "the cut costs more than $MAX_GOP_RATIO times the GOP's encode over the copy"
check_max "$reencode_ratio" "$MAX_REENCODE_RATIO" "the cut against ffmpeg's frame-exact re-encode"
[[ $STATUS == 0 ]] && echo OK
exit $STATUS
