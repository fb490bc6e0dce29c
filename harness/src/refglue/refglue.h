/*
 * Subsystem refglue: the glue between a call and the scalar reference
 * (reference/, the library mtp_reference): binding a call's tensors to the
 * reference's double arrays and back (ref_io), the dispatch of every op
 * (ops_ref.c), the captured-block form of steps and chains, and the
 * reference's side of a step bug (bug_step.c).
 *
 * May depend on: core, ops
 * Its interface: the declarations of ref_io.h, captured.h and bug_step.h,
 *   included here.
 */
#ifndef MTP_SUBSYSTEM_REFGLUE_H
#define MTP_SUBSYSTEM_REFGLUE_H

#include "bug_step.h"
#include "captured.h"
#include "ref_io.h"

#endif
