#!/usr/bin/env bash
# muxctl's five kinds of work under valgrind's memcheck: a merge (a copy, an
# AAC encode, a video re-framed in H.264 and in 10-bit HEVC), a download over HTTP from 127.0.0.1, a preview clip, a
# composition and a batch of two jobs with previews. Each must end with no definite leak and
# no invalid read, write or free; valgrind's log is printed when one does.
#
#   bash .ci/valgrind.sh [MUXCTL]    (default: .build/debug/muxctl, built by `swift build`)
#
# CI gives it the debug build. The release build (-O) also runs clean of
# leaks, but memcheck reports conditional jumps on uninitialised values
# inside SwiftNIO's HTTP decoder and AsyncHTTPClient's response handling
# there, and none in the same code unoptimised: optimised Swift loads whole
# words of enum payloads only partly set. Those reports are in code
# MediaMux does not own and cannot show a MediaMux defect; the debug build
# keeps memcheck exact for MediaMux's own.
#
# "Possibly lost" and "still reachable" blocks are not counted: they are the
# Swift runtime's metadata caches and FFmpeg's static tables, which live as
# long as the process does by design.
set -euo pipefail
cd "$(dirname "$0")/.."
bash .ci/install-deps.sh valgrind python3
muxctl=${1:-.build/debug/muxctl}
[ -x "$muxctl" ] || swift build --product muxctl

work=$(mktemp -d)
# Valgrind 3.19 (Debian 12) cannot read the DWARF 5 the Swift toolchain
# writes, and gives up: it runs a copy without debug information (the symbol
# table stays, so its stacks still name functions).
objcopy --strip-debug "$muxctl" "$work/muxctl"
muxctl="$work/muxctl"
# Swift's async main parks the main thread in libdispatch's
# sigsuspend(&mask), whose mask is `static const`, and valgrind 3.19 writes
# into the mask it is given (to take out a signal of its own): a fault in
# read-only memory, and valgrind dies. This preloaded sigsuspend passes a
# copy; it changes nothing else and allocates nothing.
cat >"$work/sigsuspend.c" <<'SHIM'
#define _GNU_SOURCE
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>
int sigsuspend(const sigset_t *mask) {
    sigset_t copy = *mask;
    return (int)syscall(SYS_rt_sigsuspend, &copy, 8);
}
SHIM
compiler=$(command -v cc || command -v clang)
"$compiler" -shared -fPIC -O2 -o "$work/sigsuspend.so" "$work/sigsuspend.c"
server=""
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/served" "$work/out" "$work/cache"
cp TestMedia/aac_7s.m4a "$work/served/song.m4a"
python3 -m http.server --bind 127.0.0.1 0 --directory "$work/served" >"$work/server.log" 2>&1 &
server=$!
port=""
for _ in $(seq 100); do
  port=$(sed -n 's/.*port \([0-9]*\).*/\1/p' "$work/server.log" | head -1)
  [ -n "$port" ] && break
  sleep 0.1
done
[ -n "$port" ] || { echo "the HTTP server did not start"; cat "$work/server.log"; exit 1; }

failed=0
check() {
  local name=$1
  shift
  local start=$SECONDS
  local log="$work/$name.valgrind"
  if LD_PRELOAD="$work/sigsuspend.so" valgrind --tool=memcheck --suppressions=.ci/valgrind.supp --leak-check=full --show-leak-kinds=definite --errors-for-leak-kinds=definite \
      --error-exitcode=99 --num-callers=30 --log-file="$log" "$muxctl" "$@" >"$work/$name.out" 2>&1; then
    local leaks errors
    leaks=$(grep -a 'definitely lost:' "$log" | sed 's/.*definitely/definitely/' || true)
    errors=$(grep -a 'ERROR SUMMARY:' "$log" | sed 's/.*ERROR SUMMARY: //' || true)
    echo "valgrind $name: clean (${leaks:-no leaks}; ${errors}; $((SECONDS - start)) s)"
  else
    echo "valgrind $name: FAILED (exit $?)"
    cat "$work/$name.out" "$log"
    failed=1
  fi
}

check merge merge TestMedia/h264_bframes_aac.mp4 TestMedia/aac_7s.m4a "$work/out/merged.mp4" --quiet
check merge-encode merge TestMedia/h264_bframes_aac.mp4 TestMedia/flac_3s.flac "$work/out/encoded.mp4" --quiet
# Re-framed: decoded, turned and blurred by libavfilter, encoded by libx264; and 10-bit HDR by libx265.
check merge-reframe merge TestMedia/phone_portrait_h264_aac.mp4 TestMedia/aac_7s.m4a "$work/out/reframed.mp4" --orientation landscape --quiet
check merge-reframe-hdr merge TestMedia/hevc_hdr10_entry_boxes.mp4 TestMedia/aac_7s.m4a "$work/out/reframed-hdr.mp4" --orientation portrait --quiet
check download download "http://127.0.0.1:$port/song.m4a" -o "$work/out/song.m4a" --cache-dir "$work/cache"
check preview-clip preview TestMedia/h264_bframes_aac.mp4 --clip "$work/out/clip.mp4" --seconds 2
# A composition by copy: cuts scanned (the ends of clips too), HEVC clips
# that begin at a CRA picture, the second made a splice point in a copy of
# its packet, the sample tables from fragments (the encode path is the
# re-framing merge's above).
check compose compose "$work/out/composed.mp4" --clip TestMedia/hevc_hev1.mp4@1- --clip TestMedia/hevc_hev1.mp4@1- --soundtrack TestMedia/aac_7s.m4a --quiet
# A smart cut: the 5 frames before the keyframe at 2 s and the 5 from the
# one at 4 s encoded by encoders of their own (and one opened for its
# parameter sets), their packets rewritten into the avcC's form between
# copied ones.
check compose-cut compose "$work/out/cut.mp4" --clip TestMedia/h264_gop2s_aac.mp4@1.8-4.2 --quiet
cat >"$work/jobs.json" <<EOF
{"jobs": [
  {"video": "$PWD/TestMedia/h264_bframes_aac.mp4", "audio": "http://127.0.0.1:$port/song.m4a", "output": "out/a.mp4", "preview": {"sheet": true, "clip": true}},
  {"video": "$PWD/TestMedia/h264_rot90.mp4", "audio": "$PWD/TestMedia/flac_3s.flac", "output": "out/b.mp4", "preview": {"sheet": true}}
]}
EOF
check batch batch "$work/jobs.json" --jobs 2 --cache-dir "$work/cache"
exit $failed
