#!/usr/bin/env python3
"""pkgtool against bsdtar (libarchive) and 7-Zip on the same trees: build, full validate, unpack.

Interleaved rounds (the order rotates), each run after `sync` and a pause; the median of each
tool, the spread (the lowest and highest pkgtool/peer ratio of a round, and each tool's fastest
and slowest run), user and system time, CPU/wall, peak RSS from GNU time, output sizes. Every
validate and unpack row is measured on pkgtool's package and on bsdtar's (what a CI gate mostly
reads: packages other tools wrote). 7-Zip (Debian's `7zip`, `7zz t` and `7zz x`) is the second
peer for validate and unpack; it is skipped when `7zz` is missing.

Unpack runs in two modes, and both are reported every time:
  keep    every output goes to a new folder and nothing is deleted until the benchmark ends;
  delete  each tool's previous output is deleted just before its next run, as a CI job does.
On ext4 without a journal (this machine), inodes freed in the last 30 s (5.5 minutes while their
inode table is dirty) are skipped, one by one, when new ones are allocated, so a run that creates
files just after a large deletion can spend seconds of system time there. It hits every tool the
same way (docs/performance-archive.md, "Why small-file unpack slows down after a delete": bsdtar
2.2 -> 27.6 s, pkgtool 1.6 -> 27.1 s on a fresh 4 GB image, 50,000 files); with a journal
neither slows down. The delete mode measures that day as it is; the keep mode measures the tools.

Apple Archive (`--only aar`, or by default after the others): on the mixed corpus, pkgtool
writes an asset pack (`export background-assets -o X.aar`, LZFSE) and reads it (`validate`),
against the reference: scripts/aar_oracle.py, which frames the same raw archive in LZFSE blocks
with Apple's reference C code (PyPI's `lzfse`) and reads an archive back decoding every block
and hashing every file. pkgtool's export also validates the input, stages and reads the archive
back, so its row does more work than the peer's.

Two harnesses, both run by default (`--harness settled,ci`):
  settled  every run comes after `sync` and a 1 s pause; validate and unpack read pkgtool's and
           bsdtar's package; unpack in the modes above. It measures the tools on a quiet disk.
  ci       the outside harness of issue 48: no `sync` and no pause, every output (the package
           too) deleted just before the next run, and only bsdtar's package read (validate, and
           unpack in delete mode). The writeback of one run's output then overlaps the next
           run, whichever tool it is, as it does in a CI job. It measures a working day.

Further rows (`--only` names them; all run by default):
  random   one 400 MB file of random bytes of an unknown type (`.dat`): build against bsdtar,
           and pkgtool's own `--compression none` for the floor; then the package digest,
           `pkgtool info --json` against `openssl dgst -sha256` of the same package, by CPU time.
  single   one 1 GB file that deflates well: build, validate and unpack with CPU/wall, against
           bsdtar, of bsdtar's package (one zlib stream) and of pkgtool's (1 MiB pieces, inflated
           on every core).

  bench/run.py [--size-mb 512] [--small-files 50000] [--pairs 4] [--big]
               [--only mixed|small|aar|random|single] [--modes keep,delete] [--harness settled,ci]
"""
import argparse, os, shutil, statistics, subprocess, sys, time, json, platform

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
OUT = os.path.join(HERE, "out")

def run_timed(cmd, cwd=None):
    """(seconds, peak RSS in KiB, user seconds, system seconds) of one run, via GNU time."""
    timing = os.path.join(OUT, "time.txt")
    full = ["/usr/bin/time", "-f", "%e %M %U %S", "-o", timing] + cmd
    r = subprocess.run(full, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if r.returncode != 0:
        sys.exit(f"failed ({r.returncode}): {' '.join(cmd)}\n{r.stderr.decode()[-2000:]}")
    seconds, rss, user, system = open(timing).read().split()[-4:]
    return float(seconds), int(rss), float(user), float(system)

def settle():
    subprocess.run(["sync"])
    time.sleep(1)

def rounds(name, makers, n, settled=True):
    """makers: [(tool, make(i) -> command)], pkgtool first; medians, spread, CPU and peak RSS.
    settled: `sync` and a pause before every run (the ci harness runs them back to back)."""
    runs = {tool: [] for tool, _ in makers}
    for i in range(n):
        order = makers[i % len(makers):] + makers[:i % len(makers)]
        for tool, make in order:
            if settled:
                settle()
            runs[tool].append(run_timed(make(i)))
    med = statistics.median
    row = {"name": name, "runs": n, "tools": [tool for tool, _ in makers]}
    for tool, got in runs.items():
        wall = [r[0] for r in got]
        row[tool] = med(wall)
        row[tool + "_min"], row[tool + "_max"] = min(wall), max(wall)
        row[tool + "_user"] = med([r[2] for r in got])
        row[tool + "_sys"] = med([r[3] for r in got])
        row[tool + "_cpu"] = med([(r[2] + r[3]) / max(r[0], 0.01) for r in got])
        row[tool + "_rss_mib"] = max(r[1] for r in got) / 1024
        row[tool + "_cpu_s"] = med([r[2] + r[3] for r in got])
    a = [r[0] for r in runs["pkgtool"]]
    a_cpu = [r[2] + r[3] for r in runs["pkgtool"]]
    for tool in row["tools"][1:]:
        b = [r[0] for r in runs[tool]]
        ratios = [x / max(y, 0.005) for x, y in zip(a, b)]  # GNU time has 10 ms resolution
        row["ratio_" + tool] = row["pkgtool"] / max(row[tool], 0.005)
        row["ratio_" + tool + "_min"], row["ratio_" + tool + "_max"] = min(ratios), max(ratios)
        cpu = [x / max(r[2] + r[3], 0.005) for x, r in zip(a_cpu, runs[tool])]
        row["cpu_ratio_" + tool] = row["pkgtool_cpu_s"] / max(row[tool + "_cpu_s"], 0.005)
        row["cpu_ratio_" + tool + "_min"], row["cpu_ratio_" + tool + "_max"] = min(cpu), max(cpu)
    # The names the earlier results used.
    if "bsdtar" in runs:
        row["ratio"], row["ratio_min"], row["ratio_max"] = row["ratio_bsdtar"], row["ratio_bsdtar_min"], row["ratio_bsdtar_max"]
    return row

def fresh(path):
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path

def profile(label, corpus, pkgtool, n, modes, sevenzip):
    work = fresh(os.path.join(OUT, "work-" + label))
    results = []
    pkg = os.path.join(work, "p.pkg")
    bsd = os.path.join(work, "b.pkg")
    results.append(rounds(f"{label}: build", [
        ("pkgtool", lambda i: [pkgtool, "build", corpus, "-o", pkg, "--force"]),
        # `-C DIR .`, as users type it: bsdtar then writes ContentInfo.plist last in the TOC,
        # the harder order for a reader that starts on the entries while the TOC is parsed.
        ("bsdtar", lambda i: ["bsdtar", "--format", "xar", "-cf", bsd, "-C", corpus, "."]),
    ], n))
    sizes = {"pkgtool": os.path.getsize(pkg), "bsdtar": os.path.getsize(bsd)}
    results[-1]["sizes"] = sizes
    # Jobs=1 must give the same bytes.
    single = os.path.join(work, "single.pkg")
    subprocess.run([pkgtool, "build", corpus, "-o", single, "--jobs", "1"], check=True, stdout=subprocess.DEVNULL)
    results[-1]["identical_single_thread"] = open(single, "rb").read() == open(pkg, "rb").read()
    os.remove(single)
    for which, package in (("pkgtool's package", pkg), ("bsdtar's package", bsd)):
        makers = [("pkgtool", lambda i, package=package: [pkgtool, "validate", package]),
                  ("bsdtar", lambda i, package=package: ["bsdtar", "-cf", "/dev/null", "@" + package])]
        if sevenzip:
            makers.append(("7zip", lambda i, package=package: [sevenzip, "t", "-bd", package]))
        results.append(rounds(f"{label}: full validate, {which}", makers, n))
    for mode in modes:
        for which, package in (("pkgtool's package", pkg), ("bsdtar's package", bsd)):
            outs = fresh(os.path.join(work, f"unpack-{mode}-" + which.split("'")[0]))
            def out(tool, i, outs=outs, mode=mode):
                # delete: one folder per tool, removed just before the tool's next run.
                return os.path.join(outs, tool if mode == "delete" else f"{tool}{i}")
            def mk_pkgtool(i, package=package, out=out):
                shutil.rmtree(out("pkgtool", i), ignore_errors=True)
                return [pkgtool, "unpack", package, "-o", out("pkgtool", i)]
            def mk_bsdtar(i, package=package, out=out):
                d = fresh(out("bsdtar", i))
                return ["bsdtar", "-xf", package, "-C", d]
            def mk_7zip(i, package=package, out=out):
                d = fresh(out("7zip", i))
                return [sevenzip, "x", "-bd", "-y", "-o" + d, package]
            makers = [("pkgtool", mk_pkgtool), ("bsdtar", mk_bsdtar)] + ([("7zip", mk_7zip)] if sevenzip else [])
            results.append(rounds(f"{label}: unpack {which} ({mode} mode)", makers, n))
    return results

def unpack_into_fresh(tool, package, work, pkgtool, sevenzip):
    """make(i) for an unpack by `tool` into one folder of its own, removed just before each run."""
    def make(i):
        d = os.path.join(work, "out-" + tool)
        shutil.rmtree(d, ignore_errors=True)
        if tool == "pkgtool":
            return [pkgtool, "unpack", package, "-o", d]
        os.makedirs(d)
        if tool == "bsdtar":
            return ["bsdtar", "-xf", package, "-C", d]
        return [sevenzip, "x", "-bd", "-y", "-o" + d, package]
    return make

def profile_ci(label, corpus, pkgtool, n, sevenzip):
    """The ci harness: back to back, no sync, each output deleted just before the next run,
    bsdtar's package read."""
    work = fresh(os.path.join(OUT, "work-ci-" + label))
    results = []
    def build_pkgtool(i):
        out = os.path.join(work, "p.pkg")
        if os.path.exists(out):
            os.remove(out)
        return [pkgtool, "build", corpus, "-o", out]
    def build_bsdtar(i):
        out = os.path.join(work, "b.pkg")
        if os.path.exists(out):
            os.remove(out)
        return ["bsdtar", "--format", "xar", "-cf", out, "-C", corpus, "."]
    results.append(rounds(f"ci, {label}: build", [("pkgtool", build_pkgtool), ("bsdtar", build_bsdtar)], n, settled=False))
    bsd = os.path.join(work, "b.pkg")
    makers = [("pkgtool", lambda i: [pkgtool, "validate", bsd]),
              ("bsdtar", lambda i: ["bsdtar", "-cf", "/dev/null", "@" + bsd])]
    if sevenzip:
        makers.append(("7zip", lambda i: [sevenzip, "t", "-bd", bsd]))
    results.append(rounds(f"ci, {label}: validate, bsdtar's package", makers, n, settled=False))
    makers = [(t, unpack_into_fresh(t, bsd, work, pkgtool, sevenzip)) for t in ["pkgtool", "bsdtar"] + (["7zip"] if sevenzip else [])]
    results.append(rounds(f"ci, {label}: unpack, bsdtar's package", makers, n, settled=False))
    shutil.rmtree(work, ignore_errors=True)
    return results

def random_rows(corpus, pkgtool, n, mb):
    """A file of random bytes with an unknown type: build, and the package digest."""
    work = fresh(os.path.join(OUT, "work-random"))
    pkg, bsd, stored = (os.path.join(work, x) for x in ("p.pkg", "b.pkg", "s.pkg"))
    row = rounds(f"{mb} MB random .dat: build", [
        ("pkgtool", lambda i: [pkgtool, "build", corpus, "-o", pkg, "--force"]),
        ("bsdtar", lambda i: ["bsdtar", "--format", "xar", "-cf", bsd, "-C", corpus, "."]),
        ("stored", lambda i: [pkgtool, "build", corpus, "-o", stored, "--force", "--compression", "none"]),
    ], n)
    row["sizes"] = {"pkgtool": os.path.getsize(pkg), "bsdtar": os.path.getsize(bsd),
                    "stored": os.path.getsize(stored),
                    "file": os.path.getsize(os.path.join(corpus, "Contents", "data.dat"))}
    digest = rounds(f"{mb} MB package digest (CPU)", [
        ("pkgtool", lambda i: [pkgtool, "info", "--json", pkg]),
        ("openssl", lambda i: ["openssl", "dgst", "-sha256", pkg]),
    ], n)
    shutil.rmtree(work, ignore_errors=True)
    return [row, digest]

def single_rows(corpus, pkgtool, n, mb):
    """One large compressible file: does its read use every core?"""
    work = fresh(os.path.join(OUT, "work-single"))
    pkg, bsd = os.path.join(work, "p.pkg"), os.path.join(work, "b.pkg")
    results = [rounds(f"{mb} MB single file: build", [
        ("pkgtool", lambda i: [pkgtool, "build", corpus, "-o", pkg, "--force"]),
        ("bsdtar", lambda i: ["bsdtar", "--format", "xar", "-cf", bsd, "-C", corpus, "."]),
    ], n)]
    # bsdtar's package holds the file as one zlib stream; pkgtool's as 1 MiB pieces, inflated on
    # every core.
    for owner, package in (("bsdtar's", bsd), ("pkgtool's", pkg)):
        results.append(rounds(f"{mb} MB single file: validate, {owner} package", [
            ("pkgtool", lambda i, package=package: [pkgtool, "validate", package]),
            ("bsdtar", lambda i, package=package: ["bsdtar", "-cf", "/dev/null", "@" + package]),
        ], n))
        results.append(rounds(f"{mb} MB single file: unpack, {owner} package",
                              [(t, unpack_into_fresh(t, package, work, pkgtool, None)) for t in ("pkgtool", "bsdtar")], n))
    shutil.rmtree(work, ignore_errors=True)
    return results

def corpus_for(kind, size_mb=None, files=None):
    corpus = os.path.join(OUT, f"corpus-{kind}-{size_mb or files}")
    if not os.path.exists(corpus):
        args = ["--size-mb", str(size_mb)] if size_mb else ["--files", str(files)]
        subprocess.run([sys.executable, os.path.join(HERE, "corpus.py"), kind, corpus, *args], check=True)
    return corpus

def print_table(rows):
    """One line per row: pkgtool, then each peer with its time, the ratio and the CPU ratio."""
    print("| measurement | pkgtool s (min–max) | peer | peer s (min–max) | ratio (rounds) | CPU ratio (rounds) | CPU/wall pkgtool / peer | peak MiB pkgtool / peer |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        for k, tool in enumerate(r["tools"][1:]):
            first = f"{r['name']} | {r['pkgtool']:.2f} ({r['pkgtool_min']:.2f}–{r['pkgtool_max']:.2f})" if k == 0 else " | "
            print(f"| {first} | {tool} | {r[tool]:.2f} ({r[tool + '_min']:.2f}–{r[tool + '_max']:.2f}) "
                  f"| **{r['ratio_' + tool]:.2f}** ({r['ratio_' + tool + '_min']:.2f}–{r['ratio_' + tool + '_max']:.2f}) "
                  f"| {r['cpu_ratio_' + tool]:.2f} ({r['cpu_ratio_' + tool + '_min']:.2f}–{r['cpu_ratio_' + tool + '_max']:.2f}) "
                  f"| {r['pkgtool_cpu']:.2f} / {r[tool + '_cpu']:.2f} "
                  f"| {r['pkgtool_rss_mib']:.1f} / {r[tool + '_rss_mib']:.1f} |")

def apple_archive(corpus, pkgtool, n):
    """Writing and reading an asset pack (.aar, LZFSE), pkgtool against the reference code."""
    work = fresh(os.path.join(OUT, "work-aar"))
    oracle = os.path.join(ROOT, "scripts", "aar_oracle.py")
    ours = os.path.join(work, "p.aar")
    raw = os.path.join(work, "raw.aar")
    ref = os.path.join(work, "ref.aar")
    subprocess.run([pkgtool, "export", "background-assets", corpus, "-o", raw, "--aar-compression", "none", "-q"],
                   check=True)
    results = [rounds("Apple Archive: write (LZFSE)", [
        ("pkgtool", lambda i: [pkgtool, "export", "background-assets", corpus, "-o", ours, "--force", "-q"]),
        ("reference", lambda i: [sys.executable, oracle, "frame", raw, "e", str(4 << 20), ref]),
    ], n)]
    results[-1]["sizes"] = {"pkgtool": os.path.getsize(ours), "reference": os.path.getsize(ref)}
    for which, archive in (("pkgtool's archive", ours), ("the reference's archive", ref)):
        results.append(rounds(f"Apple Archive: read {which}", [
            ("pkgtool", lambda i, archive=archive: [pkgtool, "validate", archive]),
            ("reference", lambda i, archive=archive: [sys.executable, oracle, archive]),
        ], n))
    return results

def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--size-mb", type=int, default=512)
    p.add_argument("--small-files", type=int, default=50_000)
    p.add_argument("--random-mb", type=int, default=400)
    p.add_argument("--single-mb", type=int, default=1024)
    p.add_argument("--pairs", type=int, default=4)
    p.add_argument("--only", choices=["mixed", "small", "aar", "random", "single"])
    p.add_argument("--big", action="store_true", help="also measure memory on a ~2 GB package (needs ~7 GB of disk)")
    p.add_argument("--settle", type=int, default=40, help="seconds to wait after removing an earlier run's outputs")
    p.add_argument("--modes", default="keep,delete", help="unpack modes of the settled harness: keep (new folders), delete (each output deleted before the next run)")
    p.add_argument("--harness", default="settled,ci", help="settled (sync and a pause before each run), ci (back to back, outputs deleted)")
    p.add_argument("--pkgtool", help="a pkgtool binary to measure instead of building one")
    a = p.parse_args()
    os.makedirs(OUT, exist_ok=True)
    stale = [d for d in os.listdir(OUT) if d.startswith("work-")]
    if stale:
        for d in stale:
            shutil.rmtree(os.path.join(OUT, d), ignore_errors=True)
        subprocess.run(["sync"])
        print(f"removed the outputs of an earlier run; waiting {a.settle} s (see the note at the top)", file=sys.stderr)
        time.sleep(a.settle)
    if a.pkgtool:
        pkgtool = os.path.abspath(a.pkgtool)
    else:
        # scripts/bootstrap.sh's release_flags (run.sh sourced it; ask it again for the list).
        flags = subprocess.run(["bash", "-c", '. scripts/bootstrap.sh >/dev/null 2>&1; printf "%s\\n" "${release_flags[@]}"'],
                               cwd=ROOT, check=True, capture_output=True, text=True).stdout.split()
        env = dict(os.environ, PKGTOOL_CORE_ONLY="1")
        subprocess.run(["swift", "build", *flags, "--product", "pkgtool"], cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL)
        binpath = subprocess.run(["swift", "build", *flags, "--show-bin-path"], cwd=ROOT, env=env, check=True, capture_output=True, text=True).stdout.strip()
        pkgtool = os.path.join(binpath, "pkgtool")
    modes = [m for m in a.modes.split(",") if m]
    harnesses = [h for h in a.harness.split(",") if h]
    sevenzip = shutil.which("7zz")
    if not sevenzip:
        print("7zz (Debian's 7zip) is missing: 7-Zip is left out", file=sys.stderr)
    results, ci, extra = [], [], []
    if a.only in (None, "mixed"):
        corpus = corpus_for("mixed", size_mb=a.size_mb)
        if "settled" in harnesses:
            results += profile(f"mixed {a.size_mb} MB", corpus, pkgtool, a.pairs, modes, sevenzip)
        if "ci" in harnesses:
            ci += profile_ci(f"mixed {a.size_mb} MB", corpus, pkgtool, a.pairs, sevenzip)
    if a.only in (None, "small"):
        corpus = corpus_for("small", files=a.small_files)
        if "settled" in harnesses:
            results += profile(f"{a.small_files} small files", corpus, pkgtool, a.pairs, modes, sevenzip)
        if "ci" in harnesses:
            ci += profile_ci(f"{a.small_files} small files", corpus, pkgtool, a.pairs, sevenzip)
    if a.only in (None, "random"):
        extra += random_rows(corpus_for("random", size_mb=a.random_mb), pkgtool, a.pairs, a.random_mb)
    if a.only in (None, "single"):
        extra += single_rows(corpus_for("single", size_mb=a.single_mb), pkgtool, a.pairs, a.single_mb)
    aar = []
    if a.only in (None, "aar"):
        aar = apple_archive(corpus_for("mixed", size_mb=a.size_mb), pkgtool, a.pairs)
    big = None
    if a.big:
        corpus = os.path.join(OUT, "corpus-big")
        if not os.path.exists(corpus):
            os.makedirs(os.path.join(corpus, "Contents"))
            with open(os.path.join(corpus, "ContentInfo.plist"), "w") as f:
                f.write('<plist version="1.0"><dict><key>ContentVersion</key><string>1.0</string><key>IAPProductIdentifier</key><string>com.example.big</string></dict></plist>\n')
            for i in range(3):  # 3 x 650 MB of incompressible media
                with open(os.path.join(corpus, "Contents", f"movie{i}.mp4"), "wb") as f:
                    f.write(b"\x00\x00\x00\x18ftypmp42")
                    for _ in range(650):
                        f.write(os.urandom(1_000_000))
        work = fresh(os.path.join(OUT, "work-big"))
        pkg = os.path.join(work, "big.pkg")
        big = {}
        big["build"] = run_timed([pkgtool, "build", corpus, "-o", pkg])
        big["validate"] = run_timed([pkgtool, "validate", pkg])
        big["unpack"] = run_timed([pkgtool, "unpack", pkg, "-o", os.path.join(work, "out")])
        big["size"] = os.path.getsize(pkg)
        shutil.rmtree(work, ignore_errors=True)
    print(f"\nmachine: {platform.node()} {os.cpu_count()} cores, {platform.platform()}; {subprocess.run(['bsdtar', '--version'], capture_output=True, text=True).stdout.strip()}; {time.strftime('%Y-%m-%d')}")
    print(f"median of {a.pairs} interleaved rounds; ratio = pkgtool's median over the peer's, with the lowest and highest ratio of a round; CPU ratio the same for user + system time\n")
    for title, rows in (("settled harness", results), ("ci harness", ci), ("further rows", extra)):
        if rows:
            print(f"\n{title}\n")
            print_table(rows)
    if aar:
        print("\nApple Archive\n")
        print_table(aar)
        s = aar[0]["sizes"]
        print(f"\nApple Archive sizes: pkgtool {s['pkgtool']:,} bytes, reference {s['reference']:,} ({100 * (s['pkgtool'] / s['reference'] - 1):+.2f}%)")
    for r in results + extra:
        if "sizes" in r:
            s = r["sizes"]
            same = f"; --jobs 1 identical: {r['identical_single_thread']}" if "identical_single_thread" in r else ""
            print(f"\n{r['name']}: " + ", ".join(f"{k} {v:,} bytes" for k, v in s.items()) + same)
    if big:
        print(f"\n~2 GB package ({big['size']:,} bytes): build {big['build'][0]:.1f} s / {big['build'][1] / 1024:.1f} MiB, validate {big['validate'][0]:.1f} s / {big['validate'][1] / 1024:.1f} MiB, unpack {big['unpack'][0]:.1f} s / {big['unpack'][1] / 1024:.1f} MiB")
    with open(os.path.join(OUT, "results.json"), "w") as f:
        json.dump({"results": results, "ci": ci, "extra": extra, "aar": aar, "big": big}, f, indent=1)

if __name__ == "__main__":
    main()
