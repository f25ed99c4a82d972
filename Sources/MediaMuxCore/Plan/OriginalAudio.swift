import MediaMuxBase

/// Pure: the video's own audio, kept as a second track or mixed into the soundtrack.
extension MergePlanner {
    /// The video's own audio placed on the output's timeline as the video is
    /// (its file's time at the video's first frame is zero), ending where the
    /// output ends; nil when it is replaced.
    func placedOriginalAudio(
        _ choice: OriginalAudio, of videoInfo: MediaInfo, videoStart: MediaTime, end: MediaTime, keepsMetadata: Bool, output: String
    ) throws -> (track: MergePlan.Track, stream: StreamInfo)? {
        let verb: String
        switch choice {
        case .replaced:
            return nil
        case .kept:
            verb = "keep"
        case .mixed(let level):
            guard level.isFinite, (-60...20).contains(level) else {
                throw MediaMuxError.invalidOption(option: "MergeOptions.originalAudio", message: "\(output): a mixing level of \(level) dB is out of range (-60 to 20 dB)")
            }
            verb = "mix"
        }
        guard let stream = videoInfo.audioStreams.first else {
            throw MediaMuxError.invalidOption(option: "MergeOptions.originalAudio", message: "\(videoInfo.path): has no audio of its own to \(verb)")
        }
        var track = try Self.track(stream, in: videoInfo, role: .originalAudio, keepsMetadata: keepsMetadata)
        if videoStart > .zero() { track = try Self.offset(track, by: .zero() - videoStart, path: videoInfo.path) }
        track.end = min(track.sourceEnd, end)
        guard track.sourceStart < track.end else {
            throw MediaMuxError.invalidOption(option: "MergeOptions.originalAudio", message: "\(videoInfo.path): its own audio starts at \(track.sourceStart.secondsText()) s, after the output ends")
        }
        return (track, stream)
    }

    /// The kept original as a second track: disabled, copied where the container carries it.
    func keptTrack(
        _ placed: (track: MergePlan.Track, stream: StreamInfo), in container: MergePlan.Container, output: String
    ) throws -> MergePlan.Track {
        var kept = placed.track
        kept.isEnabled = false
        if let encoding = try audioEncoding(for: placed.stream, in: container, options: AudioOptions(), output: output) {
            try Self.checkUnread(placed.stream, of: placed.track.path, yet: ("encoded (\(encoding.reason))", "MergeOptions.audio"))
            kept = Self.encoded(kept, as: encoding)
        }
        return kept
    }
}
