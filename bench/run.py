#!/usr/bin/env python3
"""pkgtool against bsdtar (libarchive) on the same trees: build, full validate, unpack.

Interleaved A/B pairs (the order alternates), each run after `sync` and a pause; the median of
each side, the spread (the lowest and highest pkgtool/bsdtar ratio of a pair, and each side's
fastest and slowest run), user and system time, peak RSS from GNU time, output sizes.

Nothing is deleted until the whole benchmark ends: ext4 skips inodes freed in the last 30 s
(5.5 minutes while their inode table is still dirty) when it allocates new ones, scanning past
each, so a run that creates files just after a large deletion in the same block groups can
spend seconds of system time there (seen: 11.5 s instead of 0.8 s for 50,000 files). Every
output goes to a new folder, and the work folder is removed only at the end (or at the start
of the next benchmark, which then waits --settle seconds).

  bench/run.py [--size-mb 512] [--small-files 50000] [--pairs 5] [--big] [--only mixed|small]
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

def pairs(name, make_a, make_b, n):
    """make_a(i) / make_b(i) return a command (list); medians, spread and peak RSS."""
    runs = {"a": [], "b": []}
    for i in range(n):
        order = [("a", make_a), ("b", make_b)] if i % 2 == 0 else [("b", make_b), ("a", make_a)]
        for which, make in order:
            settle()
            runs[which].append(run_timed(make(i)))
    a = [r[0] for r in runs["a"]]
    b = [r[0] for r in runs["b"]]
    ratios = [x / max(y, 0.005) for x, y in zip(a, b)]  # GNU time has 10 ms resolution
    med = statistics.median
    return {"name": name, "pkgtool": med(a), "bsdtar": med(b), "ratio": med(a) / max(med(b), 0.005),
            "ratio_min": min(ratios), "ratio_max": max(ratios),
            "pkgtool_min": min(a), "pkgtool_max": max(a), "bsdtar_min": min(b), "bsdtar_max": max(b),
            "pkgtool_user": med([r[2] for r in runs["a"]]), "pkgtool_sys": med([r[3] for r in runs["a"]]),
            "bsdtar_user": med([r[2] for r in runs["b"]]), "bsdtar_sys": med([r[3] for r in runs["b"]]),
            "pkgtool_rss_mib": max(r[1] for r in runs["a"]) / 1024,
            "bsdtar_rss_mib": max(r[1] for r in runs["b"]) / 1024, "runs": n}

def fresh(path):
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path

def profile(label, corpus, pkgtool, n):
    work = fresh(os.path.join(OUT, "work-" + label))
    results = []
    pkg = os.path.join(work, "p.pkg")
    bsd = os.path.join(work, "b.pkg")
    results.append(pairs(f"{label}: build", 
        lambda i: [pkgtool, "build", corpus, "-o", pkg, "--force"],
        lambda i: ["bsdtar", "--format", "xar", "-cf", bsd, "-C", corpus, "ContentInfo.plist", "Contents"],
        n))
    sizes = {"pkgtool": os.path.getsize(pkg), "bsdtar": os.path.getsize(bsd)}
    results[-1]["sizes"] = sizes
    # Jobs=1 must give the same bytes.
    single = os.path.join(work, "single.pkg")
    subprocess.run([pkgtool, "build", corpus, "-o", single, "--jobs", "1"], check=True, stdout=subprocess.DEVNULL)
    results[-1]["identical_single_thread"] = open(single, "rb").read() == open(pkg, "rb").read()
    os.remove(single)
    results.append(pairs(f"{label}: full validate", 
        lambda i: [pkgtool, "validate", pkg],
        lambda i: ["bsdtar", "-cf", "/dev/null", "@" + pkg],
        n))
    for which, package in (("pkgtool's package", pkg), ("bsdtar's package", bsd)):
        outs = fresh(os.path.join(work, "unpack-" + which.split("'")[0]))
        def mk_a(i, package=package, outs=outs):
            return [pkgtool, "unpack", package, "-o", os.path.join(outs, f"p{i}")]
        def mk_b(i, package=package, outs=outs):
            d = fresh(os.path.join(outs, f"b{i}"))
            return ["bsdtar", "-xf", package, "-C", d]
        results.append(pairs(f"{label}: unpack {which}", mk_a, mk_b, n))
    return results

def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--size-mb", type=int, default=512)
    p.add_argument("--small-files", type=int, default=50_000)
    p.add_argument("--pairs", type=int, default=5)
    p.add_argument("--only", choices=["mixed", "small"])
    p.add_argument("--big", action="store_true", help="also measure memory on a ~2 GB package (needs ~7 GB of disk)")
    p.add_argument("--settle", type=int, default=40, help="seconds to wait after removing an earlier run's outputs")
    a = p.parse_args()
    os.makedirs(OUT, exist_ok=True)
    stale = [d for d in os.listdir(OUT) if d.startswith("work-")]
    if stale:
        for d in stale:
            shutil.rmtree(os.path.join(OUT, d), ignore_errors=True)
        subprocess.run(["sync"])
        print(f"removed the outputs of an earlier run; waiting {a.settle} s (see the note at the top)", file=sys.stderr)
        time.sleep(a.settle)
    # scripts/bootstrap.sh's release_flags (run.sh sourced it; ask it again for the list).
    flags = subprocess.run(["bash", "-c", '. scripts/bootstrap.sh >/dev/null 2>&1; printf "%s\\n" "${release_flags[@]}"'],
                           cwd=ROOT, check=True, capture_output=True, text=True).stdout.split()
    subprocess.run(["swift", "build", *flags, "--product", "pkgtool"], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    binpath = subprocess.run(["swift", "build", *flags, "--show-bin-path"], cwd=ROOT, check=True, capture_output=True, text=True).stdout.strip()
    pkgtool = os.path.join(binpath, "pkgtool")
    results = []
    if a.only in (None, "mixed"):
        corpus = os.path.join(OUT, f"corpus-mixed-{a.size_mb}")
        if not os.path.exists(corpus):
            subprocess.run([sys.executable, os.path.join(HERE, "corpus.py"), "mixed", corpus, "--size-mb", str(a.size_mb)], check=True)
        results += profile(f"mixed {a.size_mb} MB", corpus, pkgtool, a.pairs)
    if a.only in (None, "small"):
        corpus = os.path.join(OUT, f"corpus-small-{a.small_files}")
        if not os.path.exists(corpus):
            subprocess.run([sys.executable, os.path.join(HERE, "corpus.py"), "small", corpus, "--files", str(a.small_files)], check=True)
        results += profile(f"{a.small_files} small files", corpus, pkgtool, a.pairs)
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
    print(f"median of {a.pairs} interleaved pairs\n")
    print("| measurement | pkgtool s (min–max) | bsdtar s (min–max) | ratio (pairs) | user+sys pkgtool / bsdtar | peak MiB pkgtool / bsdtar |")
    print("|---|---|---|---|---|---|")
    for r in results:
        print(f"| {r['name']} | {r['pkgtool']:.2f} ({r['pkgtool_min']:.2f}–{r['pkgtool_max']:.2f}) "
              f"| {r['bsdtar']:.2f} ({r['bsdtar_min']:.2f}–{r['bsdtar_max']:.2f}) "
              f"| **{r['ratio']:.2f}** ({r['ratio_min']:.2f}–{r['ratio_max']:.2f}) "
              f"| {r['pkgtool_user']:.2f}+{r['pkgtool_sys']:.2f} / {r['bsdtar_user']:.2f}+{r['bsdtar_sys']:.2f} "
              f"| {r['pkgtool_rss_mib']:.1f} / {r['bsdtar_rss_mib']:.1f} |")
    for r in results:
        if "sizes" in r:
            s = r["sizes"]
            print(f"\n{r['name']}: package {s['pkgtool']:,} bytes vs bsdtar {s['bsdtar']:,} ({100 * (s['pkgtool'] / s['bsdtar'] - 1):+.2f}%); --jobs 1 identical: {r['identical_single_thread']}")
    if big:
        print(f"\n~2 GB package ({big['size']:,} bytes): build {big['build'][0]:.1f} s / {big['build'][1] / 1024:.1f} MiB, validate {big['validate'][0]:.1f} s / {big['validate'][1] / 1024:.1f} MiB, unpack {big['unpack'][0]:.1f} s / {big['unpack'][1] / 1024:.1f} MiB")
    with open(os.path.join(OUT, "results.json"), "w") as f:
        json.dump({"results": results, "big": big}, f, indent=1)

if __name__ == "__main__":
    main()
