import Foundation
import MediaMuxBase
import MediaMuxContainers
import Testing
import TestSupport

/// The fragment walk, a fragment at a time, against the tests' own MP4
/// reader: every sample a `trun` declares, with its place in the file, its
/// size, its times and its sync flag, and nothing else.
struct FragmentWalkerTests {
    @Test(arguments: [
        "fmp4_empty_moov.mp4", "fmp4_fragment_per_frame.mp4", "fmp4_moov_and_fragments.mp4", "fmp4_cut_last_fragment.mp4",
        "dash_video.mp4", "dash_video_sidx.mp4", "dash_audio.mp4", "dash_audio_sidx.mp4",
    ])
    func everySampleAsTheTestsReaderFindsIt(_ name: String) throws {
        let path = Fixtures.path(name)
        let file = try #require(openForReading(path))
        defer { try? file.close() }
        let tree = try MovieTree(moovBytes: readMovieBox(descriptor: file.rawValue).bytes)
        let starts = try MovieHeaderFacts(path: path).tracks.mapValues(\.tableDecodeEnd)
        var walker = try MovieFragments.Walker(descriptor: file.rawValue, moov: tree, decodeStarts: starts)
        var samples: [Int: [MovieFragments.Sample]] = [:]
        var fragments = 0
        var lastOffset: Int64 = -1
        while let fragment = try walker.next() {
            // In file order, each with the samples of its own trafs.
            #expect(fragment.offset > lastOffset && fragment.samples.allSatisfy { fragment.trackIDs.contains($0.trackID) })
            lastOffset = fragment.offset
            fragments += 1
            for sample in fragment.samples { samples[sample.trackID, default: []].append(sample) }
        }
        // A file cut inside its last fragment is read against the file it was cut from.
        let mp4 = try MP4File(path: Fixtures.path(name.contains("cut") ? "fmp4_empty_moov.mp4" : name))
        let size = try #require((try FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value)
        #expect(fragments > 1 && fragments == mp4.fragmentCount, "\(fragments) fragments walked, \(mp4.fragmentCount) in the file")
        #expect(walker.isCut == name.contains("cut") && walker.damage == nil)
        #expect(Set(samples.keys) == Set(mp4.tracks.map { Int($0.trackID) }))
        for (trackID, walked) in samples {
            let track = try #require(mp4.track(id: UInt32(trackID)))
            // The moov's own samples come first in the tests' reader.
            let range = (track.sampleCount - walked.count)..<track.sampleCount
            #expect(name.contains("moov_and") ? range.lowerBound > 0 : range.lowerBound == 0)
            guard range.lowerBound >= 0 else { continue }
            #expect(walked.map(\.dataOffset) == Array(track.sampleOffsets[range]))
            #expect(walked.map(\.size) == track.sampleSizes[range].map { Int64($0) })
            #expect(walked.map(\.decodeTime) == Array(track.decodeTimes[range]))
            #expect(walked.map(\.compositionOffset) == track.compositionOffsets[range].map { Int64($0) })
            #expect(walked.map(\.isSync) == range.map { track.isSyncSample($0) })
            #expect(walked.map(\.isWhole) == walked.map { $0.dataOffset + $0.size <= size })
            #expect(walked.contains { !$0.isWhole } == (name.contains("cut") && track.isAudio), "the cut falls in the audio's data")
            if track.isVideo { #expect(walked.contains { !$0.isSync }, "a video with no frame marked as depending on another") }
        }
    }
}
