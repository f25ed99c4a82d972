import MediaMuxBase

/// How a copied H.264 track's partial GOPs are encoded at frame-exact cuts
/// (a smart cut): the frames from a cut inside a GOP to the next keyframe,
/// and from the last keyframe to a cut whose frames a copy could not end at,
/// each such span a closed GOP of its own, in the source's picture size,
/// format and profile, with no B-frames. Its parameter sets take an id the
/// source's do not use and join the source's in the track's one avcC, so
/// that every sample, copied or encoded, decodes under the one sample entry
/// (the evidence is in the Compositions article).
public struct CutEncoding: Sendable, Equatable {
    /// FFmpeg's name of the encoder: "libx264".
    public var encoder: String
    /// x264's profile: the source's ("baseline", "main", "high", "high10").
    public var profile: String
    /// The source's level, which the encoder keeps to.
    public var level: Int
    /// The id the encoder's sequence and picture parameter sets take.
    public var parameterSetID: Int
    /// Bits a sample, as the source's.
    public var bitDepth: Int
    /// The encoder's constant rate factor and preset.
    public var quality: Int
    public var preset: String
    /// The source's avcC, to which the encoder's parameter sets are added.
    public var configuration: [UInt8]

    /// One line: "libx264 high, crf 18, veryfast, parameter sets 1".
    public var summary: String { "\(encoder) \(profile), crf \(quality), \(preset), parameter sets \(parameterSetID)" }
}

extension MergePlanner {
    /// A cut's frames sit between copied ones: they are encoded to be hard
    /// to tell from them, which the re-framing's default (23) is not always.
    static let cutQuality = 18

    /// How partial GOPs of clips whose video agrees with `first`'s are
    /// encoded, or why they cannot be: an H.264 track in an avc1 entry
    /// (parameter sets out of band), 4:2:0 in 8 or 10 bits, of a profile
    /// x264 writes, with a parameter set id to spare, and libx264 present.
    func cutEncoding(for first: ComposedClip, options: VideoOptions) -> Result<CutEncoding, CutRefusal> {
        let stream = first.stream
        guard stream.codec == "h264" else {
            return .failure(.init("only H.264's partial GOPs are encoded alone, not \(Self.displayName(stream.codec))'s"))
        }
        guard stream.sampleEntry?.type == "avc1" else {
            return .failure(.init("a cut's encoded frames join an avc1 sample entry's parameter sets, not those of \(stream.sampleEntry?.type ?? "no sample entry")"))
        }
        guard let bytes = stream.configuration, let configuration = AVCConfiguration(bytes), configuration.lengthSize == 4,
              let sets = configuration.parsedSequenceSets, let set = sets.first, let id = configuration.freeParameterSetID
        else {
            return .failure(.init("its avcC could not be read to add a cut's parameter sets to it"))
        }
        let profiles: [UInt8: String] = [66: "baseline", 77: "main", 100: "high", 110: "high10"]
        guard let profile = profiles[configuration.profile], sets.allSatisfy({ $0.chromaFormat == 1 && $0.bitDepthLuma == $0.bitDepthChroma }),
              set.bitDepthLuma == 8 || (set.bitDepthLuma == 10 && profile == "high10")
        else {
            return .failure(.init("x264 does not encode a cut in its H.264 profile (\(configuration.profile), \(set.bitDepthLuma)-bit, chroma format \(set.chromaFormat))"))
        }
        guard hasEncoder("libx264") else { return .failure(.init("this FFmpeg has no libx264 to encode a cut's frames")) }
        return .success(CutEncoding(
            encoder: "libx264", profile: profile, level: Int(configuration.level), parameterSetID: id, bitDepth: set.bitDepthLuma,
            quality: options.quality ?? Self.cutQuality, preset: options.preset ?? Self.videoEncoders["h264"]?.preset ?? "veryfast",
            configuration: bytes))
    }

    /// Why a composition's partial GOPs are not encoded alone.
    struct CutRefusal: Error {
        var reason: String
        init(_ reason: String) { self.reason = reason }
    }
}
