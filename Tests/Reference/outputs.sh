#!/usr/bin/env bash
# Reference outputs: what a muxctl binary writes for every TestMedia fixture
# and every real file in the samples folder, as one line each of a table
# (job name, then the output's SHA-256, or the exit status and error line).
# A change that must not alter any output (a restructuring) is checked by
# making the table with the binary before and after it and comparing:
#
#   bash Tests/Reference/outputs.sh make    MUXCTL TABLE  # write the table
#   bash Tests/Reference/outputs.sh check   MUXCTL TABLE  # compare with one
#   bash Tests/Reference/outputs.sh matches MUXCTL TABLE  # exit 0 when the table is for this binary's FFmpeg
#
# CI checks the release binary against the committed table. A change that
# alters an output on purpose (a fix) makes the table again with the binary
# from before it plus the fix alone, and its commit says which lines moved and why.
#
# The jobs: every file merged as the video (with a fixed soundtrack) and as
# the soundtrack (with a fixed video), each to a file and streamed to
# standard output; the merge options the tests use, on a few pairs; and a
# preview clip and a contact sheet of every file. Bad inputs are jobs too:
# their error line and status must not change either.
#
# Outputs depend on FFmpeg's build (the muxer's version string, the
# encoders), so a table holds for the FFmpeg it was made with: its first
# line names it, and `check` refuses a table made with another. Encoded
# pictures (preview clips, re-framed videos) also depend on the processor:
# swscale's and x264's code for its SIMD features does not give the same
# bytes for every feature set (the same FFmpeg on an AMD EPYC with AVX2 and
# on the machine the table was made before gave other clips). The second
# line names those features, and those jobs' lines end in "pictures": on a
# processor with other features `check` passes over them, and says so.
set -uo pipefail

usage() { echo "usage: $0 make|check|matches MUXCTL TABLE" >&2; exit 2; }
[ $# -eq 3 ] || usage
mode=$1
muxctl=$(readlink -f "$2")
table=$(readlink -f "$3" 2>/dev/null || echo "$3")
case $mode in make|check|matches) ;; *) usage ;; esac
[ -x "$muxctl" ] || { echo "$0: $2 is not an executable" >&2; exit 2; }
# The FFmpeg the binary runs on, as its --version names it ("5.1.9-0+deb12u1").
ffmpeg_version=$("$muxctl" --version 2>&1 | sed -n 's/.*(FFmpeg \(.*\))$/\1/p')
if [ "$mode" = matches ]; then
    [ "$(head -1 "$table" 2>/dev/null)" = "# ffmpeg $ffmpeg_version" ]
    exit
fi
root=$(cd "$(dirname "$0")/../.." && pwd)
samples=${MEDIAMUX_SAMPLES:-$root/../shared/media}
[ -d "$samples" ] || { echo "$0: no samples folder at $samples (set MEDIAMUX_SAMPLES)" >&2; exit 2; }

# Everything runs in a scratch folder through two links, so that the paths
# in error lines are the same wherever the checkout and the samples are.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ln -s "$root/TestMedia" "$work/media"
ln -s "$(cd "$samples" && pwd)" "$work/samples"
mkdir "$work/out"
cd "$work"

results="$work/results.tsv"
echo "# ffmpeg $ffmpeg_version" >"$results"
# The SIMD features FFmpeg and x264 choose their code by (x86; none elsewhere).
echo "# cpu $(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null | tr ' ' '\n' | grep -E '^(sse|ssse3|avx|fma|f16c)' | sort | tr '\n' ' ' | sed 's/ $//')" >>"$results"

# run NAME OUTPUT-FILE muxctl-arguments...: one job, one line; with
# PICTURES=1 in its environment, a job that encodes pictures.
run() {
    local name=$1 output=$2 kind=""
    [ -n "${PICTURES:-}" ] && kind=$'\tpictures'
    shift 2
    rm -rf out/*
    local status=0
    if [ "$output" = "-" ]; then
        "$muxctl" "$@" >out/stream 2>out/stderr || status=$?
        output=out/stream
    else
        "$muxctl" "$@" >/dev/null 2>out/stderr || status=$?
    fi
    if [ $status -eq 0 ]; then
        printf '%s\t%s%s\n' "$name" "$(sha256sum "$output" | cut -c1-64)" "$kind" >>"$results"
    else
        printf '%s\terror %d: %s%s\n' "$name" "$status" "$(grep -m1 '^error' out/stderr)" "$kind" >>"$results"
    fi
}

media=()
for file in media/*.* samples/*; do
    case $file in *.md|*.sh|*.py|*.json) continue ;; esac
    [ -f "$file" ] && media+=("$file")
done
video=media/h264_bframes_aac.mp4
audio=media/aac_7s.m4a

for file in "${media[@]}"; do
    run "merge-video $file" out/merged.mp4 merge --quiet "$file" "$audio" out/merged.mp4
    run "stream-video $file" - merge --quiet "$file" "$audio" -
    run "merge-audio $file" out/merged.mp4 merge --quiet "$video" "$file" out/merged.mp4
    run "stream-audio $file" - merge --quiet "$video" "$file" -
    run "mov-audio $file" out/merged.mov merge --quiet "$video" "$file" out/merged.mov
    PICTURES=1 run "clip $file" out/clip.mp4 preview "$file" --clip out/clip.mp4 --seconds 1
    PICTURES=1 run "clip-late $file" out/clip.mp4 preview "$file" --clip out/clip.mp4 --start 0.5 --seconds 0.7 --height 120
    PICTURES=1 run "clip-short $file" out/clip.mp4 preview "$file" --clip out/clip.mp4 --start 0.04 --seconds 0.05
    run "sheet $file" out/sheet.png preview "$file" --sheet out/sheet.png --frames 4 --size 96
done

# The options the tests use, each on the pairs it is about.
options=(
    "--no-faststart" "--fragmented" "--no-metadata" "--end video" "--end audio"
    "--end video --loop-audio" "--audio-offset 0.5" "--end video --audio-offset 1.25 --loop-audio"
    "--audio-offset 0.04" "--end video --audio-offset 0.03 --loop-audio"
    "--audio-offset -0.3" "--audio-offset -0.02" "--audio-offset -0.8" "--end video --audio-offset -1.1 --loop-audio"
    "--volume -6" "--fade-in 1 --fade-out 1" "--fade-in 0.05 --fade-out 0.04" "--loudness -16" "--keep-original-audio"
    "--mix-original -12" "--audio-codec aac" "--audio-codec aac --audio-bitrate 96k"
    "--sample-rate 44100 --channels 1" "--rotate 90" "--rotate 270"
    "--orientation landscape" "--orientation landscape --fit pad" "--orientation landscape --fit crop"
    "--orientation portrait" "--orientation landscape --size 320x180 --video-quality 30 --video-preset ultrafast"
    "--video-stream 0 --audio-stream 0"
)
pairs=(
    "media/phone_portrait_h264_aac.mp4 media/aac_7s.m4a"
    "media/h264_bframes_aac.mp4 media/aac_chirp_1.5s.m4a"
    "media/h264_negative_start.mp4 media/flac_96k_51_1s.flac"
    "media/h264_vfr.mp4 media/opus_5s.webm"
    "media/hevc_hev1.mp4 media/mp3_5s.mp3"
    "media/fmp4_empty_moov.mp4 media/dash_audio.mp4"
    "media/h264_26s_2fps.mp4 media/alac_2s.m4a"
    "samples/iphone_hevc_rot90_aac_mebx_0.3s.mp4 samples/fdkaac_lc_44khz_itunsmpb_moov_at_end.m4a"
    "samples/iphone14pro_hevc_dolbyvision84_hlg_rot90_0.1s.mov media/aac_2s.m4a"
    "samples/android14_hevc_hlg_audio_track_first.mp4 samples/lame399_vbr_xing_lametag_mono.mp3"
    "samples/apple_h264_bframes_audio_starts_44ms_late.mov samples/opus_webm_audio_only_preskip_3s.webm"
)
for pair in "${pairs[@]}"; do
    read -r v a <<<"$pair"
    for option in "${options[@]}"; do
        pictures=""
        case $option in *--orientation*) pictures=1 ;; esac
        # shellcheck disable=SC2086
        PICTURES=$pictures run "merge $v $a $option" out/merged.mp4 merge --quiet $option "$v" "$a" out/merged.mp4
    done
    run "stream $v $a --end video --loop-audio" - merge --quiet --end video --loop-audio "$v" "$a" -
done
# PCM repeats by copy in a .mov.
run "mov loop" out/merged.mov merge --quiet --end video --loop-audio media/h264_26s_2fps.mp4 media/pcm_2s.wav out/merged.mov
run "mov loop late" out/merged.mov merge --quiet --end video --loop-audio --audio-offset 0.7 media/h264_26s_2fps.mp4 media/pcm_2s.wav out/merged.mov
run "mov loop early" out/merged.mov merge --quiet --end video --loop-audio --audio-offset -0.7 media/h264_26s_2fps.mp4 media/pcm_2s.wav out/merged.mov

case $mode in
make)
    mv "$results" "$table"
    echo "$(grep -vc '^#' "$table") jobs, $(grep -c $'\terror' "$table") of them errors: $table"
    ;;
check)
    [ -f "$table" ] || { echo "$0: no table at $table" >&2; exit 2; }
    if [ "$(head -1 "$table")" != "$(head -1 "$results")" ]; then
        echo "$0: $table was made with $(head -1 "$table" | cut -c3-), this binary has $(head -1 "$results" | cut -c3-)" >&2
        exit 2
    fi
    expected=$table
    if [ "$(sed -n 2p "$table")" != "$(sed -n 2p "$results")" ]; then
        # Another processor: the jobs that encode pictures are not compared.
        passed=$(grep -c $'\tpictures$' "$table")
        echo "$0: $table was made on a processor with $(sed -n 2p "$table" | cut -c7-), this one has $(sed -n 2p "$results" | cut -c7-): the $passed jobs that encode pictures are not compared"
        grep -v $'\tpictures$' "$table" | sed 2d >"$work/expected.tsv"
        grep -v $'\tpictures$' "$results" | sed 2d >"$work/results-compared.tsv"
        expected=$work/expected.tsv
        results=$work/results-compared.tsv
    fi
    if diff -u "$expected" "$results" >"$work/diff"; then
        echo "all $(grep -vc '^#' "$expected") outputs as in $table"
    else
        changed=$(grep -c '^+[^+]' "$work/diff")
        echo "$changed of $(grep -vc '^#' "$expected") jobs differ from $table (- before, + now):"
        grep '^[-+][^-+]' "$work/diff"
        exit 1
    fi
    ;;
esac
