/*
 * Subsystem core (the library mtp_base): dtypes and their rounding, status
 * names, host tensors, the backend call wrappers, the float8 binding rules.
 * It is what the reference and every backend module link (and what an
 * install gives a vendor): nothing here knows ops, cases or runs.
 *
 * May depend on: nothing
 * Its interface: mtp/dtype.h, mtp/status.h, mtp/tensor.h, mtp/backend.h,
 *   mtp/quant.h.
 */
#ifndef MTP_SUBSYSTEM_CORE_H
#define MTP_SUBSYSTEM_CORE_H

#include "mtp/backend.h"
#include "mtp/dtype.h"
#include "mtp/quant.h"
#include "mtp/status.h"
#include "mtp/tensor.h"

#endif
