/*
 * Internal to the runner: contained child processes (isolate.c). A child is
 * forked into its own process group, sees only the descriptors it is given,
 * dies with the harness, and is killed as a group; while a run goes on,
 * SIGINT and SIGTERM kill every live child group and are remembered, so that
 * the run stops after the case in flight and its reports are still written.
 */
#ifndef MTP_ISOLATE_H
#define MTP_ISOLATE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "mtp/runner.h"

/* Forks a contained child. In the child (return 0) every descriptor but
 * keep[0..n) is closed, those are moved to high numbers (updated in keep,
 * close-on-exec), stdin reads /dev/null and stdout goes to stderr. In the
 * harness it returns the pid (registered for the signal handler) or -1. */
pid_t mtp_child_spawn(int *keep, int n);

/* Waits up to grace_s for the child to end by itself, then kills its group;
 * reaps it and returns its wait status. */
int mtp_child_end(pid_t pid, double grace_s);

/* mtp_child_describe: mtp/runner.h (bench's supervisor uses it too). */
/* mtp_signals_begin/end/caught: mtp/runner.h (bench uses them too). */

#endif
