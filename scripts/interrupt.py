#!/usr/bin/env python3
"""Kills pkgtool build, unpack, install and bump with SIGKILL at random moments and checks that
the target is either absent or complete, and that what existed before is intact. A later run
must also remove any temporary a killed run left (recognizable by '.pkgtool-' in its name),
whatever the name of its own output. Then interrupts build, unpack, install, bump and publish
with SIGINT (Ctrl-C) and SIGTERM: the command must exit 130 or 143 (or 0 if it had finished)
and leave no temporary at all, by itself.

  scripts/interrupt.py [--trials 20] [--pkgtool PATH]
"""
import argparse, filecmp, hashlib, os, random, shutil, signal, subprocess, sys, tempfile, time

def tree(path):
    """{relative path: (kind, content hash or link target)} of a folder, links not followed."""
    out = {}
    for root, dirs, files in os.walk(path):
        for name in dirs + files:
            full = os.path.join(root, name)
            rel = os.path.relpath(full, path)
            if os.path.islink(full):
                out[rel] = ("link", os.readlink(full))
            elif os.path.isdir(full):
                out[rel] = ("dir", "")
            else:
                out[rel] = ("file", hashlib.sha256(open(full, "rb").read()).hexdigest())
    return out

def leftovers(folder):
    return [n for n in os.listdir(folder) if ".pkgtool-" in n]

def run(cmd):
    return subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

def duration(cmd, setup):
    setup()
    t = time.time()
    r = run(cmd)
    if r.returncode != 0:
        sys.exit(f"reference run failed: {' '.join(cmd)}: {r.stderr.decode()}")
    return time.time() - t

def killed(cmd, seconds, rng):
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(rng.uniform(0, seconds * 1.1))
    p.send_signal(signal.SIGKILL)
    p.wait()

def interrupted(cmd, seconds, rng, sig):
    """Runs cmd, sends sig at a random moment; returns (exit status, stderr)."""
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    time.sleep(rng.uniform(0, seconds * 1.1))
    p.send_signal(sig)
    _, err = p.communicate()
    return p.returncode, err.decode(errors="replace")

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trials", type=int, default=20)
    ap.add_argument("--pkgtool")
    a = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    pkgtool = a.pkgtool or os.path.join(subprocess.run(["swift", "build", "--show-bin-path"], cwd=root, capture_output=True, text=True, check=True).stdout.strip(), "pkgtool")
    rng = random.Random(20261123)
    work = tempfile.mkdtemp(prefix="pkgtool-interrupt-")
    failures = []
    def check(ok, what):
        if not ok:
            failures.append(what)
            print("FAIL:", what, file=sys.stderr)

    # A content project big enough that a kill lands in the middle of the work.
    project = os.path.join(work, "project")
    os.makedirs(os.path.join(project, "Contents"))
    with open(os.path.join(project, "ContentInfo.plist"), "w") as f:
        f.write('<?xml version="1.0"?><plist version="1.0"><dict><key>ContentVersion</key><string>1.0</string>'
                '<key>IAPProductIdentifier</key><string>com.example.interrupt</string></dict></plist>\n')
    data = random.Random(1)
    for i in range(400):
        sub = os.path.join(project, "Contents", f"d{i % 20}")
        os.makedirs(sub, exist_ok=True)
        with open(os.path.join(sub, f"f{i}.txt"), "wb") as f:
            f.write((" ".join(str(data.randint(0, 10**6)) for _ in range(6000))).encode())
    out = os.path.join(work, "out")
    os.makedirs(out)
    reference = os.path.join(work, "reference.pkg")
    run([pkgtool, "build", project, "-o", reference]).check_returncode()
    ref_bytes = open(reference, "rb").read()

    # build: the package is absent or identical to the reference; a neighbour file is intact.
    neighbour = os.path.join(out, "keep.txt")
    open(neighbour, "w").write("keep me")
    target = os.path.join(out, "x.pkg")
    t = duration([pkgtool, "build", project, "-o", target], lambda: os.path.exists(target) and os.remove(target))
    for trial in range(a.trials):
        if os.path.exists(target): os.remove(target)
        killed([pkgtool, "build", project, "-o", target], t, rng)
        check(not os.path.exists(target) or open(target, "rb").read() == ref_bytes, f"build trial {trial}: partial package")
        check(open(neighbour).read() == "keep me", f"build trial {trial}: neighbour damaged")
    # A later run removes what a killed run left, whatever its own output is called.
    for trial in range(3):
        killed([pkgtool, "build", project, "-o", target], t, rng)
    run([pkgtool, "build", project, "-o", os.path.join(out, "another-name.pkg")]).check_returncode()
    check(leftovers(out) == [], f"build: a later run under another name left temporaries {leftovers(out)}")
    os.remove(os.path.join(out, "another-name.pkg"))
    run([pkgtool, "build", project, "-o", target, "--force"]).check_returncode()
    check(leftovers(out) == [], f"build: a later run left temporaries {leftovers(out)}")

    # build --force over an existing package: the old one or the new one, whole.
    old = os.path.join(work, "old.pkg")
    run([pkgtool, "build", os.path.join(root, "samples", "book-chapter1"), "-o", old]).check_returncode()
    old_bytes = open(old, "rb").read()
    for trial in range(a.trials):
        shutil.copy(old, target)
        killed([pkgtool, "build", project, "-o", target, "--force"], t, rng)
        now = open(target, "rb").read()
        check(now in (old_bytes, ref_bytes), f"build --force trial {trial}: damaged the existing package")
    run([pkgtool, "build", project, "-o", target, "--force"]).check_returncode()
    check(leftovers(out) == [], f"build --force: a later run left temporaries {leftovers(out)}")

    # unpack: DIR absent or complete; with --force, the old DIR or the new one.
    expected = os.path.join(work, "expected")
    run([pkgtool, "unpack", reference, "-o", expected]).check_returncode()
    expected_tree = tree(expected)
    dest = os.path.join(out, "unpacked")
    t = duration([pkgtool, "unpack", reference, "-o", dest], lambda: shutil.rmtree(dest, ignore_errors=True))
    for trial in range(a.trials):
        shutil.rmtree(dest, ignore_errors=True)
        killed([pkgtool, "unpack", reference, "-o", dest], t, rng)
        check(not os.path.exists(dest) or tree(dest) == expected_tree, f"unpack trial {trial}: partial folder")
    shutil.rmtree(dest, ignore_errors=True)
    run([pkgtool, "unpack", reference, "-o", dest]).check_returncode()
    check(leftovers(out) == [], f"unpack: a later run left temporaries {leftovers(out)}")
    old_tree = {"old.txt": ("file", hashlib.sha256(b"old").hexdigest())}
    for trial in range(a.trials):
        shutil.rmtree(dest, ignore_errors=True)
        os.makedirs(dest)
        open(os.path.join(dest, "old.txt"), "wb").write(b"old")
        killed([pkgtool, "unpack", reference, "-o", dest, "--force"], t, rng)
        check(tree(dest) in (old_tree, expected_tree), f"unpack --force trial {trial}: damaged the existing folder")

    # install: `current` always names a complete version.
    docs = os.path.join(work, "Documents")
    os.makedirs(docs)
    run([pkgtool, "install", reference, "--into", docs]).check_returncode()
    versions = {"1.0": tree(os.path.join(expected, "Contents"))}
    shutil.copytree(project, os.path.join(work, "project2"))
    for trial in range(a.trials):
        version = f"1.{trial + 1}"
        run([pkgtool, "bump", os.path.join(work, "project2"), "--set", version]).check_returncode()
        pkg = os.path.join(work, f"v{version}.pkg")
        run([pkgtool, "build", os.path.join(work, "project2"), "-o", pkg]).check_returncode()
        versions[version] = versions["1.0"]
        t = 0.3
        killed([pkgtool, "install", pkg, "--into", docs], t, rng)
        current = os.path.join(docs, "com.example.interrupt", "current")
        target_version = os.readlink(current)
        check(target_version in versions and tree(current + "/") == versions[target_version], f"install trial {trial}: current -> {target_version} is not complete")

    # bump: the plist is the old version or the new one, never a partial file.
    plist = os.path.join(work, "project2", "ContentInfo.plist")
    for trial in range(a.trials):
        before = open(plist, "rb").read()
        killed([pkgtool, "bump", os.path.join(work, "project2")], 0.05, rng)
        after = open(plist, "rb").read()
        check(after == before or (b"<key>ContentVersion</key>" in after and after.endswith(b"</plist>\n")), f"bump trial {trial}: partial plist")
    run([pkgtool, "bump", os.path.join(work, "project2")]).check_returncode()
    check(leftovers(os.path.join(work, "project2")) == [], "bump: a later run left temporaries")

    # Ctrl-C and SIGTERM: every temporary is removed by the interrupted command itself.
    product = os.path.join(docs, "com.example.interrupt")
    signals = [signal.SIGINT, signal.SIGTERM]
    codes = {signal.SIGINT: 130, signal.SIGTERM: 143}
    sig_trials = 0
    def after_signal(what, trial, sig, status, err, folders, before):
        # -sig: the signal came before pkgtool had started (its handler not yet set up, nothing made).
        check(status in (0, codes[sig], -sig), f"{what} {sig.name} trial {trial}: exit {status}: {err.strip()}")
        if status == codes[sig]:
            check(err.count("\n") == 1 and "interrupted" in err, f"{what} {sig.name} trial {trial}: said {err!r}")
        for folder in folders:
            new = [n for n in leftovers(folder) if n not in before.get(folder, [])]
            check(new == [], f"{what} {sig.name} trial {trial}: left {new}")
        return status == codes[sig]
    stopped = {}
    t = duration([pkgtool, "build", project, "-o", target, "--force"], lambda: None)
    for trial in range(a.trials):
        sig = signals[trial % 2]
        shutil.copy(old, target)
        before = {f: leftovers(f) for f in (out, docs, product, os.path.join(work, 'project2')) if os.path.isdir(f)}
        status, err = interrupted([pkgtool, "build", project, "-o", target, "--force"], t, rng, sig)
        stopped["build"] = stopped.get("build", 0) + after_signal("build", trial, sig, status, err, [out], before)
        check(open(target, "rb").read() in (old_bytes, ref_bytes), f"build {sig.name} trial {trial}: damaged the package")
    t = duration([pkgtool, "unpack", reference, "-o", dest], lambda: shutil.rmtree(dest, ignore_errors=True))
    for trial in range(a.trials):
        sig = signals[trial % 2]
        shutil.rmtree(dest, ignore_errors=True)
        before = {f: leftovers(f) for f in (out, docs, product, os.path.join(work, 'project2')) if os.path.isdir(f)}
        status, err = interrupted([pkgtool, "unpack", reference, "-o", dest], t, rng, sig)
        stopped["unpack"] = stopped.get("unpack", 0) + after_signal("unpack", trial, sig, status, err, [out], before)
        check(not os.path.exists(dest) or tree(dest) == expected_tree, f"unpack {sig.name} trial {trial}: partial folder")
    # unpack --force over an existing folder: the old folder or the new one, whole, never both lost.
    for trial in range(a.trials):
        sig = signals[trial % 2]
        shutil.rmtree(dest, ignore_errors=True)
        os.makedirs(dest)
        open(os.path.join(dest, "old.txt"), "wb").write(b"old")
        before = {f: leftovers(f) for f in (out,)}
        status, err = interrupted([pkgtool, "unpack", reference, "-o", dest, "--force"], t, rng, sig)
        stopped["unpack --force"] = stopped.get("unpack --force", 0) + after_signal("unpack --force", trial, sig, status, err, [out], before)
        check(tree(dest) in (old_tree, expected_tree), f"unpack --force {sig.name} trial {trial}: the folder is neither the old nor the new one")
    # unpack of a package of 12,000 folders: the unpacking thread is still making folders when
    # the interruption removes its staging folder (a removal that once gave up, said "nothing
    # was left behind" and left it).
    wide = os.path.join(work, "wide")
    os.makedirs(os.path.join(wide, "Contents"))
    shutil.copy(os.path.join(project, "ContentInfo.plist"), wide)
    for i in range(12000):
        sub = os.path.join(wide, "Contents", f"g{i // 100}", f"d{i}")
        os.makedirs(sub)
        open(os.path.join(sub, "f.txt"), "w").write(str(i))
    wide_pkg = os.path.join(work, "wide.pkg")
    run([pkgtool, "build", wide, "-o", wide_pkg]).check_returncode()
    shutil.rmtree(wide)
    t = duration([pkgtool, "unpack", wide_pkg, "-o", dest], lambda: shutil.rmtree(dest, ignore_errors=True))
    wide_trials = max(2, a.trials // 2)
    for trial in range(wide_trials):
        sig = signals[trial % 2]
        shutil.rmtree(dest, ignore_errors=True)
        before = {f: leftovers(f) for f in (out,)}
        status, err = interrupted([pkgtool, "unpack", wide_pkg, "-o", dest], t, rng, sig)
        stopped["unpack (12,000 folders)"] = stopped.get("unpack (12,000 folders)", 0) + after_signal("unpack (12,000 folders)", trial, sig, status, err, [out], before)
        check(not os.path.exists(dest) or len(os.listdir(os.path.join(dest, "Contents"))) == 120, f"unpack (12,000 folders) {sig.name} trial {trial}: partial folder")
    for trial in range(a.trials):
        sig = signals[trial % 2]
        version = f"2.{trial}"
        run([pkgtool, "bump", os.path.join(work, "project2"), "--set", version]).check_returncode()
        pkg = os.path.join(work, f"v{version}.pkg")
        run([pkgtool, "build", os.path.join(work, "project2"), "-o", pkg]).check_returncode()
        versions[version] = versions["1.0"]
        before = {f: leftovers(f) for f in (out, docs, product, os.path.join(work, 'project2')) if os.path.isdir(f)}
        status, err = interrupted([pkgtool, "install", pkg, "--into", docs], 0.3, rng, sig)
        stopped["install"] = stopped.get("install", 0) + after_signal("install", trial, sig, status, err, [docs, product], before)
        current = os.path.join(product, "current")
        check(tree(current + "/") == versions[os.readlink(current)], f"install {sig.name} trial {trial}: current incomplete")
    for trial in range(a.trials):
        sig = signals[trial % 2]
        before = {f: leftovers(f) for f in (out, docs, product, os.path.join(work, 'project2')) if os.path.isdir(f)}
        status, err = interrupted([pkgtool, "bump", os.path.join(work, "project2")], 0.05, rng, sig)
        stopped["bump"] = stopped.get("bump", 0) + after_signal("bump", trial, sig, status, err, [os.path.join(work, "project2")], before)
    # A burst of SIGTERMs timed around bump's write (it takes ~15 ms, so a signal in a 50 ms window
    # mostly comes after the end). Making a temporary and removing temporaries on a signal must
    # exclude each other: before they did, about 1 run in 190 left '.ContentInfo.plist.pkgtool-tmp-*'.
    project2 = os.path.join(work, "project2")
    t = duration([pkgtool, "bump", project2], lambda: None)
    burst, burst_stopped, burst_left = a.trials * 25, 0, []
    for trial in range(burst):
        p = subprocess.Popen([pkgtool, "bump", project2], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.5 * t, 1.1 * t))
        p.send_signal(signal.SIGTERM)
        burst_stopped += p.wait() == 143
        left = leftovers(project2)
        if left:
            burst_left.append(left)
            for name in left:
                os.unlink(os.path.join(project2, name))
    check(burst_left == [], f"bump burst: {len(burst_left)} of {burst} SIGTERM runs left temporaries: {burst_left[:3]}")
    print(f"interrupt: bump burst: {burst_stopped}/{burst} stopped by SIGTERM, {len(burst_left)} left temporaries", file=sys.stderr)
    key = os.path.join(work, "signing.key")
    run([pkgtool, "keygen", "-o", key]).check_returncode()
    catalog = os.path.join(out, "catalog.json")
    for trial in range(a.trials):
        sig = signals[trial % 2]
        before = {f: leftovers(f) for f in (out, docs, product, os.path.join(work, 'project2')) if os.path.isdir(f)}
        status, err = interrupted([pkgtool, "publish", reference, "--key", key, "--base-url", "https://cdn.example.com/c", "-o", catalog], 0.2, rng, sig)
        stopped["publish"] = stopped.get("publish", 0) + after_signal("publish", trial, sig, status, err, [out], before)
    # The long commands must really have been interrupted at least once (else this proves nothing).
    for what in ("build", "unpack"):
        check(stopped.get(what, 0) > 0, f"{what}: no trial was interrupted before it finished")
    print(f"interrupt: signals stopped " + ", ".join(f"{k} {v}" for k, v in stopped.items()), file=sys.stderr)

    shutil.rmtree(work, ignore_errors=True)
    total = a.trials * 13 + 3 + wide_trials
    print(f"interrupt: {total - len(failures)} passed, {len(failures)} failed")
    sys.exit(1 if failures else 0)

if __name__ == "__main__":
    main()
