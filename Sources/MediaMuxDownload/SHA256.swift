import MediaMuxBase
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Streaming SHA-256 (FIPS 180-4, section 6.2), without Foundation.
///
///     var hasher = SHA256()
///     hasher.update(chunk1)
///     hasher.update(chunk2)
///     let digest = hasher.finalize()      // 32 bytes
///     SHA256.hex(digest)                  // 64 lowercase hex digits
///
/// `finalize()` is `consuming`: it pads and hashes the last block of its own
/// copy and returns the digest. The value is a plain struct, so a running
/// digest can be taken by finalizing a copy (`let copy = hasher; copy.finalize()`)
/// and continuing to update the original.
///
/// Whole 64-byte blocks are hashed straight from the caller's buffer; only the
/// bytes of a block split across `update` calls go through the 64-byte buffer
/// held inline in the struct. No heap allocation happens per block.
package struct SHA256 {
    /// H0...H7 (the intermediate hash value), kept apart from the block buffer
    /// so the compression function can take it `inout` while reading the buffer.
    private struct State {
        var a: UInt32 = 0x6a09e667
        var b: UInt32 = 0xbb67ae85
        var c: UInt32 = 0x3c6ef372
        var d: UInt32 = 0xa54ff53a
        var e: UInt32 = 0x510e527f
        var f: UInt32 = 0x9b05688c
        var g: UInt32 = 0x1f83d9ab
        var h: UInt32 = 0x5be0cd19
    }

    private var state = State()
    /// A partial block: 64 bytes inline (no heap).
    private var buffer: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
    private var bufferCount = 0
    /// Message length in bytes, modulo 2^64 (the bit length is taken modulo 2^64).
    private var byteCount: UInt64 = 0

    package init() {}

    package mutating func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { update($0) }
    }

    package mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard var p = bytes.baseAddress, bytes.count > 0 else { return }
        var n = bytes.count
        byteCount &+= UInt64(truncatingIfNeeded: n)

        if bufferCount > 0 {
            let take = min(64 - bufferCount, n)
            let filled = bufferCount
            withUnsafeMutableBytes(of: &buffer) { buf in
                buf.baseAddress!.advanced(by: filled).copyMemory(from: p, byteCount: take)
            }
            bufferCount += take
            p += take
            n -= take
            guard bufferCount == 64 else { return }
            let block = buffer  // 64 bytes on the stack; self's buffer and state can't both be borrowed by one closure
            withUnsafeBytes(of: block) { buf in
                Self.compress(&state, buf.baseAddress!, blocks: 1)
            }
            bufferCount = 0
        }

        let blocks = n &>> 6
        if blocks > 0 {
            Self.compress(&state, p, blocks: blocks)
            p += blocks &<< 6
            n &= 63
        }

        if n > 0 {
            withUnsafeMutableBytes(of: &buffer) { buf in
                buf.baseAddress!.copyMemory(from: p, byteCount: n)
            }
            bufferCount = n
        }
    }

    /// Pads the message (0x80, zeros, 64-bit big-endian bit length) and
    /// returns the 32-byte digest.
    consuming func finalize() -> [UInt8] {
        let bitLength = byteCount &* 8
        var used = bufferCount
        var block = buffer
        var s = state
        withUnsafeMutableBytes(of: &block) { buf in
            let base = buf.baseAddress!
            base.storeBytes(of: 0x80, toByteOffset: used, as: UInt8.self)
            used += 1
            if used > 56 {
                (base + used).initializeMemory(as: UInt8.self, repeating: 0, count: 64 - used)
                Self.compress(&s, UnsafeRawPointer(base), blocks: 1)
                used = 0
            }
            (base + used).initializeMemory(as: UInt8.self, repeating: 0, count: 56 - used)
            base.storeBytes(of: bitLength.bigEndian, toByteOffset: 56, as: UInt64.self)
            Self.compress(&s, UnsafeRawPointer(base), blocks: 1)
        }
        return [UInt8](unsafeUninitializedCapacity: 32) { out, initialized in
            let raw = UnsafeMutableRawPointer(out.baseAddress!)
            raw.storeBytes(of: s.a.bigEndian, toByteOffset: 0, as: UInt32.self)
            raw.storeBytes(of: s.b.bigEndian, toByteOffset: 4, as: UInt32.self)
            raw.storeBytes(of: s.c.bigEndian, toByteOffset: 8, as: UInt32.self)
            raw.storeBytes(of: s.d.bigEndian, toByteOffset: 12, as: UInt32.self)
            raw.storeBytes(of: s.e.bigEndian, toByteOffset: 16, as: UInt32.self)
            raw.storeBytes(of: s.f.bigEndian, toByteOffset: 20, as: UInt32.self)
            raw.storeBytes(of: s.g.bigEndian, toByteOffset: 24, as: UInt32.self)
            raw.storeBytes(of: s.h.bigEndian, toByteOffset: 28, as: UInt32.self)
            initialized = 32
        }
    }

    /// Lowercase hexadecimal, two digits per byte.
    package static func hex(_ digest: [UInt8]) -> String {
        let digits: StaticString = "0123456789abcdef"
        return String(unsafeUninitializedCapacity: digest.count * 2) { out in
            digits.withUTF8Buffer { d in
                var i = 0
                for byte in digest {
                    out[i] = d[Int(byte &>> 4)]
                    out[i + 1] = d[Int(byte & 0x0f)]
                    i += 2
                }
                return i
            }
        }
    }

    /// Hashes a file in 1 MiB reads via POSIX open/read (Glibc; no Foundation).
    ///
    /// Throws `MediaMuxError.fileNotFound` when the path does not exist,
    /// `.notAFile` for a directory, and `.unreadable` for any other failure
    /// of open(2) or read(2).
    package static func hashFile(atPath path: String) throws -> [UInt8] {
        var fd: Int32
        repeat {
            fd = open(path, O_RDONLY | O_CLOEXEC)
        } while fd < 0 && errno == EINTR
        guard fd >= 0 else { throw fileError(path: path, code: errno) }
        defer { close(fd) }
        #if os(Linux)
        _ = posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL)
        #endif

        let chunk = 1 << 20
        let storage = UnsafeMutableRawPointer.allocate(byteCount: chunk, alignment: 64)
        defer { storage.deallocate() }

        var hasher = SHA256()
        while true {
            let n = read(fd, storage, chunk)
            if n > 0 {
                hasher.update(UnsafeRawBufferPointer(start: storage, count: n))
            } else if n == 0 {
                break
            } else if errno != EINTR {
                throw fileError(path: path, code: errno)
            }
        }
        return hasher.finalize()
    }

    private static func fileError(path: String, code: Int32) -> MediaMuxError {
        switch code {
        case ENOENT: return .fileNotFound(path: path)
        case EISDIR: return .notAFile(path: path)
        default: return .unreadable(path: path, reason: String(cString: strerror(code)))
        }
    }

    // MARK: - Compression function (FIPS 180-4, 6.2.2)

    /// The 64 round constants K0...K63 (FIPS 180-4, 4.2.2): the first 32 bits of
    /// the fractional parts of the cube roots of the first 64 primes.
    private static let k: [UInt32] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
    ]

    @inline(__always)
    private static func rotr(_ x: UInt32, _ n: UInt32) -> UInt32 {
        (x &>> n) | (x &<< (32 &- n))
    }

    /// One round, with the eight working variables passed in their rotated
    /// order: only d and h change (d += T1, h = T1 + T2), and the caller
    /// renames the variables instead of shifting them.
    @inline(__always)
    private static func round(
        _ a: UInt32, _ b: UInt32, _ c: UInt32, _ d: inout UInt32,
        _ e: UInt32, _ f: UInt32, _ g: UInt32, _ h: inout UInt32,
        _ k: UInt32, _ w: UInt32
    ) {
        let sigma1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)
        let ch = (e & f) ^ (~e & g)
        let t1 = h &+ sigma1 &+ ch &+ k &+ w
        let sigma0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)
        let maj = (a & b) ^ (a & c) ^ (b & c)
        d = d &+ t1
        h = t1 &+ sigma0 &+ maj
    }

    /// Message schedule step in a 16-word window: W[t] = σ1(W[t-2]) + W[t-7] + σ0(W[t-15]) + W[t-16],
    /// where `w` holds W[t-16] on entry.
    @inline(__always)
    private static func schedule(_ w: inout UInt32, _ w2: UInt32, _ w7: UInt32, _ w15: UInt32) {
        let s0 = rotr(w15, 7) ^ rotr(w15, 18) ^ (w15 &>> 3)
        let s1 = rotr(w2, 17) ^ rotr(w2, 19) ^ (w2 &>> 10)
        w = w &+ s1 &+ w7 &+ s0
    }

    @inline(__always)
    private static func word(_ p: UnsafeRawPointer, _ i: Int) -> UInt32 {
        UInt32(bigEndian: p.loadUnaligned(fromByteOffset: i &* 4, as: UInt32.self))
    }

    /// Hashes `blocks` consecutive 64-byte blocks starting at `p` into `state`.
    private static func compress(_ state: inout State, _ p: UnsafeRawPointer, blocks: Int) {
        k.withUnsafeBufferPointer { kBuffer in
            let kp = kBuffer.baseAddress!
            var block = p
            var (h0, h1, h2, h3, h4, h5, h6, h7) = (state.a, state.b, state.c, state.d, state.e, state.f, state.g, state.h)
            for _ in 0..<blocks {
                var w0 = word(block, 0), w1 = word(block, 1), w2 = word(block, 2), w3 = word(block, 3)
                var w4 = word(block, 4), w5 = word(block, 5), w6 = word(block, 6), w7 = word(block, 7)
                var w8 = word(block, 8), w9 = word(block, 9), w10 = word(block, 10), w11 = word(block, 11)
                var w12 = word(block, 12), w13 = word(block, 13), w14 = word(block, 14), w15 = word(block, 15)
                var (a, b, c, d, e, f, g, h) = (h0, h1, h2, h3, h4, h5, h6, h7)

                var t = 0
                while true {
                    let kt = kp + t
                    round(a, b, c, &d, e, f, g, &h, kt[0], w0)
                    round(h, a, b, &c, d, e, f, &g, kt[1], w1)
                    round(g, h, a, &b, c, d, e, &f, kt[2], w2)
                    round(f, g, h, &a, b, c, d, &e, kt[3], w3)
                    round(e, f, g, &h, a, b, c, &d, kt[4], w4)
                    round(d, e, f, &g, h, a, b, &c, kt[5], w5)
                    round(c, d, e, &f, g, h, a, &b, kt[6], w6)
                    round(b, c, d, &e, f, g, h, &a, kt[7], w7)
                    round(a, b, c, &d, e, f, g, &h, kt[8], w8)
                    round(h, a, b, &c, d, e, f, &g, kt[9], w9)
                    round(g, h, a, &b, c, d, e, &f, kt[10], w10)
                    round(f, g, h, &a, b, c, d, &e, kt[11], w11)
                    round(e, f, g, &h, a, b, c, &d, kt[12], w12)
                    round(d, e, f, &g, h, a, b, &c, kt[13], w13)
                    round(c, d, e, &f, g, h, a, &b, kt[14], w14)
                    round(b, c, d, &e, f, g, h, &a, kt[15], w15)
                    t &+= 16
                    if t == 64 { break }
                    // The next 16 schedule words, computed in place in order:
                    // slot i holds W[t+i-16] until it is overwritten with W[t+i].
                    schedule(&w0, w14, w9, w1)
                    schedule(&w1, w15, w10, w2)
                    schedule(&w2, w0, w11, w3)
                    schedule(&w3, w1, w12, w4)
                    schedule(&w4, w2, w13, w5)
                    schedule(&w5, w3, w14, w6)
                    schedule(&w6, w4, w15, w7)
                    schedule(&w7, w5, w0, w8)
                    schedule(&w8, w6, w1, w9)
                    schedule(&w9, w7, w2, w10)
                    schedule(&w10, w8, w3, w11)
                    schedule(&w11, w9, w4, w12)
                    schedule(&w12, w10, w5, w13)
                    schedule(&w13, w11, w6, w14)
                    schedule(&w14, w12, w7, w15)
                    schedule(&w15, w13, w8, w0)
                }

                h0 &+= a; h1 &+= b; h2 &+= c; h3 &+= d
                h4 &+= e; h5 &+= f; h6 &+= g; h7 &+= h
                block += 64
            }
            state = State(a: h0, b: h1, c: h2, d: h3, e: h4, f: h5, g: h6, h: h7)
        }
    }
}
