/* Internal to the CLI: checks made before anything runs (preflight.c). */
#ifndef MTP_PREFLIGHT_H
#define MTP_PREFLIGHT_H

#include "mtp/runner.h"

/* Every --backend name is known (else the closest one is suggested), a
 * mutant names a known bug and base, --backend-lib is a regular file. */
enum mtp_status mtp_preflight_backends(const struct mtp_run_opts *o, char *err,
				       size_t errn);
/* Each non-NULL report path can be written: folders made, links followed. */
enum mtp_status mtp_preflight_outputs(const char *const *paths, int n,
				      char *err, size_t errn);

#endif
