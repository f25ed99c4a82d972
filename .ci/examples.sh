#!/usr/bin/env bash
# The Examples package, built and run as its users would run it:
# - merge-server (Hummingbird 2): GET /merge streams the same bytes as
#   `muxctl merge --fragmented` of the same files; a missing file is a 422
#   with MediaMux's one-line message, before any byte of a body; a path
#   out of the media folder is a 400;
# - preview-folder: a clip and a sheet of every video of a folder, in process;
# - error-properties: top-level code reading every property of an error,
#   in release (where Swift 6.3.1's optimizer once crashed on such code).
# Built into the root package's own build folder with its Package.resolved,
# so that MediaMux's modules, built by the step before, are not compiled
# again: only Hummingbird and the examples are (about a minute).
#
# Usage: bash .ci/examples.sh debug|release   (after `swift build` of that configuration)
set -euo pipefail
cd "$(dirname "$0")/.."
config="${1:?debug or release}"
command -v curl >/dev/null || bash .ci/install-deps.sh curl
command -v python3 >/dev/null || bash .ci/install-deps.sh python3
root="$PWD"
out="$root/.build/examples-$config"
rm -rf "$out" && mkdir -p "$out"
[ -f Package.resolved ] && cp Package.resolved Examples/Package.resolved
# From the package's folder: `--package-path` with this scratch path built the root package instead.
build() { (cd Examples && swift build --scratch-path "$root/.build" -c "$config" "$@"); }
fail() { echo "examples: $*" >&2; exit 1; }
# The Serving article's code is the server's route, as the file has it.
python3 - <<'PY' || fail "Sources/MediaMux/MediaMux.docc/Serving.md's code is not Examples/Sources/merge-server/MergeServer.swift's route"
import sys
source = open("Examples/Sources/merge-server/MergeServer.swift").read()
region = source.split("// docs:begin serving\n")[1].split("// docs:end serving")[0].rstrip().split("\n")
code = "\n".join(line[8:] for line in region)
article = open("Sources/MediaMux/MediaMux.docc/Serving.md").read()
sys.exit(0 if "```swift\n" + code + "\n```" in article else 1)
PY
if [ "$config" = release ]; then
    # Only the top-level program, with `make build`'s flags (which compile
    # differently: other flags would compile MediaMux again).
    make examples-release
else
    build
fi
bin="$(build --show-bin-path)"

# error-properties: a missing file's error, every property read.
set +e
"$bin/error-properties" "$out/missing.mp4" > "$out/error.txt"
status=$?
set -e
[ "$status" = 1 ] || fail "error-properties exited $status, not 1"
grep -qx "code: fileNotFound, kind: input" "$out/error.txt" || { cat "$out/error.txt"; fail "error-properties: not the missing file's error"; }
grep -qx "ffmpegCode: -" "$out/error.txt" || fail "error-properties: ffmpegCode"
grep -qx "cast: fileNotFound -" "$out/error.txt" || fail "error-properties: the cast's catch"
[ "$config" = release ] && { echo "examples: error-properties ($config) read every property"; exit 0; }

# merge-server on a free port of 127.0.0.1.
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
"$bin/merge-server" --media "$root/TestMedia" --port "$port" > "$out/server.log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true' EXIT
url="http://127.0.0.1:$port"
for _ in $(seq 1 300); do
    curl -s -o /dev/null "$url/" && break
    kill -0 "$server" 2>/dev/null || { cat "$out/server.log"; fail "merge-server did not start"; }
    sleep 0.1
done
"$root/.build/$config/muxctl" merge --fragmented TestMedia/h264_bframes_aac.mp4 TestMedia/aac_7s.m4a "$out/cli.mp4" > /dev/null
code="$(curl -s -o "$out/served.mp4" -w '%{http_code}' "$url/merge?video=h264_bframes_aac.mp4&audio=aac_7s.m4a")"
[ "$code" = 200 ] || fail "GET /merge answered $code"
cmp "$out/served.mp4" "$out/cli.mp4" || fail "the served body is not muxctl merge --fragmented's output"
# A portrait phone clip with B-frames, and a soundtrack cut shorter: another plan, the same rule.
"$root/.build/$config/muxctl" merge --fragmented TestMedia/h264_rot90.mp4 TestMedia/flac_3s.flac "$out/cli2.mp4" > /dev/null
curl -sf -o "$out/served2.mp4" "$url/merge?video=h264_rot90.mp4&audio=flac_3s.flac"
cmp "$out/served2.mp4" "$out/cli2.mp4" || fail "the second served body is not muxctl's"
code="$(curl -s -o "$out/missing.txt" -w '%{http_code}' "$url/merge?video=no_such_clip.mp4&audio=aac_7s.m4a")"
[ "$code" = 422 ] || fail "a missing file answered $code, not 422"
grep -q "no_such_clip.mp4" "$out/missing.txt" || fail "the 422 does not name the file: $(cat "$out/missing.txt")"
code="$(curl -s -o /dev/null -w '%{http_code}' "$url/merge?video=../README.md&audio=aac_7s.m4a")"
[ "$code" = 400 ] || fail "a path out of the media folder answered $code, not 400"
kill "$server"; wait "$server" 2>/dev/null || true
trap - EXIT
echo "examples: merge-server served muxctl's bytes, a 422 and a 400"

# preview-folder: three videos, one of them portrait, and a file that is not media.
mkdir -p "$out/in" "$out/previews"
cp TestMedia/h264_bframes_aac.mp4 TestMedia/h264_rot90.mp4 TestMedia/phone_portrait_h264_aac.mp4 "$out/in/"
"$bin/preview-folder" "$out/in" "$out/previews" > "$out/previews.txt"
for name in h264_bframes_aac.mp4 h264_rot90.mp4 phone_portrait_h264_aac.mp4; do
    [ -s "$out/previews/$name.preview.mp4" ] && [ -s "$out/previews/$name.sheet.png" ] || fail "no clip or sheet of $name"
    ffprobe -v error -show_entries stream=codec_name -of csv=p=0 "$out/previews/$name.preview.mp4" | grep -qx h264 || fail "$name's clip is not H.264"
done
cp TestMedia/text_file.mp4 "$out/in/"
set +e
"$bin/preview-folder" "$out/in" "$out/previews" > "$out/previews-bad.txt"
status=$?
set -e
[ "$status" = 1 ] || fail "preview-folder with a file that is not media exited $status, not 1"
grep -q "^error: .*text_file.mp4" "$out/previews-bad.txt" || fail "preview-folder did not name the bad file: $(cat "$out/previews-bad.txt")"
echo "examples: preview-folder made a clip and a sheet of each video, and named the file that is not one"
