#!/usr/bin/env python3
"""Runs two builds of pkgtool over a corpus of inputs and compares what they give: stdout, stderr
(the binary's path made the same) and the exit code of validate (every reporter), info, cat,
unpack, install and diff, and for unpack and install the trees they write (names, modes, bytes).
For a change that must not change behaviour (a refactoring of the read path).

    scripts/differential.py OLD NEW [--corpus DIR] [--keep WORK]

The corpus is made in a work folder unless --corpus names one already made:
  hostile/, examples/  every hostile package and rule example test support builds
                       (the env-gated CorpusDumpTests, run through `swift test`)
  interop/             ../shared/interop's zip, pkg, xar and aar archives (or $PKGTOOL_INTEROP)
  samples/             the samples' folders, packages OLD builds from them, bsdtar's XARs (stored
                       and compressed), zips and tars of them
  seeds/               what scripts/make-fuzz-seeds.py writes
Prints each difference and the counts; exits 1 when any input differs.
"""
import argparse, concurrent.futures, hashlib, os, re, shutil, stat, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INTEROP = os.environ.get(
    "PKGTOOL_INTEROP", os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "..", "shared", "interop"))
REPORTERS = ["text", "json", "sarif", "junit", "github"]


def make_corpus(corpus, old):
    os.makedirs(corpus, exist_ok=True)
    env = dict(os.environ, PKGTOOL_DUMP_CORPUS=corpus, PKGTOOL_CORE_ONLY="1")
    subprocess.run(["swift", "test", "--filter", "CorpusDumpTests"], cwd=ROOT, env=env, check=True,
                   stdout=subprocess.DEVNULL)
    for kind in ("zip", "pkg", "xar", "aar"):
        source = os.path.join(INTEROP, kind)
        if os.path.isdir(source):
            shutil.copytree(source, os.path.join(corpus, "interop", kind), dirs_exist_ok=True)
    samples = os.path.join(corpus, "samples")
    os.makedirs(samples, exist_ok=True)
    for name in sorted(os.listdir(os.path.join(ROOT, "samples"))):
        folder = os.path.join(samples, name)
        shutil.copytree(os.path.join(ROOT, "samples", name), folder, dirs_exist_ok=True)
        subprocess.run([old, "build", folder, "-o", os.path.join(samples, name + ".pkg")],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for args, suffix in ((["--format", "xar"], ".bsdtar.pkg"),
                             (["--format", "xar", "--options", "xar:compression=none"], ".bsdtar-stored.pkg"),
                             (["--format", "xar", "--options", "xar:compression=bzip2"], ".bsdtar-bzip2.pkg"),
                             (["--format", "zip"], ".bsdtar.zip"), (["--format", "ustar"], ".bsdtar.tar")):
            subprocess.run(["bsdtar"] + args + ["-cf", os.path.join(samples, name + suffix), "-C", folder, "."],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    seeds = os.path.join(corpus, "seeds")
    subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "make-fuzz-seeds.py"), seeds],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def inputs(corpus):
    found = []
    for top in sorted(os.listdir(corpus)):
        for dirpath, dirnames, filenames in os.walk(os.path.join(corpus, top)):
            dirnames.sort()
            # A sample's folder is an input itself, not a tree of inputs.
            if top == "samples" and dirpath != os.path.join(corpus, top):
                dirnames[:] = []
                continue
            if top == "samples":
                found += [os.path.join(dirpath, d) for d in dirnames]
            found += [os.path.join(dirpath, f) for f in sorted(filenames)]
    return found


def tree(path):
    """Every name under `path` with its kind, mode and bytes (a digest); dates in records made equal."""
    if not os.path.lexists(path):
        return None
    seen = {}
    for dirpath, dirnames, filenames in os.walk(path):
        for name in sorted(dirnames + filenames):
            full = os.path.join(dirpath, name)
            info = os.lstat(full)
            rel = os.path.relpath(full, path)
            if stat.S_ISLNK(info.st_mode):
                seen[rel] = ("link", os.readlink(full))
            elif stat.S_ISDIR(info.st_mode):
                seen[rel] = ("dir", oct(info.st_mode & 0o7777))
            else:
                data = open(full, "rb").read()
                data = re.sub(rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", b"DATE", data)
                seen[rel] = ("file", oct(info.st_mode & 0o7777), hashlib.sha256(data).hexdigest())
    return seen


def run(binary, args, work, stdin=None):
    """Runs `binary` in `work` (a fresh folder) and gives what can be compared."""
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(os.path.join(work, "docs"))
    with open(stdin, "rb") if stdin else open(os.devnull, "rb") as given:
        try:
            done = subprocess.run([binary] + args, cwd=work, stdin=given, capture_output=True, timeout=300)
            out, err, code = done.stdout, done.stderr, done.returncode
        except subprocess.TimeoutExpired:
            out, err, code = b"", b"TIMEOUT", -1
    norm = lambda b: b.replace(binary.encode(), b"PKGTOOL").replace(os.path.basename(binary).encode(), b"PKGTOOL")
    return (code, norm(out), norm(err), tree(os.path.join(work, "out")), tree(os.path.join(work, "docs")))


def commands(path, reference):
    for reporter in REPORTERS:
        yield ["validate", path, "--reporter", reporter]
    yield ["validate", path, "--jobs", "1"]
    yield ["validate", path, "--strict", "--json"]
    if os.path.isfile(path):
        yield ["validate", "-", "--json"], path
    yield ["info", path]
    yield ["info", path, "--files", "--json"]
    yield ["info", path, "--toc"]
    yield ["cat", path, "ContentInfo.plist"]
    yield ["unpack", path, "-o", "out", "--json"]
    yield ["unpack", path, "-o", "out", "--keep-going"]
    yield ["unpack", path, "-o", "out", "--jobs", "4", "--keep-going", "--json"]
    yield ["install", path, "--into", "docs", "--json"]
    yield ["install", path, "--into", "docs"]
    yield ["diff", reference, path]
    yield ["diff", path, path, "--json"]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("old")
    parser.add_argument("new")
    parser.add_argument("--corpus", help="a corpus already made (else one is made in the work folder)")
    parser.add_argument("--keep", help="the work folder, kept (else a temporary one)")
    parser.add_argument("--jobs", type=int, default=2, help="inputs compared at once (default 2)")
    options = parser.parse_args()
    old, new = os.path.abspath(options.old), os.path.abspath(options.new)
    work = options.keep or tempfile.mkdtemp(prefix="pkgtool-differential-")
    corpus = options.corpus or os.path.join(work, "corpus")
    if not options.corpus:
        make_corpus(corpus, old)
    corpus = os.path.abspath(corpus)
    all_inputs = inputs(corpus)
    reference = os.path.join(corpus, "samples", "book-chapter1.pkg")
    def compare(numbered):
        number, path = numbered
        scratch = os.path.join(work, f"run{number % options.jobs}")
        found = []
        for command in commands(path, reference):
            args, stdin = (command if isinstance(command, tuple) else (command, None))
            a = run(old, args, scratch, stdin)
            b = run(new, args, scratch, stdin)
            if a != b:
                what = [n for n, x, y in zip(("exit", "stdout", "stderr", "out tree", "docs tree"), a, b) if x != y]
                found.append(f"DIFFERS ({', '.join(what)}): {' '.join(args)}")
        return number, path, len(list(commands(path, reference))), found

    runs, differing, different_inputs = 0, 0, set()
    # One worker per scratch folder: input i runs in run{i % jobs}, and a worker takes inputs in turn.
    with concurrent.futures.ThreadPoolExecutor(max_workers=options.jobs) as pool:
        lanes = [pool.submit(lambda lane: [compare((i, p)) for i, p in enumerate(all_inputs) if i % options.jobs == lane],
                             lane) for lane in range(options.jobs)]
        for lane in lanes:
            for number, path, count, found in lane.result():
                runs += count
                for line in found:
                    print(line, flush=True)
                if found:
                    differing += len(found)
                    different_inputs.add(path)
    print(f"{len(all_inputs)} inputs, {runs} command runs compared, {differing} differ "
          f"({len(different_inputs)} inputs)")
    if not options.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
