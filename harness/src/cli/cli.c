/*
 * The mtpcheck command line: run, verify, list, selftest (later), --help on
 * every command, --version. Parsing only; the work is the runner's. Exit codes
 * are ARCHITECTURE.md's, so `git bisect run mtpcheck ...` and CTest work unchanged.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mtp/backend.h"
#include "mtp/config.h"
#include "mtp/membudget.h"
#include "mtp/meta.h"
#include "mtp/mutant.h"
#include "mtp/runner.h"
#include "util/util.h"
#include "det_opts.h"
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
	"  list      list ops, backends, mutants, diagnoses or cases\n"
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

static const char usage_run[] =
	"usage: mtpcheck run [options]\n"
	"\n"
	"  --backend LIST     backends, comma separated (default: ref)\n"
	"                     e.g. ref,cpu  cuda  mutant:PRE_NORM_RECYCLE:ref\n"
	"  --backend-lib SO   an external backend built against mtp/backend.h\n"
	"  --cases FILE       a case file (docs/CASES.md; default: "
	"cases/quick.case)\n"
	"  --tags LIST        run the case file's entries with one of these "
	"tags\n"
	"  --fixtures PATH    a fixture file or a folder of *.h5 (repeatable)\n"
	"  --filter PAT       case ids to run: an exact id, or a glob such as\n"
	"                     'rmsnorm.*' (repeatable, or comma separated)\n"
	"  --op NAME[,NAME]   only cases of these ops (mtpcheck list ops)\n"
	"  --json FILE        write the results as JSON\n"
	"  --junit FILE       write the results as JUnit XML (one testcase per "
	"result)\n"
	"  --html FILE        write a self-contained HTML report (opens "
	"offline)\n"
	"  --shard I/N        run every N-th selected problem, starting at I "
	"(0-based),\n"
	"                     so that N machines split a suite\n"
	"  --isolate          a fresh process per case (by default each "
	"backend runs in\n"
	"                     one worker process, restarted after a crash: "
	"either way a\n"
	"                     crash or a hang is a CRASHED or TIMEOUT verdict "
	"and the\n"
	"                     run goes on)\n"
	"  --timeout S        seconds a case may take on a backend "
	"(default 600)\n"
	"  --seed N           seed of the generated problems whose case-file "
	"line\n"
	"                     has no seed= (default 1; in their ids as "
	".s<N>)\n"
	"  --max-bytes N      refuse any dataset larger than N bytes (default "
	"4 GiB)\n"
	"  --mem-limit SIZE   memory one case may take, e.g. 40G (default: "
	"50 % of\n"
	"                     physical memory); a case over it is refused\n"
	"  --run-id ID        the run's id in the JSON results: shards given "
	"the same\n"
	"                     one merge into one column (mtpcheck report)\n"
	"  --commit REV       the commit under test, for the reports "
	"(default:\n"
	"                     $MTP_COMMIT)\n"
	"  --invariance       each token's outputs computed alone (T = 1) and "
	"at another\n"
	"                     row must have the bits they have in the batch\n"
	"  --invariance-ulps N  ... or lie within N ulps of them (default 0)\n"
	"  --repeat N --bitwise  run each case N times on fresh inputs; other "
	"bits fail\n"
	"                     it as NONDETERMINISTIC (--bitwise alone: N = 2)\n"
	"  --list             list the selected cases and stop\n"
	"  -q, --quiet        the summary only\n"
	"  -v, --verbose      every case, and every output: error, threshold, "
	"origin\n"
	"  -h, --help         this text\n"
	"\n"
	"Report folders are created (mkdir -p); a report path that is a "
	"symbolic link\n"
	"is written through to its target.\n";

static const char usage_verify[] =
	"usage: mtpcheck verify DUMP.h5 [options]\n"
	"\n"
	"Runs the reference on each case's inputs/ and judges its observed/\n"
	"tensors (docs/FORMAT.md), output by output in flow order.\n"
	"\n"
	"  --filter PAT       case ids (as for run)\n"
	"  --json FILE        write the results as JSON\n"
	"  --junit FILE       write the results as JUnit XML\n"
	"  --html FILE        write a self-contained HTML report\n"
	"  --max-bytes N      refuse any dataset larger than N bytes\n"
	"  --mem-limit SIZE   memory one case may take (as for run)\n"
	"  -v, --verbose      every output of every case\n"
	"  --full-logits      captured-block steps: judge every vocabulary row "
	"(default:\n"
	"                     a sample when V > 8192, stated in the result)\n"
	"  --weights DIR      read weights by reference from the safetensors "
	"files in\n"
	"                     DIR (hash checked); without it such cases are "
	"SKIPPED\n"
	"  --weights-only     only the head/embedding weight sanity rule\n"
	"                     (SHARED_HEAD_UNINIT); no reference run\n"
	"  -h, --help         this text\n"
	"\n"
	"A case without observed/ datasets is INVALID (exit 2); an observed "
	"output\n"
	"whose shape differs from the reference's (e.g. 0 rows where T are "
	"due) FAILS.\n";

static const char usage_list[] =
	"usage: mtpcheck list ops|families|backends|mutants|diagnoses|cases "
	"[--fixtures "
	"PATH] "
	"[--filter PAT]\n";

static const char usage_selftest[] =
	"usage: mtpcheck selftest [--backend LIST] [--fixtures PATH] [--filter "
	"PAT]\n"
	"                         [--cases FILE] [--tags LIST] [--json "
	"FILE]\n"
	"                         [--run-id ID] [--commit REV]\n"
	"\n"
	"Runs the suite on each base backend (default: ref, and cpu when "
	"built) and on\n"
	"every mutant over it, and prints the detection matrix. Exit 0 only if "
	"every\n"
	"mutant is caught and named as its own bug and no diagnosis fires on a "
	"base.\n"
	"BATCH_VARIANT and NONDETERMINISTIC run under --invariance and "
	"--repeat 2\n"
	"--bitwise, beside the base under both (docs/DIAGNOSES.md).\n"
	"A mutant that changes no selected case (--filter, --tags) is NOT "
	"APPLICABLE;\n"
	"exit 125 if none applies.\n";

int mtp_selftest(const struct mtp_run_opts *opts);
int mtp_cli_report(int argc, char **argv);
int mtp_bench_main(int argc, char **argv);
int mtp_audit_weights_main(int argc, char **argv);
/* cli_list.c: prints list WHAT (ops, families, backends, mutants,
 * diagnoses); false
 * for another WHAT; whether WHAT is one of them. */
bool mtp_cli_list(const char *what);
bool mtp_cli_list_known(const char *what);

static int usage_error(const char *cmd, const char *fmt, const char *arg)
{
	fprintf(stderr, "mtpcheck %s: ", cmd);
	fprintf(stderr, fmt, arg);
	fprintf(stderr, " (see mtpcheck %s --help)\n", cmd);
	return MTP_EXIT_USAGE;
}

/* Splits a comma-separated value into dst (pointers into a static copy). */
static int split_into(const char **dst, int *n, int max, char *val)
{
	for (char *tok = strtok(val, ","); tok; tok = strtok(NULL, ",")) {
		if (*n >= max)
			return -1;
		dst[(*n)++] = tok;
	}
	return 0;
}

static bool parse_u64(const char *s, uint64_t *v)
{
	char *end;

	errno = 0;
	unsigned long long x = strtoull(s, &end, 0);

	if (errno || end == s || *end || *s == '-')
		return false;
	*v = x;
	return true;
}

/* Every name of a comma-separated --op list is an op. */
static bool ops_known(const char *list)
{
	char name[64];

	for (const char *p = list; *p;) {
		size_t k = strcspn(p, ",");

		snprintf(name, sizeof(name), "%.*s", (int)k, p);
		if (k >= sizeof(name) || !mtp_op_find(name))
			return false;
		p += k + (p[k] == ',');
	}
	return *list != 0;
}

/* The default suite: cases/quick.case here, installed or in the source
 * tree (paths.c). */
static const char *default_cases(void)
{
	static char path[4096];

	mtp_data_path("cases/quick.case", path, sizeof(path));
	return path;
}

/* Parses run/verify options; returns -1 to go on, else an exit code. */
static int parse_opts(const char *cmd, int argc, char **argv,
		      struct mtp_run_opts *o)
{
	bool verify = strcmp(cmd, "verify") == 0;

	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		char *val = i + 1 < argc ? argv[i + 1] : NULL;
		bool takes =
			strcmp(a, "--backend") == 0 ||
			strcmp(a, "--backend-lib") == 0 ||
			strcmp(a, "--fixtures") == 0 ||
			strcmp(a, "--cases") == 0 || strcmp(a, "--tags") == 0 ||
			strcmp(a, "--filter") == 0 ||
			strcmp(a, "--json") == 0 || strcmp(a, "--seed") == 0 ||
			strcmp(a, "--junit") == 0 ||
			strcmp(a, "--shard") == 0 || strcmp(a, "--html") == 0 ||
			strcmp(a, "--timeout") == 0 ||
			strcmp(a, "--max-bytes") == 0 ||
			strcmp(a, "--mem-limit") == 0 ||
			strcmp(a, "--run-id") == 0 ||
			strcmp(a, "--weights") == 0 ||

			strcmp(a, "--commit") == 0 || strcmp(a, "--op") == 0;

		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			fputs(verify			     ? usage_verify
			      : strcmp(cmd, "selftest") == 0 ? usage_selftest
							     : usage_run,
			      stdout);
			return MTP_EXIT_OK;
		}
		int took = mtp_cli_det_opt(cmd, argc - i, argv + i, &o->det);

		if (took) { /* cli_det.c */
			if (took < 0)
				return MTP_EXIT_USAGE;
			i += took - 1;
			continue;
		}
		if (takes && !val)
			return usage_error(cmd, "option %s needs a value", a);
		if (takes)
			i++;
		if (strcmp(a, "--backend") == 0 && !verify) {
			if (split_into(o->backends, &o->n_backends,
				       MTP_MAX_BACKENDS, val))
				return usage_error(
					cmd, "more than 16 backends%s", "");
		} else if (strcmp(a, "--backend-lib") == 0 && !verify) {
			o->backend_lib = val;
		} else if (strcmp(a, "--cases") == 0 && !verify) {
			o->case_file = val;
		} else if (strcmp(a, "--tags") == 0 && !verify) {
			o->tags = val;
		} else if (strcmp(a, "--fixtures") == 0 && !verify) {
			if (o->n_inputs >= MTP_MAX_INPUTS)
				return usage_error(cmd,
						   "more than 64 --fixtures%s "
						   "(list them in a case file: "
						   "fixtures=...)",
						   "");
			o->inputs[o->n_inputs++] = val;
		} else if (strcmp(a, "--filter") == 0) {
			if (split_into(o->filters, &o->n_filters,
				       MTP_MAX_INPUTS, val))
				return usage_error(
					cmd, "more than 64 --filter patterns%s",
					"");
		} else if (strcmp(a, "--json") == 0) {
			o->json_path = val;
		} else if (strcmp(a, "--weights") == 0) {
			o->weights_dir = val;
		} else if (strcmp(a, "--junit") == 0) {
			o->junit_path = val;
		} else if (strcmp(a, "--html") == 0) {
			o->html_path = val;
		} else if (strcmp(a, "--isolate") == 0 && !verify) {
			o->isolate = true;
		} else if (strcmp(a, "--timeout") == 0 && !verify) {
			char *end;

			o->timeout = strtod(val, &end);
			if (*end || !(o->timeout > 0 && o->timeout < 1e6))
				return usage_error(cmd,
						   "--timeout: '%s' is not a "
						   "number of seconds",
						   val);
		} else if (strcmp(a, "--shard") == 0 && !verify) {
			char *end;
			long si = strtol(val, &end, 10),
			     sn = *end == '/' ? strtol(end + 1, &end, 10) : 0;

			if (*end || sn < 1 || si < 0 || si >= sn || sn > 100000)
				return usage_error(cmd,
						   "--shard: '%s' is not I/N "
						   "with 0 <= I < N",
						   val);
			o->shard_i = (int)si;
			o->shard_n = (int)sn;
		} else if (strcmp(a, "--seed") == 0 && !verify) {
			if (!parse_u64(val, &o->seed))
				return usage_error(cmd,
						   "--seed: '%s' is not an "
						   "unsigned integer",
						   val);
			o->seed_set = true;
		} else if (strcmp(a, "--max-bytes") == 0) {
			if (!parse_u64(val, &o->limits.max_dataset_bytes))
				return usage_error(cmd,
						   "--max-bytes: '%s' is not "
						   "an unsigned integer",
						   val);
		} else if (strcmp(a, "--mem-limit") == 0) {
			uint64_t b;

			if (!mtp_mem_parse(val, &b))
				return usage_error(cmd,
						   "--mem-limit: '%s' is not a "
						   "size such as 40G or 512M",
						   val);
			mtp_mem_budget_set(b);
			o->mem_limit = val;
		} else if (strcmp(a, "--run-id") == 0 && !verify) {
			o->run_id = val;
		} else if (strcmp(a, "--full-logits") == 0) {
			o->full_logits = true;
		} else if (strcmp(a, "--commit") == 0) {
			mtp_meta_set_commit(val);
		} else if (strcmp(a, "--op") == 0) {
			if (!ops_known(val))
				return usage_error(cmd,
						   "--op %s: not an op name "
						   "(mtpcheck list ops)",
						   val);
			o->ops = val;
		} else if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
			o->quiet = true;
		} else if (strcmp(a, "--list") == 0 && !verify) {
			o->list_only = true;
		} else if (strcmp(a, "-v") == 0 ||
			   strcmp(a, "--verbose") == 0) {
			o->verbose = true;
		} else if (verify && strcmp(a, "--weights-only") == 0) {
			o->weights_only = true;
		} else if (verify && a[0] != '-' && o->n_inputs == 0) {
			o->inputs[o->n_inputs++] = a;
		} else {
			return usage_error(cmd, "unknown argument '%s'", a);
		}
	}
	return -1;
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
	rc = parse_opts(cmd, argc, argv, &o);
	if (rc >= 0)
		return rc;
	if (mtp_cli_det_check(cmd, &o.det))
		return MTP_EXIT_USAGE;
	if (o.verify && o.n_inputs == 0)
		return usage_error(cmd, "needs a dump file%s", "");
	if (o.n_backends == 0) {
		o.backends[o.n_backends++] = "ref";
		if (selftest && mtp_backend_absent_reason("cpu") == NULL)
			o.backends[o.n_backends++] = "cpu";
	}
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
				   "families, backends and mutants take none)",
				   argv[1]);
	return usage_error("list", "unknown list '%s'", argv[0]);
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
		return mtp_bench_main(argc - 2, argv + 2);
	if (strcmp(cmd, "report") == 0)
		return mtp_cli_report(argc - 2, argv + 2);
	if (strcmp(cmd, "audit-weights") == 0)
		return mtp_audit_weights_main(argc - 2, argv + 2);
	fprintf(stderr, "mtpcheck: unknown command '%s'\n\n%s", cmd,
		usage_main);
	return MTP_EXIT_USAGE;
}
