import ArgumentParser
import HostedContent

/// `--timeout`, for the commands that fetch a package by URL (`install`, `unpack`).
struct DownloadOptions: ParsableArguments {
  @Option(
    help: ArgumentHelp(
      "For a URL: the most time the download may take, retries included (90s, 30m, 2h; a number alone is seconds). Without it, a download must average 16 kB/s after its first minute.",
      valueName: "duration"),
    transform: DurationArgument.option(range: 1...7 * 86_400))
  var timeout: DurationArgument?

  /// The deadline of a download: `--timeout`, or the minimum average rate.
  var deadline: ResumingDownload.Deadline {
    guard let timeout else { return .standard }
    return .within(seconds: timeout.seconds, what: "--timeout \(timeout)")
  }
}
