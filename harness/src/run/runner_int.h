/*
 * Internal to the run subsystem: what runner.c, worker.c and console.c
 * share (the sources of cases/cases.h, the judge of judge/judge.h, and the
 * console lines).
 */
#ifndef MTP_RUNNER_INT_H
#define MTP_RUNNER_INT_H

#include "cases/cases.h"
#include "judge/judge.h"
#include "mtp/runner.h"

void mtp_print_result(const struct mtp_run *run, const struct mtp_result *r,
		      int idx, int total);
void mtp_print_summary(const struct mtp_run *run);

#endif
