/* Internal to the CLI: the determinism options of run (cli_det.c). */
#ifndef MTP_DET_OPTS_H
#define MTP_DET_OPTS_H

#include "mtp/runner.h"

/* After every option: 0, with --bitwise alone made --repeat 2 and the
 * modes recorded for the reports' metadata, or -1 after a usage error
 * (--repeat without --bitwise, --invariance-ulps without --invariance). */
int mtp_cli_det_check(const char *cmd, struct mtp_determinism *d);

#endif
