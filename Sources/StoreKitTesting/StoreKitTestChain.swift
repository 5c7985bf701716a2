import Crypto
import Foundation
import HostedContent
import PurchaseProof
import SwiftASN1
import SystemIO
import TextCoding
import X509

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A certificate chain with the shape of the App Store's (a self-signed root, a WWDR-like
/// intermediate, a signing leaf; P-256 keys; Apple's marker extensions on the intermediate and
/// the leaf), made here and never Apple's, and the signed data its keys make: transactions and
/// App Store Server Notifications v2 as compact JWS.
///
/// What `pkgtool storekit-test` writes and signs with, and what the server's tests sign with: a
/// gate started with this chain's root as `--root-certificate` accepts what it signs, and no
/// gate that trusts Apple Root CA - G3 does.
package struct StoreKitTestChain {
  /// What a made chain looks like; the defaults are the App Store's shape. The others make
  /// chains a verifier must refuse.
  package struct Options: Sendable {
    /// When the intermediate is valid.
    package var intermediateValidity = StoreKitTestChain.validity
    /// Apple's leaf marker (1.2.840.113635.100.6.11.1) on the leaf.
    package var leafMarker = true
    /// Apple's WWDR marker (1.2.840.113635.100.6.2.1) on the intermediate.
    package var intermediateMarker = true
    /// Whether the intermediate may sign certificates.
    package var intermediateIsCA = true

    package init() {}
  }

  /// When the root and the leaf are valid: 2000-01-01 to 2049-12-31, so that any date a test
  /// transaction names is inside it.
  package static let validity =
    Date(timeIntervalSince1970: 946_684_800)...Date(timeIntervalSince1970: 2_524_607_999)

  /// The files of a chain folder (``write(to:)``, ``init(contentsOf:)``).
  package enum File {
    package static let root = "root.pem"
    package static let rootKey = "root.key"
    package static let intermediate = "intermediate.pem"
    package static let leaf = "leaf.pem"
    package static let leafKey = "leaf.key"
    package static let readme = "README.txt"
  }

  /// The self-signed root: `--root-certificate` of a gate that accepts this chain's data.
  package let root: Certificate
  package let intermediate: Certificate
  package let leaf: Certificate
  /// The root's key: it signs the intermediate, and local StoreKit testing data (Xcode,
  /// LocalTesting), whose `x5c` is the one self-signed certificate.
  package let rootKey: P256.Signing.PrivateKey
  /// The leaf's key: it signs App Store data (Production, Sandbox).
  package let leafKey: P256.Signing.PrivateKey

  /// A new chain; with `sharing`, under that chain's root (a second intermediate of the same CA).
  package init(_ options: Options = Options(), sharing: StoreKitTestChain? = nil) throws {
    let rootKey = sharing?.rootKey ?? P256.Signing.PrivateKey()
    let intermediateKey = P256.Signing.PrivateKey()
    let leafKey = P256.Signing.PrivateKey()
    let validity = Self.validity
    let rootName = try DistinguishedName {
      CommonName("pkgtool StoreKit Test Root (not Apple)")
      OrganizationName("pkgtool storekit-test")
    }
    let intermediateName = try DistinguishedName {
      CommonName("pkgtool StoreKit Test WWDR (not Apple)")
      OrganizationName("pkgtool storekit-test")
    }
    let leafName = try DistinguishedName {
      CommonName("pkgtool StoreKit Test Signing (not Apple)")
      OrganizationName("pkgtool storekit-test")
    }
    let root =
      try sharing?.root
      ?? Certificate(
        version: .v3, serialNumber: .init(), publicKey: .init(rootKey.publicKey),
        notValidBefore: validity.lowerBound, notValidAfter: validity.upperBound, issuer: rootName, subject: rootName,
        signatureAlgorithm: .ecdsaWithSHA256,
        extensions: try Certificate.Extensions {
          Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
          Critical(KeyUsage(keyCertSign: true, cRLSign: true))
        }, issuerPrivateKey: .init(rootKey))
    let intermediateMarker = options.intermediateMarker
    let intermediateIsCA = options.intermediateIsCA
    // Apple's markers carry an ASN.1 NULL.
    let markerValue: ArraySlice<UInt8> = [0x05, 0x00]
    let intermediate = try Certificate(
      version: .v3, serialNumber: .init(), publicKey: .init(intermediateKey.publicKey),
      notValidBefore: options.intermediateValidity.lowerBound, notValidAfter: options.intermediateValidity.upperBound,
      issuer: root.subject, subject: intermediateName, signatureAlgorithm: .ecdsaWithSHA256,
      extensions: try Certificate.Extensions {
        if intermediateIsCA {
          Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
        } else {
          Critical(BasicConstraints.notCertificateAuthority)
        }
        Critical(KeyUsage(keyCertSign: true, cRLSign: true))
        if intermediateMarker {
          Certificate.Extension(oid: TransactionVerifier.intermediateMarker, critical: false, value: markerValue)
        }
      }, issuerPrivateKey: .init(rootKey))
    let leafMarker = options.leafMarker
    let leaf = try Certificate(
      version: .v3, serialNumber: .init(), publicKey: .init(leafKey.publicKey), notValidBefore: validity.lowerBound,
      notValidAfter: validity.upperBound, issuer: intermediateName, subject: leafName,
      signatureAlgorithm: .ecdsaWithSHA256,
      extensions: try Certificate.Extensions {
        Critical(BasicConstraints.notCertificateAuthority)
        Critical(KeyUsage(digitalSignature: true))
        if leafMarker {
          Certificate.Extension(oid: TransactionVerifier.leafMarker, critical: false, value: markerValue)
        }
      }, issuerPrivateKey: .init(intermediateKey))
    self.init(root: root, intermediate: intermediate, leaf: leaf, rootKey: rootKey, leafKey: leafKey)
  }

  private init(
    root: Certificate, intermediate: Certificate, leaf: Certificate, rootKey: P256.Signing.PrivateKey,
    leafKey: P256.Signing.PrivateKey
  ) {
    self.root = root
    self.intermediate = intermediate
    self.leaf = leaf
    self.rootKey = rootKey
    self.leafKey = leafKey
  }

  // MARK: Files

  /// The root in PEM, as an operator configures it.
  package func rootPEM() throws -> String { try root.serializeAsPEM().pemString }

  /// Writes the chain into `directory`, which must not exist or be empty: `root.pem`,
  /// `intermediate.pem`, `leaf.pem` (0644), `root.key` and `leaf.key` (PKCS#8 PEM, 0600) and a
  /// `README.txt` that says what they are. The folder appears whole or not at all.
  package func write(to directory: String) throws {
    let hint = "choose a new folder, or remove '\(directory)' first"
    let parentPath = Paths.parent(of: directory)
    let name = Paths.name(of: directory)
    let parent: DirectoryHandle
    do { parent = try DirectoryHandle(path: parentPath) } catch {
      throw OperationError(
        "cannot create '\(directory)': the folder '\(parentPath)' does not exist", hint: "create it first",
        code: .outputUnwritable)
    }
    let files: [(name: String, text: String, mode: mode_t)] = [
      (File.root, try rootPEM(), 0o644),
      (File.intermediate, try intermediate.serializeAsPEM().pemString, 0o644),
      (File.leaf, try leaf.serializeAsPEM().pemString, 0o644),
      (File.rootKey, rootKey.pemRepresentation, 0o600),
      (File.leafKey, leafKey.pemRepresentation, 0o600),
      (File.readme, Self.readme, 0o644),
    ]
    func fill(_ folder: DirectoryHandle) throws {
      for file in files {
        let descriptor = try folder.createFile(file.name, mode: file.mode)
        try descriptor.write(Array((file.text.hasSuffix("\n") ? file.text : file.text + "\n").utf8))
        // The mode asked for, whatever the umask.
        try folder.setMode(file.name, file.mode)
      }
    }
    do {
      if parent.exists(name) {
        // An existing empty folder is filled in place, through a staging folder inside it.
        let existing = try? parent.openDirectory(name)
        guard let existing, (try? existing.list())?.isEmpty == true else {
          throw OperationError(
            "'\(directory)' already exists and is not an empty folder; a test chain is written into a new one",
            hint: hint, code: .outputExists)
        }
        let staging = try PendingFolder(in: existing, for: "chain", purpose: "storekit-test")
        defer { staging.discard() }
        try fill(staging.handle)
        for file in files { try staging.handle.rename(file.name, to: file.name, in: existing) }
        return
      }
      let staging = try PendingFolder(in: parent, for: name, purpose: "storekit-test")
      try fill(staging.handle)
      try staging.publish(as: name, replace: false)
    } catch let error as SystemError {
      throw OperationError("cannot write the test chain into '\(directory)': \(error.reason)", hint: hint)
    }
  }

  /// What `README.txt` in a chain folder says.
  static let readme = """
    A StoreKit test chain made by 'pkgtool storekit-test chain': NOT Apple's.

    root.pem          the self-signed test root: give it to 'pkgtool serve --root-certificate'
    intermediate.pem  signed by the root, with Apple's WWDR marker 1.2.840.113635.100.6.2.1
    leaf.pem          signed by the intermediate, with Apple's marker 1.2.840.113635.100.6.11.1
    root.key          the root's private key (signs Xcode and LocalTesting data)
    leaf.key          the leaf's private key (signs Production and Sandbox data)

    A gate that trusts root.pem accepts every transaction these keys sign: use it for tests
    and local trials only, never where a gate serves paid content. Keep the keys out of
    repositories that ship.

    pkgtool storekit-test transaction --chain DIR ...    a signed transaction
    pkgtool storekit-test notification --chain DIR ...   an App Store Server Notification v2

    """

  /// Reads the chain `write(to:)` wrote into `directory`. The error names the file and says
  /// how to make a chain.
  package init(contentsOf directory: String) throws {
    let hint = "make a test chain with: pkgtool storekit-test chain -o \(directory)"
    if Paths.status(directory) == nil {
      throw OperationError("the test chain '\(directory)' does not exist", hint: hint, code: .inputUnreadable)
    }
    func text(_ name: String) throws -> String {
      let path = directory + "/" + name
      do {
        let file = try FileDescriptor.open(regularFile: path)
        let size = try file.size()
        guard size <= 64 * 1024 else {
          throw OperationError("'\(path)' is \(size) bytes, not a PEM file of a test chain", hint: hint)
        }
        return String(decoding: try file.read(count: Int(size), at: 0), as: UTF8.self)
      } catch let error as SystemError {
        throw OperationError(
          "cannot read '\(path)' of the test chain: \(error.reason)", hint: hint, code: .inputUnreadable)
      }
    }
    func certificate(_ name: String) throws -> Certificate {
      do { return try Certificate(pemEncoded: try text(name)) } catch let error as OperationError { throw error } catch
      {
        throw OperationError("'\(directory)/\(name)' is not a PEM certificate", hint: hint, code: .inputUnsuitable)
      }
    }
    func key(_ name: String) throws -> P256.Signing.PrivateKey {
      do { return try P256.Signing.PrivateKey(pemRepresentation: try text(name)) } catch let error as OperationError {
        throw error
      } catch {
        throw OperationError(
          "'\(directory)/\(name)' is not a P-256 private key in PEM", hint: hint, code: .inputUnsuitable)
      }
    }
    let root = try certificate(File.root)
    let intermediate = try certificate(File.intermediate)
    let leaf = try certificate(File.leaf)
    let rootKey = try key(File.rootKey)
    let leafKey = try key(File.leafKey)
    guard try TransactionVerifier.isAppleRoot(root) == false else {
      throw OperationError(
        "'\(directory)/\(File.root)' is Apple Root CA - G3; a test chain has a root of its own", hint: hint,
        code: .inputUnsuitable)
    }
    guard root.publicKey == Certificate.PublicKey(rootKey.publicKey),
      leaf.publicKey == Certificate.PublicKey(leafKey.publicKey)
    else {
      throw OperationError(
        "the keys in '\(directory)' do not belong to its certificates (root.key to root.pem, leaf.key to leaf.pem)",
        hint: hint, code: .inputUnsuitable)
    }
    self.init(root: root, intermediate: intermediate, leaf: leaf, rootKey: rootKey, leafKey: leafKey)
  }

  // MARK: Signing

  /// A compact JWS of `payload`, signed by the leaf (or by `signer`), with `header` fields over
  /// the default `{"alg":"ES256","x5c":[leaf, intermediate, root]}` (or `x5c`). JSON with sorted
  /// keys.
  package func jws(
    _ payload: [String: Any], header: [String: Any] = [:], x5c: [Certificate]? = nil,
    signer: P256.Signing.PrivateKey? = nil
  ) throws -> String {
    var fields: [String: Any] = ["alg": "ES256", "x5c": try (x5c ?? [leaf, intermediate, root]).map(Self.der)]
    for (key, value) in header { fields[key] = value }
    let input = Self.base64URL(try Self.json(fields)) + "." + Self.base64URL(try Self.json(payload))
    let signature = try (signer ?? leafKey).signature(for: Data(input.utf8))
    return input + "." + Self.base64URL(Array(signature.rawRepresentation))
  }

  /// `payload` signed the way `environment`'s data is: the App Store's (Production, Sandbox)
  /// by the leaf with `x5c` leaf, intermediate, root; StoreKit testing's (Xcode, LocalTesting)
  /// by the root alone, `x5c` the one self-signed certificate, as Xcode signs.
  package func jws(_ payload: [String: Any], as environment: TransactionVerifier.Environment) throws -> String {
    environment.isLocal ? try jws(payload, x5c: [root], signer: rootKey) : try jws(payload)
  }

  /// `{"signedPayload":"JWS"}`, the body the App Store POSTs to a notification URL: `payload`
  /// (``StoreKitTestData/notification(type:subtype:uuid:bundleID:environment:appAppleID:signedDate:signedTransactionInfo:)``)
  /// signed as `environment`'s data.
  package func notificationBody(
    _ payload: [String: Any], as environment: TransactionVerifier.Environment = .production
  ) throws -> String {
    String(decoding: try Self.json(["signedPayload": try jws(payload, as: environment)]), as: UTF8.self)
  }

  /// The DER bytes of `certificate` in base64, as `x5c` holds them.
  package static func der(_ certificate: Certificate) throws -> String {
    var serializer = DER.Serializer()
    try serializer.serialize(certificate)
    return Base64.encode(serializer.serializedBytes)
  }

  /// JSON with sorted keys and unescaped slashes: one text for one value.
  package static func json(_ object: Any) throws -> [UInt8] {
    Array(try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]))
  }

  /// Unpadded base64url (RFC 7515).
  package static func base64URL(_ bytes: [UInt8]) -> String {
    var text = Base64.encode(bytes)
    while text.hasSuffix("=") { text.removeLast() }
    return String(text.map { $0 == "+" ? "-" : $0 == "/" ? "_" : $0 })
  }
}
