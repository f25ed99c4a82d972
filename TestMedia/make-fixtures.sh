#!/usr/bin/env bash
# Regenerates the synthetic test fixtures in TestMedia/ (this script's directory)
# with the ffmpeg CLI, checks them with ffprobe, and rewrites expected.json
# (ffprobe facts for every media file, and for the real files of the samples
# folder, $MEDIAMUX_SAMPLES or ../shared/media beside the package, as
# "samples/NAME").
#
#   bash TestMedia/make-fixtures.sh
#
# Made with ffmpeg/ffprobe 5.1 (Debian bookworm: libx264, libx265, libvpx,
# libaom, libmp3lame, libopus). Re-runnable; output is deterministic for a
# given ffmpeg/encoder build (bitexact flags, single-threaded encoders, no
# metadata). Another ffmpeg or encoder version may produce different bytes;
# the assertions below check the properties the tests rely on.
# The real-world files are not in this repository (see the samples folder's SOURCES.md).
set -euo pipefail

DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$DIR"

command -v ffmpeg >/dev/null || { echo "ffmpeg not found" >&2; exit 1; }
command -v ffprobe >/dev/null || { echo "ffprobe not found" >&2; exit 1; }
command -v python3 >/dev/null || { echo "python3 not found" >&2; exit 1; }

TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

FF=(ffmpeg -nostdin -hide_banner -loglevel error -y)
# Output options that make the files reproducible.
BX=(-fflags +bitexact -flags:v +bitexact -flags:a +bitexact -map_metadata -1 -threads 1)
# H.264: small, B-frames (3, pyramid), GOP 30, 4:2:0.
X264=(-c:v libx264 -preset medium -crf 35 -bf 3 -g 30 -pix_fmt yuv420p)
PROBE=(ffprobe -v error)

fail() { echo "ASSERTION FAILED: $*" >&2; exit 1; }
step() { echo "== $*"; }

# testsrc: cheap to encode (small files), has a frame counter and asymmetric
# content, so a wrong rotation is visible.
src_video() { # size duration
  echo "testsrc=size=$1:rate=30:duration=$2"
}
src_sine() { # frequency sample_rate duration
  echo "sine=frequency=$1:sample_rate=$2:duration=$3"
}

probe1() { # entries file  -> first value (no key)
  "${PROBE[@]}" -show_entries "$1" -of default=nw=1:nk=1 "$2" | sed -n 1p
}
vprobe1() { # entries file -> first value for the first video stream
  "${PROBE[@]}" -select_streams v:0 -show_entries "$1" -of default=nw=1:nk=1 "$2" | sed -n 1p
}
assert_eq() { # actual expected message
  [[ "$1" == "$2" ]] || fail "$3: got '$1', expected '$2'"
}
assert_close() { # actual expected tolerance message
  python3 -c 'import sys; a,e,t=map(float,sys.argv[1:4]); sys.exit(0 if abs(a-e)<=t else 1)' "$1" "$2" "$3" \
    || fail "$4: got $1, expected $2 +- $3"
}

# --------------------------------------------------------------------------
step "h264_bframes_aac.mp4 (H.264 B-frames 4.0 s + own AAC 880 Hz 3.0 s)"
"${FF[@]}" -f lavfi -i "$(src_video 320x240 4)" -f lavfi -i "$(src_sine 880 44100 3)" \
  -map 0:v -map 1:a "${X264[@]}" -c:a aac -b:a 32k "${BX[@]}" h264_bframes_aac.mp4
assert_eq "$(vprobe1 stream=has_b_frames h264_bframes_aac.mp4)" 2 "h264_bframes_aac has_b_frames"
nb_b=$("${PROBE[@]}" -select_streams v:0 -show_entries frame=pict_type -of csv=p=0 h264_bframes_aac.mp4 | grep -c '^B' || true)
(( nb_b > 0 )) || fail "h264_bframes_aac.mp4 has no B-frames"
# B-frames => decode order differs from presentation order (pts not monotonic).
python3 - h264_bframes_aac.mp4 <<'EOF' || fail "h264_bframes_aac.mp4: pts is monotonic in decode order"
import subprocess, sys
out = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries",
                      "packet=pts", "-of", "csv=p=0", sys.argv[1]], capture_output=True, text=True, check=True).stdout
pts = [int(x) for x in out.split()]
sys.exit(0 if any(b < a for a, b in zip(pts, pts[1:])) else 1)
EOF
assert_close "$(probe1 stream=duration h264_bframes_aac.mp4 | sed -n 1p)" 4.0 0.001 "h264_bframes_aac video duration"
assert_close "$("${PROBE[@]}" -select_streams a:0 -show_entries stream=duration -of default=nw=1:nk=1 h264_bframes_aac.mp4)" 3.0 0.001 "h264_bframes_aac audio duration"
echo "   B-frames: $nb_b of 120 frames"

# --------------------------------------------------------------------------
step "h264_gop2s_aac.mp4 (H.264 B-pyramid, a keyframe every 2 s, 25 fps, 6.0 s, textured; AAC 440 Hz)"
# For cuts inside a GOP: testsrc2's moving texture, so that a re-encoded
# frame is told from its neighbours and its quality measured.
"${FF[@]}" -f lavfi -i "testsrc2=size=192x108:rate=25:duration=6" -f lavfi -i "$(src_sine 440 48000 6)" \
  -map 0:v -map 1:a -c:v libx264 -preset medium -crf 32 -bf 3 -x264-params keyint=50:min-keyint=50:scenecut=0:b-pyramid=normal \
  -pix_fmt yuv420p -c:a aac -b:a 24k -ac 1 "${BX[@]}" h264_gop2s_aac.mp4
assert_eq "$("${PROBE[@]}" -select_streams v:0 -show_entries packet=pts_time,flags -of csv=p=0 h264_gop2s_aac.mp4 | grep K | cut -d, -f1 | tr '\n' ' ')" \
  "0.000000 2.000000 4.000000 " "h264_gop2s_aac.mp4 keyframes"
assert_eq "$(vprobe1 stream=has_b_frames h264_gop2s_aac.mp4)" 2 "h264_gop2s_aac has_b_frames"
assert_close "$(probe1 stream=duration h264_gop2s_aac.mp4 | sed -n 1p)" 6.0 0.001 "h264_gop2s_aac video duration"

# --------------------------------------------------------------------------
step "hevc_hlg10_opengop_aac.mp4 (HEVC Main 10, HLG, hvc1, open GOPs: IDR at 0 s, CRA at 2 and 4 s with RASL; 25 fps, 6.0 s; AAC 440 Hz)"
# For cuts inside an HEVC GOP: the parameter sets out of band (hvc1), a CRA
# whose leading picture references the GOP before it, 10 bits and HLG's tags.
# 32x32 CTUs and SAO off, which a cut's encoder (x265 veryfast: 64x64, SAO on)
# does not share: its frames decode wrong under this file's parameter sets.
"${FF[@]}" -f lavfi -i "testsrc2=size=192x108:rate=25:duration=6" -f lavfi -i "$(src_sine 440 48000 6)" \
  -map 0:v -map 1:a -c:v libx265 -preset medium -crf 30 -pix_fmt yuv420p10le \
  -x265-params keyint=50:min-keyint=50:scenecut=0:open-gop=1:bframes=3:ctu=32:sao=0:log-level=error:pools=1:frame-threads=1 \
  -color_primaries bt2020 -color_trc arib-std-b67 -colorspace bt2020nc -tag:v hvc1 \
  -c:a aac -b:a 24k -ac 1 "${BX[@]}" hevc_hlg10_opengop_aac.mp4
assert_eq "$("${PROBE[@]}" -select_streams v:0 -show_entries packet=pts_time,flags -of csv=p=0 hevc_hlg10_opengop_aac.mp4 | grep K | cut -d, -f1 | tr '\n' ' ')" \
  "0.000000 2.000000 4.000000 " "hevc_hlg10_opengop_aac.mp4 keyframes"
assert_eq "$("${PROBE[@]}" -select_streams v:0 -show_entries stream=codec_tag_string,pix_fmt,color_transfer -of csv=p=0 hevc_hlg10_opengop_aac.mp4)" \
  "hvc1,yuv420p10le,arib-std-b67" "hevc_hlg10_opengop_aac.mp4 entry, format and transfer"
ffmpeg -hide_banner -i hevc_hlg10_opengop_aac.mp4 -map 0:v -c copy -bsf:v trace_headers -f null - 2>&1 | grep -q "nal_unit_type.* = 21$" \
  || fail "hevc_hlg10_opengop_aac.mp4 has no CRA picture"
ffmpeg -hide_banner -i hevc_hlg10_opengop_aac.mp4 -map 0:v -c copy -bsf:v trace_headers -f null - 2>&1 | grep -q "nal_unit_type.* = 8$" \
  || fail "hevc_hlg10_opengop_aac.mp4 has no RASL picture"

# --------------------------------------------------------------------------
step "h264_rot90/180/270.mp4 (320x240, tkhd matrix patched)"
"${FF[@]}" -f lavfi -i "$(src_video 320x240 3)" "${X264[@]}" "${BX[@]}" "$TMP/rot.mp4"
for deg in 90 180 270; do
  cp "$TMP/rot.mp4" "h264_rot$deg.mp4"
  python3 "$DIR/patch-rotation.py" "h264_rot$deg.mp4" "$deg"
done
# ffprobe reports the counterclockwise angle: clockwise 90 => -90, 270 => 90.
assert_eq "$(vprobe1 stream_side_data=rotation h264_rot90.mp4)" -90 "h264_rot90 rotation"
r180="$(vprobe1 stream_side_data=rotation h264_rot180.mp4)"
[[ "$r180" == 180 || "$r180" == -180 ]] || fail "h264_rot180 rotation: got '$r180'"
assert_eq "$(vprobe1 stream_side_data=rotation h264_rot270.mp4)" 90 "h264_rot270 rotation"
assert_eq "$(vprobe1 stream_side_data=rotation "$TMP/rot.mp4")" "" "unpatched file has no rotation"
assert_eq "$(vprobe1 stream=width,height h264_rot90.mp4)" 320 "h264_rot90 coded width stays 320"

# --------------------------------------------------------------------------
step "phone_portrait_h264_aac.mp4 (a phone's portrait clip: 360x640 shown, coded 640x360 turned, 90° matrix)"
# As a phone records portrait: the sensor's landscape frame holds the scene
# turned a quarter counterclockwise, and the matrix turns it back, so the
# testsrc pattern (its counter at the top left) is upright only as shown.
"${FF[@]}" -f lavfi -i "$(src_video 360x640 3)" -f lavfi -i "sine=frequency=440:sample_rate=48000:duration=3" \
  -vf transpose=cclock "${X264[@]}" -c:a aac -b:a 64k -ac 2 "${BX[@]}" -movflags +faststart phone_portrait_h264_aac.mp4
python3 "$DIR/patch-rotation.py" phone_portrait_h264_aac.mp4 90
assert_eq "$(vprobe1 stream=width phone_portrait_h264_aac.mp4)" 640 "phone clip coded landscape"
assert_eq "$(vprobe1 stream_side_data=rotation phone_portrait_h264_aac.mp4)" -90 "phone clip shown turned 90° clockwise"

# --------------------------------------------------------------------------
step "h264_coded_portrait.mp4 (240x320 coded, no rotation)"
"${FF[@]}" -f lavfi -i "$(src_video 240x320 3)" "${X264[@]}" "${BX[@]}" h264_coded_portrait.mp4
assert_eq "$("${PROBE[@]}" -select_streams v:0 -show_entries stream=width,height -of csv=p=0 h264_coded_portrait.mp4)" "240,320" "portrait size"
assert_eq "$(vprobe1 stream_side_data=rotation h264_coded_portrait.mp4)" "" "portrait has no rotation"

# --------------------------------------------------------------------------
step "h264_frame_index.mp4 (each frame shows its index as 8 binary columns; 120x90, SAR 4:3, 4.0 s)"
# Column k (x = 15k .. 15k+14, k = 0 leftmost) is white (luma 235) when bit k of
# the frame index is set, black (16) otherwise. Frame i is presented at i/30 s.
# geq writes the yuv420p planes directly (chroma 128): going through
# format=gray would scale 16/235 to 30/218 (full to limited range).
# scenecut=0: the picture changes on every frame, and x264's scene-cut detection
# would otherwise add keyframes (at 16, 32, ...) between the GOP-30 ones.
"${FF[@]}" -f lavfi \
  -i "color=c=black:size=120x90:rate=30:duration=4,format=yuv420p,geq=lum='if(bitand(N\,pow(2\,floor(X/15)))\,235\,16)':cb=128:cr=128" \
  -vf "setsar=4/3" -c:v libx264 -preset medium -crf 30 -bf 3 -g 30 -x264-params scenecut=0 \
  "${BX[@]}" -an -movflags +faststart h264_frame_index.mp4
assert_eq "$("${PROBE[@]}" -select_streams v:0 -show_entries stream=width,height,sample_aspect_ratio,display_aspect_ratio,nb_frames -of csv=p=0 h264_frame_index.mp4)" \
  "120,90,4:3,16:9,120" "h264_frame_index width,height,SAR,DAR,nb_frames"
fi_bf="$(vprobe1 stream=has_b_frames h264_frame_index.mp4)"
(( fi_bf > 0 )) || fail "h264_frame_index.mp4: has_b_frames=$fi_bf"
python3 - h264_frame_index.mp4 <<'EOF' || fail "h264_frame_index.mp4: keyframes, frame times or decoded index bits"
import json, subprocess, sys
from fractions import Fraction
f, W, H = sys.argv[1], 120, 90
def run(*args, text=True):
    return subprocess.run(args, capture_output=True, text=text, check=True).stdout
# Keyframes, as presentation indices (pts_time * 30).
pk = [l.split(",") for l in run("ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries",
                                "packet=pts_time,flags", "-of", "csv=p=0", f).split()]
keys = sorted(round(float(t) * 30) for t, fl in pk if "K" in fl)
assert keys == [0, 30, 60, 90], keys
# Decoded frames in presentation order: frame i at i/30 s, the first at exactly 0.
# (JSON: the first frame also carries side data, which breaks csv rows.)
tb = Fraction(run("ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=time_base",
                  "-of", "csv=p=0", f).strip())
frames = json.loads(run("ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries",
                        "frame=pts,pts_time", "-of", "json", f))["frames"]
first = (frames[0]["pts"], frames[0]["pts_time"])
assert first == (0, "0.000000"), first
assert [fr["pts"] * tb * 30 for fr in frames] == list(range(120)), frames
# Decode with the ffmpeg CLI; read the luma of the middle row at the centre of
# each 15-px column: > 128 means the bit is set.
raw = run("ffmpeg", "-nostdin", "-v", "error", "-i", f, "-fps_mode", "passthrough", "-f", "rawvideo",
          "-pix_fmt", "yuv420p", "-", text=False)
fsize = W * H * 3 // 2
assert len(raw) == 120 * fsize, len(raw)
for i in range(120):
    row = raw[i * fsize + (H // 2) * W:][:W]
    lum = [row[15 * k + 7] for k in range(8)]
    index = sum(1 << k for k, v in enumerate(lum) if v > 128)
    assert index == i, (i, index, lum)
    assert all(abs(v - 16) <= 12 or abs(v - 235) <= 12 for v in lum), (i, lum)
    if i in (0, 1, 29, 30, 45, 89, 119):
        print("   frame %3d: index %3d, column luma %s" % (i, index, lum))
print("   keyframes at frames %s; first frame pts %d (%s s), time_base %s" % (keys, *first, tb))
EOF

# --------------------------------------------------------------------------
step "hevc_hev1.mp4 (HEVC tagged hev1, B-frames, 2.0 s)"
"${FF[@]}" -f lavfi -i "$(src_video 320x240 2)" -c:v libx265 -preset fast -crf 35 -pix_fmt yuv420p \
  -x265-params log-level=none:pools=none:frame-threads=1:bframes=3:keyint=30 -tag:v hev1 "${BX[@]}" hevc_hev1.mp4
assert_eq "$(vprobe1 stream=codec_tag_string hevc_hev1.mp4)" hev1 "hevc tag"
nb_b=$("${PROBE[@]}" -select_streams v:0 -show_entries frame=pict_type -of csv=p=0 hevc_hev1.mp4 | grep -c '^B' || true)
(( nb_b > 0 )) || fail "hevc_hev1.mp4 has no B-frames"

# --------------------------------------------------------------------------
step "h264_vfr.mp4 (variable frame rate, 2.5 s)"
# Frames 0-9 every 1/30 s, 10-39 every 3rd frame, 40-74 every 2nd frame.
"${FF[@]}" -f lavfi -i "$(src_video 320x240 2.5)" \
  -vf "select='lt(n\,10)+between(n\,10\,39)*not(mod(n\,3))+gte(n\,40)*not(mod(n\,2))'" -fps_mode vfr \
  "${X264[@]}" "${BX[@]}" h264_vfr.mp4
# ffprobe 5.1 reports packet duration=512 for every packet of this file, so
# check the dts steps (they come from stts) instead.
ndur=$("${PROBE[@]}" -select_streams v:0 -show_entries packet=dts -of csv=p=0 h264_vfr.mp4 \
  | awk 'NR > 1 { print $1 - prev } { prev = $1 }' | sort -un | wc -l)
(( ndur >= 3 )) || fail "h264_vfr.mp4 has only $ndur distinct dts steps"

# --------------------------------------------------------------------------
step "vp9.mp4 (VP9 in MP4, 2.0 s)"
"${FF[@]}" -f lavfi -i "$(src_video 320x240 2)" -c:v libvpx-vp9 -deadline realtime -cpu-used 8 \
  -b:v 60k -g 30 -pix_fmt yuv420p "${BX[@]}" vp9.mp4
assert_eq "$(vprobe1 stream=codec_name vp9.mp4)" vp9 "vp9 codec"

step "av1.mp4 (AV1 in MP4, 1.5 s, libaom-av1)"
encoders="$(ffmpeg -hide_banner -encoders 2>/dev/null)"
if [[ "$encoders" == *" libaom-av1 "* ]]; then
  "${FF[@]}" -f lavfi -i "$(src_video 320x240 1.5)" -c:v libaom-av1 -cpu-used 8 -row-mt 1 -crf 40 -b:v 0 \
    -g 30 -pix_fmt yuv420p "${BX[@]}" av1.mp4
  assert_eq "$(vprobe1 stream=codec_name av1.mp4)" av1 "av1 codec"
else
  echo "   libaom-av1 not available: av1.mp4 skipped" >&2
fi

step "av1_10bit.mp4 (AV1 Main 10-bit 4:2:0, 64x64, 10 fps, 1.0 s, libaom-av1)"
# No -row-mt: single-threaded libaom gives the same bytes on every run.
if [[ "$encoders" == *" libaom-av1 "* ]]; then
  "${FF[@]}" -f lavfi -i "testsrc=size=64x64:rate=10:duration=1" -c:v libaom-av1 -cpu-used 8 -crf 40 -b:v 0 \
    -pix_fmt yuv420p10le "${BX[@]}" -an av1_10bit.mp4
  assert_eq "$("${PROBE[@]}" -select_streams v:0 -count_frames -show_entries stream=codec_name,profile,width,height,pix_fmt,nb_frames,nb_read_frames -of csv=p=0 av1_10bit.mp4)" \
    "av1,Main,64,64,yuv420p10le,10,10" "av1_10bit codec,profile,width,height,pix_fmt,nb_frames,nb_read_frames"
else
  echo "   libaom-av1 not available: av1_10bit.mp4 skipped" >&2
fi

# --------------------------------------------------------------------------
step "h264_aac.mkv (Matroska, H.264 B-frames 3.0 s + AAC 3.0 s)"
"${FF[@]}" -f lavfi -i "$(src_video 320x240 3)" -f lavfi -i "$(src_sine 440 44100 3)" \
  -map 0:v -map 1:a "${X264[@]}" -c:a aac -b:a 32k "${BX[@]}" h264_aac.mkv
assert_eq "$(vprobe1 stream=has_b_frames h264_aac.mkv)" 2 "mkv has_b_frames"

# --------------------------------------------------------------------------
step "h264_negative_start.mp4 (stream copy from 1.1 s: starts on a non-keyframe via elst)"
# Input seeking with -c copy starts at the keyframe at 1.0 s; the packets before
# 1.1 s get negative timestamps, and the mov muxer writes an edit list whose
# media_time skips them (plus the B-frame delay).
"${FF[@]}" -ss 1.1 -i h264_bframes_aac.mp4 -map 0:v -c copy "${BX[@]}" h264_negative_start.mp4
first_pts=$("${PROBE[@]}" -select_streams v:0 -show_entries packet=pts -of csv=p=0 h264_negative_start.mp4 | sed -n 1p)
(( first_pts < 0 )) || fail "h264_negative_start.mp4: first packet pts $first_pts is not negative"

# --------------------------------------------------------------------------
step "h264_negative_cts_tail.mp4 (ctts v1 whose deepest offset is in its last two entries)"
# Five frames, I P B b b with a B-pyramid, written with negative composition
# offsets: ctts 1x0 1x1024 2x-512 1x0. FFmpeg 5.1's mov demuxer takes its DTS
# shift from all ctts entries but the last two, so it hands out the two b
# frames with pts < dts, which its muxers refuse (EINVAL): the way iPhone
# Dolby Vision clips fail.
"${FF[@]}" -f lavfi -i "testsrc2=size=64x48:rate=25" -frames:v 5 -c:v libx264 -preset medium -crf 35 -bf 3 -b_strategy 0 \
  -x264-params b-pyramid=normal:keyint=4 -pix_fmt yuv420p -movflags negative_cts_offsets "${BX[@]}" h264_negative_cts_tail.mp4
late=$("${PROBE[@]}" -select_streams v:0 -show_entries packet=pts,dts -of csv=p=0 h264_negative_cts_tail.mp4 | awk -F, '$1 < $2' | wc -l)
(( late == 2 )) || fail "h264_negative_cts_tail.mp4: $late packets with pts < dts, expected 2"

# --------------------------------------------------------------------------
step "h264_frame_index_negative_cts.mp4 (frame indices as in h264_frame_index.mp4, with negative composition offsets)"
# One second of the same binary-column pictures (frame i shows i), B-pyramid,
# written with ctts version 1 and negative offsets: a browser's first picture
# of it, and of a copy, must be frame 0.
"${FF[@]}" -f lavfi \
  -i "color=c=black:size=120x90:rate=30:duration=1,format=yuv420p,geq=lum='if(bitand(N\,pow(2\,floor(X/15)))\,235\,16)':cb=128:cr=128" \
  -c:v libx264 -preset medium -crf 30 -bf 3 -g 30 -x264-params scenecut=0:b-pyramid=normal "${BX[@]}" -an \
  -movflags negative_cts_offsets h264_frame_index_negative_cts.mp4
negative=$("${PROBE[@]}" -select_streams v:0 -show_entries packet=dts -of csv=p=0 h264_frame_index_negative_cts.mp4 | awk -F, '$1 < 0' | wc -l)
(( negative > 0 )) || fail "h264_frame_index_negative_cts.mp4: no negative DTS, so no negative composition offsets"

# --------------------------------------------------------------------------
step "h264_26s_2fps.mp4 (a long, tiny video, so that the soundtracks decide the end)"
"${FF[@]}" -f lavfi -i "testsrc2=size=64x48:rate=2:duration=26" -c:v libx264 -preset medium -crf 40 -g 20 -pix_fmt yuv420p "${BX[@]}" h264_26s_2fps.mp4
assert_close "$(probe1 format=duration h264_26s_2fps.mp4)" 26 0.001 "h264_26s_2fps duration"

# --------------------------------------------------------------------------
step "hevc_hdr10_entry_boxes.mp4 (HDR10 HEVC whose sample entry carries boxes FFmpeg 5.1 does not write)"
# Three 10-bit PQ frames; then mdcv and clli (HDR10 mastering display and
# light levels), Apple's amve, a clap and a box of an unknown type go into
# the hvc1 entry after FFmpeg's own hvcC, fiel, colr, pasp and btrt.
"${FF[@]}" -f lavfi -i "testsrc2=size=64x48:rate=25" -frames:v 3 -c:v libx265 -x265-params log-level=none:pools=none:frame-threads=1 -pix_fmt yuv420p10le \
  -color_primaries bt2020 -color_trc smpte2084 -colorspace bt2020nc -tag:v hvc1 "${BX[@]}" hevc_hdr10_entry_boxes.mp4
python3 "$DIR/add-sample-entry-boxes.py" hevc_hdr10_entry_boxes.mp4 vide \
  mdcv=21349baa199608fc8a4839083d1340420098968000000032 clli=03e80190 amve=0000013a3d134042 \
  clap=0000003c000000010000002c0000000100000000000000010000000000000001 \
  zzzz=4d656469614d757820746573743a20756e6b6e6f776e20626f78
assert_eq "$("${PROBE[@]}" -show_entries stream_side_data=max_content -of csv=p=0 hevc_hdr10_entry_boxes.mp4 | tr -d ',\n')" "1000" "hevc_hdr10 clli"

# --------------------------------------------------------------------------
step "hevc_dv_profile5.mp4 (Dolby Vision profile 5: a dvh1 sample entry, which FFmpeg 5.1's muxer cannot write)"
# Three 10-bit frames in a dvh1 entry with a dvcC for profile 5, level 1,
# RPU and base layer present, no backward-compatible signal (id 0). The
# pictures are plain HEVC without RPUs: this is a container fixture.
"${FF[@]}" -f lavfi -i "testsrc2=size=64x48:rate=25" -frames:v 3 -c:v libx265 -x265-params log-level=none:pools=none:frame-threads=1 -pix_fmt yuv420p10le \
  -tag:v hvc1 "${BX[@]}" hevc_dv_profile5.mp4
python3 "$DIR/add-sample-entry-boxes.py" hevc_dv_profile5.mp4 vide --entry-type dvh1 dvcC=01000a0d$(printf '0%.0s' {1..40})
assert_eq "$(probe1 stream=codec_tag_string hevc_dv_profile5.mp4)" "dvh1" "hevc_dv_profile5 entry type"
assert_eq "$("${PROBE[@]}" -show_entries stream_side_data=dv_profile -of csv=p=0 hevc_dv_profile5.mp4 | tr -d ',\n')" "5" "hevc_dv_profile5 dvcC"

# --------------------------------------------------------------------------
step "unread codecs: av1_dav1.mp4 (Dolby Vision profile 10 on AV1), fpcm.mp4 (ISO 23003-5 float PCM)"
# Sample entries FFmpeg 5.1 has no codec for, copied unread by a merge.
# av1_dav1.mp4: av1.mp4's packets and av1C under a dav1 entry with a dvvC
# for profile 10, level 9, RPU and base layer present, compatibility id 1
# (container fixture: the pictures carry no RPUs). fpcm.mp4: written whole
# by make-fpcm.py (a 440 Hz sine, mono, 8 kHz, 1.024 s), which FFmpeg 7.1
# decodes sample for sample.
if [[ -f av1.mp4 ]]; then
  "${FF[@]}" -i av1.mp4 -c copy "${BX[@]}" av1_dav1.mp4
  python3 "$DIR/add-sample-entry-boxes.py" av1_dav1.mp4 vide --entry-type dav1 dvvC=0100144d10$(printf '0%.0s' {1..38})
  assert_eq "$(probe1 stream=codec_tag_string av1_dav1.mp4)" "dav1" "av1_dav1 entry type"
fi
python3 "$DIR/make-fpcm.py" fpcm.mp4
assert_eq "$(probe1 stream=codec_tag_string fpcm.mp4)" "fpcm" "fpcm entry type"
assert_close "$(probe1 format=duration fpcm.mp4)" 1.024 0.0005 "fpcm duration"

# --------------------------------------------------------------------------
step "audio: aac_7s.m4a, aac_2s.m4a, mp3_5s.mp3, opus_5s.webm, opus_5s.ogg, pcm_2s.wav"
"${FF[@]}" -f lavfi -i "$(src_sine 440 44100 7.3)" -ac 2 -c:a aac -b:a 32k "${BX[@]}" aac_7s.m4a
"${FF[@]}" -f lavfi -i "$(src_sine 660 48000 2)" -c:a aac -b:a 24k "${BX[@]}" aac_2s.m4a
"${FF[@]}" -f lavfi -i "$(src_sine 550 44100 5)" -c:a libmp3lame -b:a 32k "${BX[@]}" mp3_5s.mp3
"${FF[@]}" -f lavfi -i "$(src_sine 550 48000 5)" -c:a libopus -b:a 16k "${BX[@]}" opus_5s.webm
"${FF[@]}" -f lavfi -i "$(src_sine 550 48000 5)" -c:a libopus -b:a 16k "${BX[@]}" opus_5s.ogg
"${FF[@]}" -f lavfi -i "$(src_sine 330 8000 2)" -c:a pcm_s16le "${BX[@]}" pcm_2s.wav
assert_eq "$("${PROBE[@]}" -show_entries stream=codec_name,profile,sample_rate,channels -of csv=p=0 aac_7s.m4a)" "aac,LC,44100,2" "aac_7s"
assert_eq "$("${PROBE[@]}" -show_entries stream=codec_name,profile,sample_rate,channels -of csv=p=0 aac_2s.m4a)" "aac,LC,48000,1" "aac_2s"
assert_close "$(probe1 stream=duration aac_7s.m4a)" 7.3 0.001 "aac_7s duration"
assert_close "$(probe1 stream=duration aac_2s.m4a)" 2.0 0.001 "aac_2s duration"
assert_eq "$(probe1 stream=codec_name mp3_5s.mp3)" mp3 "mp3"
assert_eq "$(probe1 stream=codec_name opus_5s.webm)" opus "opus webm"
assert_eq "$(probe1 stream=codec_name opus_5s.ogg)" opus "opus ogg"
assert_eq "$(probe1 stream=codec_name pcm_2s.wav)" pcm_s16le "wav"
# HE-AAC: ffmpeg's native aac encoder only makes LC (libfdk_aac is not in
# Debian's ffmpeg), so there is no aac_he.m4a.

# --------------------------------------------------------------------------
# Soundtracks MP4 cannot carry as they are (encoded AAC by a merge) and one it
# can (ALAC). 1 kHz sines at the sine source's level (amplitude 1/8), so the
# tests can check frequency and level after encoding.
step "audio to encode: flac_3s.flac, flac_96k_51_1s.flac, vorbis_2s.ogg, alac_2s.m4a"
"${FF[@]}" -f lavfi -i "$(src_sine 1000 44100 3)" -ac 2 -c:a flac "${BX[@]}" flac_3s.flac
"${FF[@]}" -f lavfi -i "$(src_sine 1000 96000 1)" -af "pan=5.1|c0=c0|c1=c0|c2=c0|c3=c0|c4=c0|c5=c0" -c:a flac "${BX[@]}" flac_96k_51_1s.flac
"${FF[@]}" -f lavfi -i "$(src_sine 1000 48000 2)" -c:a libvorbis -q:a 2 "${BX[@]}" vorbis_2s.ogg
"${FF[@]}" -f lavfi -i "$(src_sine 1000 44100 2)" -c:a alac "${BX[@]}" alac_2s.m4a
assert_eq "$("${PROBE[@]}" -show_entries stream=codec_name,sample_rate,channels -of csv=p=0 flac_3s.flac)" "flac,44100,2" "flac_3s"
assert_eq "$("${PROBE[@]}" -show_entries stream=codec_name,sample_rate,channels,channel_layout -of csv=p=0 flac_96k_51_1s.flac)" "flac,96000,6,5.1" "flac_96k_51_1s"
assert_eq "$("${PROBE[@]}" -show_entries stream=codec_name,sample_rate,channels -of csv=p=0 vorbis_2s.ogg)" "vorbis,48000,1" "vorbis_2s"
assert_eq "$("${PROBE[@]}" -show_entries stream=codec_name,sample_rate,channels -of csv=p=0 alac_2s.m4a)" "alac,44100,1" "alac_2s"

# --------------------------------------------------------------------------
# A soundtrack no two stretches of which are alike, for loops and offsets: a
# chirp rising from 200 Hz to 1.1 kHz, so a repeat or a shift shows to the sample.
step "loops and offsets: aac_chirp_1.5s.m4a"
"${FF[@]}" -f lavfi -i "aevalsrc=0.25*sin(2*PI*(200*t+300*t*t)):s=48000:d=1.5" -c:a aac -b:a 48k "${BX[@]}" aac_chirp_1.5s.m4a
assert_eq "$("${PROBE[@]}" -show_entries stream=codec_name,sample_rate,channels -of csv=p=0 aac_chirp_1.5s.m4a)" "aac,48000,1" "aac_chirp"
assert_close "$(probe1 stream=duration aac_chirp_1.5s.m4a)" 1.5 0.001 "aac_chirp duration"

# --------------------------------------------------------------------------
step "bad inputs: empty.m4a, html_page.m4a, text_file.mp4, random_bytes.mp4, truncated_h264.mp4"
: > empty.m4a
cat > html_page.m4a <<'EOF'
<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>404 Not Found</title></head>
<body>
<h1>Not Found</h1>
<p>The requested URL /media/audio/track-01.m4a was not found on this server.</p>
<hr><address>Apache/2.4.57 (Debian) Server at media.example.com Port 443</address>
</body>
</html>
EOF
cat > text_file.mp4 <<'EOF'
This is a plain text file with an .mp4 extension.
It contains no ISO base media boxes, no ftyp, no moov and no mdat.
A media library must reject it with a clean error instead of crashing.
EOF
python3 - random_bytes.mp4 <<'EOF'
# 4096 deterministic pseudo-random bytes: SHA-256 in counter mode, fixed seed.
import hashlib, sys
out = b"".join(hashlib.sha256(b"MediaMux random_bytes.mp4 seed %d" % i).digest() for i in range(128))
open(sys.argv[1], "wb").write(out[:4096])
EOF
# Faststart copy (moov before mdat), then keep the first 40 % of its bytes:
# ftyp + complete moov + the first part of mdat. The mdat header still declares
# the full size.
"${FF[@]}" -i h264_bframes_aac.mp4 -map 0 -c copy -movflags +faststart "${BX[@]}" "$TMP/faststart.mp4"
python3 - "$TMP/faststart.mp4" truncated_h264.mp4 <<'EOF'
import struct, sys
data = open(sys.argv[1], "rb").read()
cut = len(data) * 40 // 100
pos, boxes = 0, []
while pos + 8 <= len(data):
    size, typ = struct.unpack_from(">I4s", data, pos)
    boxes.append((typ, pos, size))
    pos += size
order = [t for t, _, _ in boxes]
assert order.index(b"moov") < order.index(b"mdat"), order
moov = next(b for b in boxes if b[0] == b"moov")
mdat = next(b for b in boxes if b[0] == b"mdat")
assert moov[1] + moov[2] <= cut < mdat[1] + mdat[2], (moov, mdat, cut)
open(sys.argv[2], "wb").write(data[:cut])
print("   truncated_h264.mp4: %d of %d bytes; moov %d..%d intact; mdat at %d declares %d bytes, %d present"
      % (cut, len(data), moov[1], moov[1] + moov[2], mdat[1], mdat[2], cut - mdat[1]))
EOF
assert_eq "$(stat -c %s empty.m4a)" 0 "empty.m4a size"
assert_eq "$(stat -c %s random_bytes.mp4)" 4096 "random_bytes.mp4 size"
for f in empty.m4a html_page.m4a text_file.mp4 random_bytes.mp4; do
  if "${PROBE[@]}" "$f" >/dev/null 2>&1; then fail "ffprobe unexpectedly accepts $f"; fi
done

# --------------------------------------------------------------------------
step "box-level checks (elst, stts)"
python3 - <<'EOF'
import os, struct

CONTAINERS = {b"moov", b"trak", b"mdia", b"minf", b"stbl", b"edts"}

def boxes(b, s, e):
    p = s
    while p + 8 <= e:
        size, t = struct.unpack_from(">I4s", b, p)
        h = 8
        if size == 1:
            size = struct.unpack_from(">Q", b, p + 8)[0]; h = 16
        elif size == 0:
            size = e - p
        yield t, p + h, p + size
        p += size

def tracks(path):
    b = open(path, "rb").read()
    moov = next((ps, pe) for t, ps, pe in boxes(b, 0, len(b)) if t == b"moov")
    for t, ps, pe in boxes(b, *moov):
        if t != b"trak":
            continue
        info = {}
        def walk(s, e):
            for t2, ps2, pe2 in boxes(b, s, e):
                if t2 in CONTAINERS:
                    walk(ps2, pe2)
                elif t2 == b"hdlr":
                    info["handler"] = b[ps2 + 8:ps2 + 12].decode()
                elif t2 == b"mdhd":
                    v = b[ps2]
                    info["timescale"] = struct.unpack_from(">I", b, ps2 + 4 + (16 if v else 8))[0]
                elif t2 == b"elst":
                    v, n = b[ps2], struct.unpack_from(">I", b, ps2 + 4)[0]
                    q, ents = ps2 + 8, []
                    for _ in range(n):
                        sd, mt = struct.unpack_from(">Qq" if v else ">Ii", b, q)
                        q += 20 if v else 12
                        ents.append((sd, mt))
                    info["elst"] = ents
                elif t2 == b"stts":
                    n = struct.unpack_from(">I", b, ps2 + 4)[0]
                    info["stts"] = [struct.unpack_from(">II", b, ps2 + 8 + 8 * i) for i in range(n)]
        walk(ps, pe)
        yield info

def video(path):
    return next(t for t in tracks(path) if t["handler"] == "vide")

neg = video("h264_negative_start.mp4")
assert len(neg["elst"]) == 1 and neg["elst"][0][1] > 0, neg["elst"]
print("   h264_negative_start.mp4 video: timescale %d, elst %s" % (neg["timescale"], neg["elst"]))
src = video("h264_bframes_aac.mp4")
print("   h264_bframes_aac.mp4 video: elst %s" % src["elst"])
vfr = video("h264_vfr.mp4")
deltas = sorted({d for _, d in vfr["stts"]})
assert len(deltas) >= 3, vfr["stts"]
print("   h264_vfr.mp4 stts (count, delta) at 1/%d: %s" % (vfr["timescale"], vfr["stts"]))
fi = video("h264_frame_index.mp4")
assert fi["timescale"] == 15360 and fi["elst"] == [(4000, 1024)], (fi["timescale"], fi["elst"])
print("   h264_frame_index.mp4 video: timescale %d, elst %s (2-frame B-frame delay)" % (fi["timescale"], fi["elst"]))
if os.path.exists("av1_10bit.mp4"):
    a10 = video("av1_10bit.mp4")
    assert a10["elst"] == [(1000, 0)], a10["elst"]
    print("   av1_10bit.mp4 video: timescale %d, elst %s" % (a10["timescale"], a10["elst"]))
aac = next(tracks("aac_7s.m4a"))
assert aac["elst"][0][1] == 1024, aac["elst"]
print("   aac_7s.m4a: elst %s (1024 priming samples)" % aac["elst"])
EOF

# --------------------------------------------------------------------------
step "fmp4_*.mp4, dash_*.mp4 (fragmented MP4: H.264 2 s, a keyframe every 10 frames, + AAC 2.5 s)"
# One source, stream-copied into the layouts fragmenting writers make. The
# tests compare each with this defragmented source packet by packet.
"${FF[@]}" -f lavfi -i "$(src_video 320x240 2)" -f lavfi -i "$(src_sine 660 48000 2.5)" -map 0:v -map 1:a \
  -c:v libx264 -preset medium -crf 35 -bf 3 -g 10 -x264-params scenecut=0 -pix_fmt yuv420p \
  -c:a aac -b:a 32k "${BX[@]}" fmp4_source.mp4
FRAG=frag_keyframe+empty_moov+default_base_moof
# An empty moov, then a moof/mdat pair per keyframe (browsers, OBS, CMAF).
"${FF[@]}" -i fmp4_source.mp4 -c copy "${BX[@]}" -movflags "$FRAG" fmp4_empty_moov.mp4
# The first fragment's samples in the moov, the rest in moofs (ffmpeg without empty_moov, some recorders).
"${FF[@]}" -i fmp4_source.mp4 -c copy "${BX[@]}" -movflags frag_keyframe fmp4_moov_and_fragments.mp4
# A fragment for every frame.
"${FF[@]}" -i fmp4_source.mp4 -c copy "${BX[@]}" -movflags frag_every_frame+empty_moov+default_base_moof fmp4_fragment_per_frame.mp4
# Version-1 truns with negative composition offsets (CMAF's and Apple's writers),
# so that the first frame is presented at its decode time, with no edit list.
"${FF[@]}" -i fmp4_source.mp4 -c copy "${BX[@]}" -movflags "$FRAG+negative_cts_offsets" fmp4_negative_cts.mp4
# Not fragmented, with no edit list (-use_editlist 0, as old muxers and some
# recorders write): B-frames' composition offsets show the first frame two
# frames late (ffprobe: start 0.066667), and the last one ends two frames
# after the sum of the sample durations that tkhd and mdhd state.
"${FF[@]}" -i fmp4_source.mp4 -c copy "${BX[@]}" -use_editlist 0 h264_no_edit_list.mp4
# A header claiming 4294967 s (mvhd, mehd, tkhd, mdhd), as a recorder writes before it knows.
"${FF[@]}" -i fmp4_source.mp4 -c copy "${BX[@]}" -movflags "$FRAG+skip_trailer" fmp4_wrong_mehd.mp4
python3 "$DIR/patch-fragment-duration.py" fmp4_wrong_mehd.mp4
# A recording cut in the middle of its last fragment's media data.
"${FF[@]}" -i fmp4_source.mp4 -c copy "${BX[@]}" -movflags "$FRAG+skip_trailer" "$TMP/whole.mp4"
python3 - "$TMP/whole.mp4" fmp4_cut_last_fragment.mp4 <<'EOF'
import struct, sys
data = open(sys.argv[1], "rb").read()
pos, last = 0, None
while pos + 8 <= len(data):
    size, kind = struct.unpack_from(">I4s", data, pos)
    if kind == b"mdat":
        last = (pos, size)
    pos += size
assert last and last[0] + last[1] == len(data), "the last box is not an mdat"
cut = last[0] + 8 + (last[1] - 8) // 2
open(sys.argv[2], "wb").write(data[:cut])
print("   fmp4_cut_last_fragment.mp4: %d of %d bytes (the last mdat cut in half)" % (cut, len(data)))
EOF
# DASH representations: video only and audio only, as a packager writes
# them, without and with a sidx. The audio's priming (1024 samples) is in
# an edit list, which ffmpeg writes into a fragmented moov only with delay_moov.
"${FF[@]}" -i fmp4_source.mp4 -map 0:v -c copy "${BX[@]}" -movflags "$FRAG" dash_video.mp4
"${FF[@]}" -i fmp4_source.mp4 -map 0:v -c copy "${BX[@]}" -movflags "$FRAG+global_sidx" dash_video_sidx.mp4
"${FF[@]}" -i fmp4_source.mp4 -map 0:a -c copy "${BX[@]}" -use_editlist 1 -frag_duration 500000 -movflags "$FRAG+delay_moov" dash_audio.mp4
"${FF[@]}" -i fmp4_source.mp4 -map 0:a -c copy "${BX[@]}" -use_editlist 1 -frag_duration 500000 -movflags "$FRAG+delay_moov+global_sidx" dash_audio_sidx.mp4
python3 - <<'EOF' || fail "fragmented fixtures: layout"
import struct
def top(path):
    data = open(path, "rb").read()
    pos, kinds = 0, []
    while pos + 8 <= len(data):
        size, kind = struct.unpack_from(">I4s", data, pos)
        kinds.append(kind.decode())
        pos += size if size else len(data) - pos
    return kinds, data
for name in ["fmp4_empty_moov.mp4", "fmp4_moov_and_fragments.mp4", "fmp4_fragment_per_frame.mp4", "fmp4_wrong_mehd.mp4", "fmp4_negative_cts.mp4",
             "fmp4_cut_last_fragment.mp4", "dash_video.mp4", "dash_video_sidx.mp4", "dash_audio.mp4", "dash_audio_sidx.mp4"]:
    kinds, data = top(name)
    after = kinds[kinds.index("moov") + 1]
    assert kinds.count("moof") > 1, (name, kinds.count("moof"))
    assert (after == "sidx") == name.endswith("_sidx.mp4"), (name, after)
    assert (after == "mdat") == (name == "fmp4_moov_and_fragments.mp4"), (name, after)
    assert (b"elst" in data) == name.startswith("dash_audio"), (name, "edit list")
    print("   %s: %d fragments, %s after the moov" % (name, kinds.count("moof"), after))
EOF

# --------------------------------------------------------------------------
step "expected.json (ffprobe facts for every media file)"
# Relative to the package root, as the tests read it.
samples="${MEDIAMUX_SAMPLES:-../shared/media}"
[[ "$samples" == /* ]] || samples="$DIR/../$samples"
SAMPLES="$samples" python3 - <<'EOF'
import json, os, subprocess

SKIP_EXT = {".md", ".sh", ".py", ".json"}
files = sorted(f for f in os.listdir(".") if os.path.isfile(f) and os.path.splitext(f)[1] not in SKIP_EXT)
samples = os.environ["SAMPLES"]
paths = {f: f for f in files}
if os.path.isdir(samples):
    for f in sorted(os.listdir(samples)):
        if os.path.splitext(f)[1] not in SKIP_EXT:
            paths["samples/" + f] = os.path.join(samples, f)
    files = list(paths)
else:
    print("   no samples folder at %s: expected.json describes the fixtures only" % samples)

def num(v, conv=float):
    try:
        return conv(v)
    except (TypeError, ValueError):
        return None

version = subprocess.run(["ffprobe", "-version"], capture_output=True, text=True).stdout.split("\n")[0]
result = {"_generated_by": "TestMedia/make-fixtures.sh",
          "_ffprobe": version,
          "_command": "ffprobe -v error -count_packets -show_format -show_streams -of json FILE",
          "_notes": "durations/start_time in seconds (null = N/A); rotation is ffprobe's "
                    "counterclockwise display-matrix angle (-90 = 90 degrees clockwise); "
                    "nb_read_packets comes from -count_packets (packets ffprobe could read); "
                    "probe_error is set when ffprobe exits non-zero",
          "files": {}}
for f in files:
    p = subprocess.run(["ffprobe", "-v", "error", "-count_packets", "-show_format", "-show_streams",
                        "-of", "json", paths[f]], capture_output=True, text=True)
    entry = {"size": os.path.getsize(paths[f])}
    if p.returncode != 0:
        entry["probe_error"] = (p.stderr.strip().splitlines() or ["ffprobe failed"])[-1]
        result["files"][f] = entry
        continue
    if p.stderr.strip():
        entry["probe_warnings"] = sorted(set(l.split("] ", 1)[-1] for l in p.stderr.strip().splitlines()))[:5]
    data = json.loads(p.stdout)
    fmt = data.get("format", {})
    entry["format_name"] = fmt.get("format_name")
    entry["format_duration"] = num(fmt.get("duration"))
    entry["format_start_time"] = num(fmt.get("start_time"))
    streams = []
    for s in data.get("streams", []):
        d = {"index": s["index"], "codec_type": s.get("codec_type"), "codec_name": s.get("codec_name"),
             "codec_tag_string": s.get("codec_tag_string"), "profile": s.get("profile"),
             "time_base": s.get("time_base"), "start_time": num(s.get("start_time")),
             "duration": num(s.get("duration")), "nb_frames": num(s.get("nb_frames"), int),
             "nb_read_packets": num(s.get("nb_read_packets"), int)}
        if s.get("codec_type") == "video":
            d.update(width=s.get("width"), height=s.get("height"), pix_fmt=s.get("pix_fmt"),
                     has_b_frames=s.get("has_b_frames"), avg_frame_rate=s.get("avg_frame_rate"))
            rot = [sd["rotation"] for sd in s.get("side_data_list", []) if "rotation" in sd]
            d["rotation"] = rot[0] if rot else None
        elif s.get("codec_type") == "audio":
            d.update(sample_rate=num(s.get("sample_rate"), int), channels=s.get("channels"))
        streams.append(d)
    entry["streams"] = streams
    result["files"][f] = entry
with open("expected.json", "w") as out:
    json.dump(result, out, indent=1, sort_keys=False)
    out.write("\n")
print("   %d files described" % len(files))
EOF

# --------------------------------------------------------------------------
step "sizes"
synthetic=(h264_bframes_aac.mp4 h264_gop2s_aac.mp4 hevc_hlg10_opengop_aac.mp4 phone_portrait_h264_aac.mp4 h264_rot90.mp4 h264_rot180.mp4 h264_rot270.mp4 h264_coded_portrait.mp4
           hevc_hev1.mp4 h264_vfr.mp4 vp9.mp4 h264_aac.mkv h264_negative_start.mp4 h264_negative_cts_tail.mp4 hevc_hdr10_entry_boxes.mp4 hevc_dv_profile5.mp4 h264_26s_2fps.mp4 h264_frame_index_negative_cts.mp4 aac_7s.m4a aac_2s.m4a
           mp3_5s.mp3 opus_5s.webm opus_5s.ogg pcm_2s.wav flac_3s.flac flac_96k_51_1s.flac vorbis_2s.ogg alac_2s.m4a aac_chirp_1.5s.m4a
           empty.m4a html_page.m4a truncated_h264.mp4
           text_file.mp4 random_bytes.mp4 h264_frame_index.mp4
           fmp4_source.mp4 fmp4_empty_moov.mp4 fmp4_moov_and_fragments.mp4 fmp4_fragment_per_frame.mp4 fmp4_wrong_mehd.mp4 fmp4_negative_cts.mp4
           fmp4_cut_last_fragment.mp4 dash_video.mp4 dash_video_sidx.mp4 dash_audio.mp4 dash_audio_sidx.mp4)
[[ -f av1.mp4 ]] && synthetic+=(av1.mp4 av1_dav1.mp4)
synthetic+=(fpcm.mp4)
[[ -f av1_10bit.mp4 ]] && synthetic+=(av1_10bit.mp4)
syn_total=$(du -cb "${synthetic[@]}" | tail -n1 | cut -f1)
all_total=$(du -sb "$DIR" | cut -f1)
echo "   synthetic fixtures: ${#synthetic[@]} files, $syn_total bytes"
echo "   whole TestMedia folder: $all_total bytes"
(( syn_total < 1200000 )) || fail "synthetic fixtures too big: $syn_total bytes"
# Real files stay in the samples folder; the fixtures, seeds and corpus keep within 5 MB.
(( all_total < 5000000 )) || fail "TestMedia too big: $all_total bytes"
echo "OK"
