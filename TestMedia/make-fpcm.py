#!/usr/bin/env python3
"""Write an MP4 whose one track is ISO/IEC 23003-5 floating-point PCM.

Usage: make-fpcm.py OUT

The track is mono, 8000 Hz, 32-bit little-endian float (an `fpcm` sample
entry with a `pcmC` box: format_flags 1, PCM_sample_size 32), a 440 Hz sine
at half scale, 8 samples of 1024 PCM frames each (1.024 s) in one chunk.
FFmpeg 5.1 has no codec for `fpcm`; FFmpeg 6.1 and later read it as
pcm_f32le. The ffmpeg CLI of 5.1 cannot write the entry, hence this script.

Python 3 standard library only.
"""
import math
import struct
import sys

RATE = 8000
FRAMES_PER_SAMPLE = 1024
SAMPLES = 8


def box(kind, *parts):
    payload = b"".join(parts)
    return struct.pack(">I4s", 8 + len(payload), kind) + payload


def full_box(kind, version, flags, *parts):
    return box(kind, struct.pack(">I", version << 24 | flags), *parts)


UNITY = struct.pack(">9I", 0x10000, 0, 0, 0, 0x10000, 0, 0, 0, 0x40000000)


def main():
    out = sys.argv[1]
    frames = FRAMES_PER_SAMPLE * SAMPLES
    audio = b"".join(struct.pack("<f", 0.5 * math.sin(2 * math.pi * 440 * n / RATE)) for n in range(frames))
    ftyp = box(b"ftyp", b"isom", struct.pack(">I", 0x200), b"isomiso2mp41")
    mdat = box(b"mdat", audio)
    chunk_offset = len(ftyp) + 8
    millis = frames * 1000 // RATE

    entry = box(
        b"fpcm",
        bytes(6), struct.pack(">H", 1),              # reserved, data_reference_index
        bytes(8),                                    # version 0 reserved words
        struct.pack(">HHHHI", 1, 32, 0, 0, RATE << 16),  # channels, sample size, pre_defined, reserved, rate
        full_box(b"pcmC", 0, 0, bytes([1, 32])),     # little endian, 32 bits
    )
    stbl = box(
        b"stbl",
        full_box(b"stsd", 0, 0, struct.pack(">I", 1), entry),
        full_box(b"stts", 0, 0, struct.pack(">III", 1, SAMPLES, FRAMES_PER_SAMPLE)),
        full_box(b"stsc", 0, 0, struct.pack(">IIII", 1, 1, SAMPLES, 1)),
        full_box(b"stsz", 0, 0, struct.pack(">II", FRAMES_PER_SAMPLE * 4, SAMPLES)),
        full_box(b"stco", 0, 0, struct.pack(">II", 1, chunk_offset)),
    )
    minf = box(
        b"minf",
        full_box(b"smhd", 0, 0, bytes(4)),
        box(b"dinf", full_box(b"dref", 0, 0, struct.pack(">I", 1), full_box(b"url ", 0, 1))),
        stbl,
    )
    mdia = box(
        b"mdia",
        full_box(b"mdhd", 0, 0, struct.pack(">IIIIHH", 0, 0, RATE, frames, 0x55C4, 0)),  # language "und"
        full_box(b"hdlr", 0, 0, bytes(4), b"soun", bytes(12), b"SoundHandler\0"),
        minf,
    )
    tkhd = full_box(b"tkhd", 0, 3, struct.pack(">IIIII", 0, 0, 1, 0, millis), bytes(8),
                    struct.pack(">hhhH", 0, 1, 0x0100, 0), UNITY, struct.pack(">II", 0, 0))
    mvhd = full_box(b"mvhd", 0, 0, struct.pack(">IIII", 0, 0, 1000, millis), struct.pack(">IH", 0x10000, 0x0100),
                    bytes(10), UNITY, bytes(24), struct.pack(">I", 2))
    moov = box(b"moov", mvhd, box(b"trak", tkhd, mdia))
    with open(out, "wb") as f:
        f.write(ftyp + mdat + moov)


if __name__ == "__main__":
    main()
