import MediaMux  // Not @testable: only what a user's own tests can reach.
import Testing

/// Every result and progress value of the preview module can be made by
/// hand, so that callers can fake them in their own tests.
struct PreviewFakesTests {
    @Test func resultsAndProgressCanBeMadeByHand() {
        let image = WrittenImage(path: "a.png", time: 1.5, width: 4, height: 3, bytes: 100)
        #expect(image.time == MediaTime(value: 3, timescale: 2) && image.width == 4 && image.bytes == 100)
        let clip = PreviewClipReport(
            output: "c.mp4", start: 1, duration: 2.5, width: 640, height: 360, videoFrames: 75, hasAudio: true, bytes: 1000)
        #expect(clip.duration == MediaTime(value: 5, timescale: 2) && clip.videoFrames == 75 && clip.hasAudio)
        let progress = PreviewProgress(done: 3, total: 12, fraction: 0.25)
        #expect(progress.total == 12 && progress.fraction == 0.25)
        let turned = PictureSize(width: 120, height: 160, turn: .clockwise90)
        #expect([turned.scaledWidth, turned.scaledHeight] == [160, 120])
        let upright = PictureSize(width: 120, height: 160, turn: .half)
        #expect([upright.scaledWidth, upright.scaledHeight] == [120, 160])
    }
}
