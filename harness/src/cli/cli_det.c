/*
 * The determinism options of `mtpcheck run` (docs/DIAGNOSES.md
 * "Determinism"): --invariance [--invariance-ulps N] and --repeat N
 * --bitwise. Kept beside cli.c so that its parser only hands them over;
 * the combinations that mean nothing are usage errors here.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mtp/meta.h"
#include "det_opts.h"

#define REPEAT_MAX 1000
#define ULPS_MAX 1000000

static int det_usage(const char *cmd, const char *what, const char *arg)
{
	fprintf(stderr, "mtpcheck %s: ", cmd);
	fprintf(stderr, what, arg);
	fprintf(stderr, " (see mtpcheck %s --help)\n", cmd);
	return -1;
}

static bool parse_count(const char *s, long lo, long hi, long *v)
{
	char *end;

	errno = 0;
	*v = strtol(s, &end, 10);
	return s[0] && !errno && !*end && *v >= lo && *v <= hi;
}

int mtp_cli_det_opt(const char *cmd, int argc, char **argv,
		    struct mtp_determinism *d)
{
	const char *a = argv[0], *val = argc > 1 ? argv[1] : NULL;
	bool takes = !strcmp(a, "--repeat") || !strcmp(a, "--invariance-ulps");
	long v;

	if (!takes && strcmp(a, "--invariance") && strcmp(a, "--bitwise"))
		return 0;
	if (strcmp(cmd, "run"))
		return det_usage(cmd, "%s is an option of mtpcheck run", a);
	if (takes && !val)
		return det_usage(cmd, "option %s needs a value", a);
	if (!strcmp(a, "--invariance")) {
		d->invariance = true;
	} else if (!strcmp(a, "--bitwise")) {
		d->bitwise = true;
	} else if (!strcmp(a, "--repeat")) {
		if (!parse_count(val, 1, REPEAT_MAX, &v))
			return det_usage(cmd,
					 "--repeat: '%s' is not a count of "
					 "runs from 1 to 1000",
					 val);
		d->repeat = (int)v;
	} else {
		if (!parse_count(val, 0, ULPS_MAX, &v))
			return det_usage(cmd,
					 "--invariance-ulps: '%s' is not a "
					 "count of ulps from 0 to 1000000",
					 val);
		d->ulps = v;
		d->ulps_set = true;
	}
	return takes ? 2 : 1;
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
