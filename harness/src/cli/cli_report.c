/*
 * `mtpcheck report`: merges results files written by `run --json` (and the
 * bench files of `bench --json`, as a bench history) into one run and writes
 * it as HTML, JUnit or JSON. Its exit code is the merged run's, as its page
 * states (1 if any FAILED, CRASHED or TIMEOUT).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "mtp/bench.h"
#include "mtp/runner.h"
#include "preflight.h"

static const char usage_report[] =
	"usage: mtpcheck report FILE.json... [--html FILE] [--junit FILE] "
	"[--json FILE]\n"
	"                       [--markdown FILE]\n"
	"\n"
	"Merges results files written by `mtpcheck run --json` (one per "
	"vendor\n"
	"machine, or one per night) into one report: each file's backends "
	"become\n"
	"columns backend@host; a later run on the same host is another, dated "
	"column,\n"
	"while the shards of one run (the same run_id, see run --run-id) share "
	"one.\n"
	"Bench files written by `mtpcheck bench --json` among them make the "
	"bench\n"
	"history of the HTML page: a night per file (per run_id), in the order "
	"given\n"
	"(oldest first), and per op, shape and backend@host the median, GB/s "
	"and\n"
	"fraction of the copy bandwidth of each night.\n"
	"--markdown writes the benchmarks page of the bench files: per "
	"section of\n"
	"their records the newest figure of each row with its run's machine,\n"
	"commit, command, prediction and reason for a miss, and every row's\n"
	"earlier figures (docs/RESULTS.md, \"Bench records\").\n"
	"A result that several inputs hold (a file given twice, a merged "
	"report\n"
	"beside its inputs) counts once; an input that is one of the "
	"outputs is\n"
	"skipped with a note. A file that is not what it says is refused in "
	"one\n"
	"line naming the file and the field (exit 2).\n"
	"--json writes the merged results (--json and --junit: results only). "
	"Exit\n"
	"code: the merged run's (0, 1 if any FAILED, CRASHED or TIMEOUT, 2 if "
	"any\n"
	"INVALID, 125 if nothing passed; bench files alone: 0).\n";

#define NOUT 4 /* --html, --junit, --json, --markdown */

static int report_usage(const char *fmt, const char *arg)
{
	fprintf(stderr, "mtpcheck report: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, " (see mtpcheck report --help)\n");
	return MTP_EXIT_USAGE;
}

/* Drops from paths (n of them) every input that is one of the outputs (the
 * same file: `report out/NAME.json... --json out/merged.json` run again finds its
 * own previous output among the inputs), with a note line each; the number
 * left. */
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
	const char *outs[NOUT] = {NULL}; /* html, junit, json, markdown */
	static const char *const flags[NOUT] = {"--html", "--junit", "--json",
						"--markdown"};
	const char **paths = calloc((size_t)argc + 1, sizeof(*paths));
	struct mtp_run run = {0};
	char err[MTP_ERR_MAX];
	int n = 0, rc = -1;

	for (int i = 0; paths && rc < 0 && i < argc; i++) {
		int k = NOUT;

		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			fputs(usage_report, stdout);
			rc = MTP_EXIT_OK;
			break;
		}
		while (k-- > 0 && strcmp(argv[i], flags[k]))
			;
		if (k >= 0 && i + 1 < argc)
			outs[k] = argv[++i];
		else if (k >= 0)
			rc = report_usage("option %s needs a value", argv[i]);
		else if (argv[i][0] != '-')
			paths[n++] = argv[i];
		else
			rc = report_usage("unknown argument '%s'", argv[i]);
	}
	if (rc < 0 && (!n || (!outs[0] && !outs[1] && !outs[2] && !outs[3])))
		rc = report_usage(
			"needs results or bench files and --html, --junit, "
			"--json or --markdown%s",
			"");
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
