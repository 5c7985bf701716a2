#!/usr/bin/env python3
"""The state store's cost in `pkgtool serve`, on SQLite and PostgreSQL (bench/serve.sh runs it).

Not a test. See bench/serve.sh's header for the method; this file does the work:

- makes a test chain with Apple's shape (root -> intermediate with the WWDR marker
  1.2.840.113635.100.6.2.1, CA -> leaf with the signing marker 1.2.840.113635.100.6.11.1, P-256)
  and signs ES256 JWS with it (the `cryptography` package: an implementation of the signing
  independent of the Swift tests' TestChain);
- starts the release `pkgtool serve` once per store, POSTs distinct signed notifications from C
  keep-alive clients, and times /v1/downloads end to end;
- runs pkgtool-state-bench (bench/StateStoreBench) on a fresh store of each kind: the time of a
  lookup alone, in process, which is what a download waits for.
"""
import argparse, base64, datetime, hashlib, json, os, pwd, resource, shutil, signal, socket, statistics
import subprocess, sys, threading, time, uuid

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
from cryptography.x509.oid import NameOID

BUNDLE = "com.example.bench"
APP_APPLE_ID = 1234567890
LEAF_MARKER = x509.ObjectIdentifier("1.2.840.113635.100.6.11.1")
INTERMEDIATE_MARKER = x509.ObjectIdentifier("1.2.840.113635.100.6.2.1")


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class Chain:
    """root -> intermediate -> leaf, as Apple's; `jws` signs with the leaf."""

    def __init__(self):
        now = datetime.datetime.now(datetime.timezone.utc)
        start, end = now - datetime.timedelta(days=1), now + datetime.timedelta(days=30)
        def name(cn):
            return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn),
                              x509.NameAttribute(NameOID.ORGANIZATION_NAME, "pkgtool bench")])
        def cert(subject, key, issuer, issuer_key, ca, path_length, marker):
            b = (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer)
                 .public_key(key.public_key()).serial_number(x509.random_serial_number())
                 .not_valid_before(start).not_valid_after(end)
                 .add_extension(x509.BasicConstraints(ca=ca, path_length=path_length), critical=True)
                 .add_extension(x509.KeyUsage(digital_signature=not ca, content_commitment=False,
                                              key_encipherment=False, data_encipherment=False, key_agreement=False,
                                              key_cert_sign=ca, crl_sign=ca, encipher_only=False,
                                              decipher_only=False), critical=True))
            if marker is not None:
                b = b.add_extension(x509.UnrecognizedExtension(marker, b"\x05\x00"), critical=False)
            return b.sign(issuer_key, hashes.SHA256())
        root_key, int_key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
        self.leaf_key = ec.generate_private_key(ec.SECP256R1())
        rn, iname, ln = name("Bench Root CA - G3"), name("Bench WWDR G6"), name("Bench Store Signing")
        self.root = cert(rn, root_key, rn, root_key, True, None, None)
        inter = cert(iname, int_key, rn, root_key, True, 0, INTERMEDIATE_MARKER)
        leaf = cert(ln, self.leaf_key, iname, int_key, False, None, LEAF_MARKER)
        x5c = [base64.b64encode(c.public_bytes(serialization.Encoding.DER)).decode() for c in (leaf, inter, self.root)]
        self.header = b64url(json.dumps({"alg": "ES256", "x5c": x5c}, separators=(",", ":")).encode())

    def root_pem(self):
        return self.root.public_bytes(serialization.Encoding.PEM)

    def jws(self, payload):
        signing_input = self.header + "." + b64url(json.dumps(payload, separators=(",", ":")).encode())
        r, s = decode_dss_signature(self.leaf_key.sign(signing_input.encode(), ec.ECDSA(hashes.SHA256())))
        return signing_input + "." + b64url(r.to_bytes(32, "big") + s.to_bytes(32, "big"))


def ms(t):
    return int(t * 1000)


def transaction(chain, tid, original, product, signed, kind="Non-Consumable", **extra):
    payload = {"transactionId": tid, "originalTransactionId": original, "bundleId": BUNDLE, "productId": product,
               "purchaseDate": ms(signed) - 5000, "signedDate": ms(signed), "environment": "Production",
               "type": kind, "quantity": 1, "inAppOwnershipType": "PURCHASED"}
    payload.update(extra)
    return chain.jws(payload)


def notification(chain, kind, tid, original, product, signed, tx_signed=None, **tx_extra):
    """The body Apple POSTs: {"signedPayload": JWS} of a notification about one transaction."""
    tx = transaction(chain, tid, original, product, tx_signed if tx_signed is not None else signed - 1,
                     "Auto-Renewable Subscription" if kind == "DID_RENEW" else "Non-Consumable", **tx_extra)
    payload = {"notificationType": kind, "notificationUUID": str(uuid.uuid4()), "version": "2.0",
               "signedDate": ms(signed),
               "data": {"bundleId": BUNDLE, "environment": "Production", "appAppleId": APP_APPLE_ID,
                        "bundleVersion": "1.0", "signedTransactionInfo": tx}}
    return json.dumps({"signedPayload": chain.jws(payload)}).encode()


def batch(chain, tag, count, product):
    """`count` distinct notifications, REFUND and DID_RENEW alternately, each of its own purchase."""
    now = time.time() - 120
    out = []
    for i in range(count):
        tid = f"9{tag}{i:07d}"
        if i % 2 == 0:
            out.append(notification(chain, "REFUND", tid, tid, product, now, revocationDate=ms(now),
                                    revocationReason=0))
        else:
            out.append(notification(chain, "DID_RENEW", tid, tid, product, now, expiresDate=ms(now) + 30 * 86_400_000))
    return out


# --- HTTP/1.1 over one keep-alive socket, as little client work as can be -------------------------

class Connection:
    def __init__(self, port):
        self.port = port
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""

    def request(self, method, path, body=None):
        head = f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\n"
        if body is not None:
            head += f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
        return head.encode() + b"\r\n" + (body or b"")

    def roundtrip(self, raw):
        """Sends a prepared request; (status, body)."""
        self.sock.sendall(raw)
        buf = self.buf
        while True:
            end = buf.find(b"\r\n\r\n")
            if end >= 0:
                break
            chunk = self.sock.recv(65536)
            if not chunk:
                raise SystemExit("the server closed the connection")
            buf += chunk
        head = buf[:end].decode("latin-1").split("\r\n")
        status = int(head[0].split(" ", 2)[1])
        length = None
        for line in head[1:]:
            k, _, v = line.partition(":")
            if k.strip().lower() == "content-length":
                length = int(v)
            elif k.strip().lower() == "transfer-encoding":
                raise SystemExit(f"unexpected Transfer-Encoding: {v}")
        if length is None:
            raise SystemExit("an answer without Content-Length")
        buf = buf[end + 4:]
        while len(buf) < length:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise SystemExit("the server closed the connection")
            buf += chunk
        self.buf = buf[length:]
        return status, buf[:length]

    def close(self):
        self.sock.close()


def concurrent(port, raws, clients, check):
    """Sends `raws` over `clients` keep-alive connections, each taking the next; wall seconds."""
    conns = [Connection(port) for _ in range(clients)]
    lock = threading.Lock()
    index = [0]
    failures = []

    def worker(conn):
        while True:
            with lock:
                i = index[0]
                index[0] += 1
            if i >= len(raws) or failures:
                return
            status, body = conn.roundtrip(raws[i])
            why = check(status, body)
            if why:
                failures.append(why)
                return

    threads = [threading.Thread(target=worker, args=(c,)) for c in conns]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - start
    for c in conns:
        c.close()
    if failures:
        raise SystemExit(f"a request failed: {failures[0]}")
    return wall


def sequential_latencies(port, raws, check):
    conn = Connection(port)
    out = []
    for raw in raws:
        t0 = time.perf_counter_ns()
        status, body = conn.roundtrip(raw)
        out.append((time.perf_counter_ns() - t0) / 1000)
        why = check(status, body)
        if why:
            raise SystemExit(f"a request failed: {why}")
    conn.close()
    return out


def percentile(values, p):
    s = sorted(values)
    rank = max(0, min(len(s) - 1, -(-len(s) * p // 100) - 1))
    return s[int(rank)]


def spread(values):
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "rounds": values}


def cpu_seconds(pid):
    """utime + stime of a process, from /proc."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def client_cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def wait_port(port, proc=None, log=None):
    for _ in range(1200):
        if proc is not None and proc.poll() is not None:
            raise SystemExit(f"the server exited ({proc.returncode}):\n" + (open(log).read()[-3000:] if log else ""))
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"nothing listens on {port}")


# --- PostgreSQL of our own ------------------------------------------------------------------------

class Postgres:
    """Debian's initdb and postgres in `folder`, on 127.0.0.1 and a free port; as `postgres` when root."""

    def __init__(self, folder):
        versions = sorted((v for v in os.listdir("/usr/lib/postgresql")
                           if os.path.exists(f"/usr/lib/postgresql/{v}/bin/initdb")), key=lambda v: float(v))
        self.bin = f"/usr/lib/postgresql/{versions[-1]}/bin"
        self.folder, self.port, self.password = folder, free_port(), uuid.uuid4().hex[:12]
        self.run_as = []
        os.makedirs(f"{folder}/socket")
        with open(f"{folder}/pwfile", "w") as f:
            f.write(self.password + "\n")
        if os.getuid() == 0:
            pw = pwd.getpwnam("postgres")
            for p in (folder, f"{folder}/socket", f"{folder}/pwfile"):
                os.chown(p, pw.pw_uid, pw.pw_gid)
            self.run_as = ["setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups", "--"]
        subprocess.run(self.run_as + [f"{self.bin}/initdb", f"--pgdata={folder}/data", "--username=postgres",
                                      f"--pwfile={folder}/pwfile", "--auth-local=trust",
                                      "--auth-host=scram-sha-256", "--encoding=UTF8", "--no-locale", "--no-sync"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        # The server's defaults otherwise (fsync on, synchronous_commit on, full_page_writes on).
        self.proc = subprocess.Popen(self.run_as + [f"{self.bin}/postgres", "-D", f"{folder}/data", "-p",
                                                    str(self.port), "-k", f"{folder}/socket", "-h", "127.0.0.1"],
                                     stdout=subprocess.DEVNULL, stderr=open(f"{folder}/server.log", "w"))
        for _ in range(600):
            if subprocess.run([f"{self.bin}/pg_isready", "-h", "127.0.0.1", "-p", str(self.port), "-t", "1"],
                              stdout=subprocess.DEVNULL).returncode == 0:
                break
            if self.proc.poll() is not None:
                raise SystemExit("PostgreSQL did not start:\n" + open(f"{folder}/server.log").read())
            time.sleep(0.1)
        self.version = self.psql("SHOW server_version")

    def psql(self, sql, database="postgres"):
        return subprocess.run(self.run_as + [f"{self.bin}/psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1",
                                             "-h", f"{self.folder}/socket", "-p", str(self.port), "-U", "postgres",
                                             "-d", database, "-c", sql],
                              check=True, capture_output=True, text=True).stdout.strip()

    def database(self, name):
        self.psql(f"CREATE DATABASE {name}")
        return f"postgres://postgres:{self.password}@127.0.0.1:{self.port}/{name}"

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)  # fast shutdown
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


# --- One store: the server over HTTP, then the store in process -----------------------------------

def measure(args, chain, backend, state_url, state_bench_url, work, product):
    port = free_port()
    log = f"{work}/serve-{backend}.log"
    proc = subprocess.Popen(
        [args.pkgtool, "serve", "--catalog", f"{work}/catalog.json", "--public-key", f"{work}/signing.pub",
         "--packages", f"{work}/dist", "--listen",
         f"127.0.0.1:{port}", "--bundle-id", BUNDLE, "--environment", "Production", "--root-certificate",
         f"{work}/bench-root.pem", "--url-key", f"{work}/url.key", "--app-apple-id", str(APP_APPLE_ID),
         "--state", state_url], stdout=subprocess.DEVNULL, stderr=open(log, "w"))
    out = {"state": state_url.split("@")[-1] if backend == "postgres" else "sqlite (a temporary file)",
           "loadAverageAtStart": open("/proc/loadavg").read().split()[:3]}
    try:
        wait_port(port, proc, log)
        probe = Connection(port)
        healthz = probe.request("GET", "/healthz")
        for _ in range(200):
            probe.roundtrip(healthz)
        probe.close()

        def ok_text(status, body):
            return None if status == 200 else f"{status} {body[:200]!r}"

        # The client's own ceiling: the same client against the cheapest endpoint.
        ceiling = {}
        for c in args.clients:
            raws = [healthz] * args.notifications
            ceiling[c] = len(raws) / concurrent(port, raws, c, ok_text)
        out["healthzPerSecond"] = ceiling

        def stored(status, body):
            if status != 200:
                return f"{status} {body[:300]!r}"
            if json.loads(body).get("status") != "stored":
                return f"200 but {body[:200]!r}"
            return None

        rates, cpu = {}, {}
        for c in args.clients:
            rates[c], cpu[c] = [], []
            for r in range(args.rounds):
                bodies = batch(chain, f"{backend[0]}{c:02d}{r}", args.notifications, product)
                probe = Connection(port)
                raws = [probe.request("POST", "/v1/notifications", b) for b in bodies]
                probe.close()
                server0, client0 = cpu_seconds(proc.pid), client_cpu()
                wall = concurrent(port, raws, c, stored)
                server1, client1 = cpu_seconds(proc.pid), client_cpu()
                rates[c].append(len(raws) / wall)
                cpu[c].append({"serverMsPerNotification": (server1 - server0) * 1000 / len(raws),
                               "clientMsPerNotification": (client1 - client0) * 1000 / len(raws)})
                print(f"  {backend:8} notifications, {c:2} clients, round {r + 1}: {rates[c][-1]:6.0f}/s "
                      f"(server CPU {cpu[c][-1]['serverMsPerNotification']:.2f} ms each)", file=sys.stderr, flush=True)
        out["notificationsPerSecond"] = {c: spread(v) for c, v in rates.items()}
        out["cpu"] = cpu
        out["notificationBytes"] = len(bodies[0])

        # /v1/downloads end to end: half the purchases have 3 notifications (a refund, reversed,
        # and a renewal of an earlier transaction), half none; all are granted.
        now = time.time() - 60
        setup, downloads = [], []
        for i in range(40):
            tid = f"7{backend[0]}{i:06d}"
            if i % 2 == 0:
                setup.append(notification(chain, "REFUND", tid, tid, product, now - 30, tx_signed=now - 40,
                                          revocationDate=ms(now - 30), revocationReason=0))
                setup.append(notification(chain, "REFUND_REVERSED", tid, tid, product, now - 20, tx_signed=now - 40))
                setup.append(notification(chain, "DID_RENEW", tid + "1", tid, product, now - 50, tx_signed=now - 50,
                                          expiresDate=ms(now) + 86_400_000))
            body = json.dumps({"productIdentifier": product,
                               "signedTransaction": transaction(chain, tid, tid, product, now)}).encode()
            downloads.append(body)
        probe = Connection(port)
        for body in setup:
            status, answer = probe.roundtrip(probe.request("POST", "/v1/notifications", body))
            if stored(status, answer):
                raise SystemExit(f"setup notification: {stored(status, answer)}")
        raws = [probe.request("POST", "/v1/downloads", downloads[i % len(downloads)]) for i in range(args.downloads)]
        probe.close()

        def granted(status, body):
            return None if status == 200 and b'"url"' in body else f"{status} {body[:300]!r}"

        sequential_latencies(port, raws[:200], granted)  # warm-up
        lat = sequential_latencies(port, raws, granted)
        hz = sequential_latencies(port, [healthz] * args.downloads, ok_text)
        out["storedNotifications"] = sum(len(v) for v in rates.values()) * args.notifications + len(setup)
        out["downloads"] = {"requests": len(lat), "p50_us": percentile(lat, 50), "p99_us": percentile(lat, 99),
                            "mean_us": statistics.fmean(lat)}
        out["healthzLatency"] = {"p50_us": percentile(hz, 50), "p99_us": percentile(hz, 99)}
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    if proc.returncode not in (0, -signal.SIGTERM):
        print(f"  (pkgtool serve exited {proc.returncode}; log {log})", file=sys.stderr)

    # In process: the lookup alone, and record() without HTTP or verification.
    bench = subprocess.run([args.state_bench, "--state", state_bench_url, "--writes", str(args.writes),
                            "--rounds", str(args.rounds), "--concurrency", " ".join(map(str, args.clients)),
                            "--preload", str(args.preload), "--lookups", str(args.lookups)],
                           capture_output=True, text=True)
    if bench.returncode != 0:
        raise SystemExit(f"pkgtool-state-bench failed: {bench.stderr}")
    out["loadAverageAtEnd"] = open("/proc/loadavg").read().split()[:3]
    inproc = json.loads(bench.stdout)
    inproc["record"] = {c: spread(v["recordsPerSecond"]) for c, v in inproc["record"].items()}
    out["inProcess"] = inproc
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--work", required=True)
    p.add_argument("--pkgtool", required=True)
    p.add_argument("--state-bench", required=True)
    p.add_argument("--stores", default="sqlite postgres")
    p.add_argument("--notifications", type=int, default=3000)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--clients", default="1 8")
    p.add_argument("--downloads", type=int, default=3000)
    p.add_argument("--writes", type=int, default=2000)
    p.add_argument("--preload", type=int, default=20000)
    p.add_argument("--lookups", type=int, default=5000)
    args = p.parse_args()
    args.clients = [int(c) for c in args.clients.split()]
    work = args.work

    chain = Chain()
    with open(f"{work}/bench-root.pem", "wb") as f:
        f.write(chain.root_pem())
    product = json.load(open(f"{work}/catalog.json"))["signed"]["products"][0]["productIdentifier"]

    results = {"method": "see bench/serve.sh", "notificationsPerRound": args.notifications, "rounds": args.rounds,
               "clients": args.clients, "cpus": os.cpu_count(), "stores": {}}
    for backend in args.stores.split():
        print(f"state store: {backend}", file=sys.stderr, flush=True)
        if backend == "sqlite":
            os.makedirs(f"{work}/state", exist_ok=True)
            results["stores"]["sqlite"] = measure(args, chain, "sqlite", f"sqlite:{work}/state/http.sqlite",
                                                  f"sqlite:{work}/state/inprocess.sqlite", work, product)
        elif backend == "postgres":
            pg = Postgres(f"{work}/pg")
            try:
                r = measure(args, chain, "postgres", pg.database("bench_http"), pg.database("bench_inprocess"),
                            work, product)
                r["serverVersion"] = pg.version
                r["synchronousCommit"] = pg.psql("SHOW synchronous_commit")
                results["stores"]["postgres"] = r
            finally:
                pg.stop()
                shutil.rmtree(f"{work}/pg", ignore_errors=True)
        else:
            raise SystemExit(f"unknown store {backend}")

    # The table.
    print()
    print(f"{'store':9} {'what':44} {'figure':>34}   target")
    for backend, r in results["stores"].items():
        for c in args.clients:
            s = r["notificationsPerSecond"][c]
            cpu = statistics.median(x["serverMsPerNotification"] for x in r["cpu"][c])
            print(f"{backend:9} {f'notifications/s, {c} clients (HTTP)':44} "
                  f"{s['median']:8.0f} [{s['min']:.0f}–{s['max']:.0f}]{'':>10}   ≥ 500"
                  f"{'  ' + ('met' if s['median'] >= 500 else 'MISSED')}")
            print(f"{'':9} {f'  server CPU per notification, {c} clients':44} {cpu:10.2f} ms")
            print(f"{'':9} {f'  client ceiling, GET /healthz, {c} clients':44} {r['healthzPerSecond'][c]:8.0f}/s")
        look = r["inProcess"]["lookup"]
        for key, label in (("all", "all"), ("threeRecords", "3 records"), ("noRecord", "no record")):
            l = look[key]
            added = f"{l['p50_us'] / 1000:.3f} / {l['p99_us'] / 1000:.3f} ms"
            target = ("   ≤ 1 ms at p50  " + ("met" if l["p50_us"] <= 1000 else "MISSED")) if key == "all" else ""
            print(f"{'':9} {f'lookup p50/p99, in process ({label})':44} {added:>34}{target}")
        for c, s in r["inProcess"]["record"].items():
            print(f"{'':9} {f'record()/s in process, {c} tasks':44} {s['median']:8.0f} [{s['min']:.0f}–{s['max']:.0f}]")
        d = r["downloads"]
        print(f"{'':9} {'POST /v1/downloads p50/p99 (HTTP, 1 client)':44} "
              f"{d['p50_us'] / 1000:10.3f} / {d['p99_us'] / 1000:.3f} ms")
        h = r["healthzLatency"]
        print(f"{'':9} {'GET /healthz p50/p99 (HTTP, 1 client)':44} "
              f"{h['p50_us'] / 1000:10.3f} / {h['p99_us'] / 1000:.3f} ms")
        print(f"{'':9} {'records in the store for the downloads':44} {r['storedNotifications']:10}")
        print(f"{'':9} {'load average at start, at end (1 min)':44} "
              f"{r['loadAverageAtStart'][0]:>10}, {r['loadAverageAtEnd'][0]}")
    os.makedirs("bench/out", exist_ok=True)
    with open("bench/out/serve-state.json", "w") as f:
        json.dump(results, f, indent=2)
    print("\nbench/out/serve-state.json written", file=sys.stderr)


if __name__ == "__main__":
    main()
