#!/usr/bin/env python3
"""Writes seed inputs for the fuzz targets: small real packages (XAR by bsdtar, zip, tar, a
flat-package shape), hand-made XAR variants, and XML/binary plists. Deterministic."""
import io, os, plistlib, shutil, struct, subprocess, sys, tarfile, tempfile, zipfile, zlib, hashlib

out = sys.argv[1] if len(sys.argv) > 1 else "Fuzzing/seeds"
targets = {t: os.path.join(out, t) for t in ("FuzzXARReader", "FuzzAppleArchiveReader", "FuzzPropertyList", "FuzzValidate", "FuzzArchive", "FuzzSignedData")}
for d in targets.values():
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)

def save(target, name, data):
    with open(os.path.join(targets[target], name), "wb") as f:
        f.write(data)

plist = plistlib.dumps({"ContentVersion": "1.0", "IAPProductIdentifier": "com.example.seed", "Folder": "Ch1"})
save("FuzzPropertyList", "xml.plist", plist)
save("FuzzPropertyList", "binary.plist", plistlib.dumps({"ContentVersion": "2.1.3", "IAPProductIdentifier": "com.x", "N": [1, 2.5, True, b"\x00", {"k": "ü"}]}, fmt=plistlib.FMT_BINARY))
save("FuzzPropertyList", "doctype.plist", b'<?xml version="1.0"?><!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "x"><plist><dict><key>a</key><array><integer>1</integer><real>1.5</real><date>2020-01-01T00:00:00Z</date><data>AAE=</data></array></dict></plist>')

def xar(files, compress=True):
    """A XAR by hand: files = [(name, data or None for a folder, children)]."""
    heap = bytearray(20)
    ids = [0]
    def element(name, data, children):
        ids[0] += 1
        x = f'<file id="{ids[0]}"><name>{name}</name>'
        if data is None:
            x += '<type>directory</type><mode>0755</mode>'
        else:
            stored = zlib.compress(data) if compress else data
            x += ('<type>file</type><mode>0644</mode><data>'
                  f'<length>{len(stored)}</length><offset>{len(heap)}</offset><size>{len(data)}</size>'
                  f'<encoding style="application/{"x-gzip" if compress else "octet-stream"}"/>'
                  f'<archived-checksum style="sha1">{hashlib.sha1(stored).hexdigest()}</archived-checksum>'
                  f'<extracted-checksum style="sha1">{hashlib.sha1(data).hexdigest()}</extracted-checksum></data>')
            heap.extend(stored)
        x += "".join(element(*c) for c in children)
        return x + "</file>"
    body = "".join(element(*f) for f in files)
    toc = ('<?xml version="1.0" encoding="UTF-8"?><xar><toc><checksum style="sha1"><offset>0</offset><size>20</size></checksum>'
           + body + '</toc></xar>').encode()
    ctoc = zlib.compress(toc)
    heap[0:20] = hashlib.sha1(ctoc).digest()
    return struct.pack(">4sHHQQI", b"xar!", 28, 1, len(ctoc), len(toc), 1) + ctoc + bytes(heap)

package = [("ContentInfo.plist", plist, []), ("Contents", None, [("a.txt", b"hello " * 50, []), ("levels", None, [("1.json", b'{"a":1}', [])])])]
for target in ("FuzzXARReader", "FuzzValidate"):
    save(target, "plain.xar", xar(package))
    save(target, "stored.xar", xar(package, compress=False))
    save(target, "flat.xar", xar([("Distribution", b"<installer-gui-script/>", []), ("c.pkg", None, [("PackageInfo", b"<pkg-info/>", []), ("Payload", b"", [])])]))

with tempfile.TemporaryDirectory() as tmp:
    src = os.path.join(tmp, "src")
    os.makedirs(os.path.join(src, "Contents", "levels"))
    open(os.path.join(src, "ContentInfo.plist"), "wb").write(plist)
    open(os.path.join(src, "Contents", "a.txt"), "w").write("hello\n" * 20)
    open(os.path.join(src, "Contents", "levels", "1.json"), "w").write('{"level": 1}')
    os.symlink("levels/1.json", os.path.join(src, "Contents", "latest.json"))
    for fmt, name in (("xar", "bsdtar.xar"), ("zip", "bsdtar.zip"), ("ustar", "bsdtar.tar")):
        path = os.path.join(tmp, name)
        subprocess.run(["bsdtar", "--format", fmt, "-cf", path, "-C", src, "ContentInfo.plist", "Contents"], check=True)
        data = open(path, "rb").read()
        save("FuzzValidate", name, data)
        if fmt == "xar":
            save("FuzzXARReader", name, data)
    # FuzzArchive: zip and tar files, and cpio/tar payload streams (plain and gzip'd).
    for fmt, name, extra in (("zip", "bsdtar.zip", []), ("pax", "pax.tar", []), ("odc", "odc.cpio.gz", ["-z"]),
                             ("newc", "newc.cpio", []), ("newc", "newc.cpio.gz", ["-z"]), ("ustar", "ustar.tar.gz", ["-z"])):
        path = os.path.join(tmp, name)
        subprocess.run(["bsdtar", "--format", fmt, *extra, "-cf", path, "-C", src, "."], check=True)
        save("FuzzArchive", name, open(path, "rb").read())
    zbuf = io.BytesIO()
    with zipfile.ZipFile(zbuf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("ContentInfo.plist", plist)
        z.writestr("Contents/a.txt", "hello\n" * 20)
    save("FuzzArchive", "python.zip", zbuf.getvalue())
    for comp in ("bzip2", "xz"):
        path = os.path.join(tmp, f"{comp}.xar")
        subprocess.run(["bsdtar", "--format", "xar", "--options", f"xar:compression={comp}", "-cf", path, "-C", src, "."], check=True)
        save("FuzzXARReader", f"{comp}.xar", open(path, "rb").read())

# FuzzAppleArchiveReader: raw archives (AA01, YAA1) with every field shape, and the same payload in
# pbzz/pbzx blocks (one stored block among them). Built here by hand from the format's layout.
def aa_field(key, value):
    return key.encode() + value

def aa_entry(fields, blobs=b"", magic=b"AA01"):
    body = b"".join(fields)
    return magic + struct.pack("<H", 6 + len(body)) + body + blobs

def aa_path(key, text):
    raw = text.encode()
    return aa_field(key + "P", struct.pack("<H", len(raw)) + raw)

aa_data = b"level one\n" * 300
aa_raw = (aa_entry([aa_field("TYP1", b"D"), aa_path("PAT", ""), aa_field("MOD2", struct.pack("<H", 0o755))])
    + aa_entry([aa_field("TYP1", b"D"), aa_path("PAT", "Contents"), aa_field("MTMT", struct.pack("<qI", 1, 2))], magic=b"YAA1")
    + aa_entry([aa_field("TYP1", b"F"), aa_path("PAT", "Contents/a.txt"), aa_field("MOD2", struct.pack("<H", 0o644)),
                aa_field("SH2H", hashlib.sha256(aa_data).digest()), aa_field("XATA", struct.pack("<H", 4)),
                aa_field("DATB", struct.pack("<I", len(aa_data)))], b"xatt" + aa_data)
    + aa_entry([aa_field("TYP1", b"L"), aa_path("PAT", "Contents/l"), aa_path("LNK", "a.txt")]))
save("FuzzAppleArchiveReader", "raw.aar", aa_raw)
for letter, squeeze in (("z", lambda b: zlib.compress(b, 5)), ("x", lambda b: __import__("lzma").compress(b))):
    framed = b"pbz" + letter.encode() + struct.pack(">Q", 1024)
    for at in range(0, len(aa_raw), 1024):
        chunk = aa_raw[at:at + 1024]
        packed = squeeze(chunk) if at else chunk
        framed += struct.pack(">QQ", len(chunk), len(packed)) + packed
    save("FuzzAppleArchiveReader", f"pbz{letter}.aar", framed)
print(f"seeds written to {out}", file=sys.stderr)


# FuzzSignedData: JWS shapes (header, payload, signature) and bare payloads, made here; and, when
# ../shared is beside the repository, Apple's own signed test data, read in place (not copied
# into the repository: the seeds folder is regenerated on every run and ignored by git).
import base64, json
def b64u(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=")
def jws(header, payload, signature=b"\x01" * 64):
    return b".".join([b64u(json.dumps(header).encode()), b64u(json.dumps(payload).encode()), b64u(signature)])
transaction = {"transactionId": "1", "originalTransactionId": "1", "bundleId": "com.example", "productId": "p",
               "signedDate": 1700000000000, "purchaseDate": 1699999999999.5, "environment": "Sandbox",
               "revocationDate": 1700000000001, "expiresDate": 1700000000002, "type": "Non-Consumable"}
cert = base64.b64encode(b"\x30\x82\x01\x00" + b"\x00" * 256).decode()
save("FuzzSignedData", "transaction.jws", jws({"alg": "ES256", "x5c": [cert, cert, cert]}, transaction))
save("FuzzSignedData", "xcode.jws", jws({"alg": "ES256", "kid": "Apple_Xcode_Key", "x5c": [cert]}, transaction))
save("FuzzSignedData", "none.jws", jws({"alg": "none"}, transaction, b""))
notification = {"notificationType": "REFUND", "notificationUUID": "u", "signedDate": 1700000000000,
                "data": {"bundleId": "com.example", "environment": "Sandbox", "appAppleId": 1,
                         "signedTransactionInfo": jws({"alg": "ES256", "x5c": [cert, cert]}, transaction).decode()}}
save("FuzzSignedData", "notification.jws", jws({"alg": "ES256", "x5c": [cert, cert, cert]}, notification))
save("FuzzSignedData", "notification.json", json.dumps(notification).encode())
save("FuzzSignedData", "transaction.json", json.dumps(transaction).encode())
storekit = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "interop", "storekit")
for sub in ("mock_signed_data", "xcode"):
    folder = os.path.join(storekit, sub)
    if os.path.isdir(folder):
        for name in sorted(os.listdir(folder)):
            with open(os.path.join(folder, name), "rb") as f:
                save("FuzzSignedData", "storekit-" + name, f.read())
