/*
 * Internal to the runner: the pieces runner.c shares with judge.c (output
 * comparison), sources.c (what to run) and console.c (what is printed).
 */
#ifndef MTP_RUNNER_INT_H
#define MTP_RUNNER_INT_H

#include "mtp/casefile.h"
#include "mtp/runner.h"

/* Where cases come from: fixture files (from --fixtures, or selected by a
 * case file with their own filters and backends) and generated problems. */
struct sources {
	int nfx;
	struct mtp_fixture *fx;
	const struct mtp_casefile_fixture **sel; /* per fixture, or NULL */
	struct mtp_casefile cf;
	struct mtp_case_selection cs;
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

/* Compares outputs (signature order, or named in got_named) with the judge
 * (expected/ named in judge, or in signature order in judge_arr), sets the
 * verdict, the first bad output and the diagnosis. */
enum mtp_status mtp_judge_outputs(struct mtp_result *r,
				  const struct mtp_case *c,
				  const struct mtp_case_call *p,
				  const struct mtp_tensor *got,
				  const struct mtp_tensor_list *got_named,
				  const struct mtp_tensor_list *judge,
				  const struct mtp_tensor *judge_arr);
double mtp_result_worst_headroom(const struct mtp_result *r);

/* verify: judges c's observed outputs against the reference outputs ref
 * (signature order), through the subset view when the case has weights by
 * subset (subset.c; the result is then partial). */
enum mtp_status mtp_judge_dump(struct mtp_result *r, const struct mtp_case *c,
			       const struct mtp_case_call *p,
			       const struct mtp_tensor *ref);

/* After a dump was judged under its conventions: resolves the undeclared
 * ones (FORMAT.md v2 rule 8): on a failure, tries their combinations in
 * table order and keeps the first that passes; records the values taken in
 * r->conventions. */
/* Backends compute the v1 conventions; only the reference (alone or under a
 * mutant) implements the others. False, with why, for a backend asked for a
 * convention other than v1 that the call uses. */
struct mtp_backend;
bool mtp_conv_backend_ok(const struct mtp_backend *be, const struct mtp_call *c,
			 char *why, size_t n);
enum mtp_status mtp_judge_conventions(struct mtp_result *r,
				      const struct mtp_case *c,
				      const struct mtp_case_call *p);

void mtp_print_result(const struct mtp_run *run, const struct mtp_result *r,
		      int idx, int total);
void mtp_print_summary(const struct mtp_run *run);

#endif
