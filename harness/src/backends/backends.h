/*
 * Subsystem backends: finding and opening backends (built in: ref, cpu;
 * modules beside the binary; --backend-lib libraries), the ref backend
 * (kernels/ref/backend_ref.c), and the mutants that reproduce each bug class
 * of the table (bugs/) over a correct backend.
 *
 * May depend on: core, ops, refglue, judge, util, bugs
 * Its interface: mtp/backend.h (the registry part), mtp/mutant.h.
 */
#ifndef MTP_SUBSYSTEM_BACKENDS_H
#define MTP_SUBSYSTEM_BACKENDS_H

#include "mtp/backend.h"
#include "mtp/mutant.h"

#endif
