#ifndef PKGTOOL_CLIBXML2_SHIM_H
#define PKGTOOL_CLIBXML2_SHIM_H
#include <libxml/xmlversion.h>
/* Debian builds libxml2 with ICU, whose headers clash with Foundation's own ICU module
 * (_FoundationICU: "'UErrorCode' has different definitions"). pkgtool never touches the
 * ICU-dependent fields (xmlCharEncodingHandler is only used through pointers), so the
 * headers are read without them. */
#undef LIBXML_ICU_ENABLED
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlreader.h>
#include <libxml/xmlwriter.h>
#include <libxml/xmlerror.h>
#endif
