#!/usr/bin/env bash
# Fragmented MP4 input, short and long: a 10-second and a one-hour recording
# in the layout browsers and OBS write (an empty moov, then a moof/mdat pair
# per keyframe, every 2 s), 640x360 30 fps H.264 and 48 kHz AAC, made once by
# stream-copying a 10-second clip in a loop.
# - probe: `muxctl probe` against `ffprobe` (its default: the format and
#   streams), wall time and peak RSS, on each;
# - merge: `muxctl merge` of the recording's video with its own audio (both
#   fragmented) against `ffmpeg -c copy`, wall time and peak RSS;
# - stream: the same merge as fragmented MP4 on standard output (`muxctl
#   merge ... -`) against `ffmpeg -c copy -movflags
#   frag_keyframe+empty_moov+default_base_moof -f mp4 -`, both into a file.
# Memory must stay flat: the one-hour file's peak RSS within MAX_GROWTH_MIB
# of the 10-second one's, for the probe, the merge and the streamed merge.
# The merge to a movie file does not yet: FFmpeg's MP4 muxer keeps an entry
# for every sample it writes until it writes the sample tables (about 16 MiB
# for the hour), and this check fails on it.
#
# Usage: bash Benchmarks/fragmented.sh   (from anywhere)
# Env:   RUNS=5               timed runs of each command (median is reported)
#        MAX_GROWTH_MIB=5     fail if the hour's peak RSS exceeds the 10 s one's by more
#        MAX_PROBE_RATIO=1.0  fail if muxctl probe of the hour is slower than ffprobe's by more
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

MAX_GROWTH_MIB="${MAX_GROWTH_MIB:-5}"
MAX_PROBE_RATIO="${MAX_PROBE_RATIO:-1.0}"
command -v ffprobe >/dev/null || die "ffprobe not found (apt-get install ffmpeg)"

CLIP="$WORK/fmp4_clip_10s.mp4"
SHORT="$WORK/fmp4_10s.mp4"
HOUR="$WORK/fmp4_1h.mp4"
if [[ ! -s "$CLIP" ]]; then
    say "== making $CLIP (10 s 640x360 H.264, a keyframe every 2 s, + AAC)"
    ffmpeg -nostdin -v error -y \
        -f lavfi -i "testsrc2=size=640x360:rate=30:duration=10" \
        -f lavfi -i "sine=frequency=440:sample_rate=48000:duration=10" \
        -c:v libx264 -preset veryfast -b:v 1M -g 60 -keyint_min 60 -x264-params scenecut=0 -bf 2 -pix_fmt yuv420p \
        -c:a aac -b:a 96k -f mp4 "$CLIP.part"
    mv -f "$CLIP.part" "$CLIP"
fi
# fragment LOOPS OUT: the clip played LOOPS + 1 times, copied into fragments.
fragment() {
    [[ -s "$2" ]] && return 0
    say "== making $2 (the clip $(( $1 + 1 )) times, fragmented: empty moov, a fragment per keyframe)"
    ffmpeg -nostdin -v error -y -stream_loop "$1" -i "$CLIP" -c copy \
        -movflags frag_keyframe+empty_moov+default_base_moof -f mp4 "$2.part"
    mv -f "$2.part" "$2"
}
fragment 0 "$SHORT"
fragment 359 "$HOUR"
build_muxctl

declare -A WALL RSS W M
measure() {
    local out="$WORK/fragmented_$1.mp4" file
    case $1 in *_hour) file=$HOUR ;; *) file=$SHORT ;; esac
    rm -f "$out"
    sync
    case $1 in
        probe_*) timed "$MUXCTL" probe "$file" ;;
        ffprobe_*) timed ffprobe -v error "$file" ;;
        merge_*) timed "$MUXCTL" merge --force --quiet "$file" "$file" "$out" ;;
        ffmpeg_*) timed ffmpeg -nostdin -v error -y -i "$file" -map 0:v -map 0:a -c copy "$out" ;;
        stream_*) timed sh -c 'exec "$0" merge --quiet "$1" "$1" - >"$2"' "$MUXCTL" "$file" "$out" ;;
        ffstream_*)
            timed sh -c 'exec ffmpeg -nostdin -v error -i "$0" -map 0:v -map 0:a -c copy -movflags frag_keyframe+empty_moov+default_base_moof -f mp4 - >"$1"' \
                "$file" "$out" ;;
    esac
}
NAMES=(probe_short ffprobe_short probe_hour ffprobe_hour merge_short ffmpeg_short merge_hour ffmpeg_hour
    stream_short ffstream_short stream_hour ffstream_hour)
say "== warm-up (untimed): page cache and binaries"
for name in "${NAMES[@]}"; do measure "$name"; done
rounds "${NAMES[@]}"

echo
echo "fragmented MP4 input: $(size_mib "$SHORT") MiB (10 s) and $(size_mib "$HOUR") MiB (1 h), $(grep -c . <<<"$(ffprobe -v error -show_entries stream=index -of csv=p=0 "$HOUR")") streams, median of $RUNS runs"
printf '%-40s %9s %15s\n' command "wall (s)" "peak RSS (MiB)"
for name in "${NAMES[@]}"; do
    printf '%-40s %9s %15s\n' "$name" "${W[$name]}" "${M[$name]}"
done
echo
PROBE_RATIO=$(ratio "${W[probe_hour]}" "${W[ffprobe_hour]}")
echo "probe of the hour, muxctl/ffprobe wall: $PROBE_RATIO (limit $MAX_PROBE_RATIO)"
check_max "$PROBE_RATIO" "$MAX_PROBE_RATIO" "muxctl probes the hour slower than ffprobe"
echo "merge of the hour, muxctl/ffmpeg wall: $(ratio "${W[merge_hour]}" "${W[ffmpeg_hour]}")"
for kind in probe merge stream; do
    growth=$(minus "${M[${kind}_hour]}" "${M[${kind}_short]}")
    echo "$kind peak RSS growth, 10 s -> 1 h: $growth MiB (limit $MAX_GROWTH_MIB)"
    check_max "$growth" "$MAX_GROWTH_MIB" "$kind of the hour takes $growth MiB more than of 10 s"
done
echo "streamed merge of the hour, muxctl/ffmpeg wall: $(ratio "${W[stream_hour]}" "${W[ffstream_hour]}"), peak RSS: $(ratio "${M[stream_hour]}" "${M[ffstream_hour]}")"
echo "ffmpeg's peak RSS growth, 10 s -> 1 h: merge $(minus "${M[ffmpeg_hour]}" "${M[ffmpeg_short]}") MiB, stream $(minus "${M[ffstream_hour]}" "${M[ffstream_short]}") MiB"
out_seconds=$(ffprobe -v error -show_entries format=duration -of csv=p=0 "$WORK/fragmented_merge_hour.mp4")
echo "the hour's merge lasts $out_seconds s"
[[ $STATUS -eq 0 ]] && echo OK
exit "$STATUS"
