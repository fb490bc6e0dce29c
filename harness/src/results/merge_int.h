/* Internal to `mtpcheck report` (merge.c): the typed field readers every
 * part of the merge refuses a bad input with (merge_field.c), one result
 * object (merge_result.c), the bench files among the inputs
 * (merge_bench.c) and the removal of what two inputs both hold
 * (merge_dedup.c). Built with libcjson only. */
#ifndef MTP_MERGE_INT_H
#define MTP_MERGE_INT_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mtp/runner.h"

/* Where the fields being read live, for the one line that refuses a bad
 * one: "PATH: AT.FIELD: why" ("night3.json: results[4].outputs[0].elements:
 * not an integer"); at is "" at the top of the file. */
struct mtp_jwhere {
	const char *path;
	char at[96];
	char *err;
	size_t errn;
};

/* Field k of o as a string: false with the line when present and not a
 * string, or absent and required; *s is "" when absent. */
bool mtp_jw_str(const struct mtp_jwhere *w, const cJSON *o, const char *k,
		bool required, const char **s);
/* The same, cleaned and cut into dst (textsafe.h). */
bool mtp_jw_text(const struct mtp_jwhere *w, const cJSON *o, const char *k,
		 bool required, char *dst, size_t n);

enum {
	MTP_JW_REQUIRED = 1, /* absent: refused (else 0) */
	MTP_JW_SPECIAL = 2,  /* "inf", "-inf", "nan" as the writer keeps them */
	MTP_JW_FINITE_NONNEG = 4 /* a finite number >= 0 */
};
/* Field k of o as a number under flags (MTP_JW_*). */
bool mtp_jw_num(const struct mtp_jwhere *w, const cJSON *o, const char *k,
		unsigned flags, double *x);
/* Field k of o as an integer in [0, 2^53] (absent and optional: 0). */
bool mtp_jw_count(const struct mtp_jwhere *w, const cJSON *o, const char *k,
		  bool required, int64_t *x);
/* Field k of o as an array of counts into dst: exactly len of them (len
 * > 0) or at most -len (len < 0); their number in *n. */
bool mtp_jw_counts(const struct mtp_jwhere *w, const cJSON *o, const char *k,
		   bool required, int len, int64_t *dst, int *n);
/* Field k of o as true or false (absent and optional: false). */
bool mtp_jw_bool(const struct mtp_jwhere *w, const cJSON *o, const char *k,
		 bool required, bool *b);
/* Field k of o: an array (or object, when object) or, if optional,
 * absent (*v NULL). */
bool mtp_jw_kind(const struct mtp_jwhere *w, const cJSON *o, const char *k,
		 bool required, bool object, const cJSON **v);
/* Refuses field k (or the object at w->at, k NULL) for why. */
bool mtp_jw_refuse(const struct mtp_jwhere *w, const char *k, const char *why);

/* What the file a result came from says about it. */
struct mtp_merge_origin {
	bool weights_only; /* verify --weights-only: no output is compared */
};

/* Result object o of a results file into r (its column col): false with
 * the line for a field that is missing or of the wrong type; r->cmp is
 * r's own even then (mtp_run_fini frees it). A PASSED that its outputs
 * deny becomes INVALID; one that compared no element (and did not check
 * weights only) SKIPPED, "nothing compared". */
bool mtp_merge_result(const struct mtp_jwhere *w, const cJSON *o,
		      const char *col, const struct mtp_merge_origin *from,
		      struct mtp_result *r);

/* Adds the rows of bench file `path` (parsed into root, its schema_version
 * accepted) to run->bench as a night, or to the night of the same run_id;
 * MTP_ERR_INVALID with "PATH: rows[i].FIELD: ..." in err for a row that is
 * not one, MTP_ERR_NOMEM. */
enum mtp_status mtp_merge_bench(struct mtp_run *run, const char *path,
				const cJSON *root, char *err, size_t errn);

/* The same for each bench document in `runs` of a bench collection
 * (format mtpcheck-bench-collection), its record the default of theirs;
 * errors name "PATH: runs[i]". */
enum mtp_status mtp_merge_bench_collection(struct mtp_run *run,
					   const char *path, const cJSON *root,
					   char *err, size_t errn);

/* Drops every result whose column, file and case an earlier one has (the
 * same run given twice, or a merged report among its own inputs) and
 * recounts run->counts; the number dropped, or -1 when out of memory. */
int mtp_merge_drop_repeats(struct mtp_run *run);
/* Drops every bench row that its night already has (a file given twice);
 * false when out of memory. Both keep the order and take n log n. */
bool mtp_merge_drop_bench_repeats(struct mtp_bench_history *h);

#endif
