#ifndef PKGTOOL_CARCHIVE_SHIM_H
#define PKGTOOL_CARCHIVE_SHIM_H
#include <archive.h>
#include <archive_entry.h>
#endif
