/// Apple Archive (`.aar`): entries (`AA01`/`YAA1` headers and their blobs) and the `pbz*`
/// compression framing. Knows nothing of plists or rules, like the XAR target.
package enum AppleArchive {}
