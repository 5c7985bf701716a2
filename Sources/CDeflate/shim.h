#ifndef PKGTOOL_CDEFLATE_SHIM_H
#define PKGTOOL_CDEFLATE_SHIM_H
/* libdeflate: whole-buffer DEFLATE, used to compress files the writer holds whole. */
#include <libdeflate.h>
#endif
