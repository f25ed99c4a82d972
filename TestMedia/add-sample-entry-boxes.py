#!/usr/bin/env python3
"""Append boxes to the first sample entry of one track of an MP4/MOV file.

Usage: add-sample-entry-boxes.py FILE HANDLER [--entry-type TYPE] TYPE=HEX [TYPE=HEX ...]

HANDLER is the track's handler type (vide, soun). Each TYPE=HEX becomes a
box of that four-character type whose payload is the hex bytes, appended
after the entry's own boxes. --entry-type renames the sample entry itself
(for types FFmpeg's muxer will not write, such as Dolby Vision's dvh1). Every enclosing box grows by as much. The moov
must come after the media data, so that no chunk offset moves.

Python 3 standard library only.
"""
import struct
import sys

PATH_TO_STSD = [b"mdia", b"minf", b"stbl", b"stsd"]


def boxes(buf, start, end):
    """Yield (type, box_start, payload_start, box_end) for the boxes in buf[start:end]."""
    pos = start
    while pos + 8 <= end:
        size, kind = struct.unpack_from(">I4s", buf, pos)
        if size < 8 or pos + size > end:
            sys.exit(f"box at {pos} overruns its parent")
        yield kind, pos, pos + 8, pos + size
        pos += size


def find(buf, start, end, kind):
    return next(((s, p, e) for k, s, p, e in boxes(buf, start, end) if k == kind), None)


def main():
    path, handler, specs = sys.argv[1], sys.argv[2].encode(), sys.argv[3:]
    entry_type = None
    if specs[:1] == ["--entry-type"]:
        entry_type, specs = specs[1].encode(), specs[2:]
        if len(entry_type) != 4:
            sys.exit("an entry type has four characters")
    data = bytearray(open(path, "rb").read())
    top = {k: (s, p, e) for k, s, p, e in boxes(data, 0, len(data))}
    if b"moov" not in top or b"mdat" not in top or top[b"moov"][0] < top[b"mdat"][0]:
        sys.exit("needs a moov after the mdat")
    added = b"".join(struct.pack(">I4s", 8 + len(bytes.fromhex(h)), t.encode()) + bytes.fromhex(h)
                     for t, h in (spec.split("=", 1) for spec in specs))
    moov = top[b"moov"]
    for kind, trak_start, trak_payload, trak_end in boxes(data, moov[1], moov[2]):
        if kind != b"trak":
            continue
        chain = [trak_start]
        parent = (trak_start, trak_payload, trak_end)
        hdlr = find(data, *find(data, trak_payload, trak_end, b"mdia")[1:], b"hdlr")
        if data[hdlr[1] + 8:hdlr[1] + 12] != handler:
            continue
        for kind in PATH_TO_STSD:
            parent = find(data, parent[1], parent[2], kind)
            chain.append(parent[0])
        entry = parent[1] + 8  # after stsd's version, flags and entry count
        entry_end = entry + struct.unpack_from(">I", data, entry)[0]
        data[entry_end:entry_end] = added
        if entry_type:
            data[entry + 4:entry + 8] = entry_type
        for box in [moov[0]] + chain + [entry]:
            struct.pack_into(">I", data, box, struct.unpack_from(">I", data, box)[0] + len(added))
        open(path, "wb").write(data)
        return
    sys.exit(f"no {handler.decode()} track")


main()
