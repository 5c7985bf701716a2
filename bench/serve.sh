#!/usr/bin/env bash
# Benchmark (not a test) of `pkgtool serve`, in two parts; both by default, one after the other.
#
#   bench/serve.sh [--state-only | --no-state] [--debug] [--scratch-path DIR]
#                  [--size-mb 512] [--rounds 3] [--clients "1 8 64"]                   (part 1)
#                  [--stores "sqlite postgres"] [--notifications 3000] [--state-clients "1 8"]
#                  [--downloads 3000] [--lookups 5000] [--preload 20000]               (part 2)
#
# Part 1, downloads (--no-state runs only this): `pkgtool serve` against Debian's nginx serving
# the same package file on the same machine, over loopback, to 1, 8 and 64 concurrent curl
# clients. Each server is started fresh for each client count; a round starts that many curl
# processes at once, each downloading the whole package to /dev/null through a signed URL (nginx:
# the same path, no query). Throughput = bytes received by all clients / wall time of the round.
# Peak memory = VmHWM of the server's processes (nginx: master + workers, summed) when the level
# ends. Prints a table (median [min–max] of the rounds) and writes bench/out/serve.json.
#
# Part 2, the state store (--state-only runs only this; issue 43: ≥ 500 notifications/s, and a
# store lookup adds ≤ 1 ms to /v1/downloads at p50), once on SQLite (a temporary file) and once
# on PostgreSQL (Debian's, initdb'd in a temporary folder, run as `postgres` when root, on a free
# loopback port, with its defaults: fsync and synchronous_commit on; removed at the end).
# bench/serve_state.py does the work:
# - Signed data: a test chain with Apple's shape and marker extensions (root -> intermediate,
#   1.2.840.113635.100.6.2.1 -> leaf, 1.2.840.113635.100.6.11.1; P-256), made with Python's
#   `cryptography`, which also signs the ES256 JWS (DER signatures turned into raw r||s): a
#   second implementation of the signing, beside the Swift tests' TestChain. The release
#   `pkgtool serve` trusts that root (--root-certificate, --bundle-id, --app-apple-id,
#   --environment Production, --state).
# - Notifications per second, over HTTP: each round POSTs --notifications distinct notifications
#   (REFUND and DID_RENEW alternately, every UUID and transaction ID new), all signed before the
#   clock starts, from C keep-alive clients at once (--state-clients), each taking the next;
#   rate = count / wall time; every answer must be 200 {"status":"stored"}. Quoted as median
#   [min–max] of --rounds rounds, with the server's CPU time per notification (/proc). The
#   client's own ceiling is measured the same way against GET /healthz: if it is far above the
#   notification rate, the client is not what limits it.
# - The time a lookup adds to /v1/downloads. The gate has no mode without a store, so the added
#   time cannot be taken as a difference of two HTTP runs; and an HTTP latency of ~1-2 ms is
#   mostly the verification of the transaction's JWS and X.509 chain, whose run-to-run noise on
#   this VM is larger than the lookup. The lookup is one call that /v1/downloads awaits, serially,
#   between the verification and the decision (DownloadGate.decide), so its own latency *is* the
#   time it adds. pkgtool-state-bench (bench/StateStoreBench) opens a fresh store of each kind
#   through the gate's own code (EntitlementStores.open), preloads --preload records (13 KB
#   signed payload each, the size of an App Store notification), and times --lookups calls of
#   records(transactionID:originalTransactionID:types:) one at a time, as the gate makes them:
#   half for a purchase with 3 records, half for one with none. It also times record() in process
#   (no HTTP, no verification). For context, POST /v1/downloads is timed end to end over HTTP
#   (one keep-alive client, sequential, --downloads requests after a warm-up, against the store
#   the notification rounds filled), beside GET /healthz on the same connection.
# Prints a table and writes bench/out/serve-state.json. Installs `cryptography` (pip, else
# Debian's python3-cryptography) and Debian's postgresql if missing.
#
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
part1=1
part2=1
stores="sqlite postgres"
notifications=3000
state_clients="1 8"
downloads=3000
lookups=5000
preload=20000
while [ $# -gt 0 ]; do
  case "$1" in
    --state-only) part1=0; shift ;;
    --no-state) part2=0; shift ;;
    --stores) stores=$2; shift 2 ;;
    --notifications) notifications=$2; shift 2 ;;
    --state-clients) state_clients=$2; shift 2 ;;
    --downloads) downloads=$2; shift 2 ;;
    --lookups) lookups=$2; shift 2 ;;
    --preload) preload=$2; shift 2 ;;
    --size-mb) size_mb=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --clients) clients=$2; shift 2 ;;
    --debug) debug=1; shift ;;
    --scratch-path) scratch=$2; shift 2 ;;
    *) echo "bench/serve.sh: unknown option $1" >&2; exit 2 ;;
  esac
done

if [ "$part1" = 1 ]; then
  command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || apt-get install -y nginx >/dev/null
  nginx_bin=$(command -v nginx || echo /usr/sbin/nginx)
fi
if [ "$part2" = 1 ]; then
  python3 -c 'import cryptography' 2>/dev/null || python3 -m pip install -q cryptography >&2 \
    || apt-get install -y -qq python3-cryptography >&2
  case " $stores " in *" postgres "*) install_postgres_server ;; esac
fi
flags=(--scratch-path "$scratch")
[ "$debug" = 1 ] || flags=("${release_flags[@]}" "${flags[@]}")
products=(pkgtool pkgtool-serve)
[ "$part2" = 0 ] || products+=(pkgtool-state-bench)
for product in "${products[@]}"; do swift build "${flags[@]}" --product "$product" >/dev/null; done
bin=$(swift build "${flags[@]}" --show-bin-path)
pkgtool=$bin/pkgtool

work=$(mktemp -d /tmp/pkgtool-serve-bench.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

if [ "$part1" = 1 ]; then
  python3 bench/corpus.py mixed "$work/tree" --size-mb "$size_mb" >/dev/null
  mkdir -p "$work/dist"
  "$pkgtool" build "$work/tree" -o "$work/dist/com.example.bench.mixed-1.0.pkg" -q
  "$pkgtool" keygen -o "$work/signing" -q
  "$pkgtool" publish "$work/dist/com.example.bench.mixed-1.0.pkg" --key "$work/signing" \
    --base-url http://127.0.0.1/packages -o "$work/catalog.json" -q
  (umask 077; head -c 32 /dev/urandom >"$work/url.key")
  # Any certificate will do as the root: no transaction is checked here, only downloads.
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$work/root.key" \
    -out "$work/root.pem" -days 2 -subj "/CN=bench root" >/dev/null 2>&1
  # nginx's workers run as another user: let it read the folder (but not the URL key, which
  # pkgtool serve takes only when its owner alone can read it).
  chmod -R a+rX "$work"
  chmod 600 "$work/url.key"
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
    # Every client is on 127.0.0.1: the per-client connection limit would cap the 64-client round.
    p = subprocess.Popen([pkgtool, "serve", "--catalog", f"{work}/catalog.json", "--public-key", f"{work}/signing.pub",
                          "--packages", f"{work}/dist", "--listen", f"127.0.0.1:{port}", "--bundle-id", "com.example.bench",
                          "--root-certificate", f"{work}/root.pem", "--url-key", f"{work}/url.key",
                          "--url-lifetime", "1h", "--state", f"sqlite:{work}/serve-state.sqlite",
                          "--max-client-connections", "0"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
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
fi

if [ "$part2" = 1 ]; then
  # A small package of its own: part 2 times the gate, not the bytes.
  st="$work/state"
  mkdir -p "$st/dist"
  python3 bench/corpus.py mixed "$st/tree" --size-mb 1 >/dev/null
  "$pkgtool" build "$st/tree" -o "$st/dist/com.example.bench.mixed-1.0.pkg" -q
  "$pkgtool" keygen -o "$st/signing" -q
  "$pkgtool" publish "$st/dist/com.example.bench.mixed-1.0.pkg" --key "$st/signing" \
    --base-url http://127.0.0.1/packages -o "$st/catalog.json" -q
  (umask 077; head -c 32 /dev/urandom >"$st/url.key")
  # PostgreSQL runs as `postgres` when we are root: let it reach its folder in there.
  chmod a+x "$work" "$st"
  python3 bench/serve_state.py --work "$st" --pkgtool "$pkgtool" --state-bench "$bin/pkgtool-state-bench" \
    --stores "$stores" --notifications "$notifications" --rounds "$rounds" --clients "$state_clients" \
    --downloads "$downloads" --lookups "$lookups" --preload "$preload"
fi
