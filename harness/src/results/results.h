/*
 * Subsystem results: mtpcheck report: JSON results files from several
 * machines or nights merged into one run, and their bench files into its
 * bench history (merge_none.c stands in without libcjson).
 *
 * May depend on: core, ops, judge, run, reports, util
 * Its interface: mtp/runner.h (mtp_report_merge).
 */
#ifndef MTP_SUBSYSTEM_RESULTS_H
#define MTP_SUBSYSTEM_RESULTS_H

#include "mtp/runner.h"

#endif
