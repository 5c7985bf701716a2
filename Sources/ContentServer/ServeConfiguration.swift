import Foundation
import HostedContent
import PurchaseProof

/// Everything `pkgtool serve` is started with: the options of the command, and the limits that
/// bound what one client can take.
package struct ServeConfiguration: Sendable {
  /// The signed catalog file, served as published.
  package var catalogPath: String
  /// The folder that holds every package the catalog lists, under the last component of its URL.
  package var packagesDirectory: String
  /// The address to listen on.
  package var host: String
  /// The port to listen on; 0 picks a free one (the server prints it).
  package var port: Int
  /// What a transaction must prove (and, with ``appAppleID``, a notification).
  package var verifier: TransactionVerifier
  /// The app's Apple ID, which notifications in Production must name, when given.
  package var appAppleID: Int64?
  /// Signs download URLs; the same key on every instance behind a load balancer.
  package var signer: URLSigner
  /// How long a signed URL holds.
  package var urlLifetime: TimeInterval
  /// Products served without proof and without a signature.
  package var openProducts: Set<String>
  /// Where signed URLs point (a CDN, a load balancer); without it, the request's own host.
  package var publicURL: String?
  /// What bounds each client.
  package var limits: Limits
  /// How often the catalog, the packages folder and the packages are checked for a change
  /// (a reload also follows SIGHUP at once).
  package var reloadInterval: TimeInterval = 2
  /// Where `GET /metrics` listens (a port of its own, off the public one); nil: no metrics.
  package var metricsAddress: (host: String, port: Int)?

  /// Bounds on what the server holds for one client and in all.
  package struct Limits: Sendable {
    /// Connections open at once; more wait in the listen backlog.
    package var maximumConnections = 1024
    /// Connections one client (an IPv4 address, an IPv6 /64) may hold at once; more are closed
    /// as they come. 0: no limit (behind a proxy, whose address every connection has).
    package var maximumConnectionsPerClient = 32
    /// A new connection that has not sent a whole request head within this long is closed.
    package var firstRequestTimeout: TimeInterval = 10
    /// The largest POST body read.
    package var maximumBodySize = 96 * 1024
    /// The largest notification body read (a transaction and renewal info inside: about 10 KB).
    package var maximumNotificationSize = 260 * 1024
    /// The largest request head (all header fields together), and one field.
    package var maximumHeaderSize = 16 * 1024
    /// Header fields in one request.
    package var maximumHeaderCount = 100
    /// A connection with no request in progress is closed after this long.
    package var idleTimeout: TimeInterval = 30
    /// A connection whose client takes none of the response for this long is closed.
    package var stalledWriteTimeout: TimeInterval = 30
    /// Bytes read from disk and queued at a time, per download.
    package var chunkSize = 128 * 1024
    /// Limits that serve most deployments.
    package init() {}
  }

  /// A configuration; see the properties.
  package init(
    catalogPath: String, packagesDirectory: String, host: String, port: Int, verifier: TransactionVerifier,
    appAppleID: Int64? = nil, signer: URLSigner, urlLifetime: TimeInterval = 900, openProducts: Set<String> = [],
    publicURL: String? = nil, limits: Limits = Limits(), metricsAddress: (host: String, port: Int)? = nil
  ) {
    self.metricsAddress = metricsAddress
    self.appAppleID = appAppleID
    self.catalogPath = catalogPath
    self.packagesDirectory = packagesDirectory
    self.host = host
    self.port = port
    self.verifier = verifier
    self.signer = signer
    self.urlLifetime = urlLifetime
    self.openProducts = openProducts
    self.publicURL = publicURL
    self.limits = limits
  }
}
