#!/usr/bin/env bash
# The fuzzer's seeds: one tiny file (a few frames, a quarter second) for
# every container and codec family MediaMux reads, with the MP4 family's
# movie header first, so that a mutated input keeps a header to mutate
# within the fuzzer's length limit. The rest of TestMedia seeds it too
# (Fuzz/run.sh). Needs the ffmpeg CLI (libx264, libx265, libvpx, libaom,
# libmp3lame, libopus).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$here/../TestMedia/fuzz/seeds"
mkdir -p "$out"
cd "$out"
ff() { ffmpeg -nostdin -loglevel error -y "$@"; }
video=(-f lavfi -i testsrc=size=64x48:rate=10)
audio=(-f lavfi -i sine=f=440:r=8000)
same=(-fflags +bitexact -map_metadata -1)

ff "${video[@]}" "${audio[@]}" -t 0.4 -c:v libx264 -bf 2 -g 4 -crf 40 -c:a aac -b:a 16k -movflags +faststart "${same[@]}" h264_aac.mp4
ff "${video[@]}" -t 0.3 -c:v libx265 -x265-params log-level=none:pools=none:frame-threads=1 -tag:v hvc1 -crf 40 -movflags +faststart "${same[@]}" hevc.mov
ff "${video[@]}" -t 0.3 -c:v libaom-av1 -cpu-used 8 -crf 60 -movflags +faststart "${same[@]}" av1.mp4
ff "${video[@]}" "${audio[@]}" -t 0.3 -c:v mpeg4 -c:a aac -b:a 16k -f mp4 -frag_duration 100000 -movflags +frag_keyframe+empty_moov "${same[@]}" mpeg4_fragmented.mp4
ff "${audio[@]}" -t 0.25 -c:a aac -b:a 16k -movflags +faststart "${same[@]}" aac.m4a
ff "${audio[@]}" -t 0.25 -c:a alac "${same[@]}" alac.m4a
ff "${audio[@]}" -t 0.25 -c:a libmp3lame -b:a 16k "${same[@]}" mp3.mp3
ff "${audio[@]}" -t 0.25 -c:a libopus -b:a 8k "${same[@]}" opus.ogg
ff "${audio[@]}" -t 0.1 -c:a pcm_s16le "${same[@]}" pcm.wav
ff "${audio[@]}" -t 0.25 -c:a flac "${same[@]}" flac.flac
ff "${video[@]}" "${audio[@]}" -t 0.3 -c:v libvpx-vp9 -crf 50 -b:v 0 -c:a libopus -b:a 8k "${same[@]}" vp9_opus.webm
ff "${video[@]}" "${audio[@]}" -t 0.3 -c:v libx264 -crf 40 -c:a libmp3lame -b:a 16k "${same[@]}" h264_mp3.mkv
ff "${video[@]}" "${audio[@]}" -t 0.3 -c:v libx264 -crf 40 -c:a aac -b:a 16k "${same[@]}" h264_aac.ts
# Fragmented MP4 (issue 26): one fragment, a fragment per frame, samples in
# both the moov and fragments, a sidx before the fragments, negative composition offsets.
frag=(-f mp4 "${same[@]}")
ff "${video[@]}" "${audio[@]}" -t 0.3 -c:v libx264 -g 100 -crf 40 -c:a aac -b:a 16k -movflags +frag_keyframe+empty_moov+default_base_moof "${frag[@]}" fmp4_one_fragment.mp4
ff "${video[@]}" "${audio[@]}" -t 0.3 -c:v libx264 -crf 40 -c:a aac -b:a 16k -movflags +frag_every_frame+empty_moov+default_base_moof "${frag[@]}" fmp4_fragment_per_frame.mp4
ff "${video[@]}" "${audio[@]}" -t 0.4 -c:v libx264 -g 2 -crf 40 -c:a aac -b:a 16k -movflags +frag_keyframe "${frag[@]}" fmp4_moov_and_fragments.mp4
ff "${video[@]}" -t 0.3 -c:v libx264 -g 2 -crf 40 -movflags +frag_keyframe+empty_moov+default_base_moof+global_sidx "${frag[@]}" fmp4_sidx.mp4
# B-frames in version-1 truns with negative composition offsets, read by MediaMux's own fragment reader.
ff "${video[@]}" "${audio[@]}" -t 0.4 -c:v libx264 -bf 2 -g 4 -crf 40 -c:a aac -b:a 16k -movflags +frag_keyframe+empty_moov+default_base_moof+negative_cts_offsets "${frag[@]}" fmp4_negative_cts.mp4
# A sample entry FFmpeg 5.1 has no codec for (VVC's vvc1, with a vvcC of
# made-up bytes), over HEVC packets: the moov must come last for the script.
ff "${video[@]}" -t 0.3 -c:v libx265 -x265-params log-level=none:pools=none:frame-threads=1 -crf 40 "${same[@]}" vvc_entry.mp4
python3 "$here/../TestMedia/add-sample-entry-boxes.py" vvc_entry.mp4 vide --entry-type vvc1 vvcC=ff000101 >/dev/null
# MP3 frames behind junk shaped like AMR-NB frames (0x3C and 31 bytes).
python3 - <<'PY'
junk = bytearray()
value = 26
while len(junk) < 2048:
    junk.append(0x3C)
    for _ in range(31):
        value = (value * 1103515245 + 12345) & 0x7FFFFFFF
        junk.append(value % 255)
open("mp3_after_junk.mp3", "wb").write(bytes(junk) + open("mp3.mp3", "rb").read())
PY
ls -l
