/*
 * The mtpcheck command line: each command, its options parsed by the one
 * option table (options.c), then handed to the code that does the work;
 * --help on every command, --version. Exit codes are ARCHITECTURE.md's, so
 * `git bisect run mtpcheck ...` and CTest work unchanged.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mtp/backend.h"
#include "mtp/config.h"
#include "mtp/meta.h"
#include "mtp/runner.h"
#include "bench/bench.h"
#include "util/util.h"
#include "weights/weights.h"
#include "det_opts.h"
#include "options.h"
#include "preflight.h"

static const char usage_main[] =
	"usage: mtpcheck <command> [options]\n"
	"\n"
	"Numerical conformance harness for the MTP draft layers of DeepSeek\n"
	"V3/V3.2/V4 and GLM models.\n"
	"\n"
	"commands:\n"
	"  run       run cases on backends and judge them (default: "
	"cases/quick.case)\n"
	"  verify    judge the observed/ tensors of a dump against the "
	"reference\n"
	"  list      list ops, families, backends, mutants, diagnoses, "
	"options or cases\n"
	"  selftest  run every mutant and show each known bug is caught and "
	"named\n"
	"  bench     time ops x shapes x backends, checked, against measured "
	"peak\n"
	"  report    merge JSON results (vendors, nights) into one "
	"HTML/JUnit/JSON\n"
	"  audit-weights  check checkpoint -> parameter names (the "
	"weight-mapping bugs)\n"
	"\n"
	"  mtpcheck <command> --help   options of a command\n"
	"  mtpcheck --version\n"
	"\n"
	"exit codes: 0 all that ran passed; 1 a FAILED, CRASHED or TIMEOUT;\n"
	"2 usage error or invalid input; 125 nothing could be tested.\n";

static const char usage_list[] =
	"usage: mtpcheck list ops|families|backends|mutants|diagnoses|options\n"
	"       mtpcheck list cases [options of run]\n";

int mtp_selftest(const struct mtp_run_opts *opts);
int mtp_cli_report(int argc, char **argv);
/* cli_list.c: prints list WHAT (ops, families, backends, mutants, diagnoses, options); false
 * for another WHAT; whether WHAT is one of them. */
bool mtp_cli_list(const char *what);
bool mtp_cli_list_known(const char *what);

static int usage_error(const char *cmd, const char *fmt, const char *arg)
{
	char why[400];

	snprintf(why, sizeof(why), fmt, arg);
	return mtp_cli_usage(cmd, why);
}

/* The default suite: cases/quick.case here, installed or in the source
 * tree (paths.c). */
static const char *default_cases(void)
{
	static char path[4096];

	mtp_data_path("cases/quick.case", path, sizeof(path));
	return path;
}

/* Before the first case: backends known, report paths writable. */
static int preflight(const char *cmd, const struct mtp_run_opts *o)
{
	const char *outs[] = {o->json_path, o->junit_path, o->html_path};
	char err[MTP_ERR_MAX];

	if ((!o->verify && mtp_preflight_backends(o, err, sizeof(err))) ||
	    (!o->list_only &&
	     mtp_preflight_outputs(outs, 3, err, sizeof(err)))) {
		fprintf(stderr, "mtpcheck %s: %s\n", cmd, err);
		return 1;
	}
	return 0;
}

static int cmd_run(const char *cmd, int argc, char **argv)
{
	struct mtp_run_opts o;
	struct mtp_run run;
	char err[MTP_ERR_MAX];
	bool selftest = strcmp(cmd, "selftest") == 0;
	int rc;

	mtp_run_opts_init(&o);
	o.verify = strcmp(cmd, "verify") == 0;
	rc = mtp_cli_parse(cmd, argc, argv, &o);
	if (rc >= 0)
		return rc;
	if (mtp_cli_det_check(cmd, &o.det))
		return MTP_EXIT_USAGE;
	if (o.verify && o.n_inputs == 0)
		return usage_error(cmd, "needs a dump file%s", "");
	if (o.n_backends == 0)
		o.n_backends = mtp_backend_defaults(selftest, o.backends,
						    MTP_MAX_BACKENDS);
	if (o.n_inputs == 0 && !o.case_file)
		o.case_file = default_cases();
	if (preflight(cmd, &o))
		return MTP_EXIT_USAGE;
	if (selftest)
		return mtp_selftest(&o);
	memset(&run, 0, sizeof(run));
	if (!o.list_only) /* through the reports (mtp_signals_hold) */
		mtp_signals_begin();
	mtp_run_execute(&run, &o);
	rc = !o.list_only ? (int)mtp_run_exit_code(&run)
	     : run.n_invalid_inputs || run.n_usage ? MTP_EXIT_USAGE
						   : MTP_EXIT_OK;
	if (o.json_path && !o.list_only &&
	    mtp_report_json(&run, o.json_path, err, sizeof(err))) {
		fprintf(stderr, "mtpcheck: %s\n", err);
		rc = MTP_EXIT_USAGE;
	}
	if (o.junit_path && !o.list_only &&
	    mtp_report_junit(&run, o.junit_path, err, sizeof(err))) {
		fprintf(stderr, "mtpcheck: %s\n", err);
		rc = MTP_EXIT_USAGE;
	}
	if (o.html_path && !o.list_only &&
	    mtp_report_html(&run, o.html_path, err, sizeof(err))) {
		fprintf(stderr, "mtpcheck: %s\n", err);
		rc = MTP_EXIT_USAGE;
	}
	if (!o.list_only)
		mtp_signals_end();
	mtp_run_fini(&run);
	return rc;
}

static int cmd_list(int argc, char **argv)
{
	if (argc < 1 || strcmp(argv[0], "-h") == 0 ||
	    strcmp(argv[0], "--help") == 0) {
		fputs(usage_list, argc < 1 ? stderr : stdout);
		return argc < 1 ? MTP_EXIT_USAGE : MTP_EXIT_OK;
	}
	if (argc == 1 && mtp_cli_list(argv[0]))
		return MTP_EXIT_OK;
	if (strcmp(argv[0], "cases") == 0) {
		char **args = calloc((size_t)argc + 1, sizeof(*args));
		int n = 0, rc;

		if (!args)
			return MTP_EXIT_USAGE;
		for (int i = 1; i < argc; i++) /* every one: none dropped */
			args[n++] = argv[i];
		args[n++] = "--list";
		rc = cmd_run("run", n, args);
		free(args);
		return rc;
	}
	if (strcmp(argv[0], "cases") && mtp_cli_list_known(argv[0]))
		return usage_error("list",
				   "unexpected argument '%s' (list ops, "
				   "families, backends, mutants and options "
				   "take none)",
				   argv[1]);
	return usage_error("list", "unknown list '%s'", argv[0]);
}

static int cmd_bench(int argc, char **argv)
{
	struct mtp_bench_opts o;
	int rc;

	mtp_bench_opts_init(&o);
	rc = mtp_cli_parse("bench", argc, argv, &o);
	return rc >= 0 ? rc : mtp_bench_main(&o);
}

static int cmd_audit(int argc, char **argv)
{
	struct mtp_audit_opts o = {0};
	int rc = mtp_cli_parse("audit-weights", argc, argv, &o);

	return rc >= 0 ? rc : mtp_audit_weights_main(&o, argc, argv);
}

int mtp_cli_main(int argc, char **argv)
{
	if (argc < 2) {
		fputs(usage_main, stderr);
		return MTP_EXIT_USAGE;
	}
	const char *cmd = argv[1];

	/* a console piped into `head` must not kill the run: writes to it fail
	 * (EPIPE) and are dropped, the reports and the exit code stay */
	signal(SIGPIPE, SIG_IGN);
	mtp_meta_set_argv(argc, argv);

	if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0 ||
	    strcmp(cmd, "help") == 0) {
		fputs(usage_main, stdout);
		return MTP_EXIT_OK;
	}
	if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
		printf("mtpcheck %s (fixture format %d, backend API %d)\n",
		       MTP_VERSION, MTP_FORMAT_VERSION,
		       MTP_BACKEND_API_VERSION);
		return MTP_EXIT_OK;
	}
	if (strcmp(cmd, "run") == 0 || strcmp(cmd, "verify") == 0 ||
	    strcmp(cmd, "selftest") == 0)
		return cmd_run(cmd, argc - 2, argv + 2);
	if (strcmp(cmd, "list") == 0)
		return cmd_list(argc - 2, argv + 2);
	if (strcmp(cmd, "bench") == 0)
		return cmd_bench(argc - 2, argv + 2);
	if (strcmp(cmd, "report") == 0)
		return mtp_cli_report(argc - 2, argv + 2);
	if (strcmp(cmd, "audit-weights") == 0)
		return cmd_audit(argc - 2, argv + 2);
	fprintf(stderr, "mtpcheck: unknown command '%s'\n\n%s", cmd,
		usage_main);
	return MTP_EXIT_USAGE;
}
