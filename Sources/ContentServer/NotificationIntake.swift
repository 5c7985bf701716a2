import Foundation
import PurchaseProof

/// `POST /v1/notifications` without HTTP: App Store Server Notifications v2 in, stored in the
/// state store. Apple sends `{"signedPayload": "<JWS>"}` and retries anything but a 200 for days,
/// so a notification is answered 200 only once it is committed, a repeated `notificationUUID` is
/// answered 200 and changes nothing, and one that fails a check changes nothing.
package struct NotificationIntake: Sendable {
  /// What a notification must prove.
  package let verifier: NotificationVerifier
  /// Where notifications are kept.
  package let state: any EntitlementStore

  /// An intake that verifies with `verifier` and keeps what passes in `state`.
  package init(verifier: NotificationVerifier, state: any EntitlementStore) {
    self.verifier = verifier
    self.state = state
  }

  /// What became of a notification that passed its checks.
  package struct Outcome: Sendable {
    /// The notification, verified.
    package var notification: VerifiedNotification
    /// False when its UUID was stored already (Apple's retry): nothing changed.
    package var isNew: Bool
  }

  /// Why a notification was not taken: 400 for a body or JWS that is not one, 403 for one that
  /// is not this app's or not signed by the App Store, 503 when the store did not answer (Apple
  /// then retries).
  package enum Refusal: Error, Sendable {
    /// The body is not `{"signedPayload": "..."}`.
    case malformedRequest(String)
    /// The signed payload fails a check.
    case notProved(TransactionRejection)
    /// The state store did not commit it.
    case stateUnavailable(String)

    /// The HTTP status.
    package var status: Int {
      switch self {
      case .malformedRequest: return 400
      case .notProved(let rejection):
        switch rejection {
        case .malformed, .malformedNotification, .unsupportedAlgorithm: return 400
        default: return 403
        }
      case .stateUnavailable: return 503
      }
    }

    /// The `error` field of the answer.
    package var code: String {
      switch self {
      case .malformedRequest: return "malformed-request"
      case .notProved(let rejection): return rejection.code
      case .stateUnavailable: return "state-unavailable"
      }
    }

    /// The `detail` field.
    package var detail: String {
      switch self {
      case .malformedRequest(let why): return why
      case .notProved(let rejection): return rejection.description
      case .stateUnavailable: return "the gate cannot reach its state store; the App Store will send it again"
      }
    }
  }

  struct Request: Decodable {
    var signedPayload: String
  }

  /// Verifies and stores a `POST /v1/notifications` body.
  package func receive(body: [UInt8], now: Date = Date()) async throws(Refusal) -> Outcome {
    let request: Request
    do { request = try JSONDecoder().decode(Request.self, from: Data(body)) } catch {
      throw .malformedRequest(#"the body must be a JSON object {"signedPayload": "<JWS>"}, as the App Store sends"#)
    }
    let notification: VerifiedNotification
    do throws(TransactionRejection) {
      notification = try await verifier.verify(request.signedPayload, now: now)
    } catch {
      throw .notProved(error)
    }
    // The newest notification decides a transaction's access: one with no date could not be
    // ordered (Apple's always carry one; only its test data lacks it).
    if Entitlement.accessTypes.contains(notification.notificationType), notification.signedDate == nil {
      throw .notProved(.malformedNotification("a \(notification.notificationType) notification has no 'signedDate'"))
    }
    let transaction = notification.transaction
    let record = NotificationRecord(
      notificationUUID: notification.notificationUUID, notificationType: notification.notificationType,
      subtype: notification.subtype,
      signedDate: Entitlement.milliseconds(notification.signedDate ?? now), environment: notification.environment,
      bundleID: notification.bundleID, transactionID: transaction?.transactionID,
      originalTransactionID: transaction?.originalTransactionID, productID: transaction?.productID,
      transactionSignedDate: transaction.map { Entitlement.milliseconds($0.signedDate) },
      revocationDate: transaction?.revocationDate.map(Entitlement.milliseconds),
      expiresDate: transaction?.expiresDate.map(Entitlement.milliseconds), signedPayload: request.signedPayload,
      receivedAt: Entitlement.milliseconds(now))
    do {
      let isNew = try await state.record(record)
      return Outcome(notification: notification, isNew: isNew)
    } catch {
      throw .stateUnavailable(error.description)
    }
  }
}
