/*
 * Subsystem reports: the writers of a run's results: JSON, JUnit XML, the
 * self-contained HTML page and its bench history, the bench HTML and tables,
 * and the metadata every report carries.
 *
 * May depend on: core, ops, judge, backends, timing, run, util
 * Its interface: mtp/meta.h, mtp/bench.h (the history), mtp/runner.h (the writers).
 */
#ifndef MTP_SUBSYSTEM_REPORTS_H
#define MTP_SUBSYSTEM_REPORTS_H

#include "mtp/bench.h"
#include "mtp/meta.h"
#include "mtp/runner.h"

#endif
