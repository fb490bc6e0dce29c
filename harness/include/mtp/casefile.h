/*
 * Case files (docs/CASES.md): what a suite runs, as data. One problem set per
 * line, `key=value` tokens whose comma-separated values expand as a cartesian
 * product (oneDNN benchdnn's batch files), fixture selections and generated
 * problems, tags (`quick`, `nightly`) and includes. Parsing checks every
 * line, and every generated problem a line expands into, before anything
 * runs; an error is one line, `FILE:LINE:COL: what is wrong`.
 */
#ifndef MTP_CASEFILE_H
#define MTP_CASEFILE_H

#include <stdbool.h>
#include <stddef.h>

#include "mtp/generate.h"

#define MTP_CASEFILE_MAX_DEPTH 8     /* nested includes */
#define MTP_CASEFILE_MAX_EXPAND 4096 /* problems one line may expand into */
/* Budgets of one parse, the top file and its includes together (a file
 * included twice counts twice), so that an include bomb stops early. */
#define MTP_CASEFILE_MAX_FILES 1024	   /* files read */
#define MTP_CASEFILE_MAX_BYTES (16L << 20) /* text read */
#define MTP_CASEFILE_MAX_ENTRIES 16384	   /* problems and fixture paths */
#define MTP_CASEFILE_WORDS 16
#define MTP_CASEFILE_WORD 128

/* A short list of words: tags, backends, filters. */
struct mtp_casefile_words {
	int n;
	char v[MTP_CASEFILE_WORDS][MTP_CASEFILE_WORD];
};

enum mtp_casefile_kind {
	MTP_CASEFILE_FIXTURES,	/* a fixture file or folder, with filters */
	MTP_CASEFILE_GENERATED, /* one generated problem */
};

/* One problem set after expansion. */
struct mtp_casefile_entry {
	enum mtp_casefile_kind kind;
	char origin[MTP_PATH_MAX + 16]; /* "cases/quick.case:3" */
	struct mtp_casefile_words tags;
	struct mtp_casefile_words backends; /* none: every backend */
	/* MTP_CASEFILE_FIXTURES */
	char path[MTP_PATH_MAX];	   /* resolved against the case file */
	struct mtp_casefile_words filters; /* case-id globs; none: all */
	/* MTP_CASEFILE_GENERATED */
	struct mtp_gen_spec spec;
	char id[128]; /* the generated case id */
};

struct mtp_casefile {
	int n, cap;
	struct mtp_casefile_entry *entries;
	/* set by the caller before parsing: the seed of generated lines
	 * without seed= (run --seed); else MTP_GEN_DEFAULT_SEED */
	bool has_default_seed;
	uint64_t default_seed;
};

/* Parses `path` (and its includes) into cf, which the caller zeroes first;
 * entries are appended. Relative fixture and include paths are taken
 * relative to the folder of the file that names them. */
enum mtp_status mtp_casefile_parse(const char *path, struct mtp_casefile *cf,
				   char *err, size_t errn);
/* The same for text held in memory; `name` stands for the file in messages
 * and its folder is where relative paths start. */
enum mtp_status mtp_casefile_parse_text(const char *name, const char *text,
					struct mtp_casefile *cf, char *err,
					size_t errn);
void mtp_casefile_fini(struct mtp_casefile *cf);

/* A fixture path to run, with the case-id globs that select its cases. */
struct mtp_casefile_fixture {
	char path[MTP_PATH_MAX];
	struct mtp_casefile_words filters;  /* none: every case */
	struct mtp_casefile_words backends; /* none: every backend */
	char origin[MTP_PATH_MAX + 16];
};

/* A generated problem to run (parallel to specs[] of the selection). */
struct mtp_casefile_gen {
	char id[128];
	struct mtp_casefile_words backends;
	char origin[MTP_PATH_MAX + 16];
};

/* What a tag filter selects: fixture paths (each once; the filters and
 * backends of entries naming the same path are united, none meaning all)
 * and generated problems (each case id once), in file order. */
struct mtp_case_selection {
	int n_fixtures;
	struct mtp_casefile_fixture *fixtures;
	int n_specs;
	struct mtp_gen_spec *specs;
	struct mtp_casefile_gen *gen;
};

/* Selects the entries with at least one tag of `tags` ("quick" or
 * "quick,smoke"); NULL or "" selects every entry, tagged or not. */
enum mtp_status mtp_casefile_select(const struct mtp_casefile *cf,
				    const char *tags,
				    struct mtp_case_selection *sel, char *err,
				    size_t errn);
void mtp_case_selection_fini(struct mtp_case_selection *sel);

/* Whether a case of a selected fixture is to run: its id (or FILE:ID)
 * matches one of the filters, or there are none. */
bool mtp_casefile_fixture_match(const struct mtp_casefile_fixture *fx,
				const char *file, const char *case_id);

/* Whether `backend` may run an entry restricted to `backends`. */
bool mtp_casefile_backend_ok(const struct mtp_casefile_words *backends,
			     const char *backend);

#endif
