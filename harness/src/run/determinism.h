/*
 * Internal to the runner: the determinism modes (docs/DIAGNOSES.md
 * "Determinism"). A case that passed is called again on the same worker:
 * on fresh copies of its inputs (--repeat N --bitwise: NONDETERMINISTIC)
 * and on its own rows alone, moved or as a prefix (--invariance:
 * BATCH_VARIANT). The plan of the invariance calls follows the op table's
 * `rows` property; an op whose rows mix is said not applicable, never
 * passed in silence.
 */
#ifndef MTP_DETERMINISM_H
#define MTP_DETERMINISM_H

#include "mtp/runner.h"
#include "worker.h"

/* Rows at T = 1 that --invariance checks at most; more are sampled evenly,
 * first and last included. The single-row calls of a case may send at most
 * MTP_INVAR_BYTES_X times its own inputs (every call sends the weights): a
 * case whose weights dwarf its rows (an embedding table) checks fewer rows
 * alone, never fewer than MTP_INVAR_SINGLES_MIN. */
#define MTP_INVAR_SINGLES_MAX 32
#define MTP_INVAR_SINGLES_MIN 4
#define MTP_INVAR_BYTES_X 8

/* One extra call: the case's rows rows[0..n) at positions 0..n). */
struct mtp_row_call {
	int64_t n;
	int64_t *rows; /* into the plan's storage */
	char what[80]; /* "row 5 alone (T = 1)" */
};

struct mtp_row_plan {
	bool applicable;
	char why[200]; /* when not */
	int n_calls;
	struct mtp_row_call calls[MTP_INVAR_SINGLES_MAX + 3];
	int64_t *storage;
};

/* The calls --invariance makes for an op with n_rows rows: INDEPENDENT:
 * each row alone (sampled past `singles`, at most MTP_INVAR_SINGLES_MAX)
 * and the batch rotated by one row (a lone row: twice); CAUSAL: prefixes
 * of 1, n/2 and n-1 rows; UNDECLARED or MIXED (or no rows): not
 * applicable, why says so. */
enum mtp_status mtp_row_plan_make(const struct mtp_op *op, int64_t n_rows,
				  int64_t singles, struct mtp_row_plan *plan);
void mtp_row_plan_fini(struct mtp_row_plan *plan);

/* Distance of element j of b from element i of a (one dtype) in units in
 * the last place: 0 when the bits are equal, at least 1 when they are not;
 * INT64_MAX for integers that differ and NaN against anything else. */
int64_t mtp_elem_ulps(enum mtp_dtype dt, const void *a, size_t i, const void *b,
		      size_t j);

/* Element i of t as "value (0xbits)". */
void mtp_elem_describe(const struct mtp_tensor *t, size_t i, char *buf,
		       size_t n);

/* Calls case c (outputs shaped as want) once more on w, into got: false,
 * with r's verdict and message saying why (what: "run 2 of 3 (--repeat)"),
 * if no outputs came back. */
bool mtp_extra_call(const struct mtp_run_opts *o, struct mtp_worker *w,
		    const struct mtp_case *c, const struct mtp_tensor *want,
		    int n_want, struct mtp_tensor *got, const char *what,
		    struct mtp_result *r);

/* Appends to r->note ("; " between). */
void mtp_note_add(struct mtp_result *r, const char *text);

/* --invariance on a case whose outputs from worker w are got. */
void mtp_invariance_check(const struct mtp_run_opts *o, struct mtp_worker *w,
			  struct mtp_result *r, const struct mtp_case *c,
			  const struct mtp_case_call *p,
			  const struct mtp_tensor *got);

/* Every determinism mode of o on a case that passed (else nothing): the
 * reruns first, the invariance calls on a deterministic backend. */
void mtp_determinism_check(const struct mtp_run_opts *o, struct mtp_worker *w,
			   struct mtp_result *r, struct mtp_case *c,
			   const struct mtp_case_call *p,
			   const struct mtp_tensor *got);

#endif
