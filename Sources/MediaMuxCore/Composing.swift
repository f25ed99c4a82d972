import MediaMuxBase

extension MergeEngine {
    /// Every decision a composition would make, without writing anything:
    /// where each clip's cuts land and why, that the clips join by copy,
    /// where each is placed, the sound, the end. Each video span of the
    /// plan is a clip, its `reason` saying how it was cut
    /// ("copied; start moved back to the keyframe at 2.000 s (asked 2.300 s)").
    ///
    /// - Parameters:
    ///   - composition: The clips, the soundtrack and the options.
    ///   - output: A file (.mp4, .m4v or .mov), or a stream (planned as fragmented MP4).
    /// - Returns: The plan.
    /// - Throws: `MediaMuxError`, each naming the clip it is about
    ///   (`context.clip`): what `probe(_:)` throws, for a clip or the
    ///   soundtrack; `.invalidOption` for no clips, a range outside a clip's
    ///   video, a cut that cannot be made by copy (see `Composition.Cut`),
    ///   a clip whose video differs from the first's (codec, size, rotation,
    ///   parameter sets, colour), clips without sound and no soundtrack, and
    ///   the merge options `plan(video:audio:output:options:)` checks;
    ///   `.damaged` for a clip whose packets have no keyframe where it
    ///   starts; the output's errors as for a merge.
    public func plan(_ composition: Composition, output: MergeOutput) async throws(MediaMuxError) -> MergePlan {
        try await plan(.composition(composition), output: output)
    }

    /// Makes `composition` into `output`: the clips in order, each copied
    /// from its start to its end, joined under one sample entry with decode
    /// times rising across every join and each clip placed at the exact sum
    /// of the lengths before it; the soundtrack laid over the whole as a
    /// merge lays one over a video, or the clips' own sound (one clip's
    /// copied, several decoded and encoded as one track). A file appears
    /// under its name only once complete; a stream gets fragmented MP4 as
    /// it is made.
    ///
    /// - Parameters:
    ///   - composition: The clips, the soundtrack and the options.
    ///   - output: A file (.mp4, .m4v or .mov), or a stream.
    ///   - progress: Called with how far it has come, on the pool thread doing it.
    /// - Returns: What was written.
    /// - Throws: `MediaMuxError`: what `plan(_:output:)` throws, then what
    ///   `merge(video:audio:output:options:progress:)` throws while writing.
    public func compose(
        _ composition: Composition, output: MergeOutput, progress: (@Sendable (MergeProgress) -> Void)? = nil
    ) async throws(MediaMuxError) -> MergeReport {
        try await run(.composition(composition), output: output, progress: progress, observing: { _, _ in nil })
    }

    /// `composition` as a body its consumer pulls (a server's response), as
    /// `body(video:audio:name:options:progress:)` gives a merge: planned,
    /// its inputs opened and its header made before this returns.
    ///
    /// - Parameters:
    ///   - composition: The clips, the soundtrack and the options.
    ///   - name: The body as errors and the report name it ("response").
    ///   - progress: Called with how far it has come, on the pool thread advancing it.
    /// - Returns: The body, whose `plan` says every decision.
    /// - Throws: `MediaMuxError`, as `plan(_:output:)` does for a stream, and
    ///   what `body(video:audio:name:options:progress:)` throws.
    public func body(
        _ composition: Composition, name: String, progress: (@Sendable (MergeProgress) -> Void)? = nil
    ) async throws(MediaMuxError) -> MergeBody {
        try await body(.composition(composition), name: name, progress: progress, cleanup: nil)
    }
}
