#!/usr/bin/env python3
"""Make a fragmented MP4's movie header misstate its duration, in place.

Usage: patch-fragment-duration.py FILE

Writes 0xFFFFFFFF into the duration fields of `mvhd`, every `tkhd` and
`mdhd`, and of an `mvex/mehd`, which it adds when there is none, as some
recorders leave them: a header written before the recording, claiming
days (4294967 s at a timescale of 1000). The samples in the fragments,
which say how long the recording really is, stay as they were.

Adding `mehd` moves every byte after the moov by 16, so the file must
locate its fragments' data from their `moof` (no `tfhd` base-data-offset)
and have no `mfra` or `sidx`, whose offsets would then be wrong; ffmpeg's
`-movflags frag_keyframe+empty_moov+default_base_moof+skip_trailer` writes
such a file.

Python 3 standard library only.
"""
import struct
import sys

CONTAINERS = {b"moov", b"trak", b"mdia", b"mvex"}
# Offset of the duration field in a version 0 / version 1 full box payload.
DURATION = {
    b"mvhd": (16, 24),
    b"tkhd": (20, 28),
    b"mdhd": (16, 24),
    b"mehd": (4, 4),
}


def patch(buf, start, end, counts):
    pos = start
    while pos + 8 <= end:
        size, btype = struct.unpack_from(">I4s", buf, pos)
        header = 8
        if size == 1:
            size = struct.unpack_from(">Q", buf, pos + 8)[0]
            header = 16
        elif size == 0:
            size = end - pos
        if size < header or pos + size > end:
            raise SystemExit("box %r at %d overruns its parent" % (btype, pos))
        payload = pos + header
        if btype in CONTAINERS:
            patch(buf, payload, pos + size, counts)
        elif btype in DURATION:
            version = buf[payload]
            offset = DURATION[btype][1 if version == 1 else 0]
            if version == 1:
                struct.pack_into(">Q", buf, payload + offset, 0xFFFFFFFF)
            else:
                struct.pack_into(">I", buf, payload + offset, 0xFFFFFFFF)
            counts[btype] = counts.get(btype, 0) + 1
        pos += size


def top_level(buf):
    pos = 0
    while pos + 8 <= len(buf):
        size, btype = struct.unpack_from(">I4s", buf, pos)
        if size < 8:
            raise SystemExit("box %r at %d has size %d" % (btype, pos, size))
        yield btype, pos, size
        pos += size


def add_mehd(buf):
    """Inserts an mehd (version 0, duration 0) as the first child of mvex, growing mvex and moov."""
    boxes = list(top_level(buf))
    kinds = [t for t, _, _ in boxes]
    if b"mfra" in kinds or b"sidx" in kinds:
        raise SystemExit("the file has an mfra or sidx, whose offsets an added mehd would break")
    for btype, pos, size in boxes:
        if btype == b"moof" and buf.find(b"tfhd", pos, pos + size) >= 0:
            flags_at = buf.find(b"tfhd", pos, pos + size) + 4
            if struct.unpack_from(">I", buf, flags_at)[0] & 1:
                raise SystemExit("a tfhd has a base-data-offset, which an added mehd would break")
    moov = next(((p, s) for t, p, s in boxes if t == b"moov"), None)
    if moov is None:
        raise SystemExit("no moov")
    mvex = buf.find(b"mvex", moov[0], moov[0] + moov[1]) - 4
    if mvex < moov[0] or buf.find(b"mehd", mvex, mvex + struct.unpack_from(">I", buf, mvex)[0]) >= 0:
        return buf
    mehd = struct.pack(">I4sI", 16, b"mehd", 0) + struct.pack(">I", 0)
    struct.pack_into(">I", buf, mvex, struct.unpack_from(">I", buf, mvex)[0] + 16)
    struct.pack_into(">I", buf, moov[0], moov[1] + 16)
    return buf[:mvex + 8] + mehd + buf[mvex + 8:]


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    with open(sys.argv[1], "r+b") as f:
        buf = add_mehd(bytearray(f.read()))
        counts = {}
        patch(buf, 0, len(buf), counts)
        if b"mehd" not in counts or b"mvhd" not in counts:
            raise SystemExit("%s: no mvhd or mehd to patch (%r)" % (sys.argv[1], counts))
        f.seek(0)
        f.write(buf)
    print("   patched", ", ".join("%s x%d" % (k.decode(), v) for k, v in sorted(counts.items())))


if __name__ == "__main__":
    main()
