/*
 * Subsystem refglue: the reference run of a call (ops_ref.c: the call
 * widened by ops' ref_io, then its op row's reference or, for a captured
 * block, the captured-block form of steps and chains, captured_*.c), and
 * the reference's side of a step bug (bug_step.c).
 *
 * May depend on: core, ops
 * Its interface: the declarations of captured.h (which brings ops' ref_io.h) and bug_step.h,
 *   included here.
 */
#ifndef MTP_SUBSYSTEM_REFGLUE_H
#define MTP_SUBSYSTEM_REFGLUE_H

#include "bug_step.h"
#include "captured.h"

#endif
