/*
 * Checks made before the first case runs, so that a typo or an unwritable
 * report is found in a second, not after the whole suite: every --backend
 * name is known (a typo gets the closest known name), --backend-lib is a
 * regular file, and every report path can be written (its folder is created
 * as by mkdir -p; a symbolic link is written through).
 */
#include "preflight.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mtp/backend.h"
#include "mtp/mutant.h"
#include "mtp/textio.h"

static int edit_distance(const char *a, const char *b)
{
	int prev[64], cur[64];
	int la = (int)strlen(a), lb = (int)strlen(b);

	if (la > 62 || lb > 62)
		return 99;
	for (int j = 0; j <= lb; j++)
		prev[j] = j;
	for (int i = 1; i <= la; i++) {
		cur[0] = i;
		for (int j = 1; j <= lb; j++) {
			int d = prev[j - 1] + (a[i - 1] != b[j - 1]);

			d = prev[j] + 1 < d ? prev[j] + 1 : d;
			cur[j] = cur[j - 1] + 1 < d ? cur[j - 1] + 1 : d;
		}
		memcpy(prev, cur, sizeof(cur));
	}
	return prev[lb];
}

/* The closest known backend name to a typo, or NULL if none is close. */
static const char *closest(const char *name)
{
	const char *best = NULL;
	int bd = 3;

	for (int i = 0; mtp_backend_name(i); i++) {
		int d = edit_distance(name, mtp_backend_name(i));

		if (d < bd)
			bd = d, best = mtp_backend_name(i);
	}
	return best;
}

static bool known_mutant(const char *spec, char *why, size_t n)
{
	char bug[96];
	const char *colon = strchr(spec, ':');
	enum mtp_diag d;

	snprintf(bug, sizeof(bug), "%.*s",
		 (int)(colon ? colon - spec : (long)strlen(spec)), spec);
	if (!mtp_diag_parse(bug, &d) || !mtp_mutant_exists(d)) {
		snprintf(why, n, "no mutant '%s' (mtpcheck list mutants)", bug);
		return false;
	}
	if (colon && !mtp_backend_known(colon + 1)) {
		snprintf(why, n, "unknown base backend '%s' of the mutant",
			 colon + 1);
		return false;
	}
	return true;
}

enum mtp_status mtp_preflight_backends(const struct mtp_run_opts *o, char *err,
				       size_t errn)
{
	char why[300];

	if (o->backend_lib) {
		int fd = mtp_open_regular(o->backend_lib, why, sizeof(why));

		if (fd < 0) {
			snprintf(err, errn, "--backend-lib %s: %s",
				 o->backend_lib, why);
			return MTP_ERR_INVALID;
		}
		close(fd);
	}
	for (int i = 0; i < o->n_backends; i++) {
		const char *b = o->backends[i], *near;

		if (!strncmp(b, "mutant:", 7)) {
			if (known_mutant(b + 7, why, sizeof(why)))
				continue;
			snprintf(err, errn, "--backend %s: %s", b, why);
			return MTP_ERR_INVALID;
		}
		/* with --backend-lib, a name may be the plugin's own */
		if (mtp_backend_known(b) || o->backend_lib)
			continue;
		near = closest(b);
		snprintf(err, errn,
			 "--backend %s: unknown backend%s%s%s (mtpcheck list "
			 "backends)",
			 b, near ? "; did you mean '" : "", near ? near : "",
			 near ? "'?" : "");
		return MTP_ERR_INVALID;
	}
	return MTP_OK;
}

enum mtp_status mtp_preflight_outputs(const char *const *paths, int n,
				      char *err, size_t errn)
{
	char real[4096];

	for (int i = 0; i < n; i++)
		if (paths[i] &&
		    mtp_output_prepare(paths[i], real, sizeof(real), err, errn))
			return MTP_ERR_IO;
	return MTP_OK;
}
