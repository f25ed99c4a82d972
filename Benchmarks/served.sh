#!/usr/bin/env bash
# A merge served as an HTTP response by Examples/Sources/merge-server (a
# Hummingbird 2 server on MediaMux's MergeBody), from the ten-minute 720p
# recording (451 MB of video, 10 MB of AAC):
# - one stream: time to first byte and throughput of GET /merge read by curl,
#   against `ffmpeg -c copy -movflags frag_keyframe+empty_moov+default_base_moof
#   -f mp4 pipe:1` read from its pipe (and `muxctl merge ... -`), medians of RUNS;
# - load: 32 clients reading at 50 kB/s and 8 reading as fast as they can,
#   in one server process; once all 40 stream, a small merge (35 KB) is
#   asked for and timed. Reported: the 8 fast streams' throughput, the small
#   merge's latency, the server's peak RSS over its idle RSS per open stream;
#   every fast body's SHA-256 against `muxctl merge --fragmented`'s file.
# The slow clients are stopped once the fast ones end (at 50 kB/s a body
# would take hours).
#
# Usage: bash Benchmarks/served.sh   (from anywhere)
# Env:   RUNS=5   timed runs of the single-stream measures (median)
#        MUXCTL   a muxctl to use instead of building one
#        MAX_STREAM_MIB=8   fails if the server's peak RSS over idle, per open
#                 stream, is above it (the bound Serving.md states)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
need_package curl curl
need_package python3 python3
command -v ffmpeg >/dev/null || die "ffmpeg not found (apt-get install ffmpeg)"
make_video 600 "$V_LONG"
make_audio 600 "$A_LONG"
build_muxctl

say "== building Examples' merge-server (release, into the root package's build folder)"
[[ -f "$ROOT/Package.resolved" ]] && cp "$ROOT/Package.resolved" "$ROOT/Examples/Package.resolved"
# The same flags as `make build` (see its examples-release): MediaMux's modules are not compiled again.
LINK_FLAGS="$(make -s -C "$ROOT" print-link-flags)"
# shellcheck disable=SC2086
(cd "$ROOT/Examples" && swift build --scratch-path "$ROOT/.build" -c release --product merge-server $LINK_FLAGS >&2)
SERVER="$(cd "$ROOT/Examples" && swift build --scratch-path "$ROOT/.build" -c release --show-bin-path)/merge-server"
[[ -x "$SERVER" ]] || die "merge-server not found at $SERVER"

SMALL="$WORK/served_small"
mkdir -p "$SMALL"
cp -f "$ROOT/TestMedia/h264_bframes_aac.mp4" "$ROOT/TestMedia/aac_7s.m4a" "$SMALL/"
REFERENCE="$WORK/served_reference.mp4"
say "== the reference: muxctl merge --fragmented"
"$MUXCTL" merge --force --fragmented "$V_LONG" "$A_LONG" "$REFERENCE" >/dev/null

python3 - "$SERVER" "$MUXCTL" "$WORK" "$V_LONG" "$A_LONG" "$REFERENCE" "$RUNS" "${MAX_STREAM_MIB:-8}" <<'PY'
import hashlib, os, socket, statistics, subprocess, sys, time
server_bin, muxctl, work, video, audio, reference, runs, max_stream_mib = sys.argv[1:9]
runs = int(runs); max_stream_mib = float(max_stream_mib)

def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close(); return port

def rss_kib(pid, field="VmRSS"):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0

def read_pipe(command):
    """Time to first byte, total seconds and bytes of a command's standard output."""
    start = time.monotonic()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    first, total = None, 0
    while True:
        chunk = process.stdout.read1(1 << 20)
        if not chunk:
            break
        if first is None:
            first = time.monotonic() - start
        total += len(chunk)
    if process.wait() != 0:
        sys.exit(f"served.sh: failed: {' '.join(command)}")
    return first, time.monotonic() - start, total

def sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()

port = free_port()
url = f"http://127.0.0.1:{port}"
log = open(os.path.join(work, "served_server.log"), "w")
server = subprocess.Popen([server_bin, "--media", "/", "--port", str(port)], stdout=log, stderr=log)
try:
    for _ in range(300):
        if subprocess.run(["curl", "-s", "-o", "/dev/null", url + "/"]).returncode == 0:
            break
        time.sleep(0.1)
    merge_url = f"{url}/merge?video={video.lstrip('/')}&audio={audio.lstrip('/')}"
    small_url = f"{url}/merge?video={work.lstrip('/')}/served_small/h264_bframes_aac.mp4&audio={work.lstrip('/')}/served_small/aac_7s.m4a"
    ffmpeg = ["ffmpeg", "-nostdin", "-v", "error", "-i", video, "-i", audio, "-map", "0:v", "-map", "1:a", "-c", "copy",
              "-movflags", "frag_keyframe+empty_moov+default_base_moof", "-f", "mp4", "pipe:1"]
    commands = {
        "served": ["curl", "-s", "-f", merge_url],
        "muxctl -": [muxctl, "merge", video, audio, "-"],
        "ffmpeg pipe": ffmpeg,
    }
    results = {name: [] for name in commands}
    for run in range(runs):
        for name in (commands if run % 2 == 0 else reversed(list(commands))):
            first, total, size = read_pipe(commands[name])
            results[name].append((first, total, size))
            print(f"   run {run + 1}/{runs}  {name:<12} first byte {first * 1000:7.1f} ms  {total:6.2f} s  {size / total / 1e6:6.1f} MB/s", file=sys.stderr)
    print("\n== one stream (medians of %d)" % runs)
    print(f"{'':<12} {'first byte':>11} {'total':>8} {'MB/s':>7}")
    for name, rows in results.items():
        first = statistics.median(r[0] for r in rows); total = statistics.median(r[1] for r in rows)
        size = rows[0][2]
        print(f"{name:<12} {first * 1000:8.1f} ms {total:7.2f} s {size / total / 1e6:7.1f}")
    served_first = statistics.median(r[0] for r in results["served"]); ffmpeg_first = statistics.median(r[0] for r in results["ffmpeg pipe"])
    served_total = statistics.median(r[1] for r in results["served"]); ffmpeg_total = statistics.median(r[1] for r in results["ffmpeg pipe"])
    print(f"served / ffmpeg: first byte {served_first / ffmpeg_first:.2f}, total time {served_total / ffmpeg_total:.2f}")

    # The load.
    idle = rss_kib(server.pid)
    expected = sha256(reference)
    slow = [subprocess.Popen(["curl", "-s", "--limit-rate", "50k", "-o", "/dev/null", merge_url]) for _ in range(32)]
    fast_paths = [os.path.join(work, f"served_fast_{i}.mp4") for i in range(8)]
    start = time.monotonic()
    fast = [subprocess.Popen(["curl", "-s", "-f", "-o", path, merge_url]) for path in fast_paths]
    peak = idle
    def sample():
        global peak
        peak = max(peak, rss_kib(server.pid))
    # Every client has its first bytes (the slow ones' 50 kB/s included) before the small request.
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        sample(); time.sleep(0.1)
    small_start = time.monotonic()
    small = subprocess.run(["curl", "-s", "-f", "-o", os.path.join(work, "served_small.mp4"), "-w", "%{time_starttransfer} %{time_total}", small_url],
                           capture_output=True, text=True)
    small_first, small_total = (float(x) for x in small.stdout.split())
    slow_running = sum(p.poll() is None for p in slow)
    while any(p.poll() is None for p in fast):
        sample(); time.sleep(0.1)
    elapsed = time.monotonic() - start
    sample()
    slow_still = sum(p.poll() is None for p in slow)
    for p in slow:
        p.kill(); p.wait()
    failed = [i for i, p in enumerate(fast) if p.returncode != 0]
    same = [sha256(path) == expected for path in fast_paths]
    size = os.path.getsize(reference)
    for path in fast_paths:
        os.remove(path)
    print("\n== load: 8 fast streams, 32 at 50 kB/s, one server")
    print(f"8 fast streams: {8 * size / 1e6:.0f} MB in {elapsed:.1f} s, {8 * size / elapsed / 1e6:.1f} MB/s together")
    print(f"small merge (35 KB) asked for once all 40 streamed: first byte {small_first * 1000:.0f} ms, whole {small_total * 1000:.0f} ms;"
          f" slow streams still streaming: {slow_running} of 32 then, {slow_still} when the fast ones ended")
    per_stream = (peak - idle) / 40 / 1024
    print(f"server RSS: idle {idle / 1024:.1f} MiB, peak {peak / 1024:.1f} MiB: {per_stream:.2f} MiB per open stream (bound {max_stream_mib:g})")
    print(f"fast bodies byte-identical to muxctl merge --fragmented: {sum(same)} of 8" + (f"; curl failed for {failed}" if failed else ""))
    if small.returncode != 0 or failed or not all(same) or slow_running != 32 or per_stream > max_stream_mib:
        sys.exit(1)
finally:
    server.terminate()
    server.wait()
PY
