/*
 * Subsystem ops: the op table, one row per op in rows/<name>.c (names,
 * tensor lists and shape rules, defaults, the reference runner, the cost,
 * the budget depth, the bench sequence), collected by ops.c; a call widened
 * for the reference (ref_io.c), which links the reference library
 * (reference/, mtp_reference); op attributes and their parsing (v1 and
 * v2), shape binding, the engine conventions table, and the version-2 case
 * rules (captured judged inputs, weights by subset: subset.c).
 *
 * May depend on: core
 * Its interface: mtp/op.h, mtp/conventions.h (and the v2 declarations of
 *   mtp/fixture.h), ref_io.h and subset_int.h.
 */
#ifndef MTP_SUBSYSTEM_OPS_H
#define MTP_SUBSYSTEM_OPS_H

#include "mtp/conventions.h"
#include "mtp/op.h"
#include "ref_io.h"
#include "subset_int.h"

#endif
