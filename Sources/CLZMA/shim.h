#ifndef PKGTOOL_CLZMA_SHIM_H
#define PKGTOOL_CLZMA_SHIM_H
#include <lzma.h>
#endif
