#!/usr/bin/env bash
# The whole test suite under AddressSanitizer, then under ThreadSanitizer.
#
#   bash .ci/sanitizers.sh [address|thread]...   (default: both)
#
# Only the Swift code is rebuilt with the sanitizer (-Xswiftc -sanitize=...):
# the C and C++ the packages bring (two copies of BoringSSL) keep the objects
# of the plain debug build in .build, which is what makes this fit in CI. So
# it shares .build/debug with `swift test`, and leaves it built for the last
# sanitizer: the next plain `swift test` recompiles the Swift code. FFmpeg's
# libraries are Debian's, uninstrumented: AddressSanitizer still sees
# MediaMux's reads and writes of FFmpeg's buffers and every malloc/free
# pairing, ThreadSanitizer every access MediaMux's own threads make.
set -euo pipefail
cd "$(dirname "$0")/.."
make --no-print-directory deps

# Reports go to stderr and fail the run (exit code 1 on the first one).
# Leaks are left to the valgrind runs (.ci/valgrind.sh): FFmpeg's and the
# Swift runtime's one-time allocations would drown them here.
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=0:halt_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1"
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:report_signal_unsafe=0"

for sanitizer in "${@:-address thread}"; do
  for one in $sanitizer; do
    echo "== swift test under the $one sanitizer"
    start=$SECONDS
    # The condition lets a test know which runtime it is under
    # (MEDIAMUX_SANITIZER_THREAD, say). Under ThreadSanitizer the tests that
    # judge outputs in Chromium and GStreamer are left out: their judges are
    # other processes, uninstrumented, the outputs they judge are made by
    # tests that do run here, and they run in the plain suite (Debian 12)
    # and under AddressSanitizer (Debian 13); under ThreadSanitizer they
    # cost minutes of CI for no thread of MediaMux's.
    skip=""
    if [ "$one" = thread ]; then skip="browser,gstreamer"; fi
    MEDIAMUX_SKIP_TAGS="${MEDIAMUX_SKIP_TAGS:-$skip}" swift test -Xswiftc -sanitize="$one" -Xswiftc -DMEDIAMUX_SANITIZER_"${one^^}" 2>&1 |
      grep --line-buffered -v -e "unhandled; explicitly declare" -e "Cannot export local symbol"
    echo "== $one: $((SECONDS - start)) s"
  done
done
