/*
 * The one parser of every command's options, and every command's --help,
 * both read from the option table (options.c): a command names itself, the
 * parser takes the rows whose commands include it. A bad option is one line
 * naming it, exit 2; an option of another command says whose it is.
 */
#include <stdio.h>
#include <string.h>

#include "mtp/status.h"
#include "options.h"

/* Each command's usage line and description, and the notes after its
 * options. */
static const struct cmd_doc {
	const char *name;
	unsigned bit;
	const char *usage, *notes;
} docs[] = {
	{"run", MTP_CMD_RUN, "usage: mtpcheck run [options]\n",
	 "Report folders are created (mkdir -p); a report path that is a "
	 "symbolic link\nis written through to its target.\n"},
	{"verify", MTP_CMD_VERIFY,
	 "usage: mtpcheck verify DUMP.h5 [options]\n\n"
	 "Runs the reference on each case's inputs/ and judges its observed/\n"
	 "tensors (docs/FORMAT.md), output by output in flow order.\n",
	 "A case without observed/ datasets is INVALID (exit 2); an observed "
	 "output\nwhose shape differs from the reference's (e.g. 0 rows where "
	 "T are due) FAILS.\n"},
	{"selftest", MTP_CMD_SELFTEST,
	 "usage: mtpcheck selftest [options]\n\n"
	 "Runs the suite on each base backend (default: ref, and cpu when "
	 "built) and on\nevery mutant over it, and prints the detection "
	 "matrix. Exit 0 only if every\nmutant is caught and named as its own "
	 "bug and no diagnosis fires on a base.\nBATCH_VARIANT and "
	 "NONDETERMINISTIC run under --invariance and --repeat 2\n--bitwise, "
	 "beside the base under both (docs/DIAGNOSES.md).\nA mutant that "
	 "changes no selected case (--filter, --tags) is NOT APPLICABLE;\n"
	 "exit 125 if none applies.\n",
	 NULL},
	{"bench", MTP_CMD_BENCH, "usage: mtpcheck bench [options]\n", NULL},
	{"report", MTP_CMD_REPORT,
	 "usage: mtpcheck report FILE.json... [--html FILE] [--junit FILE] "
	 "[--json FILE]\n                       [--markdown FILE]\n\n"
	 "Merges results files written by `mtpcheck run --json` (one per "
	 "vendor\nmachine, or one per night) into one report: each file's "
	 "backends become\ncolumns backend@host; a later run on the same host "
	 "is another, dated column,\nwhile the shards of one run (the same "
	 "run_id, see run --run-id) share one.\nBench files written by "
	 "`mtpcheck bench --json` among them make the bench\nhistory of the "
	 "HTML page: a night per file (per run_id), in the order given\n"
	 "(oldest first), and per op, shape and backend@host the median, "
	 "GB/s and\nfraction of the copy bandwidth of each night.\n"
	 "A result that several inputs hold (a file given twice, a merged "
	 "report\nbeside its inputs) counts once; an input that is one of the "
	 "outputs is\nskipped with a note. A file that is not what it says is "
	 "refused in one\nline naming the file and the field (exit 2).\n",
	 "--json writes the merged results (--json and --junit: results "
	 "only). Exit\ncode: the merged run's (0, 1 if any FAILED, CRASHED or "
	 "TIMEOUT, 2 if any\nINVALID, 125 if nothing passed; bench files "
	 "alone: "
	 "0).\n"},
	{"audit-weights", MTP_CMD_AUDIT,
	 "usage: mtpcheck audit-weights --family F --layer N --keys KEYS "
	 "[options]\n       mtpcheck audit-weights --family F --layer N "
	 "--checkpoint DIR [options]\n       mtpcheck audit-weights --selftest "
	 "[--fixtures DIR] [-v]\n\n"
	 "Judges how checkpoint tensors are mapped to the engine's parameters\n"
	 "(docs/SPEC.md §6) and names the known mapping bugs: "
	 "STALE_WEIGHT_REMAP (§8.5),\nEH_PROJ_NO_PREFIX (§8.4), "
	 "MTP_HEAD_EMBED_UNLOADED (§8.6); tells a\nDSpark drafter from an "
	 "MTP layer by its keys and names the confusion\n"
	 "(DSPARK_LOADED_AS_MTP, DSPARK_LOADER_ON_MTP, §13). "
	 "docs/WEIGHTS.md.\n",
	 "exit codes: 0 no finding; 1 a finding; 2 usage error or invalid "
	 "input.\n"},
};

static const struct cmd_doc *doc_of(const char *cmd)
{
	for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++)
		if (!strcmp(docs[i].name, cmd))
			return &docs[i];
	return NULL;
}

static bool positional(const struct mtp_cli_opt *r)
{
	return r->name[0] != '-';
}

/* The row of cmd named a (or, for a word not an option, cmd's positional
 * argument), or NULL. */
static const struct mtp_cli_opt *row_of(unsigned bit, const char *a)
{
	for (int i = 0; i < mtp_cli_n_opts; i++) {
		const struct mtp_cli_opt *r = &mtp_cli_opts[i];

		if (!(r->cmds & bit))
			continue;
		if (positional(r) ? a[0] != '-'
				  : !strcmp(a, r->name) ||
					    (r->alias && !strcmp(a, r->alias)))
			return r;
	}
	return NULL;
}

int mtp_cli_usage(const char *cmd, const char *why)
{
	fprintf(stderr, "mtpcheck %s: %s (see mtpcheck %s --help)\n", cmd, why,
		cmd);
	return MTP_EXIT_USAGE;
}

/* Why a is not an option of cmd: another command's, or unknown. */
static int unknown(const char *cmd, const char *a)
{
	char list[120] = "", why[320];
	size_t k = 0;

	for (size_t d = 0; d < sizeof(docs) / sizeof(docs[0]); d++) {
		const struct mtp_cli_opt *r = row_of(docs[d].bit, a);

		if (r && !positional(r) && k < sizeof(list))
			k += (size_t)snprintf(list + k, sizeof(list) - k,
					      "%s%s", k ? ", " : "",
					      docs[d].name);
	}
	if (k)
		snprintf(why, sizeof(why), "%.60s is an option of mtpcheck %s",
			 a, list);
	else
		snprintf(why, sizeof(why), "unknown argument '%.200s'", a);
	return mtp_cli_usage(cmd, why);
}

/* Stores one row's value (NULL for a flag) into dst. */
static int store(const char *cmd, const struct mtp_cli_opt *r, void *dst,
		 const char *name, const char *val)
{
	void *at = (char *)dst + r->at;
	char why[400];

	switch (r->kind) {
	case MTP_OPT_FLAG: *(bool *)at = true; return 0;
	case MTP_OPT_OFF: *(bool *)at = false; return 0;
	case MTP_OPT_STR: *(const char **)at = val; return 0;
	case MTP_OPT_SET: break;
	}
	if (!r->set(dst, at, name, val, why, sizeof(why)))
		return 0;
	return mtp_cli_usage(cmd, why);
}

int mtp_cli_parse(const char *cmd, int argc, char **argv, void *dst)
{
	const struct cmd_doc *d = doc_of(cmd);

	for (int i = 0; d && i < argc; i++) {
		const char *a = argv[i];
		const struct mtp_cli_opt *r = row_of(d->bit, a);
		const char *val = NULL;
		char why[320];

		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			mtp_cli_help(cmd);
			return MTP_EXIT_OK;
		}
		if (!r)
			return unknown(cmd, a);
		if (positional(r)) {
			val = a;
		} else if (r->arg && i + 1 >= argc) {
			snprintf(why, sizeof(why),
				 "option %.200s needs a value", a);
			return mtp_cli_usage(cmd, why);
		} else if (r->arg) {
			val = argv[++i];
		}
		if (store(cmd, r, dst, r->name, val))
			return MTP_EXIT_USAGE;
	}
	return d ? -1 : mtp_cli_usage(cmd, "no such command");
}

/* One option's lines: "  --name ARG" in 20 columns, then its help. */
static void help_row(FILE *f, const struct mtp_cli_opt *r)
{
	char left[64];
	const char *h = r->help;
	int k;

	k = snprintf(left, sizeof(left), "%s%s%s%s%s", r->alias ? r->alias : "",
		     r->alias ? ", " : "", r->name, r->arg ? " " : "",
		     r->arg ? r->arg : "");
	fprintf(f, "  %-18s%s", left, k >= 18 ? "  " : " ");
	while (*h) {
		size_t n = strcspn(h, "\n");

		fprintf(f, "%.*s\n", (int)n, h);
		h += n + (h[n] == '\n');
		if (*h)
			fprintf(f, "%21s", "");
	}
}

void mtp_cli_help(const char *cmd)
{
	const struct cmd_doc *d = doc_of(cmd);

	if (!d)
		return;
	printf("%s\n", d->usage);
	for (int i = 0; i < mtp_cli_n_opts; i++)
		if ((mtp_cli_opts[i].cmds & d->bit) &&
		    !positional(&mtp_cli_opts[i]))
			help_row(stdout, &mtp_cli_opts[i]);
	printf("  -h, --help         this text\n");
	if (d->notes)
		printf("\n%s", d->notes);
}

void mtp_cli_list_options(void)
{
	for (size_t d = 0; d < sizeof(docs) / sizeof(docs[0]); d++) {
		for (int i = 0; i < mtp_cli_n_opts; i++) {
			const struct mtp_cli_opt *r = &mtp_cli_opts[i];
			int n = (int)strcspn(r->help, "\n");

			if (!(r->cmds & docs[d].bit))
				continue;
			if (r->alias)
				printf("%-14s %-18s %-12s %.*s\n", docs[d].name,
				       r->alias, "", n, r->help);
			printf("%-14s %-18s %-12s %.*s\n", docs[d].name,
			       r->name, r->arg ? r->arg : "", n, r->help);
		}
		printf("%-14s %-18s %-12s this text\n", docs[d].name, "--help",
		       "");
	}
}
