#!/usr/bin/env bash
# Compositions by copy (`muxctl compose`), side by side in one run:
# - three ten-minute 720p clips (the 451 MB recording three times) with a
#   30-minute AAC soundtrack, all copied, against `muxctl merge` of one
#   clip and the ten-minute soundtrack (throughput in MB/s of output) and
#   against ffmpeg's concat demuxer doing the same copy
#   (`-f concat -i LIST -i SOUNDTRACK -map 0:v -map 1:a -c copy -shortest`);
# - memory: the peak RSS of a composition of 2 clips of 10 s against one of
#   20 clips of 10 minutes (9 GB written once), each with a 10 s soundtrack
#   and --end video.
#
# Usage: bash Benchmarks/compose.sh   (from anywhere)
# Env:   RUNS=5   timed runs (medians)
#        MIN_THROUGHPUT_RATIO=0.9   fail below: compose MB/s over merge MB/s
#        MAX_CONCAT_RATIO=0.6       fail above: compose wall over the concat demuxer's
#        MAX_GROWTH_MIB=8           fail above: 20 x 10 min peak RSS less 2 x 10 s
#        MUXCTL   a muxctl to use instead of building one
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
command -v ffmpeg >/dev/null || die "ffmpeg not found (apt-get install ffmpeg)"
MIN_THROUGHPUT_RATIO="${MIN_THROUGHPUT_RATIO:-0.9}"
MAX_CONCAT_RATIO="${MAX_CONCAT_RATIO:-0.6}"
MAX_GROWTH_MIB="${MAX_GROWTH_MIB:-8}"
A_30M="$WORK/audio_30m.m4a"
make_video 600 "$V_LONG"
make_video 10 "$V_SHORT"
make_audio 600 "$A_LONG"
make_audio 10 "$A_SHORT"
make_audio 1800 "$A_30M"
build_muxctl

OUT_MERGE="$WORK/compose_merge.mp4"
OUT_COMPOSE="$WORK/compose_three.mp4"
OUT_CONCAT="$WORK/compose_concat.mp4"
OUT_MANY="$WORK/compose_many.mp4"
LIST="$WORK/compose_list.txt"
printf "file '%s'\n" "$V_LONG" "$V_LONG" "$V_LONG" > "$LIST"
cleanup() { rm -f "$TIMES" "$OUT_MERGE" "$OUT_COMPOSE" "$OUT_CONCAT" "$OUT_MANY" "$LIST"; }
trap cleanup EXIT

measure() {
    sync
    case $1 in
        merge) rm -f "$OUT_MERGE"; timed "$MUXCTL" merge --quiet "$V_LONG" "$A_LONG" "$OUT_MERGE" ;;
        compose) rm -f "$OUT_COMPOSE"; timed "$MUXCTL" compose --quiet "$OUT_COMPOSE" --clip "$V_LONG" --clip "$V_LONG" --clip "$V_LONG" --soundtrack "$A_30M" ;;
        concat) rm -f "$OUT_CONCAT"
            timed ffmpeg -nostdin -v error -y -f concat -safe 0 -i "$LIST" -i "$A_30M" -map 0:v -map 1:a -c copy -shortest -movflags +faststart "$OUT_CONCAT" ;;
    esac
}

say "== warm-up (untimed): page cache and binaries"
cat "$V_LONG" "$A_LONG" "$A_30M" >/dev/null
for name in merge compose concat; do measure "$name"; done
declare -A WALL RSS W M
rounds merge compose concat

merge_mbs=$(awk -v b="$(stat -c %s "$OUT_MERGE")" -v s="${W[merge]}" 'BEGIN { printf "%.1f", b / s / 1e6 }')
compose_mbs=$(awk -v b="$(stat -c %s "$OUT_COMPOSE")" -v s="${W[compose]}" 'BEGIN { printf "%.1f", b / s / 1e6 }')
dur() { ffprobe -v error -show_entries format=duration -of default=nw=1:nk=1 "$1"; }

say "== memory: 2 clips of 10 s, then 20 clips of 10 minutes (once)"
many=()
for _ in $(seq 20); do many+=(--clip "$V_LONG"); done
timed "$MUXCTL" compose --quiet --force "$OUT_MANY" --clip "$V_SHORT" --clip "$V_SHORT" --soundtrack "$A_SHORT" --end video
short_kib=$T_KIB
short_dur=$(dur "$OUT_MANY")
timed "$MUXCTL" compose --quiet --force "$OUT_MANY" "${many[@]}" --soundtrack "$A_SHORT" --end video
many_kib=$T_KIB
many_secs=$T_SECS
many_dur=$(dur "$OUT_MANY")
growth=$(awk -v a="$many_kib" -v b="$short_kib" 'BEGIN { printf "%.1f", (a - b) / 1024 }')

echo
echo "== three 10-minute clips and a 30-minute soundtrack, by copy (medians of $RUNS)"
printf '%-34s %9s %10s %9s\n' command "wall (s)" "peak MiB" "MB/s"
printf '%-34s %9s %10s %9s\n' "muxctl merge (one clip)" "${W[merge]}" "${M[merge]}" "$merge_mbs"
printf '%-34s %9s %10s %9s\n' "muxctl compose (three clips)" "${W[compose]}" "${M[compose]}" "$compose_mbs"
printf '%-34s %9s %10s\n' "ffmpeg -f concat -c copy" "${W[concat]}" "${M[concat]}"
echo "durations: compose $(dur "$OUT_COMPOSE") s, concat $(dur "$OUT_CONCAT") s (1800 s asked)"
throughput=$(ratio "$compose_mbs" "$merge_mbs")
concat=$(ratio "${W[compose]}" "${W[concat]}")
echo "compose/merge throughput: $throughput (at least $MIN_THROUGHPUT_RATIO)"
echo "compose/concat wall: $concat (at most $MAX_CONCAT_RATIO)"
echo "memory: 2 x 10 s $((short_kib / 1024)) MiB ($short_dur s), 20 x 10 min $((many_kib / 1024)) MiB ($many_dur s, $many_secs s): growth $growth MiB (at most $MAX_GROWTH_MIB)"
awk -v v="$throughput" -v m="$MIN_THROUGHPUT_RATIO" 'BEGIN { exit !(v + 0 < m + 0) }' && { echo "FAIL: compose throughput"; STATUS=1; }
check_max "$concat" "$MAX_CONCAT_RATIO" "compose against the concat demuxer"
check_max "$growth" "$MAX_GROWTH_MIB" "peak RSS growth from 2 x 10 s to 20 x 10 min"
[[ $STATUS == 0 ]] && echo OK
exit $STATUS
