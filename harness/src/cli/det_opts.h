/* Internal to the CLI: the determinism options of run (cli_det.c). */
#ifndef MTP_DET_OPTS_H
#define MTP_DET_OPTS_H

#include "mtp/runner.h"

/* Takes a determinism option at argv[0] (its value at argv[1]) into d:
 * the arguments taken (1 or 2), 0 if argv[0] is none, -1 after printing a
 * usage error (an option of run given to another command, a bad value). */
int mtp_cli_det_opt(const char *cmd, int argc, char **argv,
		    struct mtp_determinism *d);
/* After every option: 0, with --bitwise alone made --repeat 2 and the
 * modes recorded for the reports' metadata, or -1 after a usage error
 * (--repeat without --bitwise, --invariance-ulps without --invariance). */
int mtp_cli_det_check(const char *cmd, struct mtp_determinism *d);

#endif
