/*
 * Subsystem backends: finding and opening backends (built in: ref, cpu;
 * modules beside the binary; --backend-lib libraries), the ref backend
 * (kernels/ref/backend_ref.c), and the mutants that reproduce each bug class
 * over a correct backend.
 *
 * May depend on: core, ops, refglue, judge, util
 * Its interface: mtp/backend.h (the registry part), mtp/mutant.h.
 */
#ifndef MTP_SUBSYSTEM_BACKENDS_H
#define MTP_SUBSYSTEM_BACKENDS_H

#include "mtp/backend.h"
#include "mtp/mutant.h"

#endif
