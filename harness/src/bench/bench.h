/*
 * Subsystem bench: mtpcheck bench: each op timed on each backend over
 * generated inputs, its outputs checked, against an optional baseline
 * (baseline_none.c stands in without libcjson).
 *
 * May depend on: core, ops, refglue, judge, fixture, backends, cases, timing, reports, run, util
 * Its interface: mtp/bench.h, mtp/baseline.h.
 */
#ifndef MTP_SUBSYSTEM_BENCH_H
#define MTP_SUBSYSTEM_BENCH_H

#include "mtp/baseline.h"
#include "mtp/bench.h"

#endif
