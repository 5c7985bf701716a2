#!/usr/bin/env python3
"""An independent Apple Archive reader, for tests: lists the entries of an archive as JSON.

Written for pkgtool from the format's description (docs/format.md, "Apple Archive"), sharing no
code with Sources/AppleArchive. Reads raw AA01/YAA1 archives and the pbz framing with zlib
(pbzz), xz (pbzx) and LZFSE (pbze, through PyPI's lzfse). It parses fields by subtype only, so it
does not share the Swift reader's table of keys.

usage: aar_oracle.py ARCHIVE   ->  {"container": ..., "entries": [{type, path, link, mode, size, sha256}]}
Paths and link targets are hex (they are bytes). Exits 1 with a message on anything it cannot read.

       aar_oracle.py frame RAW ALGORITHM BLOCK_SIZE OUT
Frames a raw archive in pbz blocks (ALGORITHM z, x or e), compressed by Python's zlib and lzma and
PyPI's lzfse: compressed archives made by other encoders than the Swift writer's.
"""
import hashlib
import json
import lzma
import struct
import sys
import zlib


def payload(data):
    magic = data[:4]
    if magic in (b"AA01", b"YAA1"):
        return "raw", data
    if magic[:3] != b"pbz":
        raise ValueError("not an Apple Archive: %r" % magic)
    algorithm = magic[3:4]
    (block_size,) = struct.unpack(">Q", data[4:12])
    out = bytearray()
    pos = 12
    while pos < len(data):
        raw, packed = struct.unpack(">QQ", data[pos:pos + 16])
        pos += 16
        chunk = data[pos:pos + packed]
        if len(chunk) != packed or raw > block_size:
            raise ValueError("bad block at %d" % pos)
        pos += packed
        if raw == packed:
            out += chunk
        elif algorithm == b"z":
            out += zlib.decompress(chunk)
        elif algorithm == b"x":
            out += lzma.decompress(chunk, format=lzma.FORMAT_XZ)
        elif algorithm == b"e":
            import lzfse
            out += lzfse.decompress(chunk)
        else:
            raise ValueError("algorithm %r" % algorithm)
        if len(out) % block_size and pos < len(data):
            raise ValueError("short block before the last")
    return "pbz" + algorithm.decode(), bytes(out)


FIXED = {"1": 1, "2": 2, "4": 4, "8": 8, "F": 4, "G": 20, "H": 32, "I": 48, "J": 64, "S": 8, "T": 12}
BLOB = {"A": 2, "B": 4, "C": 8}


def entries(data):
    pos = 0
    while pos < len(data):
        if data[pos:pos + 4] not in (b"AA01", b"YAA1"):
            raise ValueError("no entry magic at %d" % pos)
        (size,) = struct.unpack("<H", data[pos + 4:pos + 6])
        header = data[pos:pos + size]
        fields = {}
        blobs = []
        i = 6
        while i < size:
            key = header[i:i + 3].decode("ascii")
            sub = chr(header[i + 3])
            i += 4
            if sub == "P":
                (n,) = struct.unpack("<H", header[i:i + 2])
                fields[key] = header[i + 2:i + 2 + n]
                i += 2 + n
            elif sub in BLOB:
                n = BLOB[sub]
                blobs.append((key, int.from_bytes(header[i:i + n], "little")))
                i += n
            elif sub in FIXED:
                fields[key] = header[i:i + FIXED[sub]]
                i += FIXED[sub]
            else:
                raise ValueError("subtype %r" % sub)
        if i != size:
            raise ValueError("fields run past the header at %d" % pos)
        pos += size
        data_bytes = None
        for key, n in blobs:
            if key == "DAT":
                data_bytes = data[pos:pos + n]
            pos += n
        if pos > len(data):
            raise ValueError("blob past the end")
        mode = fields.get("MOD")
        yield {
            "type": chr(fields["TYP"][0]),
            "path": fields["PAT"].hex(),
            "link": fields["LNK"].hex() if "LNK" in fields else None,
            "mode": int.from_bytes(mode, "little") if mode is not None else None,
            "size": len(data_bytes) if data_bytes is not None else None,
            "sha256": hashlib.sha256(data_bytes).hexdigest() if data_bytes is not None else None,
        }


def frame(raw_path, algorithm, block_size, out_path):
    with open(raw_path, "rb") as f:
        raw = f.read()
    if algorithm == "z":
        squeeze = zlib.compress
    elif algorithm == "x":
        squeeze = lambda b: lzma.compress(b, format=lzma.FORMAT_XZ)
    else:
        import lzfse
        squeeze = lzfse.compress
    out = bytearray(b"pbz" + algorithm.encode() + struct.pack(">Q", block_size))
    for at in range(0, len(raw), block_size):
        chunk = raw[at:at + block_size]
        packed = squeeze(chunk)
        if len(packed) >= len(chunk):
            packed = chunk
        out += struct.pack(">QQ", len(chunk), len(packed)) + packed
    with open(out_path, "wb") as f:
        f.write(out)


def main():
    if sys.argv[1] == "frame":
        frame(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5])
        return
    with open(sys.argv[1], "rb") as f:
        data = f.read()
    try:
        container, body = payload(data)
        listing = list(entries(body))
    except Exception as error:  # any failure is a refusal, said plainly
        print("aar_oracle: %s" % error, file=sys.stderr)
        sys.exit(1)
    json.dump({"container": container, "entries": listing}, sys.stdout, sort_keys=True)


if __name__ == "__main__":
    main()
