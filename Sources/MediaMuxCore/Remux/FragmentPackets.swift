import MediaMuxBase
import MediaMuxContainers
internal import CFFmpeg
import SystemPackage

/// One track's samples, read from a fragmented MP4's movie fragments (and
/// the moov's sample table before them, where it has some) by
/// MediaMux rather than by FFmpeg's reader, which keeps an index entry for
/// every sample it hands out: over an hour's recording that index grows to
/// tens of megabytes. Here a fragment's sample list is held until its
/// samples are handed out, and then dropped.
///
/// The packets are those FFmpeg's reader makes of the same samples: the
/// same bytes, decode times from `tfdt` and the sample durations, moved by
/// the edit list the way FFmpeg moves them unless edit lists are ignored,
/// and keyframes where FFmpeg finds them. Two things follow the fragments
/// rather than FFmpeg: a packet lasts the duration its `trun` gives it
/// (FFmpeg's reader leaves fragment durations out), and a negative
/// composition offset lowers the decode time, as in a sample table, rather
/// than raising the presentation time.
final class FragmentPackets {
    private let path: String
    private let file: FileDescriptor
    private let trackID: Int
    /// Audio samples are all keyframes, whatever their flags say, as in FFmpeg.
    private let isAudio: Bool
    /// Media ticks subtracted from every decode and presentation time: the
    /// edit list's media start less its leading empty edits.
    private let timeOffset: Int64
    /// Media ticks decode times are lowered by, so that no sample is presented before it is decoded.
    private let presentationLead: Int64
    private let cancellation: CancellationFlag
    /// The samples in the moov's sample table, handed out before the fragments'; nil once done (or without any).
    private var table: SampleTableReader?
    private var walker: MovieFragments.Walker
    private var pending: [MovieFragments.Sample] = []
    private var pendingIndex = 0
    private var window = ReadWindow()

    /// - Parameters:
    ///   - samples: The track, as the probe found it.
    ///   - isAudio: Whether the track is audio.
    ///   - ignoringEditList: Times as in the media, without the edit list's shift.
    init(path: String, samples: FragmentSamples, isAudio: Bool, ignoringEditList: Bool, cancellation: CancellationFlag) throws {
        self.path = path
        trackID = samples.trackID
        self.isAudio = isAudio
        presentationLead = samples.presentationLead
        self.cancellation = cancellation
        guard let file = openForReading(path) else {
            throw MediaMuxError.unreadable(path: path, reason: systemErrorText())
        }
        self.file = file
        do {
            let tree = try MovieTree(moovBytes: readMovieBox(descriptor: file.rawValue).bytes)
            let header = try MovieHeaderFacts(tree: tree)
            guard let track = header.tracks[trackID] else {
                throw MediaMuxError.damaged(path: path, detail: "track \(trackID) is no longer in the file; it changed since it was probed")
            }
            timeOffset = ignoringEditList ? 0 : Self.editShift(track, movieTimescale: header.movieTimescale)
            if (track.sampleCount ?? 0) > 0 {
                let trak = try tree.tracks.first { try $0.first("tkhd")?.trackID() == samples.trackID }
                guard let stbl = trak?.first("mdia/minf/stbl") else { throw BoxFailure.malformed("no sample table for track \(samples.trackID)") }
                table = try SampleTableReader(stbl: stbl, trackID: trackID, fileSize: fileLength(file.rawValue))
            }
            walker = try MovieFragments.Walker(descriptor: file.rawValue, moov: tree, decodeStarts: [trackID: track.tableDecodeEnd])
        } catch let failure as BoxFailure {
            try? file.close()
            throw Self.error(failure, path: path)
        } catch {
            try? file.close()
            throw error
        }
    }

    deinit {
        try? file.close()
    }

    /// FFmpeg's shift of a fragmented track's times by its edit list: the
    /// first segment's media time, less a leading empty edit.
    private static func editShift(_ track: MovieHeaderFacts.Track, movieTimescale: Int64) -> Int64 {
        let empty = track.delay > 0 && movieTimescale > 0 ? av_rescale(track.delay, track.mediaTimescale, movieTimescale) : 0
        return max(track.mediaStart, 0) - empty
    }

    private static func error(_ failure: BoxFailure, path: String) -> MediaMuxError {
        if case .io(let reason) = failure { return .unreadable(path: path, reason: reason) }
        return .damaged(path: path, detail: failure.description)
    }

    /// Reads the track's next sample into `buffer`. False after its last
    /// whole sample: at the end of the file, where it is cut, or at a
    /// damaged fragment header (the probe has said which).
    func read(into buffer: PacketBuffer, streamIndex: Int32) throws -> Bool {
        guard let sample = try nextSample() else { return false }
        if cancellation.isRaised { throw MediaMuxError.cancelled(path: path) }
        let packet = buffer.pointer
        av_packet_unref(packet)
        guard sample.dataOffset >= 0 else {
            throw MediaMuxError.damaged(path: path, detail: "a sample of track \(trackID) is placed at byte \(sample.dataOffset), before the file's start")
        }
        guard sample.size <= Int64(Int32.max) - Int64(AV_INPUT_BUFFER_PADDING_SIZE),
              av_new_packet(packet, Int32(sample.size)) >= 0 else {
            throw MediaMuxError.damaged(path: path, detail: "a sample of track \(trackID) declares \(sample.size) bytes")
        }
        if sample.size > 0 {
            let read = window.read(file.rawValue, into: packet.pointee.data, count: Int(sample.size), at: sample.dataOffset)
            guard read == Int(sample.size) else {
                let reason = read < 0 ? systemErrorText() : "the file ends inside a sample"
                throw MediaMuxError.unreadable(path: path, reason: "reading a sample of track \(trackID) at byte \(sample.dataOffset): \(reason)")
            }
        }
        let decode = sample.decodeTime.saturatingSubtracting(timeOffset)
        packet.pointee.dts = decode.saturatingSubtracting(presentationLead)
        packet.pointee.pts = decode.saturatingAdding(sample.compositionOffset)
        packet.pointee.duration = sample.duration
        packet.pointee.pos = sample.dataOffset
        packet.pointee.stream_index = streamIndex
        if isAudio || (sample.isSync && !sample.dependsOnOthers) { packet.pointee.flags |= AV_PKT_FLAG_KEY }
        return true
    }

    /// The next whole sample of the track: the moov's, then the fragments',
    /// walking on to the next fragment that has one.
    private func nextSample() throws -> MovieFragments.Sample? {
        if table != nil {
            let sample: MovieFragments.Sample?
            do {
                sample = try table!.next()
            } catch let failure as BoxFailure {
                throw Self.error(failure, path: path)
            }
            if let sample { return sample.isWhole ? sample : nil }
            table = nil
        }
        while pendingIndex == pending.count {
            if cancellation.isRaised { throw MediaMuxError.cancelled(path: path) }
            let fragment: MovieFragments.Fragment?
            do {
                fragment = try walker.next()
            } catch let failure as BoxFailure {
                throw Self.error(failure, path: path)
            }
            guard let fragment else { return nil }
            pending.removeAll(keepingCapacity: true)
            pending.append(contentsOf: fragment.samples.lazy.filter { $0.trackID == self.trackID })
            pendingIndex = 0
        }
        let sample = pending[pendingIndex]
        pendingIndex += 1
        // Past the cut of a file only a sample's first bytes are there.
        return sample.isWhole ? sample : nil
    }
}

/// The file's bytes around the samples being read: a track's samples lie
/// in rising order, a few hundred bytes to a few hundred kilobytes each, so
/// one read brings in many small ones; a large one is read straight into its packet.
private struct ReadWindow {
    private static let size = 512 << 10
    private var bytes: [UInt8] = []
    private var start: Int64 = 0
    private var count = 0

    /// Copies `count` bytes at `offset` to `destination`; the bytes copied,
    /// fewer at the end of the file, or -1 with errno set.
    mutating func read(_ descriptor: Int32, into destination: UnsafeMutablePointer<UInt8>, count wanted: Int, at offset: Int64) -> Int {
        if wanted >= Self.size / 2 {
            return readFully(descriptor, into: destination, count: wanted, at: offset)
        }
        if offset < start || offset + Int64(wanted) > start + Int64(count) {
            if bytes.isEmpty { bytes = [UInt8](repeating: 0, count: Self.size) }
            let got = bytes.withUnsafeMutableBytes { readFully(descriptor, into: $0.baseAddress!, count: Self.size, at: offset) }
            guard got >= 0 else { return -1 }
            start = offset
            count = got
        }
        let available = min(wanted, Int(start + Int64(count) - offset))
        guard available > 0 else { return 0 }
        bytes.withUnsafeBytes { window in
            destination.update(from: window.baseAddress!.advanced(by: Int(offset - start)).assumingMemoryBound(to: UInt8.self), count: available)
        }
        return available
    }
}
