#!/usr/bin/env python3
"""Per-core LZFSE compression: pkgtool's encoder against the reference's C code (PyPI's lzfse).

usage: bench/lzfse_encoder.py INPUT [--block-size 4194304] [--pairs 3] [--sources DIR]

Builds bench/LZFSEBench/main.swift with Sources/LZFSE into one optimised program, then, in
alternating order for each pair, encodes INPUT in blocks on one thread with it and with the
reference (lzfse.compress in this process), each timed by its thread's CPU clock. Every block
pkgtool encoded is decoded by the reference and must give the input back. Prints each pair and
the medians (MB/s, 10^6 bytes a CPU second) and both sizes. --sources builds the encoder from
another copy of Sources/LZFSE (an older commit's, to compare).
"""
import argparse
import glob
import json
import os
import statistics
import struct
import subprocess
import sys
import tempfile
import time

import lzfse

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def build(folder, source_folder):
    program = os.path.join(folder, "lzfse-bench")
    sources = sorted(glob.glob(os.path.join(source_folder, "*.swift")))
    subprocess.run(["swiftc", "-O", "-wmo", "-package-name", "pkgtool", "-module-name", "LZFSEBench", "-o", program,
                    *sources, os.path.join(ROOT, "bench", "LZFSEBench", "main.swift")], check=True)
    return program


def ours(program, path, block_size, folder):
    out = os.path.join(folder, "ours.bin")
    done = subprocess.run([program, path, str(block_size), out], check=True, capture_output=True, text=True)
    figures = json.loads(done.stdout)
    return figures["seconds"], figures["out"], out


def reference(data, block_size):
    seconds = 0.0
    size = 0
    for start in range(0, len(data), block_size):
        block = data[start:start + block_size]
        begun = time.thread_time()
        size += len(lzfse.compress(block))
        seconds += time.thread_time() - begun
    return seconds, size


def check(data, block_size, encoded_path):
    with open(encoded_path, "rb") as f:
        encoded = f.read()
    pos = 0
    start = 0
    while pos < len(encoded):
        (n,) = struct.unpack("<Q", encoded[pos:pos + 8])
        pos += 8
        block = data[start:start + block_size]
        if lzfse.decompress(encoded[pos:pos + n]) != block:
            sys.exit("block at %d does not decode to its input with the reference" % start)
        pos += n
        start += block_size
    if start < len(data):
        sys.exit("blocks missing from offset %d" % start)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("input")
    parser.add_argument("--block-size", type=int, default=4 << 20)
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--sources", default=os.path.join(ROOT, "Sources", "LZFSE"))
    args = parser.parse_args()
    with open(args.input, "rb") as f:
        data = f.read()
    mb = len(data) / 1e6
    with tempfile.TemporaryDirectory() as folder:
        program = build(folder, args.sources)
        rows = []
        for i in range(args.pairs):
            runs = {}
            for which in (("ours", "reference") if i % 2 == 0 else ("reference", "ours")):
                if which == "ours":
                    seconds, size, encoded = ours(program, args.input, args.block_size, folder)
                else:
                    seconds, size = reference(data, args.block_size)
                runs[which] = (seconds, size)
            rows.append(runs)
            print("pair %d: ours %.1f MB/s, reference %.1f MB/s, ratio of times %.2f" % (
                i + 1, mb / runs["ours"][0], mb / runs["reference"][0], runs["ours"][0] / runs["reference"][0]))
        check(data, args.block_size, encoded)
        ratios = [r["ours"][0] / r["reference"][0] for r in rows]
        print(json.dumps({
            "input_bytes": len(data),
            "ours_mb_s": round(mb / statistics.median(r["ours"][0] for r in rows), 1),
            "reference_mb_s": round(mb / statistics.median(r["reference"][0] for r in rows), 1),
            "time_ratio": round(statistics.median(ratios), 2),
            "time_ratio_min": round(min(ratios), 2), "time_ratio_max": round(max(ratios), 2),
            "ours_bytes": rows[-1]["ours"][1], "reference_bytes": rows[-1]["reference"][1],
        }))


if __name__ == "__main__":
    main()
