/* Internal to the runner: running one case in a child process (isolate.c). */
#ifndef MTP_ISOLATE_H
#define MTP_ISOLATE_H

#include "mtp/runner.h"

typedef void (*mtp_isolated_fn)(void *arg, struct mtp_result *r);

/* Runs fn in a child and copies its result into r; a crash or a time-out
 * becomes CRASHED or TIMEOUT in r (with the signal or the limit). */
void mtp_isolate_run(mtp_isolated_fn fn, void *arg, double timeout_s,
		     struct mtp_result *r);

#endif
