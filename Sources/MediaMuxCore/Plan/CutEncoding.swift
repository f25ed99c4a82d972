import MediaMuxBase

/// How a copied track's partial GOPs are encoded at frame-exact cuts (a
/// smart cut): the frames from a cut inside a GOP to the next keyframe, and
/// from the last keyframe to a cut whose frames a copy could not end at,
/// each such span a closed GOP of its own, in the source's picture size,
/// format, profile and level, with no B-frames. Its parameter sets take ids
/// the source's do not use and join the source's in the track's one avcC
/// or hvcC, so that every sample, copied or encoded, decodes under the one
/// sample entry (the evidence is in the Compositions article). x264 is told
/// its id (`sps-id`); x265 has no such option, and its sets and slice
/// headers are rewritten (`HEVCParameterSets`).
public struct CutEncoding: Sendable, Equatable {
    /// FFmpeg's name of the codec: "h264" or "hevc".
    public var codec: String
    /// FFmpeg's name of the encoder: "libx264" or "libx265".
    public var encoder: String
    /// The encoder's profile: the source's ("baseline", "main", "high",
    /// "high10"; "main", "main10").
    public var profile: String
    /// The source's level (level_idc; HEVC's general_level_idc, 30 times
    /// the level). x264 keeps to it; x265, which would enforce it with a
    /// rate limit, chooses its own, and the hvcC states the higher.
    public var level: Int
    /// The ids the encoder's parameter sets take.
    public var parameterSets: ParameterSetIDs
    /// Bits a sample, as the source's.
    public var bitDepth: Int
    /// The encoder's constant rate factor and preset.
    public var quality: Int
    public var preset: String
    /// The source's avcC or hvcC, to which the encoder's parameter sets are added.
    public var configuration: [UInt8]

    /// The ids of a cut's parameter sets: H.264's SPS and PPS (x264 gives
    /// both the one id), HEVC's VPS, SPS and PPS.
    public struct ParameterSetIDs: Sendable, Equatable {
        public var video: Int?
        public var sequence: Int
        public var picture: Int
    }

    /// One line: "libx264 high, crf 18, veryfast, parameter sets 1".
    public var summary: String {
        let ids = parameterSets.video.map { "VPS \($0), SPS \(parameterSets.sequence), PPS \(parameterSets.picture)" } ?? "\(parameterSets.picture)"
        return "\(encoder) \(profile), crf \(quality), \(preset), parameter sets \(ids)"
    }
}

extension MergePlanner {
    /// A cut's frames sit between copied ones: they are encoded to be hard
    /// to tell from them, which the re-framing's default (23) is not always.
    static let cutQuality = 18
    /// x265's superfast lets a frame before a keyframe fall to 38 dB on the
    /// synthetic clips at that CRF; veryfast keeps every frame over 42.
    static let cutPreset = "veryfast"

    /// How partial GOPs of clips whose video agrees with `first`'s are
    /// encoded, or why they cannot be: H.264 in an avc1 entry or HEVC in an
    /// hvc1 one (parameter sets out of band), NAL lengths of 4 bytes, 4:2:0
    /// in 8 or 10 bits, a profile the encoder writes, ids to spare, and the
    /// encoder present.
    func cutEncoding(for first: ComposedClip, options: VideoOptions) -> Result<CutEncoding, CutRefusal> {
        let stream = first.stream
        let entry = stream.sampleEntry?.type ?? "no sample entry"
        let quality = options.quality ?? Self.cutQuality
        if let profile = DolbyVisionConfiguration(stream.sampleEntry) {
            // Its pictures come with per-frame metadata (RPUs) an encoder here cannot make.
            return .failure(.init("Dolby Vision profile \(profile.profileName)'s per-frame metadata cannot be encoded for a cut's frames"))
        }
        switch stream.codec {
        case "h264":
            guard entry == "avc1" else {
                return .failure(.init("a cut's encoded frames join an avc1 sample entry's parameter sets, not those of \(entry)"))
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
                codec: "h264", encoder: "libx264", profile: profile, level: Int(configuration.level),
                parameterSets: .init(video: nil, sequence: id, picture: id), bitDepth: set.bitDepthLuma, quality: quality,
                preset: options.preset ?? Self.cutPreset, configuration: bytes))
        case "hevc":
            guard entry == "hvc1" else {
                return .failure(.init("a cut's encoded frames join an hvc1 sample entry's parameter sets, not those of \(entry)"))
            }
            guard let bytes = stream.configuration, let configuration = HEVCConfiguration(bytes), configuration.lengthSize == 4,
                  let used = configuration.usedIDs,
                  let video = (0...15).first(where: { !used.video.contains($0) }),
                  let sequence = (0...15).first(where: { !used.sequence.contains($0) }),
                  // 15 to 30: nine bits in a slice header where x265's id 0 takes one (see `HEVCParameterSets.slice`).
                  let picture = (15...30).first(where: { !used.picture.contains($0) })
            else {
                return .failure(.init("its hvcC could not be read to add a cut's parameter sets to it"))
            }
            let profiles = [1: "main", 2: "main10"]
            guard let profile = profiles[configuration.profile], configuration.chromaFormat == 1,
                  configuration.bitDepthLuma == configuration.bitDepthChroma, configuration.bitDepthLuma <= (profile == "main" ? 8 : 10)
            else {
                return .failure(.init("x265 does not encode a cut in its HEVC profile (\(configuration.profile), \(configuration.bitDepthLuma)-bit, chroma format \(configuration.chromaFormat))"))
            }
            guard hasEncoder("libx265") else { return .failure(.init("this FFmpeg has no libx265 to encode a cut's frames")) }
            return .success(CutEncoding(
                codec: "hevc", encoder: "libx265", profile: profile, level: configuration.level,
                parameterSets: .init(video: video, sequence: sequence, picture: picture), bitDepth: configuration.bitDepthLuma, quality: quality,
                preset: options.preset ?? Self.cutPreset, configuration: bytes))
        default:
            return .failure(.init("only H.264's and HEVC's partial GOPs are encoded alone, not \(Self.displayName(stream.codec))'s"))
        }
    }

    /// Why a composition's partial GOPs are not encoded alone.
    struct CutRefusal: Error {
        var reason: String
        init(_ reason: String) { self.reason = reason }
    }
}
