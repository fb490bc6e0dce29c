/*
 * `mtpcheck report`: merges results files written by `run --json` (and the
 * bench files of `bench --json`, as a bench history) into one run and writes
 * it as HTML, JUnit or JSON. Its exit code is the merged run's, as its page
 * states (1 if any FAILED, CRASHED or TIMEOUT). Its options and --help are
 * rows of the option table (options.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "mtp/bench.h"
#include "mtp/runner.h"
#include "options.h"
#include "preflight.h"

/* Drops from paths (n of them) every input that is one of the outputs (the
 * same file: `report out/NAME.json... --json out/merged.json` run again finds its
 * own previous output among the inputs), with a note line each; the number
 * left. */
#define NOUT 4 /* --html, --junit, --json, --markdown */

static int skip_outputs(const char **paths, int n, const char *const *outs,
			const char *const *flags)
{
	int kept = 0;

	for (int i = 0; i < n; i++) {
		struct stat in, out;
		int k = NOUT;

		while (k-- > 0)
			if (outs[k] && stat(paths[i], &in) == 0 &&
			    stat(outs[k], &out) == 0 &&
			    in.st_dev == out.st_dev && in.st_ino == out.st_ino)
				break;
		if (k < 0) {
			paths[kept++] = paths[i];
			continue;
		}
		fprintf(stderr,
			"mtpcheck report: note: %s is this report's own %s "
			"output: skipped (it is written anew from the other "
			"inputs)\n",
			paths[i], flags[k]);
	}
	return kept;
}

int mtp_cli_report(int argc, char **argv)
{
	static const char *const flags[NOUT] = {"--html", "--junit", "--json",
						"--markdown"};
	const char **paths = calloc((size_t)argc + 1, sizeof(*paths));
	struct mtp_report_opts o = {.paths = paths};
	struct mtp_run run = {0};
	char err[MTP_ERR_MAX];
	int n, rc = paths ? mtp_cli_parse("report", argc, argv, &o) : 2;
	const char *outs[NOUT] = {o.html, o.junit, o.json, o.markdown};

	n = o.n_paths;
	if (rc < 0 && (!n || (!outs[0] && !outs[1] && !outs[2] && !outs[3])))
		rc = mtp_cli_usage("report", "needs results or bench files and "
					     "--html, --junit, --json or "
					     "--markdown");
	if (rc < 0 && mtp_preflight_outputs(outs, NOUT, err, sizeof(err))) {
		fprintf(stderr, "mtpcheck report: %s\n", err);
		rc = MTP_EXIT_USAGE;
	}
	if (rc >= 0 || !paths) {
		free(paths);
		return rc < 0 ? MTP_EXIT_USAGE : rc;
	}
	n = skip_outputs(paths, n, outs, flags);
	if (mtp_run_merge(&run, paths, n, err, sizeof(err)) ||
	    (outs[0] && mtp_report_html(&run, outs[0], err, sizeof(err))) ||
	    (outs[1] && mtp_report_junit(&run, outs[1], err, sizeof(err))) ||
	    (outs[2] && mtp_report_json(&run, outs[2], err, sizeof(err))) ||
	    (outs[3] && mtp_bench_history_markdown(run.bench, outs[3], err,
						   sizeof(err)))) {
		fprintf(stderr, "mtpcheck report: %s\n", err);
		rc = MTP_EXIT_USAGE;
	} else {
		rc = (int)mtp_run_exit_code(&run);
		printf("mtpcheck report: %d results", run.n);
		if (run.bench)
			printf(" and %d bench rows of %d night(s)",
			       run.bench->n_points, run.bench->n_nights);
		printf(" from %d file(s)", n);
		if (run.n_repeats)
			printf(" (%d result(s) that another input holds "
			       "counted once)",
			       run.n_repeats);
		printf(", exit code %d\n", rc);
	}
	mtp_run_fini(&run);
	free(paths);
	return rc;
}
