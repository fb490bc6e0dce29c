/*
 * Baselines for `mtpcheck bench --baseline FILE`: the rows of an earlier
 * bench JSON file (the files in docs/bench have the format), found by op, shape and
 * backend, with their raw samples for the significance test.
 */
#ifndef MTP_BASELINE_H
#define MTP_BASELINE_H

#include <stddef.h>

#include "mtp/status.h"

struct mtp_baseline_row {
	char op[64], shape[64], backend[128];
	int n;
	double *samples;
	double spread; /* run-to-run spread of its repeats (repeat_medians_s:
			* (max - min) / min), 0 without */
};

struct mtp_baseline {
	int n;
	struct mtp_baseline_row *rows;
};

/* Reads a bench JSON file; errors name the file (and say if this build has
 * no JSON reader). */
enum mtp_status mtp_baseline_load(const char *path, struct mtp_baseline *b,
				  char *err, size_t errn);
const struct mtp_baseline_row *mtp_baseline_find(const struct mtp_baseline *b,
						 const char *op,
						 const char *shape,
						 const char *backend);
void mtp_baseline_free(struct mtp_baseline *b);

#endif
