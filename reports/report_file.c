/*
 * The one way report writers create their file: written under a temporary
 * name beside it and renamed over it once complete, so that a crash or a
 * full disk never leaves a partial report behind.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
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

int mtp_report_backends(const struct mtp_run *run, const char ***names,
			const char ***devices)
{
	int n = run->n_devices ? run->n_devices : run->opts.n_backends;

	*names = calloc((size_t)n + 1, sizeof(**names));
	*devices = calloc((size_t)n + 1, sizeof(**devices));
	if (!*names || !*devices) {
		free(*names);
		free(*devices);
		*names = *devices = NULL;
		return -1;
	}
	for (int i = 0; i < n; i++) {
		const struct mtp_run_device *d =
			run->n_devices ? &run->devices[i] : NULL;

		(*names)[i] = d ? d->name : run->opts.backends[i];
		(*devices)[i] = d && d->device[0] ? d->device : NULL;
	}
	return n;
}
