/*
 * Subsystem timing: timers and repeat statistics, bytes and flops per op,
 * and the comparison of two timing samples (Mann-Whitney U).
 *
 * May depend on: core
 * Its interface: mtp/timing.h.
 */
#ifndef MTP_SUBSYSTEM_TIMING_H
#define MTP_SUBSYSTEM_TIMING_H

#include "mtp/timing.h"

#endif
