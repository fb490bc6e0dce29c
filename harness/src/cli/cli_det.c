/*
 * The determinism options of `mtpcheck run` (docs/DIAGNOSES.md
 * "Determinism"): --invariance [--invariance-ulps N] and --repeat N
 * --bitwise, rows of the option table (options.c): the setters of the two
 * counts, and the combinations that mean nothing, usage errors here.
 */
#include <stdio.h>
#include <string.h>

#include "mtp/meta.h"
#include "det_opts.h"
#include "options.h"

#define REPEAT_MAX 1000
#define ULPS_MAX 1000000

static int det_usage(const char *cmd, const char *what, const char *arg)
{
	fprintf(stderr, "mtpcheck %s: ", cmd);
	fprintf(stderr, what, arg);
	fprintf(stderr, " (see mtpcheck %s --help)\n", cmd);
	return -1;
}

int mtp_opt_set_repeat(void *dst, void *at, const char *name, const char *val,
		       char *why, size_t n)
{
	struct mtp_determinism *d = at;
	long long v;

	(void)dst;
	if (mtp_opt_int(name, val, 1, REPEAT_MAX,
			"a count of runs from 1 to 1000", &v, why, n))
		return -1;
	d->repeat = (int)v;
	return 0;
}

int mtp_opt_set_ulps(void *dst, void *at, const char *name, const char *val,
		     char *why, size_t n)
{
	struct mtp_determinism *d = at;
	long long v;

	(void)dst;
	if (mtp_opt_int(name, val, 0, ULPS_MAX,
			"a count of ulps from 0 to 1000000", &v, why, n))
		return -1;
	d->ulps = v;
	d->ulps_set = true;
	return 0;
}

int mtp_cli_det_check(const char *cmd, struct mtp_determinism *d)
{
	if (d->ulps_set && !d->invariance)
		return det_usage(cmd, "--invariance-ulps bounds --invariance%s",
				 ", which is not given");
	if (d->repeat > 1 && !d->bitwise)
		return det_usage(cmd,
				 "--repeat compares the reruns bit for bit%s",
				 ": add --bitwise");
	if (d->bitwise && d->repeat == 1)
		d->repeat = 2; /* benchdnn's bitwise mode: run twice */
	mtp_meta_set_determinism(d);
	return 0;
}
