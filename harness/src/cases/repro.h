/* Internal to the runner: a result's shown file name and repro line. */
#ifndef MTP_REPRO_H
#define MTP_REPRO_H

#include "mtp/runner.h"

/* The file part of a case's name, the same from any working directory:
 * relative to the source tree when inside it, else the base name. */
void mtp_display_name(const char *path, char *out, size_t n);
/* Sets r->file (shown) and r->repro (absolute paths, every option that
 * changes the verdict) for a case read from `path` ("generated": made from
 * the case file). r->case_id, r->backend and r->generated are set. */
void mtp_result_origin(const struct mtp_run *run, struct mtp_result *r,
		       const char *path);

#endif
