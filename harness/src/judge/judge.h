/*
 * Subsystem judge: the comparison of outputs under tolerances and error
 * budgets (compare.c, bias.c), the judge of a case's outputs, of dumps under
 * their conventions and of weights by subset (judge.c, judge_conv.c,
 * subset.c), the block-contract rule, the weight sanity rule
 * (weight_rule.c), and the diagnoses: the hypotheses of the bug classes'
 * table (bugs/) that name a failure (diagnose.c, diag_hyp.c, diag_tp.c).
 *
 * May depend on: core, ops, refglue, bugs
 * Its interface: mtp/compare.h, mtp/bias.h, mtp/diagnose.h, mtp/rules.h and the
 *   declarations below.
 */
#ifndef MTP_SUBSYSTEM_JUDGE_H
#define MTP_SUBSYSTEM_JUDGE_H

#include "mtp/bias.h"
#include "mtp/compare.h"
#include "mtp/diagnose.h"
#include "mtp/rules.h"
#include "mtp/runner.h"

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

/* Backends compute the v1 conventions; only the reference (alone or under a
 * mutant) implements the others. False, with why, for a backend asked for a
 * convention other than v1 that the call uses. */
struct mtp_backend;
bool mtp_conv_backend_ok(const struct mtp_backend *be, const struct mtp_call *c,
			 char *why, size_t n);
/* After a dump was judged under its conventions: resolves the undeclared
 * ones (FORMAT.md v2 rule 8): on a failure, tries their combinations in
 * table order and keeps the first that passes; records the values taken in
 * r->conventions. */
enum mtp_status mtp_judge_conventions(struct mtp_result *r,
				      const struct mtp_case *c,
				      const struct mtp_case_call *p);

/* The hypothesis of an all-reduce bug class (a row with `partials`,
 * bugs/allreduce.c): the reference's side of its change (diag_tp.c), the
 * outputs into hyp (allocated). */
enum mtp_status mtp_diag_partials(const struct mtp_call *c,
				  const struct mtp_bug_class *row,
				  struct mtp_tensor *hyp);

#endif
