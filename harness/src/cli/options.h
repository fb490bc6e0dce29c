/*
 * Internal to the CLI: the one option table of every command (options.c)
 * and the one parser, help printer and `list options` that read it
 * (opt_parse.c). A row is an option: its name, its argument, the commands
 * that take it, how its value is checked and stored, and its help text.
 */
#ifndef MTP_CLI_OPTIONS_H
#define MTP_CLI_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

/* The commands that take options, as bits of a row's cmds. */
enum mtp_cli_cmd {
	MTP_CMD_RUN = 1 << 0,
	MTP_CMD_VERIFY = 1 << 1,
	MTP_CMD_SELFTEST = 1 << 2,
	MTP_CMD_BENCH = 1 << 3,
	MTP_CMD_REPORT = 1 << 4,
	MTP_CMD_AUDIT = 1 << 5,
};

/* Where a command's options are stored: run, verify and selftest in a
 * struct mtp_run_opts, bench in a struct mtp_bench_opts (bench/bench.h),
 * audit-weights in a struct mtp_audit_opts (weights/weights.h), report in
 * this one. */
struct mtp_report_opts {
	const char *html, *junit, *json, *markdown; /* the outputs */
	const char **paths; /* the inputs, argc of room */
	int n_paths;
};

/* How a row stores its value at its offset: a flag sets a bool true (OFF:
 * false), a string keeps the argument, SET calls the row's setter. */
enum mtp_opt_kind { MTP_OPT_FLAG, MTP_OPT_OFF, MTP_OPT_STR, MTP_OPT_SET };

struct mtp_cli_opt {
	const char *name;  /* "--backend"; a positional argument: "DUMP.h5" */
	const char *alias; /* "-q", or NULL */
	const char *arg;   /* "LIST"; NULL: a flag */
	unsigned cmds;	   /* enum mtp_cli_cmd bits */
	enum mtp_opt_kind kind;
	size_t at; /* offset of its field in the command's options */
	/* MTP_OPT_SET: checks and stores val (NULL for a flag) into the
	 * options dst, whose field is at; 0, or why it is refused */
	int (*set)(void *dst, void *at, const char *name, const char *val,
		   char *why, size_t n);
	const char *help; /* lines separated by \n */
};

/* The setters of the rows (opt_set.c; the determinism ones in cli_det.c):
 * name is the option's, for the message. */
#define MTP_OPT_SETTER(fn)                                                     \
	int fn(void *dst, void *at, const char *name, const char *val,         \
	       char *why, size_t n)
MTP_OPT_SETTER(mtp_opt_set_backends);
MTP_OPT_SETTER(mtp_opt_set_fixtures);
MTP_OPT_SETTER(mtp_opt_set_dump);
MTP_OPT_SETTER(mtp_opt_set_filters);
MTP_OPT_SETTER(mtp_opt_set_ops);
MTP_OPT_SETTER(mtp_opt_set_timeout);
MTP_OPT_SETTER(mtp_opt_set_shard);
MTP_OPT_SETTER(mtp_opt_set_u64);
MTP_OPT_SETTER(mtp_opt_set_seed);
MTP_OPT_SETTER(mtp_opt_set_mem_limit);
MTP_OPT_SETTER(mtp_opt_set_commit);
MTP_OPT_SETTER(mtp_opt_set_bench_backends);
MTP_OPT_SETTER(mtp_opt_set_bench_ops);
MTP_OPT_SETTER(mtp_opt_set_shapes);
MTP_OPT_SETTER(mtp_opt_set_i64);
MTP_OPT_SETTER(mtp_opt_set_bench_seed);
MTP_OPT_SETTER(mtp_opt_set_count);
MTP_OPT_SETTER(mtp_opt_set_repeats);
MTP_OPT_SETTER(mtp_opt_set_min_time);
MTP_OPT_SETTER(mtp_opt_set_min_effect);
MTP_OPT_SETTER(mtp_opt_set_bisect);
MTP_OPT_SETTER(mtp_opt_set_report_path);
MTP_OPT_SETTER(mtp_opt_set_ulps);
MTP_OPT_SETTER(mtp_opt_set_repeat);

/* A decimal integer from lo to hi into *x: 0, or -1 with why = "NAME:
 * 'VAL' is not WHAT". */
int mtp_opt_int(const char *name, const char *val, long long lo, long long hi,
		const char *what, long long *x, char *why, size_t n);

/* The table, and its rows. */
extern const struct mtp_cli_opt mtp_cli_opts[];
extern const int mtp_cli_n_opts;

/* Parses the options of command cmd ("run", ...) into dst: -1 to go on, 0
 * after --help, or 2 after a usage error printed in one line. */
int mtp_cli_parse(const char *cmd, int argc, char **argv, void *dst);
/* Prints cmd's --help: its usage, its options from the table, its notes. */
void mtp_cli_help(const char *cmd);
/* `mtpcheck list options`: a line per command and option (and alias):
 * COMMAND OPTION [ARG] and the first line of its help. */
void mtp_cli_list_options(void);
/* Prints "mtpcheck CMD: WHY (see mtpcheck CMD --help)"; returns 2. */
int mtp_cli_usage(const char *cmd, const char *why);

#endif
