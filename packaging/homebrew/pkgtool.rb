# Homebrew formula for pkgtool: builds from source with SwiftPM on macOS (Xcode 16 or later, for
# Swift 6). UNTESTED: no macOS machine runs it here (docs/ci.md says what is tested where).
# Put it in a tap (brew tap-new you/pkgtool; cp pkgtool.rb "$(brew --repo you/pkgtool)/Formula/"),
# set url and sha256 to your release's source archive, then: brew install you/pkgtool/pkgtool
class Pkgtool < Formula
  desc "Build, validate, inspect and unpack In-App Purchase hosted-content packages"
  homepage "https://example.com/your-mirror/pkgtool"
  url "https://example.com/your-mirror/pkgtool/archive/refs/tags/v0.1.0.tar.gz"
  sha256 "0000000000000000000000000000000000000000000000000000000000000000" # of that archive
  head "https://example.com/your-mirror/pkgtool.git", branch: "main"

  depends_on "pkg-config" => :build
  depends_on xcode: ["16.0", :build]
  depends_on "libarchive"
  depends_on "libdeflate"
  depends_on "libxml2"
  depends_on :macos
  uses_from_macos "zlib"

  def install
    # libarchive and libxml2 are keg-only: SwiftPM finds them through pkg-config (as
    # scripts/bootstrap.sh sets up on macOS).
    ENV.prepend_path "PKG_CONFIG_PATH", Formula["libarchive"].opt_lib/"pkgconfig"
    ENV.prepend_path "PKG_CONFIG_PATH", Formula["libxml2"].opt_lib/"pkgconfig"
    ENV.prepend_path "PKG_CONFIG_PATH", Formula["libdeflate"].opt_lib/"pkgconfig"
    system "swift", "build", "--disable-sandbox", "-c", "release", "--product", "pkgtool"
    system "swift", "build", "--disable-sandbox", "-c", "release", "--product", "pkgtool-serve"
    # pkgtool serve runs pkgtool-serve from beside pkgtool.
    bin.install ".build/release/pkgtool", ".build/release/pkgtool-serve"

    # The man page as scripts/install.sh makes it: generate-manual's page with EXIT STATUS and
    # ENVIRONMENT from docs/man-sections.mdoc.
    system "swift", "package", "--disable-sandbox", "plugin", "--allow-writing-to-package-directory",
           "generate-manual", "--configuration", "release"
    generated = Dir[".build/plugins/GenerateManual/outputs/**/pkgtool.1"].first
    (buildpath/"pkgtool.1").write Utils.safe_popen_read("scripts/man-page.sh", generated)
    man1.install "pkgtool.1"
    serve_page = Dir[".build/plugins/GenerateManual/outputs/**/pkgtool serve.1"].first
    (buildpath/"pkgtool-serve.1").write Utils.safe_popen_read("scripts/man-page.sh", serve_page)
    man1.install "pkgtool-serve.1"

    generate_completions_from_executable(bin/"pkgtool", "--generate-completion-script",
                                         shells: [:bash, :zsh, :fish])
  end

  test do
    assert_match version.to_s, shell_output("#{bin}/pkgtool --version")
    system bin/"pkgtool", "init", "MyBook", "--product-id", "com.example.book"
    (testpath/"MyBook/Contents/chapter1.txt").write "Once upon a time.\n"
    system bin/"pkgtool", "build", "MyBook", "-o", "book.pkg"
    system bin/"pkgtool", "validate", "book.pkg"
    shell_output("#{bin}/pkgtool validate #{testpath}/missing.pkg", 2)
  end
end
