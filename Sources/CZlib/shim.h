#ifndef PKGTOOL_CZLIB_SHIM_H
#define PKGTOOL_CZLIB_SHIM_H
#include <zlib.h>

/* zlib's init functions are macros that Swift cannot import; these wrap them. */
static inline int pkgtool_deflateInit2(z_streamp strm, int level, int windowBits) {
  return deflateInit2(strm, level, Z_DEFLATED, windowBits, 8, Z_DEFAULT_STRATEGY);
}
static inline int pkgtool_inflateInit2(z_streamp strm, int windowBits) {
  return inflateInit2(strm, windowBits);
}
#endif
