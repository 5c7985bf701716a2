#!/usr/bin/env bash
# Benchmark (not a test): `pkgtool serve` against Debian's nginx serving the same package file on
# the same machine, over loopback, to 1, 8 and 64 concurrent curl clients.
#
#   bench/serve.sh [--size-mb 512] [--rounds 3] [--clients "1 8 64"] [--debug] [--scratch-path DIR]
#
# Each server is started fresh for each client count; a round starts that many curl processes
# at once, each downloading the whole package to /dev/null through a signed URL (nginx: the same
# path, no query). Throughput = bytes received by all clients / wall time of the round. Peak
# memory = VmHWM of the server's processes (nginx: master + workers, summed) when the level ends.
# Prints a table (median [min–max] of the rounds) and writes bench/out/serve.json.
# Installs nginx (apt-get) and builds pkgtool in release mode (scripts/bootstrap.sh's flags) if
# needed; --debug uses the debug build instead (figures then say nothing about a release).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bootstrap.sh >/dev/null

size_mb=512
rounds=3
clients="1 8 64"
debug=0
scratch=.build
while [ $# -gt 0 ]; do
  case "$1" in
    --size-mb) size_mb=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --clients) clients=$2; shift 2 ;;
    --debug) debug=1; shift ;;
    --scratch-path) scratch=$2; shift 2 ;;
    *) echo "bench/serve.sh: unknown option $1" >&2; exit 2 ;;
  esac
done

command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || apt-get install -y nginx >/dev/null
nginx_bin=$(command -v nginx || echo /usr/sbin/nginx)
if [ "$debug" = 1 ]; then
  swift build --scratch-path "$scratch" --product pkgtool >/dev/null
  swift build --scratch-path "$scratch" --product pkgtool-serve >/dev/null
  pkgtool=$(swift build --scratch-path "$scratch" --show-bin-path)/pkgtool
else
  swift build "${release_flags[@]}" --scratch-path "$scratch" --product pkgtool >/dev/null
  swift build "${release_flags[@]}" --scratch-path "$scratch" --product pkgtool-serve >/dev/null
  pkgtool=$(swift build "${release_flags[@]}" --scratch-path "$scratch" --show-bin-path)/pkgtool
fi

work=$(mktemp -d /tmp/pkgtool-serve-bench.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
python3 bench/corpus.py mixed "$work/tree" --size-mb "$size_mb" >/dev/null
mkdir -p "$work/dist"
"$pkgtool" build "$work/tree" -o "$work/dist/com.example.bench.mixed-1.0.pkg" -q
"$pkgtool" keygen -o "$work/signing" -q
"$pkgtool" publish "$work/dist/com.example.bench.mixed-1.0.pkg" --key "$work/signing" \
  --base-url http://127.0.0.1/packages -o "$work/catalog.json" -q
head -c 32 /dev/urandom >"$work/url.key"
# Any certificate will do as the root: no transaction is checked here, only downloads.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$work/root.key" \
  -out "$work/root.pem" -days 2 -subj "/CN=bench root" >/dev/null 2>&1
# nginx's workers run as another user: let it read the folder.
chmod -R a+rX "$work"
mkdir -p "$work/nginx/packages"
ln "$work/dist/com.example.bench.mixed-1.0.pkg" "$work/nginx/packages/"

WORK="$work" PKGTOOL="$pkgtool" NGINX="$nginx_bin" ROUNDS="$rounds" CLIENTS="$clients" python3 - <<'PY'
import hashlib, hmac, json, os, re, signal, socket, statistics, subprocess, time

work, pkgtool, nginx = os.environ["WORK"], os.environ["PKGTOOL"], os.environ["NGINX"]
rounds = int(os.environ["ROUNDS"])
levels = [int(c) for c in os.environ["CLIENTS"].split()]
name = "com.example.bench.mixed-1.0.pkg"
size = os.path.getsize(f"{work}/dist/{name}")
key = open(f"{work}/url.key", "rb").read()

def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p

def wait_port(port):
    for _ in range(600):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close(); return
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"nothing listens on {port}")

def hwm_kib(pids):
    total = 0
    for pid in pids:
        try:
            for line in open(f"/proc/{pid}/status"):
                if line.startswith("VmHWM:"): total += int(line.split()[1])
        except FileNotFoundError:
            pass
    return total

def start_pkgtool():
    port = free_port()
    p = subprocess.Popen([pkgtool, "serve", "--catalog", f"{work}/catalog.json", "--packages", f"{work}/dist",
                          "--listen", f"127.0.0.1:{port}", "--bundle-id", "com.example.bench",
                          "--root-certificate", f"{work}/root.pem", "--url-key", f"{work}/url.key",
                          "--url-lifetime", "1h"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_port(port)
    path = f"/packages/{name}"
    expires = int(time.time()) + 3600
    sig = hmac.new(key, f"{path}\n{expires}".encode(), hashlib.sha256).hexdigest()
    return p, lambda: [p.pid], f"http://127.0.0.1:{port}{path}?expires={expires}&signature={sig}"

def start_nginx():
    port = free_port()
    conf = f"{work}/nginx.conf"
    with open(conf, "w") as f:
        f.write(f"""worker_processes auto;
pid {work}/nginx.pid;
error_log {work}/nginx-error.log;
daemon off;
events {{ worker_connections 1024; }}
http {{
  access_log off;
  sendfile on;
  tcp_nopush on;
  server {{ listen 127.0.0.1:{port}; root {work}/nginx; }}
}}
""")
    p = subprocess.Popen([nginx, "-c", conf, "-p", work], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_port(port)
    def pids():
        out = subprocess.run(["pgrep", "-P", str(p.pid)], capture_output=True, text=True).stdout.split()
        return [p.pid] + [int(x) for x in out]
    return p, pids, f"http://127.0.0.1:{port}/packages/{name}"

def round_(url, n):
    start = time.monotonic()
    procs = [subprocess.Popen(["curl", "-s", "-o", "/dev/null", "-w", "%{size_download}", url],
                              stdout=subprocess.PIPE, text=True) for _ in range(n)]
    got = [int(p.communicate()[0] or 0) for p in procs]
    wall = time.monotonic() - start
    if any(g != size for g in got): raise SystemExit(f"a client got {got} of {size} bytes from {url}")
    return n * size / wall / 1e6

results = {}
for server, start in [("pkgtool serve", start_pkgtool), ("nginx", start_nginx)]:
    for n in levels:
        p, pids, url = start()
        try:
            speeds = [round_(url, n) for _ in range(rounds)]
            peak = hwm_kib(pids())
        finally:
            p.send_signal(signal.SIGTERM); p.wait(timeout=30)
        results[f"{server}/{n}"] = {"MBps": speeds, "peakRSSKiB": peak}
        print(f"{server:14} {n:3} clients: {statistics.median(speeds):8.0f} MB/s "
              f"[{min(speeds):.0f}–{max(speeds):.0f}]  peak RSS {peak / 1024:6.1f} MiB", flush=True)

print()
for n in levels:
    a, b = results[f"pkgtool serve/{n}"], results[f"nginx/{n}"]
    print(f"{n:3} clients: pkgtool/nginx throughput {statistics.median(a['MBps']) / statistics.median(b['MBps']):.2f}, "
          f"peak RSS {a['peakRSSKiB'] / max(b['peakRSSKiB'], 1):.2f}")
os.makedirs("bench/out", exist_ok=True)
json.dump({"sizeBytes": size, "rounds": rounds, "results": results}, open("bench/out/serve.json", "w"), indent=2)
PY
