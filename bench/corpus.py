#!/usr/bin/env python3
"""Deterministic benchmark corpora for pkgtool (same seed, same bytes).

  corpus.py mixed DIR [--size-mb 512]   75% media (already compressed), 20% text/JSON, 5% small files
  corpus.py small DIR [--files 50000]   many small files (JSON, text, a few images)
  corpus.py random DIR [--size-mb 400]  one file of random bytes with an unknown type (data.dat)
  corpus.py single DIR [--size-mb 1024] one large compressible file (book.txt: text and JSON)

DIR becomes a content project: ContentInfo.plist + Contents/.
"""
import argparse, os, random, json

MEDIA = [  # (extension, magic) — the bytes after the magic are random: incompressible, like real media
    (".png", b"\x89PNG\r\n\x1a\n"), (".jpg", b"\xff\xd8\xff\xe0"), (".mp3", b"ID3\x03\x00"),
    (".m4a", b"\x00\x00\x00\x20ftypM4A "), (".mp4", b"\x00\x00\x00\x18ftypmp42"), (".ogg", b"OggS\x00\x02"),
]
WORDS = ("the of and to in is was he for it with as his on be at by had are but from or have an they "
         "which one you were her all she there would their we him been has when who will more no if out "
         "level score enemy tile world player chapter harbour lighthouse keeper ship night").split()

def plist(root, product, version):
    with open(os.path.join(root, "ContentInfo.plist"), "w") as f:
        f.write('<?xml version="1.0" encoding="UTF-8"?>\n<plist version="1.0">\n<dict>\n'
                f'\t<key>ContentVersion</key>\n\t<string>{version}</string>\n'
                f'\t<key>IAPProductIdentifier</key>\n\t<string>{product}</string>\n</dict>\n</plist>\n')

def text(rng, size):
    out, n = [], 0
    while n < size:
        line = " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 16))) + ".\n"
        out.append(line); n += len(line)
    return "".join(out)[:size].encode()

def json_blob(rng, size):
    items, n = [], 0
    while n < size:
        item = {"id": rng.randint(0, 10**6), "name": rng.choice(WORDS), "x": rng.randint(0, 4096),
                "y": rng.randint(0, 4096), "tags": [rng.choice(WORDS) for _ in range(3)]}
        s = json.dumps(item); items.append(s); n += len(s) + 2
    return ("[\n" + ",\n".join(items) + "\n]\n").encode()[:max(size, 2)]

def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)

def mixed(root, size_mb, seed=1):
    rng = random.Random(seed)
    total = size_mb * 1_000_000
    media_budget, text_budget, small_budget = int(total * 0.75), int(total * 0.20), int(total * 0.05)
    contents = os.path.join(root, "Contents")
    n = 0
    made = 0
    while made < media_budget:  # media: 300 kB – 4 MB
        ext, magic = rng.choice(MEDIA)
        size = min(rng.randint(300_000, 4_000_000), media_budget - made)
        write(os.path.join(contents, "media", f"d{n % 40:02d}", f"m{n:05d}{ext}"), magic + rng.randbytes(max(0, size - len(magic))))
        made += size; n += 1
    made = 0
    while made < text_budget:  # text and JSON: 20 kB – 400 kB
        size = min(rng.randint(20_000, 400_000), text_budget - made)
        data = text(rng, size) if n % 2 else json_blob(rng, size)
        write(os.path.join(contents, "data", f"d{n % 30:02d}", f"t{n:05d}" + (".txt" if n % 2 else ".json")), data)
        made += len(data); n += 1
    made = 0
    while made < small_budget:  # small files: 1 kB – 9 kB
        size = rng.randint(1_000, 9_000)
        data = json_blob(rng, size) if n % 3 else rng.randbytes(size)
        write(os.path.join(contents, "small", f"d{n % 50:02d}", f"s{n:05d}.json" if n % 3 else f"s{n:05d}.bin"), data)
        made += len(data); n += 1
    plist(root, "com.example.bench.mixed", "1.0")
    return n

def small(root, files, seed=2):
    rng = random.Random(seed)
    contents = os.path.join(root, "Contents")
    for n in range(files):
        kind = n % 10
        if kind < 6:
            data = json_blob(rng, rng.randint(200, 3000)); ext = ".json"
        elif kind < 9:
            data = text(rng, rng.randint(200, 3000)); ext = ".txt"
        else:
            data = b"\x89PNG\r\n\x1a\n" + rng.randbytes(rng.randint(500, 4000)); ext = ".png"
        write(os.path.join(contents, f"g{n // 500:03d}", f"f{n:05d}{ext}"), data)
    plist(root, "com.example.bench.small", "1.0")
    return files

def random_file(root, size_mb, seed=3):
    """One incompressible file of a type no list knows: what only a sample can tell apart."""
    rng = random.Random(seed)
    path = os.path.join(root, "Contents", "data.dat")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        for _ in range(size_mb):
            f.write(rng.randbytes(1_000_000))
    plist(root, "com.example.bench.random", "1.0")
    return 1

def single(root, size_mb, seed=4):
    """One large file that deflates well: a read that only parts of one file can spread."""
    rng = random.Random(seed)
    path = os.path.join(root, "Contents", "book.txt")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    # 4 MB of text and JSON, written again with a varying line in between, so deflate works
    # on every part of the file and no two parts compress to the same bytes.
    block = text(rng, 2_000_000) + json_blob(rng, 2_000_000)
    with open(path, "wb") as f:
        for i in range(size_mb // 4):
            f.write(block)
            f.write(f"part {i} {rng.random()}\n".encode())
    plist(root, "com.example.bench.single", "1.0")
    return 1

if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("profile", choices=["mixed", "small", "random", "single"])
    p.add_argument("dir")
    p.add_argument("--size-mb", type=int, help="mixed 512, random 400, single 1024 by default")
    p.add_argument("--files", type=int, default=50_000)
    a = p.parse_args()
    os.makedirs(a.dir, exist_ok=True)
    if a.profile == "mixed":
        count = mixed(a.dir, a.size_mb or 512)
    elif a.profile == "random":
        count = random_file(a.dir, a.size_mb or 400)
    elif a.profile == "single":
        count = single(a.dir, a.size_mb or 1024)
    else:
        count = small(a.dir, a.files)
    print(f"{a.profile}: {count} files in {a.dir}")
