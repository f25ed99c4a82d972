# The README's two commands: `make demo` and `make test`.
# `make demo` needs nothing beyond the repository: a synthetic phone clip
# (portrait, coded landscape and turned by its display matrix) and a soundtrack.
DEMO_VIDEO := TestMedia/phone_portrait_h264_aac.mp4
DEMO_AUDIO := TestMedia/aac_7s.m4a
DEMO_OUT   := .build/demo/merged.mp4

.PHONY: deps build print-link-flags examples-release demo test test-debian13 install docs

deps:
	@bash .ci/install-deps.sh

# A self-contained muxctl: the Swift runtime is linked in, so it runs where
# only FFmpeg's libraries are installed, and loads less at start.
# Linked by the toolchain's lld, with its relative relocations packed (DT_RELR,
# which glibc loads from 2.36 on) and no symbols exported that nothing looks up
# (-static-stdlib asks for all): the loader then reads 16 KiB of relocations
# instead of 1.9 MiB, and no 2.7 MiB symbol table. About 4 MiB less resident in
# every run (README, "Speed and memory"). Without lld or on an older glibc the
# relocations stay as they are.
SWIFT_BIN  := $(shell dirname "$$(readlink -f "$$(command -v swift)")" 2>/dev/null)
GLIBC_2_X  := $(shell getconf GNU_LIBC_VERSION 2>/dev/null | sed -n 's/^glibc 2\.\([0-9]*\).*/\1/p')
USE_LLD    := $(if $(wildcard $(SWIFT_BIN)/ld.lld),-Xswiftc -use-ld=lld)
PACK_RELR  := $(if $(USE_LLD),$(shell [ "$(GLIBC_2_X)" -ge 36 ] 2>/dev/null && echo -Xlinker -z -Xlinker pack-relative-relocs))
LINK_FLAGS := -Xswiftc -static-stdlib $(USE_LLD) $(PACK_RELR) -Xlinker --no-export-dynamic

build: deps
	swift build -c release --product muxctl $(LINK_FLAGS)

# The Examples package's top-level error-properties, in release, into the
# build folder `make build` fills and with its flags: MediaMux's modules are
# not compiled again (see .ci/examples.sh).
print-link-flags:
	@echo $(LINK_FLAGS)

examples-release: build
	@[ -f Package.resolved ] && cp Package.resolved Examples/Package.resolved || true
	cd Examples && swift build --scratch-path $(CURDIR)/.build -c release --product error-properties $(LINK_FLAGS)

DEMO_WIDE  := .build/demo/landscape.mp4

# The phone clip merged as it is shown (portrait, upright, copied), then
# re-framed into a landscape frame (encoded); a contact sheet of each
# output, as players show it (the README's pictures), and a preview clip;
# three clips of one recording composed by copy, with its sheet.
demo: build
	@mkdir -p $(dir $(DEMO_OUT))
	.build/release/muxctl merge --force $(DEMO_VIDEO) $(DEMO_AUDIO) $(DEMO_OUT)
	.build/release/muxctl probe $(DEMO_OUT)
	.build/release/muxctl merge --force --orientation landscape $(DEMO_VIDEO) $(DEMO_AUDIO) $(DEMO_WIDE)
	.build/release/muxctl preview --force $(DEMO_OUT) --sheet $(dir $(DEMO_OUT))sheet.png --frames 6 --columns 6 --size 160
	.build/release/muxctl preview --force $(DEMO_WIDE) --sheet $(dir $(DEMO_OUT))sheet-landscape.png --frames 6 --columns 3 --size 240
	.build/release/muxctl preview --force $(DEMO_OUT) --clip $(dir $(DEMO_OUT))preview.mp4 --seconds 2
	.build/release/muxctl compose --force $(dir $(DEMO_OUT))composed.mp4 --soundtrack TestMedia/aac_7s.m4a \
	  --clip TestMedia/h264_bframes_aac.mp4@2-3 --clip TestMedia/h264_bframes_aac.mp4@0-1 --clip TestMedia/h264_bframes_aac.mp4@3-
	.build/release/muxctl preview --force $(dir $(DEMO_OUT))composed.mp4 --sheet $(dir $(DEMO_OUT))sheet-composed.png --frames 6 --columns 6 --size 160

# The real files other projects made (phones, encoders, recorders) are read
# from the samples folder, never copied here: MEDIAMUX_SAMPLES, by default
# ../shared/media beside the package. Without it the tests that read them
# are left out, each by name, and `make test` says so at its end.
MEDIAMUX_SAMPLES ?= $(abspath $(CURDIR)/../shared/media)
export MEDIAMUX_SAMPLES

# The CLI's download tests serve files with python3's http.server; the
# browser tests play outputs in headless Chromium, the player tests in
# GStreamer (qtdemux, decodebin, gst-libav's decoders); the loudness tests
# measure outputs with the ffmpeg CLI's ebur128, independently of MediaMux.
test: deps
	@command -v python3 >/dev/null || bash .ci/install-deps.sh python3
	@command -v chromium >/dev/null || command -v chromium-browser >/dev/null || bash .ci/install-deps.sh chromium || bash .ci/install-deps.sh chromium-browser
	@bash .ci/install-deps.sh gstreamer1.0-tools gstreamer1.0-plugins-base gstreamer1.0-plugins-base-apps gstreamer1.0-plugins-good gstreamer1.0-libav
	@command -v ffmpeg >/dev/null || bash .ci/install-deps.sh ffmpeg
	@swift test; status=$$?; \
	  [ -d "$(MEDIAMUX_SAMPLES)" ] || echo "make test: the tests that read real media were left out (no samples folder at $(MEDIAMUX_SAMPLES)): set MEDIAMUX_SAMPLES"; \
	  exit $$status

# The same suite on Debian 13 and its FFmpeg 7.1, with this machine's Swift:
# a root made with debootstrap in .build/debian13-root (kept while complete),
# the committed HEAD copied into it and `make test` run there, then the
# runtime image's Debian 13 package list checked against what muxctl links.
# Needs root (or sudo), debootstrap (installed if missing), about 1.6 GB of
# disk and Debian's mirror: a few minutes of downloads the first time.
# DEBIAN13_WORKTREE=1 also copies uncommitted changes. See .ci/debian13.sh.
test-debian13:
	bash .ci/debian13.sh test bash -c 'make test && bash deploy/image/check-libraries.sh .build/debug/muxctl'

# muxctl, its shell completions and its man page under PREFIX (default
# /usr/local; DESTDIR for staging). The completions come from the binary, the
# man page from swift-argument-parser's generate-manual tool, which reads the
# same help text from the release binary being installed. The tool is run
# directly: its package plugin would first build every product again in
# debug, minutes on a fresh clone, for the same page.
PREFIX ?= /usr/local
MANUAL := .build/manual/muxctl.1

install: build
	swift build --product generate-manual
	mkdir -p $(dir $(MANUAL))
	.build/debug/generate-manual .build/release/muxctl --output-directory $(dir $(MANUAL))
	install -d "$(DESTDIR)$(PREFIX)/bin" "$(DESTDIR)$(PREFIX)/share/man/man1" \
	  "$(DESTDIR)$(PREFIX)/share/bash-completion/completions" "$(DESTDIR)$(PREFIX)/share/zsh/site-functions" \
	  "$(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d"
	install -s -m 755 .build/release/muxctl "$(DESTDIR)$(PREFIX)/bin/muxctl"
	install -m 644 $(MANUAL) "$(DESTDIR)$(PREFIX)/share/man/man1/muxctl.1"
	.build/release/muxctl --generate-completion-script bash > "$(DESTDIR)$(PREFIX)/share/bash-completion/completions/muxctl"
	.build/release/muxctl --generate-completion-script zsh > "$(DESTDIR)$(PREFIX)/share/zsh/site-functions/_muxctl"
	.build/release/muxctl --generate-completion-script fish > "$(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/muxctl.fish"

# The DocC documentation in .build/docs: the MediaMux catalog
# (Sources/MediaMux/MediaMux.docc) with the reference of the four modules
# MediaMux re-exports, combined into one archive, so that MergeOptions,
# PreviewEngine and the rest have pages of their own. The catalog alone is
# `swift package --allow-writing-to-directory DIR generate-documentation
# --target MediaMux --output-path DIR --disable-indexing`.
# The archive is a static site: serve the folder over HTTP
# (python3 -m http.server -d .build/docs) and open /documentation/mediamux.
DOCS_OUT     := .build/docs
DOCS_TARGETS := MediaMuxBase MediaMuxCore MediaMuxPreview MediaMuxDownload MediaMux

docs: deps
	swift package --allow-writing-to-directory $(DOCS_OUT) generate-documentation \
		$(addprefix --target ,$(DOCS_TARGETS)) --enable-experimental-combined-documentation \
		--output-path $(DOCS_OUT) --disable-indexing
