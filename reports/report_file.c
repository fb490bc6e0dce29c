/*
 * The one way report writers create their file: written under a temporary
 * name beside it and renamed over it once complete, so that a crash or a
 * full disk never leaves a partial report behind.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "report_file.h"
#include "mtp/textio.h"

struct report_arg {
	mtp_report_body_fn body;
	const struct mtp_run *run;
};

static void write_body(FILE *f, const void *arg)
{
	const struct report_arg *a = arg;

	a->body(f, a->run);
}

enum mtp_status mtp_report_write(const struct mtp_run *run, const char *path,
				 mtp_report_body_fn body, char *err,
				 size_t errn)
{
	struct report_arg a = {body, run};

	return mtp_write_atomic(path, write_body, &a, err, errn);
}
