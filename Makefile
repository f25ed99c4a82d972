# The README's two commands: `make demo` and `make test`.
# `make demo` also draws the contact sheet the README shows (docs/contact-sheet.png).
DEMO_VIDEO := TestMedia/real/iphone_hevc_rot90_bframes_editlist_nonsync_start.mp4
DEMO_AUDIO := TestMedia/aac_7s.m4a
DEMO_OUT   := .build/demo/merged.mp4

.PHONY: deps build demo test

deps:
	@bash .ci/install-deps.sh

# A self-contained muxctl: the Swift runtime is linked in, so it runs where
# only FFmpeg's libraries are installed, and loads less at start.
build: deps
	swift build -c release --product muxctl -Xswiftc -static-stdlib

demo: build
	@mkdir -p $(dir $(DEMO_OUT))
	.build/release/muxctl merge --force $(DEMO_VIDEO) $(DEMO_AUDIO) $(DEMO_OUT)
	.build/release/muxctl probe $(DEMO_OUT)
	.build/release/muxctl preview --force $(DEMO_VIDEO) --sheet $(dir $(DEMO_OUT))sheet.png --size 160
	.build/release/muxctl preview --force $(DEMO_VIDEO) --clip $(dir $(DEMO_OUT))preview.mp4 --seconds 2

# The CLI's download tests serve files with python3's http.server; the
# browser tests play outputs in headless Chromium, the player tests in
# GStreamer (qtdemux, decodebin, gst-libav's decoders).
test: deps
	@command -v python3 >/dev/null || bash .ci/install-deps.sh python3
	@command -v chromium >/dev/null || command -v chromium-browser >/dev/null || bash .ci/install-deps.sh chromium || bash .ci/install-deps.sh chromium-browser
	@bash .ci/install-deps.sh gstreamer1.0-tools gstreamer1.0-plugins-base gstreamer1.0-plugins-good gstreamer1.0-libav
	swift test
