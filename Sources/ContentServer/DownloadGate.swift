import Foundation
import HostedContent
import PurchaseProof

/// The purchase gate without HTTP: a download request in, a signed URL or a refusal out. A
/// download is granted when the signed transaction proves the purchase *and* the state store
/// knows no refund or revocation for it (``Entitlement``). The server answers with what this
/// decides; another server (or a test) can call it directly.
package struct DownloadGate: Sendable {
  /// What the gate serves: the verified catalog and packages in use.
  package let content: LiveContent
  /// What a purchase must prove.
  package let verifier: TransactionVerifier
  /// What the App Store's notifications said: refunds, revocations, renewals.
  package let state: any EntitlementStore
  /// Signs the URLs it hands out.
  package let signer: URLSigner
  /// How long a URL holds.
  package let urlLifetime: TimeInterval
  /// Products that need no proof.
  package let openProducts: Set<String>

  /// A gate over `content`.
  package init(
    content: LiveContent, verifier: TransactionVerifier, state: any EntitlementStore, signer: URLSigner,
    urlLifetime: TimeInterval, openProducts: Set<String>
  ) {
    self.content = content
    self.verifier = verifier
    self.state = state
    self.signer = signer
    self.urlLifetime = urlLifetime
    self.openProducts = openProducts
  }

  /// A download granted: where, until when, and what the bytes are.
  package struct Grant: Sendable, Equatable {
    /// The path and query (`/packages/NAME?expires=…&signature=…`), to put after the public URL.
    package var pathAndQuery: String
    /// When the URL stops working (Unix seconds); nil for an open product.
    package var expires: Int64?
    /// The package's size.
    package var size: Int64
    /// Its SHA-256.
    package var sha256: String
    /// Its `ContentVersion`.
    package var contentVersion: String
  }

  /// Why a download was refused: 400 for ``malformedRequest``, 503 for ``stateUnavailable``,
  /// 403 for the rest.
  package enum Refusal: Error, Equatable, Sendable {
    /// The body is not the JSON the API takes.
    case malformedRequest(String)
    /// The catalog has no such product.
    case unknownProduct(String)
    /// The catalog has no such version of the product.
    case unknownVersion(String)
    /// The transaction does not prove the purchase.
    case notProved(TransactionRejection)
    /// The state store did not answer: the client should try again later (never a grant that
    /// ignores the store, never a 403 that looks like a forgery).
    case stateUnavailable(String)

    /// The HTTP status.
    package var status: Int {
      switch self {
      case .malformedRequest: return 400
      case .stateUnavailable: return 503
      default: return 403
      }
    }

    /// The `error` field of the answer: a stable code.
    package var code: String {
      switch self {
      case .malformedRequest: return "malformed-request"
      case .unknownProduct: return "unknown-product"
      case .unknownVersion: return "unknown-version"
      case .notProved(let rejection): return rejection.code
      case .stateUnavailable: return "state-unavailable"
      }
    }

    /// The `detail` field: the reason for people.
    package var detail: String {
      switch self {
      case .malformedRequest(let why): return why
      case .unknownProduct(let product): return "the catalog has no product '\(product)'"
      case .unknownVersion(let version): return "the catalog has no version '\(version)' of this product"
      case .notProved(let rejection): return rejection.description
      case .stateUnavailable: return "the gate cannot reach its state store; try again shortly"
      }
    }
  }

  /// The request body of `POST /v1/downloads`.
  struct Request: Decodable {
    var productIdentifier: String
    var signedTransaction: String?
    var contentVersion: String?
  }

  /// Decides a `POST /v1/downloads` body.
  package func decide(body: [UInt8], now: Date = Date()) async throws(Refusal) -> Grant {
    let request: Request
    do { request = try JSONDecoder().decode(Request.self, from: Data(body)) } catch {
      throw .malformedRequest(
        #"the body must be a JSON object {"productIdentifier": "...", "signedTransaction": "<JWS>"} with an optional "contentVersion""#
      )
    }
    let store = content.current
    guard store.catalog.products.contains(where: { $0.productIdentifier == request.productIdentifier }) else {
      throw .unknownProduct(request.productIdentifier)
    }
    guard let package = store.version(of: request.productIdentifier, contentVersion: request.contentVersion) else {
      throw .unknownVersion(request.contentVersion ?? "")
    }
    let path = ContentStore.servedPath(of: package.name)
    if openProducts.contains(request.productIdentifier) {
      return Grant(
        pathAndQuery: path, expires: nil, size: package.size, sha256: package.sha256,
        contentVersion: package.contentVersion)
    }
    guard let jws = request.signedTransaction else {
      throw .malformedRequest("the body has no 'signedTransaction'")
    }
    _ = try await prove(jws, anyOf: [request.productIdentifier], now: now)
    let expires = Int64(now.timeIntervalSince1970 + urlLifetime)
    return Grant(
      pathAndQuery: path + "?" + signer.query(path: path, expires: expires), expires: expires, size: package.size,
      sha256: package.sha256, contentVersion: package.contentVersion)
  }

  /// The purchase `jws` proves, when it is of one of `products` and the state store knows no
  /// refund, revocation or expiry for it: the check of `POST /v1/downloads`, and of an asset
  /// pack's credential.
  package func prove(_ jws: String, anyOf products: Set<String>, now: Date = Date()) async throws(Refusal)
    -> VerifiedTransaction
  {
    let transaction: VerifiedTransaction
    do throws(TransactionRejection) {
      transaction = try await verifier.verify(jws, now: now)
      guard transaction.transactionID != nil || transaction.originalTransactionID != nil else {
        throw .malformed("the transaction has no 'transactionId': refunds could not be matched to it")
      }
      guard let product = transaction.productID, products.contains(product) else {
        throw .wrongProduct(transaction.productID ?? "(none)")
      }
    } catch {
      throw .notProved(error)
    }
    let records: [NotificationRecord]
    do {
      records = try await state.records(
        transactionID: transaction.transactionID, originalTransactionID: transaction.originalTransactionID,
        types: Entitlement.accessTypes)
    } catch {
      throw .stateUnavailable(error.description)
    }
    do throws(TransactionRejection) {
      try Entitlement.check(transaction, productID: transaction.productID ?? "", records: records, now: now)
    } catch {
      throw .notProved(error)
    }
    return transaction
  }
}
