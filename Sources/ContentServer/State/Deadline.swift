import NIOConcurrencyHelpers

/// Runs `operation` in a task of its own and waits for it at most `timeout`: then throws
/// ``StoreError/unavailable(_:)`` saying that `what` did not answer, and cancels the operation.
///
/// The operation is not a child task on purpose: a database call that ignores cancellation (a
/// statement waiting on SQLite's thread, a query on a connection whose server stopped answering)
/// would keep a task group, and so the caller, waiting. Here the caller goes on at the deadline
/// and the operation's late result, if it ever comes, is dropped. Cancelling the calling task
/// ends the wait at once, the same way.
func withDeadline<T: Sendable>(
  _ timeout: Duration, _ what: String, _ operation: @escaping @Sendable () async throws(StoreError) -> T
) async throws(StoreError) -> T {
  let outcome = Outcome<T>()
  let work = Task {
    do throws(StoreError) {
      outcome.settle(.success(try await operation()))
    } catch {
      outcome.settle(.failure(error))
    }
  }
  let timer = Task {
    try? await Task.sleep(for: timeout)
    outcome.settle(.failure(.unavailable("\(what) did not answer within \(format(timeout))")))
  }
  let result = await withTaskCancellationHandler {
    await outcome.value()
  } onCancel: {
    outcome.settle(.failure(.unavailable("\(what): the request was cancelled")))
  }
  work.cancel()
  timer.cancel()
  return try result.get()
}

/// `2 s`, `500 ms`: a duration for a message.
func format(_ duration: Duration) -> String {
  let milliseconds = duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
  return milliseconds % 1000 == 0 ? "\(milliseconds / 1000) s" : "\(milliseconds) ms"
}

/// The first of several results, handed to one waiter: whoever settles first wins, later
/// settlements are dropped.
private final class Outcome<T: Sendable>: Sendable {
  private enum State: Sendable {
    case waiting(CheckedContinuation<Result<T, StoreError>, Never>?)
    case settled(Result<T, StoreError>)
  }
  private let state = NIOLockedValueBox(State.waiting(nil))

  /// Settles the outcome unless it is settled already.
  func settle(_ result: Result<T, StoreError>) {
    let waiter: CheckedContinuation<Result<T, StoreError>, Never>? = state.withLockedValue { state in
      guard case .waiting(let waiter) = state else { return nil }
      state = .settled(result)
      return waiter
    }
    waiter?.resume(returning: result)
  }

  /// Waits for the first settlement (returns at once if there was one).
  func value() async -> Result<T, StoreError> {
    await withCheckedContinuation { continuation in
      let settled: Result<T, StoreError>? = state.withLockedValue { state in
        switch state {
        case .settled(let result): return result
        case .waiting:
          state = .waiting(continuation)
          return nil
        }
      }
      if let settled { continuation.resume(returning: settled) }
    }
  }
}
