import MediaMuxBase

/// Pure: a span of one video file, with its own sound, encoded anew (what a
/// preview clip is), as a plan of output tracks that the executor carries
/// out as it does a merge's. The video is one encode span, read from the
/// keyframe at or before the span's start; the sound, placed against the
/// video as a merge places the video's own audio, is one encode span from
/// the clip's start to its end, silent where the file has none.
extension MergePlanner {
    /// What a clip asks for, every choice already made by its caller.
    package struct Clip: Sendable, Equatable {
        /// The sound: which of the file's audio streams (as `StreamInfo.index` counts), encoded how.
        package struct Sound: Sendable, Equatable {
            package var streamIndex: Int
            package var encoding: AudioEncoding

            package init(streamIndex: Int, encoding: AudioEncoding) {
                self.streamIndex = streamIndex
                self.encoding = encoding
            }
        }

        package var output: String
        package var overwrite: Bool
        /// The video stream's index in the file.
        package var videoStream: Int
        /// Where the clip starts and ends on the video's timeline (its first frame shown at zero).
        package var start: MediaTime
        package var end: MediaTime
        package var video: VideoEncoding
        package var sound: Sound?

        package init(
            output: String, overwrite: Bool, videoStream: Int, start: MediaTime, end: MediaTime, video: VideoEncoding, sound: Sound?
        ) {
            self.output = output
            self.overwrite = overwrite
            self.videoStream = videoStream
            self.start = start
            self.end = end
            self.video = video
            self.sound = sound
        }
    }

    /// The plan of `clip` of the file `info` describes: MP4, its movie
    /// header moved to the front once written, no metadata of the source's.
    package static func clipPlan(_ clip: Clip, of info: MediaInfo) throws -> MergePlan {
        guard let stream = info.streams.first(where: { $0.index == clip.videoStream && $0.kind == .video }) else {
            throw MediaMuxError.streamIndexOutOfRange(kind: .video, index: clip.videoStream, available: info.videoStreams.count, path: info.path)
        }
        var video = try trimmed(track(stream, in: info, role: .video, keepsMetadata: false), from: clip.start, length: clip.end - clip.start)
        let length = video.end
        video = reframed(video, as: clip.video)
        video.spans = spans(of: video, reason: clip.video.reason)
        var tracks = [video]
        if let sound = clip.sound, let audioStream = info.streams.first(where: { $0.index == sound.streamIndex && $0.kind == .audio }) {
            var audio = try track(audioStream, in: info, role: .soundtrack, keepsMetadata: false)
            // Placed as the video is: the file's time at the video's first frame is zero.
            let videoStart = stream.start ?? .zero()
            if videoStart > .zero() { audio = try offset(audio, by: .zero() - videoStart, path: info.path) }
            audio = try offset(audio, by: .zero() - clip.start, path: info.path)
            // One span from the clip's start to its end, silent where the file has no sound.
            audio.sourceStart = .zero()
            audio.end = length
            audio = encoded(audio, as: sound.encoding)
            audio.spans = spans(of: audio, reason: sound.encoding.reason)
            tracks.append(audio)
        }
        return MergePlan(
            outputPath: clip.output, container: .mp4, overwrite: clip.overwrite, tracks: tracks, mix: nil, end: length,
            endReason: .spanAsked,
            rotation: RotationDecision(degrees: 0, reason: "upright: the pictures are turned as they are encoded"),
            movieHeader: .movedToFront, movieTimescale: movieTimescale, interleaveWindow: interleaveWindow,
            metadata: MetadataCarry.plan(video: info, keep: false), leftOut: [])
    }

    /// The video's track from `start` on its own timeline, `length` long:
    /// read from the keyframe shown at or before the start (sought to where
    /// the container allows), the frame on screen at the start shown from it.
    static func trimmed(_ track: MergePlan.Track, from start: MediaTime, length: MediaTime) throws -> MergePlan.Track {
        let length = min(length, track.sourceEnd - start)
        guard start >= .zero(), length > .zero() else {
            throw MediaMuxError.unexpected(path: track.path, detail: "a span from \(start.secondsText()) s planned outside the video")
        }
        var trimmed = track
        trimmed.origin = track.origin + start
        trimmed.sourceEnd = track.sourceEnd - start
        trimmed.sourceStart = .zero()
        trimmed.end = length
        if start > .zero() { trimmed.leadIn = .zero() }
        return trimmed
    }
}
