#!/usr/bin/env python3
"""An independent check of pkgtool's signed catalogs (docs/catalog.md), with Python's
`cryptography` Ed25519 and the standard json module, sharing no code with pkgtool.

  catalog-crosscheck.py verify CATALOG KEY.pub   exit 0 when a signature of KEY verifies
  catalog-crosscheck.py resign CATALOG NEWKEY [SEQUENCE]
      makes a new key pair (NEWKEY, NEWKEY.pub, pkgtool's one-line base64 format), optionally
      sets the sequence, and signs the catalog again with it: pkgtool must accept the result
      with NEWKEY.pub.
"""
import base64
import hashlib
import json
import sys

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey


def canonical(value):
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def raw_public(key):
    return key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def key_id(raw):
    return hashlib.sha256(raw).hexdigest()[:16]


def verify(catalog_path, public_path):
    with open(catalog_path, encoding="utf-8") as f:
        document = json.load(f)
    with open(public_path, encoding="utf-8") as f:
        raw = base64.b64decode(f.read().strip(), validate=True)
    public = Ed25519PublicKey.from_public_bytes(raw)
    payload = canonical(document["signed"])
    for signature in document["signatures"]:
        if signature.get("keyId") != key_id(raw) or signature.get("algorithm") != "ed25519":
            continue
        try:
            public.verify(base64.b64decode(signature["signature"], validate=True), payload)
            print(f"verified: sequence {document['signed']['sequence']}, key {key_id(raw)}")
            return 0
        except InvalidSignature:
            print("signature does not verify", file=sys.stderr)
            return 1
    print("no signature of this key", file=sys.stderr)
    return 1


def resign(catalog_path, key_path, sequence=None):
    with open(catalog_path, encoding="utf-8") as f:
        document = json.load(f)
    private = Ed25519PrivateKey.generate()
    seed = private.private_bytes(serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption())
    raw = raw_public(private.public_key())
    with open(key_path, "w", encoding="utf-8") as f:
        f.write(base64.b64encode(seed).decode() + "\n")
    with open(key_path + ".pub", "w", encoding="utf-8") as f:
        f.write(base64.b64encode(raw).decode() + "\n")
    if sequence is not None:
        document["signed"]["sequence"] = int(sequence)
    signature = private.sign(canonical(document["signed"]))
    document["signatures"] = [{"algorithm": "ed25519", "keyId": key_id(raw), "signature": base64.b64encode(signature).decode()}]
    with open(catalog_path, "w", encoding="utf-8") as f:
        json.dump(document, f, indent=2, sort_keys=True, ensure_ascii=False)
        f.write("\n")
    return 0


if __name__ == "__main__":
    if len(sys.argv) >= 4 and sys.argv[1] == "verify":
        sys.exit(verify(sys.argv[2], sys.argv[3]))
    if len(sys.argv) >= 4 and sys.argv[1] == "resign":
        sys.exit(resign(sys.argv[2], sys.argv[3], sys.argv[4] if len(sys.argv) > 4 else None))
    print(__doc__, file=sys.stderr)
    sys.exit(2)
