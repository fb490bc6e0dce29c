/*
 * Subsystem run: the runner (every selected problem on every backend,
 * the reference in the harness), the worker processes and their framed wire,
 * per-case isolation, and the console lines of a run.
 *
 * May depend on: core, ops, refglue, judge, fixture, backends, cases, util
 * Its interface: mtp/runner.h.
 */
#ifndef MTP_SUBSYSTEM_RUN_H
#define MTP_SUBSYSTEM_RUN_H

#include "mtp/runner.h"

#endif
