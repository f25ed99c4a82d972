import MediaMux
import MediaMuxCore
extension MediaMuxError {
    /// A next step for the user, where there is an obvious one.
    var hint: String? {
        switch failure {
        case .outputExists: return "pass --force to overwrite it"
        case .tooLarge: return "raise the limit with --max-size if the file is expected to be this large"
        case .http(404, _), .http(410, _): return "check the URL"
        case .http(401, _), .http(403, _): return "the server refuses access; the URL may need a token or may have expired"
        case .noStream(.audio, _): return "pass a file with an audio track as AUDIO"
        case .noStream(.video, _): return "pass a file with a video track"
        case .streamIndexOutOfRange: return "run `muxctl probe` on the file to list its streams"
        case .codecNotSupportedInContainer(let codec, _, _) where isAudioCodec(codec):
            return "leave out --audio-codec copy to have it encoded AAC"
        case .codecNotSupportedInContainer(let codec, let container, _) where container != "mov" && muxerAccepts(codec, .mov):
            return "try a .mov output"
        default: return nil
        }
    }
}

/// Why the rotation written was chosen, in muxctl's terms.
func describeRotationReason(_ decision: RotationDecision) -> String {
    if decision.chosenByCaller { return "set by --rotate" }
    guard let other = decision.reframedBy else { return decision.reason }
    return decision.reason + "; --orientation \(other.rawValue) re-frames it (encodes)"
}

/// Why a stream was not copied, naming the flag that would choose it.
func describeLeftOutReason(_ leftOut: MergePlan.LeftOut) -> String {
    guard leftOut.choosable else { return leftOut.reason }
    return leftOut.reason + (leftOut.what.hasPrefix("video") ? " (choose it with --video-stream)" : " (choose it with --audio-stream)")
}
