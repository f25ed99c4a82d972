import CFFmpeg
import Foundation

/// The samples an MP4 audio track plays, as the tests' MP4 reader reads it:
/// the samples' bytes through libavcodec's decoder (configured from the
/// track's own esds), then the track's edit list applied here, not by
/// FFmpeg's demuxer. A leading empty edit becomes `delay` samples.
struct AudioSamples {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    var sampleRate: Int
    /// One array per channel, as played (the edit's span only).
    var channels: [[Float]]
    /// Samples of silence before the track starts (a leading empty edit).
    var delay: Int

    var count: Int { channels.first?.count ?? 0 }

    /// Decodes an AAC (`mp4a`) track and applies its edit list.
    static func played(_ track: MP4File.Track, movieTimescale: UInt32) throws -> AudioSamples {
        guard track.sampleFormat == "mp4a", let esds = track.sampleEntryBoxes.first(where: { $0.type == "esds" }) else {
            throw Failure(description: "not an mp4a track with an esds box (\(track.sampleFormat ?? "none"))")
        }
        let configuration = try audioSpecificConfig(esds: esds.bytes)
        let decoded = try decode(track, configuration: configuration)
        let scale = Int64(track.mediaTimescale)
        guard let edits = track.editList, !edits.isEmpty else {
            throw Failure(description: "the track has no edit list")
        }
        var delay = 0
        var span: (start: Int, length: Int)?
        for edit in edits {
            let length = Int((Int64(edit.segmentDuration) * scale + Int64(movieTimescale) / 2) / Int64(movieTimescale))
            if edit.isEmpty {
                guard span == nil else { throw Failure(description: "an empty edit after the media's") }
                delay += length
            } else {
                guard span == nil else { throw Failure(description: "more than one media edit") }
                span = (Int(edit.mediaTime - (track.decodeTimes.first ?? 0)), length)
            }
        }
        guard let span, span.start >= 0, span.start + span.length <= decoded.first?.count ?? 0 else {
            throw Failure(description: "the edit \(String(describing: span)) lies outside the \(decoded.first?.count ?? 0) decoded samples")
        }
        return AudioSamples(
            sampleRate: Int(scale), channels: decoded.map { Array($0[span.start..<(span.start + span.length)]) }, delay: delay)
    }

    /// The amplitude of the component at `frequency` Hz (a single DFT bin:
    /// the samples correlated with a sine and a cosine), for telling the
    /// tones of a mix apart.
    static func amplitude(at frequency: Double, in samples: ArraySlice<Float>, sampleRate: Int) -> Double {
        var real = 0.0
        var imaginary = 0.0
        // Index loops over the buffer, here and below: a generic sequence
        // (`enumerated()`) asks the runtime for metadata at every sample in
        // a debug build, under one lock when ThreadSanitizer is on.
        samples.withUnsafeBufferPointer { buffer in
            var index = 0
            while index < buffer.count {
                let phase = 2 * .pi * frequency * Double(index) / Double(sampleRate)
                real += Double(buffer[index]) * cos(phase)
                imaginary += Double(buffer[index]) * sin(phase)
                index += 1
            }
        }
        return 2 * (real * real + imaginary * imaginary).squareRoot() / Double(max(samples.count, 1))
    }

    /// The frequency of a steady tone in Hz, from its rising zero crossings.
    static func frequency(_ samples: ArraySlice<Float>, sampleRate: Int) -> Double {
        var crossings: [Double] = []
        samples.withUnsafeBufferPointer { buffer in
            var index = 1
            while index < buffer.count {
                let (previous, value) = (buffer[index - 1], buffer[index])
                if previous < 0 && value >= 0 {
                    // Between the two samples, where the line through them crosses zero.
                    crossings.append(Double(index - 1) + Double(-previous / (value - previous)))
                }
                index += 1
            }
        }
        guard let first = crossings.first, let last = crossings.last, crossings.count > 1 else { return 0 }
        return Double(crossings.count - 1) * Double(sampleRate) / (last - first)
    }

    /// Root mean square level in dBFS (a full-scale square wave is 0 dB).
    static func rmsDecibels(_ samples: ArraySlice<Float>) -> Double {
        guard !samples.isEmpty else { return -.infinity }
        let power = samples.withUnsafeBufferPointer { buffer in
            var sum = 0.0
            var index = 0
            while index < buffer.count {
                sum += Double(buffer[index]) * Double(buffer[index])
                index += 1
            }
            return sum
        } / Double(samples.count)
        return 10 * log10(max(power, 1e-20))
    }

    /// The AudioSpecificConfig inside an esds box: ES_Descriptor (tag 3) >
    /// DecoderConfigDescriptor (tag 4) > DecoderSpecificInfo (tag 5).
    static func audioSpecificConfig(esds: [UInt8]) throws -> [UInt8] {
        var position = 12  // box header, version and flags
        func descriptor() throws -> (tag: UInt8, start: Int, end: Int) {
            guard position < esds.count else { throw Failure(description: "esds ends early") }
            let tag = esds[position]
            position += 1
            var size = 0
            for _ in 0..<4 {
                guard position < esds.count else { throw Failure(description: "esds ends early") }
                let byte = esds[position]
                position += 1
                size = size << 7 | Int(byte & 0x7F)
                if byte & 0x80 == 0 { break }
            }
            guard position + size <= esds.count else { throw Failure(description: "esds descriptor \(tag) overruns the box") }
            return (tag, position, position + size)
        }
        let es = try descriptor()
        guard es.tag == 3 else { throw Failure(description: "esds holds descriptor \(es.tag), not an ES_Descriptor") }
        let flags = esds[es.start + 2]
        position = es.start + 3
        if flags & 0x80 != 0 { position += 2 }
        if flags & 0x40 != 0 { position += 1 + Int(esds[position]) }
        if flags & 0x20 != 0 { position += 2 }
        while position < es.end {
            let inner = try descriptor()
            if inner.tag == 4 {
                position = inner.start + 13
                while position < inner.end {
                    let info = try descriptor()
                    if info.tag == 5 { return Array(esds[info.start..<info.end]) }
                    position = info.end
                }
            }
            position = inner.end
        }
        throw Failure(description: "esds has no DecoderSpecificInfo")
    }

    /// Every sample the track's packets decode to, priming included, one array a channel.
    private static func decode(_ track: MP4File.Track, configuration: [UInt8]) throws -> [[Float]] {
        guard let codec = avcodec_find_decoder(AV_CODEC_ID_AAC), let context = avcodec_alloc_context3(codec) else {
            throw Failure(description: "no AAC decoder")
        }
        var packet = av_packet_alloc()
        var frame = av_frame_alloc()
        defer {
            av_packet_free(&packet)
            av_frame_free(&frame)
            var doomed: UnsafeMutablePointer<AVCodecContext>? = context
            avcodec_free_context(&doomed)
        }
        context.pointee.extradata = av_mallocz(configuration.count + Int(AV_INPUT_BUFFER_PADDING_SIZE)).assumingMemoryBound(to: UInt8.self)
        configuration.withUnsafeBufferPointer { context.pointee.extradata.update(from: $0.baseAddress!, count: configuration.count) }
        context.pointee.extradata_size = Int32(configuration.count)
        guard avcodec_open2(context, codec, nil) >= 0 else { throw Failure(description: "the AAC decoder does not open") }
        var channels: [[Float]] = []
        func drain() throws {
            while true {
                let code = avcodec_receive_frame(context, frame)
                if code == CFFmpeg_AVERROR_EAGAIN() || code == CFFmpeg_AVERROR_EOF() { return }
                guard code >= 0, let decoded = frame else { throw Failure(description: "decoding failed (\(code))") }
                guard decoded.pointee.format == AV_SAMPLE_FMT_FLTP.rawValue else { throw Failure(description: "not planar float") }
                let count = Int(decoded.pointee.nb_samples)
                let channelCount = Int(decoded.pointee.ch_layout.nb_channels)
                if channels.isEmpty { channels = Array(repeating: [], count: channelCount) }
                for channel in 0..<channelCount {
                    let plane = decoded.pointee.extended_data[channel]!.withMemoryRebound(to: Float.self, capacity: count) { $0 }
                    channels[channel].append(contentsOf: UnsafeBufferPointer(start: plane, count: count))
                }
                av_frame_unref(decoded)
            }
        }
        for index in 0..<track.sampleCount {
            let data = try track.sampleData(index)
            guard av_new_packet(packet, Int32(data.count)) >= 0 else { throw Failure(description: "out of memory") }
            data.copyBytes(to: packet!.pointee.data, count: data.count)
            packet!.pointee.pts = track.decodeTimes[index]
            let sent = avcodec_send_packet(context, packet)
            av_packet_unref(packet)
            guard sent >= 0 else { throw Failure(description: "packet \(index) does not decode (\(sent))") }
            try drain()
        }
        avcodec_send_packet(context, nil)
        try drain()
        return channels
    }
}
