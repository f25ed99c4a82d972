import MediaMuxBase
internal import CFFmpeg

/// Whether FFmpeg's muxer for `container` can store `codec` by stream copy:
/// the fact the pure planner is given.
@Sendable package func muxerAccepts(_ codec: String, _ container: MergePlan.Container) -> Bool {
    guard let descriptor = avcodec_descriptor_get_by_name(codec),
          let muxer = av_guess_format(container.muxer, nil, nil) else { return false }
    if refusedAtHeader[container, default: []].contains(codec) { return false }
    return avformat_query_codec(muxer, descriptor.pointee.id, FF_COMPLIANCE_NORMAL) == 1
}

/// Codecs FFmpeg's mov muxer lists for a container but refuses when it
/// writes the header: in MOV "only supported in MP4" (Opus, FLAC, TrueHD,
/// VP9; AV1 "in MP4 and AVIF") and VP8 not at all; in MP4 FLAC and TrueHD
/// only at experimental compliance. Refused here, the plan names the problem
/// instead of the header failing with EINVAL.
private let refusedAtHeader: [MergePlan.Container: Set<String>] = [
    .mov: ["opus", "flac", "truehd", "vp8", "vp9", "av1"], .mp4: ["flac", "truehd"],
]

/// Whether FFmpeg knows `codec` as an audio codec.
package func isAudioCodec(_ codec: String) -> Bool {
    avcodec_descriptor_get_by_name(codec)?.pointee.type == AVMEDIA_TYPE_AUDIO
}

/// Whether this FFmpeg has an encoder by that name ("libx264"): the fact the
/// pure planner is given for re-framing.
@Sendable package func encoderAvailable(_ name: String) -> Bool {
    avcodec_find_encoder_by_name(name) != nil
}
