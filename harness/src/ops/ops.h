/*
 * Subsystem ops: the op table (names, tensor lists, shape rules), op
 * attributes and their parsing (v1 and v2), shape binding, the engine
 * conventions table, and the version-2 case rules (captured judged inputs,
 * weights by subset: subset.c).
 *
 * May depend on: core
 * Its interface: mtp/op.h, mtp/conventions.h (and the v2 declarations of
 *   mtp/fixture.h), and subset_int.h.
 */
#ifndef MTP_SUBSYSTEM_OPS_H
#define MTP_SUBSYSTEM_OPS_H

#include "mtp/conventions.h"
#include "mtp/op.h"
#include "subset_int.h"

#endif
