"""Replaces the last bytes of a package's .ipu.meta section and seals the
checksums again (the note's metadata and file SHA-256s), as a damaged writer
might leave a file: the reader must then refuse it for what it says.

usage: reseal-meta-tail.py IN OUT HEXBYTES
"""
import hashlib
import struct
import sys

src, dst, tail = sys.argv[1], sys.argv[2], bytes.fromhex(sys.argv[3])
b = bytearray(open(src, "rb").read())
shoff, = struct.unpack_from("<Q", b, 0x28)
shentsize, shnum, shstrndx = struct.unpack_from("<HHH", b, 0x3A)


def section(i):
    name, _, _, _, off, size = struct.unpack_from("<IIQQQQ", b, shoff + i * shentsize)
    return name, off, size


_, stroff, _ = section(shstrndx)
found = {}
for i in range(shnum):
    name, off, size = section(i)
    end = b.index(0, stroff + name)
    found[b[stroff + name:end].decode()] = (off, size)
meta_off, meta_len = found[".ipu.meta"]
note_off, _ = found[".note.ipu.package"]
b[meta_off + meta_len - len(tail):meta_off + meta_len] = tail
# Note: header (12 bytes), owner "IPU\0", then version, flags, meta SHA, file SHA.
desc = note_off + 12 + 4
b[desc + 8:desc + 40] = hashlib.sha256(b[meta_off:meta_off + meta_len]).digest()
b[desc + 40:desc + 72] = bytes(32)
b[desc + 40:desc + 72] = hashlib.sha256(b).digest()
open(dst, "wb").write(bytes(b))
