/*
 * Subsystem core (the library mtp_base): dtypes and their rounding, status
 * names, host tensors, the backend call wrappers, the float8 binding rules,
 * text I/O and untrusted-text cleaning, SHA-256, where modules and bundled
 * data are found (paths.c). It is what the reference and
 * every backend module link: nothing here knows ops, cases or runs.
 *
 * May depend on: nothing
 * Its interface: mtp/dtype.h, mtp/status.h, mtp/tensor.h, mtp/backend.h, mtp/quant.h,
 *   mtp/textio.h, mtp/textsafe.h, mtp/sha256.h, and paths.h.
 */
#ifndef MTP_SUBSYSTEM_CORE_H
#define MTP_SUBSYSTEM_CORE_H

#include "mtp/backend.h"
#include "mtp/dtype.h"
#include "mtp/quant.h"
#include "mtp/sha256.h"
#include "mtp/status.h"
#include "mtp/tensor.h"
#include "mtp/textio.h"
#include "mtp/textsafe.h"
#include "paths.h"

#endif
