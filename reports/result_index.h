/* Internal to the HTML report: the results of a run found by fixture file,
 * case and column in log n (result_index.c). */
#ifndef MTP_RESULT_INDEX_H
#define MTP_RESULT_INDEX_H

#include <stdbool.h>

#include "mtp/runner.h"

struct mtp_result_index {
	const struct mtp_run *run;
	const struct mtp_result **sorted; /* by file, case, backend, order */
	bool *first; /* per result: the first of its file and case */
};

/* Indexes run's results; false when out of memory (x then empty: find
 * finds nothing, every result is a first). */
bool mtp_result_index_init(struct mtp_result_index *x,
			   const struct mtp_run *run);
void mtp_result_index_fini(struct mtp_result_index *x);
/* The first result (in run order) of file, case and backend, or NULL. */
const struct mtp_result *mtp_result_index_find(const struct mtp_result_index *x,
					       const char *file,
					       const char *case_id,
					       const char *backend);
/* Whether result i is the first of its file and case in run order. */
bool mtp_result_index_first(const struct mtp_result_index *x, int i);

#endif
