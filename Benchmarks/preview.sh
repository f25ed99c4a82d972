#!/usr/bin/env bash
# Compares `muxctl preview` with the ffmpeg CLI on compare.sh's 10-minute
# 720p30 H.264 input (keyframe every 2 s):
# - thumbnails: 12 evenly spaced 320 px frames in one `muxctl preview --frames 12`
#   vs 12 `ffmpeg -ss T -i IN -frames:v 1` calls, one after another, at the same
#   times (the middle of each twelfth); also one frame vs one ffmpeg call
#   (reported, not checked);
# - clip: a 5-second 360p H.264 + AAC clip from the middle (300 s) of the same
#   video with its 10-minute AAC track, `muxctl preview --clip` vs
#   `ffmpeg -ss 300 -i IN -t 5` with the same encoder settings.
# Run by compare.sh; runs on its own too.
#
# Usage: bash Benchmarks/preview.sh [--thumbs-only | --clip-only]   (from anywhere)
# Env:   RUNS=5                  timed runs of each command (median is reported)
#        MAX_THUMB_RATIO=0.6     fail if median(ours) / median(12 ffmpeg calls) is above this
#        MAX_CLIP_RATIO=1.1      fail if median(ours) / median(ffmpeg) for the clip is above this
#        CLIP_START=300          where the clip starts, in seconds
#        KEEP_OUTPUTS=1          keep the thumbnails and clips in Benchmarks/work/preview/
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

MAX_THUMB_RATIO="${MAX_THUMB_RATIO:-0.6}"
MAX_CLIP_RATIO="${MAX_CLIP_RATIO:-1.1}"
CLIP_START="${CLIP_START:-300}"
FRAMES=12
SIZE=320
CLIP_SECONDS=5
CLIP_HEIGHT=360
MODE="${1:-}"
case "$MODE" in
    "") NAMES=(thumbs_ours thumbs_ff one_ours one_ff clip_ours clip_ff) ;;
    --thumbs-only) NAMES=(thumbs_ours thumbs_ff one_ours one_ff) ;;
    --clip-only) NAMES=(clip_ours clip_ff) ;;
    *) die "usage: preview.sh [--thumbs-only | --clip-only]" ;;
esac
command -v ffprobe >/dev/null || die "ffprobe not found (apt-get install ffmpeg)"

make_inputs
build_muxctl

THUMB_IN="$V_LONG"  # video only
CLIP_IN="$AV_LONG"  # the same video with the AAC track
OUT="$WORK/preview"
cleanup() {
    rm -f "$TIMES"
    if [[ -z "${KEEP_OUTPUTS:-}" ]]; then rm -rf "$OUT"; fi
}
trap cleanup EXIT
mkdir -p "$OUT"

# The times muxctl's --frames 12 picks: the middle of each twelfth of the
# video stream's duration.
DURATION=$(ffprobe -v error -select_streams v:0 -show_entries stream=duration -of default=nw=1:nk=1 "$THUMB_IN")
mapfile -t AT < <(awk -v d="$DURATION" -v n="$FRAMES" 'BEGIN { for (k = 0; k < n; k++) printf "%.6f\n", (k + 0.5) * d / n }')
ONE_AT=${AT[FRAMES / 2]} # for the one-frame comparison
# The keyframe interval(s) of the input, for the report (from the packet flags).
GOP=$(ffprobe -v error -select_streams v:0 -show_entries packet=pts_time,flags -of csv=p=0 "$THUMB_IN" |
    awk -F, '$2 ~ /K/ { if (seen) d[sprintf("%.3f", $1 - last)]++; last = $1; seen = 1 }
        END { for (k in d) printf "%s%s s (%d)", (n++ ? ", " : ""), k, d[k] }')

# 12 ffmpeg calls in a row, timed as a whole (GNU time's peak RSS of a shell
# is the largest of its children's): bash -c FF_THUMBS _ DIR IN T...
FF_THUMBS='dir=$1 in=$2; shift 2; k=0
for t; do
    ffmpeg -nostdin -v error -ss "$t" -i "$in" -frames:v 1 -vf scale='"$SIZE"':-2 -y "$dir/ff_$(printf %02d "$k").png" || exit 1
    k=$((k + 1))
done'

# argv_for NAME DIR_OR_FILE: fills CMD with the command line to time.
argv_for() {
    case $1 in
        thumbs_ours) CMD=("$MUXCTL" preview "$THUMB_IN" --out "$2" --frames "$FRAMES" --size "$SIZE" --force --quiet) ;;
        thumbs_ff)   CMD=(bash -c "$FF_THUMBS" ff-thumbs "$2" "$THUMB_IN" "${AT[@]}") ;;
        one_ours)    CMD=("$MUXCTL" preview "$THUMB_IN" --out "$2" --at "$ONE_AT" --size "$SIZE" --force --quiet) ;;
        one_ff)      CMD=(ffmpeg -nostdin -v error -ss "$ONE_AT" -i "$THUMB_IN" -frames:v 1 -vf "scale=$SIZE:-2" -y "$2/ff.png") ;;
        clip_ours)   CMD=("$MUXCTL" preview "$CLIP_IN" --clip "$2" --start "$CLIP_START" --seconds "$CLIP_SECONDS"
                          --height "$CLIP_HEIGHT" --force --quiet) ;;
        clip_ff)     CMD=(ffmpeg -nostdin -v error -ss "$CLIP_START" -i "$CLIP_IN" -t "$CLIP_SECONDS" -vf "scale=-2:$CLIP_HEIGHT"
                          -c:v libx264 -preset fast -crf 23 -c:a aac -b:a 128k -movflags +faststart -y "$2") ;;
    esac
}
out_for() { case $1 in clip_*) echo "$OUT/$1.mp4" ;; *) echo "$OUT/$1" ;; esac; }

# measure NAME -> T_SECS, T_KIB (see timed). Untimed before: the previous
# output goes (a folder is made anew), `sync` flushes dirty pages.
measure() {
    local name=$1 out
    out=$(out_for "$name")
    rm -rf "$out"
    [[ $name == clip_* ]] || mkdir -p "$out"
    sync
    argv_for "$name" "$out"
    timed "${CMD[@]}"
}

say "== preview warm-up (untimed): page cache and binaries"
cat "$THUMB_IN" "$CLIP_IN" >/dev/null
for name in "${NAMES[@]}"; do measure "$name"; done

declare -A WALL RSS W M
rounds "${NAMES[@]}"
has() { [[ " ${NAMES[*]} " == *" $1 "* ]]; }

# ---------------------------------------------------------------- sanity
# The last run's outputs are still there. Thumbnails: how many, what size, and
# the PSNR of each of ours against a reference made by ffmpeg, untimed, at the
# same time with BT.709 (the input is untagged HD; ffmpeg's scale filter would
# assume BT.601, muxctl assumes BT.709 above 576 lines) and accurate bicubic
# scaling: inf is pixel-identical; the same frame scaled differently gives
# 30 dB or more, the next frame of testsrc2 under 20 dB.
png_size() { [[ -s "$1" ]] && ffprobe -v error -show_entries stream=width,height -of csv=s=x:p=0 "$1" || echo "?"; }
psnr_min() { # DIR: the lowest PSNR of its FRAMES images against the references, "-" if it holds another number
    local -a a
    local ref="$OUT/reference" k
    mapfile -t a < <(find "$1" -name '*.png' | sort)
    if ((${#a[@]} != FRAMES)); then echo "-"; return; fi
    mkdir -p "$ref"
    for ((k = 0; k < FRAMES; k++)); do
        ffmpeg -nostdin -v error -ss "${AT[k]}" -i "$THUMB_IN" -frames:v 1 \
            -vf "scale=$SIZE:-2:flags=bicubic+accurate_rnd+full_chroma_int:in_color_matrix=bt709" -y "$ref/$k.png" ||
            die "reference frame at ${AT[k]} s failed"
        ffmpeg -nostdin -v info -i "${a[k]}" -i "$ref/$k.png" -lavfi "[0][1]scale2ref[x][y];[x][y]psnr" -f null - 2>&1 |
            sed -n 's/.*PSNR.* average:\([0-9.inf]*\).*/\1/p'
    done | sort -g | head -n 1
}
thumbs_facts() { # DIR
    local -a files
    mapfile -t files < <(find "$1" -name '*.png' | sort)
    echo "${#files[@]} x $(png_size "${files[0]:-}")"
}
# Clips: what each holds, and whether the moov comes before the mdat.
clip_facts() {
    local v a top
    v=$(ffprobe -v error -select_streams v:0 -count_frames -show_entries stream=codec_name,width,height,nb_read_frames -of csv=p=0 "$1")
    a=$(ffprobe -v error -select_streams a:0 -show_entries stream=codec_name,sample_rate,channels,bit_rate -of csv=p=0 "$1")
    top=$(ffprobe -v trace "$1" 2>&1 | sed -n "s/.*type:'\([a-z]*\)' parent:'root'.*/\1/p" | tr '\n' ' ')
    printf 'video %s; audio %s; %.3f s; top-level boxes: %s' "${v:-none}" "${a:-none}" \
        "$(ffprobe -v error -show_entries format=duration -of default=nw=1:nk=1 "$1")" "$top"
}

# ---------------------------------------------------------------- report
row() { printf '%-56s %9s %15s %8s\n' "$@"; }
echo "muxctl preview vs ffmpeg: $(size_mib "$THUMB_IN") MiB 10 min 1280x720 30 fps H.264 (keyframe interval: $GOP), median of $RUNS runs"
row "command" "wall (s)" "peak RSS (MiB)" "ratio"
if has thumbs_ours; then
    R_THUMBS=$(ratio "${W[thumbs_ours]}" "${W[thumbs_ff]}")
    R_ONE=$(ratio "${W[one_ours]}" "${W[one_ff]}")
    row "muxctl preview --frames $FRAMES --size $SIZE" "${W[thumbs_ours]}" "${M[thumbs_ours]}" "$R_THUMBS"
    row "$FRAMES x ffmpeg -ss T -frames:v 1 -vf scale=$SIZE:-2" "${W[thumbs_ff]}" "${M[thumbs_ff]}" ""
    row "muxctl preview --at $ONE_AT (one frame)" "${W[one_ours]}" "${M[one_ours]}" "$R_ONE"
    row "ffmpeg -ss $ONE_AT -frames:v 1 (one frame)" "${W[one_ff]}" "${M[one_ff]}" ""
fi
if has clip_ours; then
    R_CLIP=$(ratio "${W[clip_ours]}" "${W[clip_ff]}")
    row "muxctl preview --clip --start $CLIP_START --seconds $CLIP_SECONDS --height $CLIP_HEIGHT" "${W[clip_ours]}" "${M[clip_ours]}" "$R_CLIP"
    row "ffmpeg -ss $CLIP_START -t $CLIP_SECONDS x264 fast crf 23, aac 128k" "${W[clip_ff]}" "${M[clip_ff]}" ""
fi
echo
if has thumbs_ours; then
    echo "thumbnail times (s):           ${AT[*]}"
    echo "thumbnails:                    ours $(thumbs_facts "$(out_for thumbs_ours)"), ffmpeg $(thumbs_facts "$(out_for thumbs_ff)")"
    echo "lowest PSNR, ours vs ffmpeg's frame at T (BT.709, accurate scaling):  $(psnr_min "$(out_for thumbs_ours)") dB   (inf: identical; the same frame: 30 or more)"
    echo "ratio ours/ffmpeg, thumbnails: $R_THUMBS   (limit $MAX_THUMB_RATIO)"
    echo "ratio ours/ffmpeg, one frame:  $R_ONE   (reported, not checked)"
    check_max "$R_THUMBS" "$MAX_THUMB_RATIO" "muxctl preview --frames $FRAMES takes more than $MAX_THUMB_RATIO x $FRAMES ffmpeg calls (ratio $R_THUMBS)"
fi
if has clip_ours; then
    echo "clip, ours:                    $(clip_facts "$(out_for clip_ours)")"
    echo "clip, ffmpeg:                  $(clip_facts "$(out_for clip_ff)")"
    echo "ratio ours/ffmpeg, clip:       $R_CLIP   (limit $MAX_CLIP_RATIO)"
    check_max "$R_CLIP" "$MAX_CLIP_RATIO" "muxctl preview --clip is slower than $MAX_CLIP_RATIO x ffmpeg (ratio $R_CLIP)"
fi
((STATUS == 0)) && echo "OK"
exit "$STATUS"
