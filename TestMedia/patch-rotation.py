#!/usr/bin/env python3
"""Patch the display matrix of the video track(s) of an MP4/MOV file in place.

Usage: patch-rotation.py FILE DEGREES

DEGREES is the clockwise display rotation: 0, 90, 180 or 270.
Only the nine 32-bit matrix values inside each video track's `tkhd` box are
rewritten; the file size and every other byte stay the same.

Matrix layout in tkhd (ISO/IEC 14496-12 and QuickTime): a, b, u, c, d, v, tx, ty, w
with a, b, c, d, tx, ty in 16.16 fixed point and u, v, w in 2.30 fixed point.
A point (x, y) is displayed at (a*x + c*y + tx, b*x + d*y + ty).

  90  (iPhone portrait): a,b,c,d = 0, 1,-1, 0   tx = height, ty = 0
  180                  : a,b,c,d = -1, 0, 0,-1  tx = width,  ty = height
  270                  : a,b,c,d = 0,-1, 1, 0   tx = 0,      ty = width

width and height are the tkhd width/height fields (already 16.16), so the
translation keeps the rotated picture in the positive quadrant, as QuickTime
writes it. ffprobe reports these as rotation=-90, 180 and 90 respectively
(counterclockwise sign).

Python 3 standard library only.
"""
import struct
import sys

ONE = 0x10000          # 1.0 in 16.16
W_ONE = 0x40000000     # 1.0 in 2.30
CONTAINERS = {b"moov", b"trak", b"mdia", b"minf", b"edts", b"dinf", b"stbl", b"udta"}


def iter_boxes(buf, start, end):
    """Yield (type, box_start, payload_start, box_end) for boxes in buf[start:end]."""
    pos = start
    while pos + 8 <= end:
        size, btype = struct.unpack_from(">I4s", buf, pos)
        header = 8
        if size == 1:
            if pos + 16 > end:
                raise ValueError("truncated largesize box at %d" % pos)
            size = struct.unpack_from(">Q", buf, pos + 8)[0]
            header = 16
        elif size == 0:
            size = end - pos
        if size < header or pos + size > end:
            raise ValueError("bad box %r size %d at offset %d" % (btype, size, pos))
        yield btype, pos, pos + header, pos + size
        pos += size


def find_child(buf, start, end, wanted):
    for btype, _bs, ps, be in iter_boxes(buf, start, end):
        if btype == wanted:
            return ps, be
    return None


def handler_type(buf, trak_ps, trak_be):
    mdia = find_child(buf, trak_ps, trak_be, b"mdia")
    if not mdia:
        return None
    hdlr = find_child(buf, mdia[0], mdia[1], b"hdlr")
    if not hdlr:
        return None
    # FullBox header (4) + pre_defined / component type (4) + handler_type (4)
    return bytes(buf[hdlr[0] + 8:hdlr[0] + 12])


def matrix_for(degrees, width, height):
    if degrees == 0:
        a, b, c, d, tx, ty = ONE, 0, 0, ONE, 0, 0
    elif degrees == 90:
        a, b, c, d, tx, ty = 0, ONE, -ONE, 0, height, 0
    elif degrees == 180:
        a, b, c, d, tx, ty = -ONE, 0, 0, -ONE, width, height
    elif degrees == 270:
        a, b, c, d, tx, ty = 0, -ONE, ONE, 0, 0, width
    else:
        raise ValueError("rotation must be 0, 90, 180 or 270")
    return [a, b, 0, c, d, 0, tx, ty, W_ONE]


def patch(path, degrees):
    with open(path, "rb") as f:
        buf = bytearray(f.read())
    moov = find_child(buf, 0, len(buf), b"moov")
    if not moov:
        raise SystemExit("%s: no moov box" % path)
    patched = 0
    for btype, _bs, ps, be in iter_boxes(buf, moov[0], moov[1]):
        if btype != b"trak" or handler_type(buf, ps, be) != b"vide":
            continue
        tkhd = find_child(buf, ps, be, b"tkhd")
        if not tkhd:
            raise SystemExit("%s: video trak without tkhd" % path)
        version = buf[tkhd[0]]
        # version 0: ctime(4) mtime(4) track_ID(4) reserved(4) duration(4)
        # version 1: ctime(8) mtime(8) track_ID(4) reserved(4) duration(8)
        # then reserved(8) layer(2) alternate_group(2) volume(2) reserved(2)
        body = tkhd[0] + 4 + (32 if version == 1 else 20) + 16
        if body + 36 + 8 > tkhd[1]:
            raise SystemExit("%s: tkhd too short" % path)
        width, height = struct.unpack_from(">II", buf, body + 36)
        struct.pack_into(">9i", buf, body, *matrix_for(degrees, width, height))
        patched += 1
    if not patched:
        raise SystemExit("%s: no video track found" % path)
    with open(path, "r+b") as f:
        f.write(buf)
    return patched


def main(argv):
    if len(argv) != 3:
        raise SystemExit("usage: patch-rotation.py FILE {0|90|180|270}")
    n = patch(argv[1], int(argv[2]))
    print("%s: patched %d video tkhd matrix to %s degrees clockwise" % (argv[1], n, argv[2]))


if __name__ == "__main__":
    main(sys.argv)
