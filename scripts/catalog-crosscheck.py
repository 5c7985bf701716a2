#!/usr/bin/env python3
"""An independent check of pkgtool's signed catalogs (docs/catalog.md), with Python's
`cryptography` Ed25519, the standard json module and an RFC 8785 (JCS) writer of its own,
sharing no code with pkgtool.

  catalog-crosscheck.py verify CATALOG KEY.pub   exit 0 when a signature of KEY verifies and the
      catalog has not expired ("expires", RFC 3339 UTC, inside the signed part; a catalog
      without it is accepted with a note, as pkgtool does)
  catalog-crosscheck.py resign CATALOG NEWKEY [SEQUENCE]
      makes a new key pair (NEWKEY as PKCS#8 PEM, NEWKEY.pub as SubjectPublicKeyInfo PEM),
      optionally sets the sequence, and signs the catalog again with it: pkgtool must accept the
      result with NEWKEY.pub.
  catalog-crosscheck.py roots ROOT [ROOT...]
      verifies a chain of root documents (root.json): the lowest version is trusted as shipped
      and must carry its own root threshold; each next must be exactly one higher and carry the
      root threshold of the one before and its own; key ids must be the ids of their keys; the
      newest must not have expired.
  catalog-crosscheck.py verify-root CATALOG ROOT [ROOT...]
      verifies the roots as above, then the catalog: valid signatures by at least the newest
      root's catalog threshold of distinct catalog keys, and not expired.
  catalog-crosscheck.py make-root OUT ROOTKEY CATALOGKEY.pub
      writes a version 1 root, one day long, with ROOTKEY's public half as the root role and
      CATALOGKEY.pub as the catalog role (thresholds 1), signed with ROOTKEY: pkgtool must
      accept it.
  catalog-crosscheck.py canonical FILE
      writes the RFC 8785 (JCS) form of the JSON value in FILE to standard output
  catalog-crosscheck.py keys KEY KEY.pub
      loads both files with cryptography's PEM loaders and checks that they are one Ed25519 pair
      (a signature made with KEY verifies with KEY.pub).

Key files are read as PEM, or as pkgtool's old one-line base64 of the 32 raw bytes.
"""
import base64
import re
import datetime
import hashlib
import json
import sys

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey


def _no_duplicates(pairs):
    """object_pairs_hook: a member name twice in one object is refused (Python keeps the last,
    other readers the first: the same bytes must not mean two catalogs)."""
    names = [name for name, _ in pairs]
    if len(names) != len(set(names)):
        raise ValueError("a member name appears twice in one object")
    return dict(pairs)


def _integer_only(text):
    raise ValueError(f"the number {text} is not a plain integer")


def _plain_integer(text):
    if text == "-0":
        raise ValueError("the number -0 is not a plain integer")
    return int(text)


def load_strict(f):
    """json.load, strictly: duplicate names and non-integer numbers (1.0, 1e0, -0) refused."""
    return json.load(f, object_pairs_hook=_no_duplicates, parse_float=_integer_only,
                     parse_int=_plain_integer, parse_constant=_integer_only)


def canonical(value):
    """RFC 8785 (JCS), written here from the RFC's rules for the values a catalog holds: objects
    with members sorted by the UTF-16 code units of their names (§3.2.3), integers within
    ±(2^53 - 1) in plain decimal (the ECMAScript form of such a number, §3.2.2.3), strings with
    only `"`, `\\` and the controls below U+0020 escaped, the short forms where JSON has them and
    lowercase \\u00xx for the rest (§3.2.2.2), no whitespace, UTF-8 (§3.2.4)."""
    return "".join(_jcs(value)).encode("utf-8")


_SHORT = {0x08: "\\b", 0x09: "\\t", 0x0A: "\\n", 0x0C: "\\f", 0x0D: "\\r", 0x22: '\\"', 0x5C: "\\\\"}


def _jcs_string(text):
    out = ['"']
    for ch in text:
        code = ord(ch)
        if code in _SHORT:
            out.append(_SHORT[code])
        elif code < 0x20:
            out.append("\\u%04x" % code)
        elif 0xD800 <= code <= 0xDFFF:
            raise ValueError("a lone surrogate cannot be canonicalized")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _jcs(value):
    if value is None:
        yield "null"
    elif value is True:
        yield "true"
    elif value is False:
        yield "false"
    elif isinstance(value, int):
        if abs(value) > 2**53 - 1:
            raise ValueError(f"the integer {value} is outside I-JSON's exact range")
        yield str(value)
    elif isinstance(value, float):
        raise ValueError("catalogs hold integers only")
    elif isinstance(value, str):
        yield _jcs_string(value)
    elif isinstance(value, list):
        yield "["
        for index, item in enumerate(value):
            if index:
                yield ","
            yield from _jcs(item)
        yield "]"
    elif isinstance(value, dict):
        yield "{"
        for index, name in enumerate(sorted(value, key=lambda k: k.encode("utf-16-be"))):
            if index:
                yield ","
            yield _jcs_string(name)
            yield ":"
            yield from _jcs(value[name])
        yield "}"
    else:
        raise ValueError(f"not a JSON value: {value!r}")


def raw_public(key):
    return key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def key_id(raw):
    return hashlib.sha256(raw).hexdigest()[:16]


def verify(catalog_path, public_path):
    with open(catalog_path, encoding="utf-8") as f:
        document = load_strict(f)
    public = load_public(public_path)
    raw = raw_public(public)
    payload = canonical(document["signed"])
    for signature in document["signatures"]:
        if signature.get("keyId") != key_id(raw) or signature.get("algorithm") != "ed25519":
            continue
        try:
            public.verify(base64.b64decode(signature["signature"], validate=True), payload)
        except InvalidSignature:
            print("signature does not verify", file=sys.stderr)
            return 1
        expires = document["signed"].get("expires")
        if expires is None:
            print("note: the catalog has no expiry", file=sys.stderr)
        else:
            moment = datetime.datetime.strptime(expires, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.timezone.utc)
            if moment <= datetime.datetime.now(datetime.timezone.utc):
                print(f"the catalog expired at {expires}", file=sys.stderr)
                return 1
        print(f"verified: sequence {document['signed']['sequence']}, expires {expires}, key {key_id(raw)}")
        return 0
    print("no signature of this key", file=sys.stderr)
    return 1


def load_public(path):
    with open(path, "rb") as f:
        data = f.read()
    if data.startswith(b"-----BEGIN"):
        key = serialization.load_pem_public_key(data)
        assert isinstance(key, Ed25519PublicKey), "not an Ed25519 public key"
        return key
    return Ed25519PublicKey.from_public_bytes(base64.b64decode(data.strip(), validate=True))


def load_private(path):
    with open(path, "rb") as f:
        data = f.read()
    if data.startswith(b"-----BEGIN"):
        key = serialization.load_pem_private_key(data, password=None)
        assert isinstance(key, Ed25519PrivateKey), "not an Ed25519 private key"
        return key
    return Ed25519PrivateKey.from_private_bytes(base64.b64decode(data.strip(), validate=True))


def keys(private_path, public_path):
    private = load_private(private_path)
    public = load_public(public_path)
    public.verify(private.sign(b"pkgtool"), b"pkgtool")
    print(f"one Ed25519 pair, key {key_id(raw_public(public))}")
    return 0


def resign(catalog_path, key_path, sequence=None):
    with open(catalog_path, encoding="utf-8") as f:
        document = load_strict(f)
    private = Ed25519PrivateKey.generate()
    raw = raw_public(private.public_key())
    with open(key_path, "wb") as f:
        f.write(private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    with open(key_path + ".pub", "wb") as f:
        f.write(private.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
    if sequence is not None:
        document["signed"]["sequence"] = int(sequence)
    signature = private.sign(canonical(document["signed"]))
    document["signatures"] = [{"algorithm": "ed25519", "keyId": key_id(raw), "signature": base64.b64encode(signature).decode()}]
    with open(catalog_path, "w", encoding="utf-8") as f:
        json.dump(document, f, indent=2, sort_keys=True, ensure_ascii=False)
        f.write("\n")
    return 0


def _moment(text):
    """An RFC 3339 UTC time written exactly as YYYY-MM-DDTHH:MM:SSZ (zero-padded, upper case);
    ValueError for anything else, as pkgtool refuses it."""
    if not isinstance(text, str) or not re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z", text):
        raise ValueError("not an RFC 3339 UTC time like 2026-12-26T09:30:00Z: %r" % (text,))
    return datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.timezone.utc)


def _root_key(signed, key_ref):
    entry = signed["keys"][key_ref]
    if entry.get("algorithm") != "ed25519":
        raise ValueError(f"key {key_ref} is not ed25519")
    der = base64.b64decode(entry["publicKey"], validate=True)
    if len(der) == 44:
        key = serialization.load_der_public_key(der)
        assert isinstance(key, Ed25519PublicKey), "not an Ed25519 public key"
    else:
        key = Ed25519PublicKey.from_public_bytes(der)
    if key_id(raw_public(key)) != key_ref:
        raise ValueError(f"key-id collision: {key_ref} lists a key whose id is {key_id(raw_public(key))}")
    return key


def _distinct_signers(document, signer_signed, role_name):
    """The ids of distinct keys of signer_signed's role that signed document's `signed`."""
    role = signer_signed["roles"][role_name]
    payload = canonical(document["signed"])
    good = set()
    for signature in document["signatures"]:
        ref = signature.get("keyId")
        if ref not in role["keyIds"] or signature.get("algorithm") != "ed25519":
            continue
        try:
            _root_key(signer_signed, ref).verify(base64.b64decode(signature["signature"], validate=True), payload)
        except (InvalidSignature, ValueError):
            continue
        good.add(ref)
    return good


def _check_root_form(signed):
    if (signed.get("type") != "root" or not isinstance(signed.get("version"), int)
            or isinstance(signed.get("version"), bool) or signed["version"] < 1):
        raise ValueError("not a root (type 'root', version 1 or more)")
    for ref in signed["keys"]:
        _root_key(signed, ref)
    for name in ("root", "catalog"):
        role = signed["roles"][name]
        if len(set(role["keyIds"])) != len(role["keyIds"]) or any(r not in signed["keys"] for r in role["keyIds"]):
            raise ValueError(f"the {name} role lists a key twice or an unlisted key")
        threshold = role["threshold"]
        if isinstance(threshold, bool) or not isinstance(threshold, int) or not 1 <= threshold <= len(role["keyIds"]):
            raise ValueError(f"the {name} role's threshold cannot be met")


def roots(paths):
    """The newest root's `signed`, after checking the chain; raises ValueError."""
    documents = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            documents.append(load_strict(f))
    documents.sort(key=lambda d: d["signed"]["version"])
    previous = None
    for document in documents:
        signed = document["signed"]
        _check_root_form(signed)
        if previous is not None:
            if signed["version"] != previous["version"] + 1:
                raise ValueError(f"root version {signed['version']} does not follow {previous['version']}")
            if len(_distinct_signers(document, previous, "root")) < previous["roles"]["root"]["threshold"]:
                raise ValueError(f"root version {signed['version']} lacks the threshold of version {previous['version']}")
        if len(_distinct_signers(document, signed, "root")) < signed["roles"]["root"]["threshold"]:
            raise ValueError(f"root version {signed['version']} lacks its own root threshold")
        previous = signed
    if _moment(previous["expires"]) <= datetime.datetime.now(datetime.timezone.utc):
        raise ValueError(f"root version {previous['version']} expired at {previous['expires']}")
    return previous


def verify_root(catalog_path, root_paths):
    try:
        root = roots(root_paths)
    except (ValueError, KeyError, TypeError) as error:
        print(f"root refused: {error}", file=sys.stderr)
        return 1
    with open(catalog_path, encoding="utf-8") as f:
        document = load_strict(f)
    signers = _distinct_signers(document, root, "catalog")
    if len(signers) < root["roles"]["catalog"]["threshold"]:
        print(f"the catalog carries {len(signers)} valid catalog signature(s); {root['roles']['catalog']['threshold']} needed", file=sys.stderr)
        return 1
    expires = document["signed"].get("expires")
    if expires is not None and _moment(expires) <= datetime.datetime.now(datetime.timezone.utc):
        print(f"the catalog expired at {expires}", file=sys.stderr)
        return 1
    print(f"verified: sequence {document['signed']['sequence']}, root version {root['version']}, {len(signers)} of {root['roles']['catalog']['threshold']} catalog signature(s)")
    return 0


def make_root(out_path, root_key_path, catalog_public_path):
    private = load_private(root_key_path)
    root_raw = raw_public(private.public_key())
    catalog_raw = raw_public(load_public(catalog_public_path))
    expires = (datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    signed = {
        "type": "root", "version": 1, "expires": expires,
        "keys": {key_id(raw): {"algorithm": "ed25519", "publicKey": base64.b64encode(raw).decode()}
                 for raw in (root_raw, catalog_raw)},
        "roles": {"root": {"keyIds": [key_id(root_raw)], "threshold": 1},
                  "catalog": {"keyIds": [key_id(catalog_raw)], "threshold": 1}},
    }
    signature = private.sign(canonical(signed))
    document = {"signed": signed, "signatures": [
        {"keyId": key_id(root_raw), "algorithm": "ed25519", "signature": base64.b64encode(signature).decode()}]}
    with open(out_path, "x", encoding="utf-8") as f:
        json.dump(document, f, indent=1, ensure_ascii=False)
    return 0


if __name__ == "__main__":
    if len(sys.argv) >= 5 and sys.argv[1] == "make-root":
        sys.exit(make_root(sys.argv[2], sys.argv[3], sys.argv[4]))
    if len(sys.argv) >= 3 and sys.argv[1] == "roots":
        try:
            newest = roots(sys.argv[2:])
        except (ValueError, KeyError, TypeError) as error:
            print(f"root refused: {error}", file=sys.stderr)
            sys.exit(1)
        print(f"verified: root version {newest['version']}, expires {newest['expires']}")
        sys.exit(0)
    if len(sys.argv) >= 4 and sys.argv[1] == "verify-root":
        sys.exit(verify_root(sys.argv[2], sys.argv[3:]))
    if len(sys.argv) >= 4 and sys.argv[1] == "verify":
        sys.exit(verify(sys.argv[2], sys.argv[3]))
    if len(sys.argv) >= 3 and sys.argv[1] == "canonical":
        with open(sys.argv[2], encoding="utf-8") as f:
            sys.stdout.buffer.write(canonical(json.load(f)))
        sys.exit(0)
    if len(sys.argv) >= 4 and sys.argv[1] == "keys":
        sys.exit(keys(sys.argv[2], sys.argv[3]))
    if len(sys.argv) >= 4 and sys.argv[1] == "resign":
        sys.exit(resign(sys.argv[2], sys.argv[3], sys.argv[4] if len(sys.argv) > 4 else None))
    print(__doc__, file=sys.stderr)
    sys.exit(2)
