/*
 * Subsystem cases: what to run. Case files (parsed, tags and backends
 * selected), generated problems and their values, the sources of a run
 * (fixtures, case files, generated problems, filters and shards) and the
 * repro lines.
 *
 * May depend on: core, ops, fixture, util
 * Its interface: mtp/casefile.h, mtp/generate.h and the declarations below.
 */
#ifndef MTP_SUBSYSTEM_CASES_H
#define MTP_SUBSYSTEM_CASES_H

#include "mtp/casefile.h"
#include "mtp/generate.h"
#include "mtp/runner.h"
#include "repro.h"

/* Where cases come from: fixture files (from --fixtures, or selected by a
 * case file with their own filters and backends) and generated problems. */
struct sources {
	int nfx;
	struct mtp_fixture *fx;
	const struct mtp_casefile_fixture **sel; /* per fixture, or NULL */
	struct mtp_casefile cf;
	struct mtp_case_selection cs;
	char merged[4096]; /* verify's merged rank files, removed at close */
	char ranks[8192];  /* their paths, one a line */
};

/* A selected problem: case i of fixture f, or generated problem g (f < 0). */
struct item {
	int f, i, g;
};

void mtp_sources_open(struct mtp_run *run, struct sources *s);
void mtp_sources_close(struct sources *s);
/* Every selected problem in run order, this shard's share; *out malloc'ed. */
int mtp_sources_select(const struct mtp_run *run, const struct sources *s,
		       struct item **out);
void mtp_sources_list(const struct mtp_run *run, const struct sources *s,
		      const struct item *it, int n);

#endif
