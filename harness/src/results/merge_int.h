/* Internal to `mtpcheck report` (merge.c): the bench files among its inputs
 * (merge_bench.c). Built with libcjson only. */
#ifndef MTP_MERGE_INT_H
#define MTP_MERGE_INT_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "mtp/runner.h"

/* Adds the rows of bench file `path` (parsed into root, its schema_version
 * accepted) to run->bench as a night, or to the night of the same run_id;
 * MTP_ERR_INVALID with "PATH: rows[i].FIELD: ..." in err for a row that is
 * not one, MTP_ERR_NOMEM. */
enum mtp_status mtp_merge_bench(struct mtp_run *run, const char *path,
				const cJSON *root, char *err, size_t errn);

#endif
