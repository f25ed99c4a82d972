import MediaMuxBase

/// Several clips in sequence, each trimmed to a range, with a soundtrack
/// laid over the whole or the clips' own sound: what `MergeEngine`'s
/// `compose` calls plan and carry out. A merge is the case of one clip.
///
/// ```swift
/// var composition = Composition(clips: [
///     .init("a.mp4", from: MediaTime(seconds: 2), to: MediaTime(seconds: 7)),
///     .init("b.mp4"),
/// ], soundtrack: "song.m4a")
/// composition.cut = .keyframe
/// let report = try await engine.compose(composition, output: "out.mp4")
/// ```
public struct Composition: Sendable, Equatable {
    /// One clip: a file's video from `start` to `end`, on its own timeline
    /// (its first frame shown at zero).
    public struct Clip: Sendable, Equatable {
        /// The file.
        public var path: String
        /// Where the clip starts; nil for the file's first frame.
        public var start: MediaTime?
        /// Where it ends; nil for the end of the file's video.
        public var end: MediaTime?

        /// - Parameters:
        ///   - path: The file.
        ///   - start: Where the clip starts on the file's timeline; nil for its first frame.
        ///   - end: Where it ends; nil for the end of its video.
        public init(_ path: String, from start: MediaTime? = nil, to end: MediaTime? = nil) {
            self.path = path
            self.start = start
            self.end = end
        }
    }

    /// Where a clip's cuts may fall.
    public enum Cut: String, Sendable, CaseIterable {
        /// At the frames asked for: a clip starts with the frame on screen at
        /// its start and keeps every frame shown before its end. The clips
        /// are copied where every cut falls where a copy can start and stop
        /// (at keyframes) and every clip's video agrees with the first's;
        /// otherwise the partial GOPs at cuts inside GOPs are encoded where
        /// the first clip's video allows it (H.264 in avc1, HEVC in hvc1;
        /// see `CutEncoding`), and every clip is encoded, as the first
        /// clip's video would be, where it does not; the plan says why.
        case exact
        /// Copy only: a start moves back to the keyframe shown at or before
        /// it, an end forward to the next keyframe (or the end of the clip),
        /// so that nothing asked for is lost. The plan and the report say
        /// where each cut landed.
        case keyframe
    }

    /// The clips, in the order they play.
    public var clips: [Clip]
    /// The file whose audio is laid over the whole composition, as a merge
    /// lays a soundtrack over a video; nil for the clips' own sound.
    public var soundtrack: String?
    /// Where cuts may fall.
    public var cut: Cut
    /// What a merge's options say, for the whole composition:
    /// `videoStream` picks every clip's video stream, `audioStream` the
    /// soundtrack's, and `end`, `audio`, `overwrite`, `layout`, `faststart`
    /// and `keepsMetadata` (the first clip's metadata) apply as they do to a
    /// merge whose video is the clips in sequence.
    public var options: MergeOptions

    /// - Parameters:
    ///   - clips: The clips, in the order they play.
    ///   - soundtrack: A file whose audio plays over the whole; nil for the clips' own sound.
    ///   - cut: Where cuts may fall; at the frames asked for unless told otherwise.
    ///   - options: A merge's options, for the whole composition.
    public init(clips: [Clip], soundtrack: String? = nil, cut: Cut = .exact, options: MergeOptions = MergeOptions()) {
        self.clips = clips
        self.soundtrack = soundtrack
        self.cut = cut
        self.options = options
    }
}

extension Composition.Clip {
    /// A clip as people type it: `FILE`, or `FILE@IN-OUT` with IN and OUT
    /// as `MediaTime(timecode:)` reads them, either left out (`FILE@5-`
    /// runs to the end, `FILE@-1:00` starts at the beginning). What follows
    /// the last `@` is a range when it holds only digits, `:`, `.` and a
    /// `-` (so a file name may hold an `@`), and must then be a valid one:
    /// nil for `a.mp4@1:75-2`.
    public init?(parsing text: String) {
        guard !text.isEmpty else { return nil }
        guard let at = text.lastIndex(of: "@"), case let suffix = text[text.index(after: at)...],
              suffix.contains("-"), suffix.allSatisfy({ $0.isASCII && ($0.isNumber || ":.-".contains($0)) })
        else {
            self.init(text)
            return
        }
        let parts = suffix.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        let path = String(text[..<at])
        guard !path.isEmpty, parts.count == 2, !(parts[0].isEmpty && parts[1].isEmpty) else { return nil }
        var times: [MediaTime?] = []
        for part in parts {
            if part.isEmpty {
                times.append(nil)
            } else {
                guard let time = MediaTime(timecode: part) else { return nil }
                times.append(time)
            }
        }
        self.init(path, from: times[0], to: times[1])
    }
}

extension MediaTime {
    /// A time as people type it: seconds (`12.5`), `m:ss.fff` or
    /// `h:mm:ss.fff` (`1:02.5`, `0:01:02.500`), to the microsecond; minutes
    /// and seconds after a colon below 60. Nil for anything else, or a
    /// negative or enormous time.
    public init?(timecode text: some StringProtocol) {
        let fields = text.split(separator: ":", omittingEmptySubsequences: false)
        guard (1...3).contains(fields.count) else { return nil }
        var seconds = 0.0
        for (i, field) in fields.enumerated() {
            let isLast = i == fields.count - 1
            guard !field.isEmpty, field.allSatisfy({ $0.isASCII && ($0.isNumber || (isLast && $0 == ".")) }),
                  let value = Double(field), value.isFinite, value < 1e9
            else { return nil }
            if i > 0, value >= 60 { return nil }
            seconds = seconds * 60 + value
        }
        guard seconds < 1e9 else { return nil }
        self.init(seconds: seconds)
    }
}
