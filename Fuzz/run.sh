#!/usr/bin/env bash
# Fuzzes MediaMux with libFuzzer and AddressSanitizer.
#
#   bash Fuzz/run.sh [SECONDS]    fuzz for SECONDS (default 600)
#   bash Fuzz/run.sh merge        keep what the runs found that reaches new
#                                 code (inputs under 16 KiB): into
#                                 TestMedia/fuzz/corpus
#   bash Fuzz/run.sh replay FILE  run one input (a crasher) again
#
# The target (Sources/mediamux-fuzz, built with -sanitize=fuzzer) runs
# MediaMuxFuzzing's exercise over each input: the box reader, probe, plan, a
# merge with the input as the video and one with it as the soundtrack, and
# frame decoding, and aborts when a promise is broken (an error that names no
# file or says only FFmpeg's words, a leftover file, a merged file that does
# not probe). Only MediaMux's Swift code is instrumented for coverage;
# FFmpeg's libraries are Debian's.
#
# It seeds from all of TestMedia (libFuzzer reads folders whole: the fuzz
# seeds, the kept corpus, the regressions and every fixture) and from the real
# files of the samples folder ($MEDIAMUX_SAMPLES, by default ../shared/media
# beside the package), read there at run time and never copied into the
# repository; new inputs go to .build/fuzz/corpus, crashers, hangs
# and memory blow-ups to .build/fuzz/found. A crasher, once fixed, belongs in
# TestMedia/fuzz/regressions, which the test suite runs on every build
# (FuzzCorpusTests). FUZZ_JOBS=N runs N processes (libFuzzer's -fork).
set -euo pipefail
cd "$(dirname "$0")/.."
make --no-print-directory deps

build=.build/fuzz
target="$build/release/mediamux-fuzz"
# SwiftPM links every executable with main defined as the module's own, and
# -sanitize=fuzzer links libFuzzer's main as well: muldefs lets the first
# stand, and either one runs the exercise (the target defines both entries).
swift build -c release --product mediamux-fuzz --build-path "$build" \
  -Xswiftc -sanitize=fuzzer,address -Xswiftc -DMEDIAMUX_LIBFUZZER -Xlinker -z -Xlinker muldefs 2>&1 |
  grep -v -e "unhandled; explicitly declare" -e "Cannot export local symbol" >&2

mkdir -p "$build/corpus" "$build/found" TestMedia/fuzz/corpus TestMedia/fuzz/regressions
# Leaks are the valgrind runs' to find (.ci/valgrind.sh); here they would stop
# the run at the first cached FFmpeg table.
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:symbolize=1"
# Swift's own crash backtracer would walk the stack after ASan's report (and
# trip over ASan's redzones); libFuzzer and ASan say all there is.
export SWIFT_BACKTRACE=enable=no
limits=(-max_len=65536 -timeout=20 -rss_limit_mb=2048 -malloc_limit_mb=1024 -dict=Fuzz/media.dict)

case "${1:-600}" in
merge)
  # Keeps the inputs under 16 KiB that reach code the seeds, the
  # regressions and the corpus kept so far do not: the corpus runs in every
  # `swift test`, and TestMedia has a size budget. libFuzzer's merge adds to
  # its first folder only what brings new coverage, smallest inputs first.
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  mkdir "$work/kept" "$work/candidates"
  cp TestMedia/fuzz/seeds/* TestMedia/fuzz/regressions/* "$work/kept/"
  find TestMedia/fuzz/corpus -type f -exec cp {} "$work/kept/" \;
  ls "$work/kept" | sort >"$work/before"
  find "$build/corpus" -type f -size -16k -exec cp {} "$work/candidates/" \;
  "$target" -merge=1 "${limits[@]}" "$work/kept" "$work/candidates"
  ls "$work/kept" | sort | comm -13 "$work/before" - | while read -r name; do
    cp "$work/kept/$name" TestMedia/fuzz/corpus/
  done
  echo "TestMedia/fuzz/corpus: $(ls TestMedia/fuzz/corpus | wc -l) files, $(du -sh TestMedia/fuzz/corpus | cut -f1)"
  ;;
replay)
  "$target" "${limits[@]}" "${2:?which file}"
  ;;
*)
  seconds=$1
  samples="${MEDIAMUX_SAMPLES:-../shared/media}"
  [[ "$samples" == /* ]] || samples="$PWD/$samples"
  seeds=(TestMedia)
  if [ -d "$samples" ]; then seeds+=("$samples"); else echo "fuzz: no samples folder at $samples: seeding from TestMedia alone" >&2; fi
  fork=()
  [ -n "${FUZZ_JOBS:-}" ] && fork=(-fork="$FUZZ_JOBS" -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1)
  "$target" "${limits[@]}" "${fork[@]}" -max_total_time="$seconds" -print_final_stats=1 \
    -artifact_prefix="$build/found/" \
    "$build/corpus" "${seeds[@]}"
  ;;
esac
