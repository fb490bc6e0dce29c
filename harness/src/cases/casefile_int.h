/*
 * Internals shared by the case-file parser (casefile.c), its lines and
 * tokens (casefile_line.c) and the expansion of generated lines
 * (casefile_gen.c): one parsed line, its tokens, and the one-line error that
 * names the file, line and column.
 */
#ifndef MTP_CASEFILE_INT_H
#define MTP_CASEFILE_INT_H

#include <sys/types.h>

#include "mtp/casefile.h"

#define MTP_CF_MAX_TOKENS 48
#define MTP_CF_MAX_ITEMS 64
#define MTP_CF_ALNUM                                                           \
	"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

/* Which kind of line a key belongs to. */
#define L_FIX 1u
#define L_GEN 2u
#define L_INC 4u

enum mtp_cf_key {
	K_FIXTURES,
	K_FILTER,
	K_INCLUDE,
	K_OP,
	K_FAMILY,
	K_DTYPE,
	K_DIM,
	K_SEED,
	K_OPTIONAL,
	K_ATTR,
	K_TAGS,
	K_BACKENDS,
};

struct mtp_cf_token {
	const char *key, *val;
	int klen, vlen;
	int col, vcol; /* 1-based columns of the key and of the value */
	enum mtp_cf_key id;
};

/* One value of a comma-separated list, with its column. */
struct mtp_cf_item {
	char s[MTP_CASEFILE_WORD];
	int col;
};

struct mtp_cf_line;

/* A file being parsed: its name as given and as an absolute path (for cycle
 * messages), its identity (device and inode; ino 0 for text not read from a
 * file) and the include line that brought it in (NULL for the top file). */
struct mtp_cf_file {
	const char *name;
	char ident[MTP_PATH_MAX];
	dev_t dev;
	ino_t ino;
	const struct mtp_cf_line *site;
	int col;
};

struct mtp_cf_parser {
	struct mtp_casefile *cf;
	int depth;
	struct mtp_cf_file open[MTP_CASEFILE_MAX_DEPTH + 1]; /* files open */
	int files;  /* files read, against MTP_CASEFILE_MAX_FILES */
	long bytes; /* text read, against MTP_CASEFILE_MAX_BYTES */
	char *err;
	size_t errn;
};

struct mtp_cf_line {
	struct mtp_cf_parser *ps;
	const char *file; /* as named to the user */
	const char *dir;  /* where relative paths start */
	int no, n;
	struct mtp_cf_token tok[MTP_CF_MAX_TOKENS];
};

/* Writes "FILE:LINE:COL: message" and returns MTP_ERR_INVALID. */
enum mtp_status mtp_cf_error(const struct mtp_cf_line *ln, int col,
			     const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The comma-separated values of a token (empty items are an error). */
enum mtp_status mtp_cf_items(const struct mtp_cf_line *ln,
			     const struct mtp_cf_token *t,
			     struct mtp_cf_item *out, int *n);
/* A budget of the parse ran out ("more than N files"): the error names the
 * include line that brought in the innermost file open (in the top file:
 * ln and col). */
enum mtp_status mtp_cf_budget_error(const struct mtp_cf_parser *ps,
				    const struct mtp_cf_line *ln, int col,
				    const char *what);
/* A new zeroed entry, within MTP_CASEFILE_MAX_ENTRIES (else the error). */
enum mtp_status mtp_cf_entry_add(const struct mtp_cf_line *ln, int col,
				 struct mtp_casefile_entry **out);
/* Splits a line into key=value tokens, each key checked against the table. */
enum mtp_status mtp_cf_tokenize(struct mtp_cf_line *ln, const char *s);
/* The kinds of line (L_FIX, L_GEN, L_INC) a key may appear on. */
unsigned mtp_cf_key_lines(enum mtp_cf_key id);
const struct mtp_cf_token *mtp_cf_find_key(const struct mtp_cf_line *ln,
					   enum mtp_cf_key id);
/* A list of words of the characters in `allowed` (NULL: any). */
enum mtp_status mtp_cf_words(const struct mtp_cf_line *ln,
			     const struct mtp_cf_token *t, const char *allowed,
			     struct mtp_casefile_words *out);
/* The tags= and backends= of a fixture or generated line. */
enum mtp_status mtp_cf_common_words(const struct mtp_cf_line *ln,
				    struct mtp_casefile_entry *e);
/* op=... : appends every combination of the line's lists, each checked. */
enum mtp_status mtp_cf_line_generated(const struct mtp_cf_line *ln,
				      const struct mtp_casefile_entry *proto);

#endif
