/*
 * Case-file lines (docs/CASES.md): the key table, a line's key=value tokens,
 * their comma-separated items and word lists, the one-line error naming the
 * file, line and column, and the entries the lines append. casefile.c reads
 * files and dispatches lines; casefile_gen.c expands generated ones; both
 * build on this file.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "casefile_int.h"

static const struct {
	const char *name;
	enum mtp_cf_key id;
	unsigned lines;
} keys[] = {
	{"fixtures", K_FIXTURES, L_FIX},
	{"filter", K_FILTER, L_FIX},
	{"include", K_INCLUDE, L_INC},
	{"op", K_OP, L_GEN},
	{"family", K_FAMILY, L_GEN},
	{"dtype", K_DTYPE, L_GEN},
	{"seed", K_SEED, L_GEN},
	{"optional", K_OPTIONAL, L_GEN},
	{"tags", K_TAGS, L_FIX | L_GEN | L_INC},
	{"backends", K_BACKENDS, L_FIX | L_GEN},
	{"T", K_DIM, L_GEN},
	{"H", K_DIM, L_GEN},
	{"M", K_DIM, L_GEN},
	{"V", K_DIM, L_GEN},
	{"F", K_DIM, L_GEN},
	{"R", K_DIM, L_GEN},
	{"P", K_DIM, L_GEN},
	{"K", K_DIM, L_GEN},
	{"L", K_DIM, L_GEN},
	{"C", K_DIM, L_GEN},
};

enum mtp_status mtp_cf_error(const struct mtp_cf_line *ln, int col,
			     const char *fmt, ...)
{
	char msg[MTP_ERR_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(ln->ps->err, ln->ps->errn, "%s:%d:%d: %s", ln->file, ln->no,
		 col, msg);
	return MTP_ERR_INVALID;
}

/* ---- tokens and list items ------------------------------------------- */

static enum mtp_status key_classify(const struct mtp_cf_line *ln,
				    struct mtp_cf_token *t)
{
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if ((int)strlen(keys[i].name) == t->klen &&
		    strncmp(keys[i].name, t->key, (size_t)t->klen) == 0) {
			t->id = keys[i].id;
			return MTP_OK;
		}
	}
	if (t->klen > 5 && strncmp(t->key, "attr.", 5) == 0) {
		for (int i = 5; i < t->klen; i++)
			if (!isalnum((unsigned char)t->key[i]) &&
			    t->key[i] != '_')
				return mtp_cf_error(ln, t->col + i,
						    "bad attribute name '%.*s'",
						    t->klen - 5, t->key + 5);
		if (t->klen - 5 >= (int)sizeof(((struct mtp_attr *)0)->name))
			return mtp_cf_error(ln, t->col,
					    "attribute name too long");
		t->id = K_ATTR;
		return MTP_OK;
	}
	return mtp_cf_error(ln, t->col, "unknown key '%.*s'", t->klen, t->key);
}

static enum mtp_status token_add(struct mtp_cf_line *ln, const char *s,
				 int start, int end)
{
	const char *eq = memchr(s + start, '=', (size_t)(end - start));
	struct mtp_cf_token *t = &ln->tok[ln->n];

	if (!eq)
		return mtp_cf_error(ln, start + 1,
				    "expected key=value, got '%.*s'",
				    end - start, s + start);
	if (eq == s + start)
		return mtp_cf_error(ln, start + 1, "missing key before '='");
	if (ln->n == MTP_CF_MAX_TOKENS)
		return mtp_cf_error(ln, start + 1,
				    "more than %d tokens on a line",
				    MTP_CF_MAX_TOKENS);
	t->key = s + start;
	t->klen = (int)(eq - t->key);
	t->val = eq + 1;
	t->vlen = (int)(s + end - t->val);
	t->col = start + 1;
	t->vcol = (int)(t->val - s) + 1;
	if (t->vlen == 0)
		return mtp_cf_error(ln, t->vcol, "empty value for '%.*s'",
				    t->klen, t->key);
	for (int i = 0; i < ln->n; i++)
		if (ln->tok[i].klen == t->klen &&
		    strncmp(ln->tok[i].key, t->key, (size_t)t->klen) == 0)
			return mtp_cf_error(ln, t->col, "duplicate key '%.*s'",
					    t->klen, t->key);
	ln->n++;
	return key_classify(ln, t);
}

/* Splits a line into key=value tokens; '#' at the start of a token starts a
 * comment. */
enum mtp_status mtp_cf_tokenize(struct mtp_cf_line *ln, const char *s)
{
	int i = 0;

	ln->n = 0;
	for (;;) {
		int start;
		enum mtp_status st;

		while (s[i] == ' ' || s[i] == '\t' || s[i] == '\r')
			i++;
		if (!s[i] || s[i] == '#')
			return MTP_OK;
		start = i;
		while (s[i] && s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
			i++;
		st = token_add(ln, s, start, i);
		if (st)
			return st;
	}
}

/* The comma-separated values of a token. */
enum mtp_status mtp_cf_items(const struct mtp_cf_line *ln,
			     const struct mtp_cf_token *t,
			     struct mtp_cf_item *out, int *n)
{
	int i = 0;

	*n = 0;
	while (i <= t->vlen) {
		int len = 0;

		while (i + len < t->vlen && t->val[i + len] != ',')
			len++;
		if (len == 0)
			return mtp_cf_error(ln, t->vcol + i,
					    "empty item in the list of '%.*s'",
					    t->klen, t->key);
		if (*n == MTP_CF_MAX_ITEMS)
			return mtp_cf_error(ln, t->vcol + i,
					    "more than %d values for '%.*s'",
					    MTP_CF_MAX_ITEMS, t->klen, t->key);
		if (len >= MTP_CASEFILE_WORD)
			return mtp_cf_error(ln, t->vcol + i,
					    "value longer than %d characters",
					    MTP_CASEFILE_WORD - 1);
		snprintf(out[*n].s, sizeof(out[*n].s), "%.*s", len, t->val + i);
		out[(*n)++].col = t->vcol + i;
		i += len + 1;
	}
	return MTP_OK;
}

/* tags, backends and filters: a list of words of allowed characters. */
enum mtp_status mtp_cf_words(const struct mtp_cf_line *ln,
			     const struct mtp_cf_token *t, const char *allowed,
			     struct mtp_casefile_words *w)
{
	struct mtp_cf_item items[MTP_CF_MAX_ITEMS];
	int n;
	enum mtp_status st = mtp_cf_items(ln, t, items, &n);

	if (st)
		return st;
	if (n > MTP_CASEFILE_WORDS)
		return mtp_cf_error(ln, t->vcol,
				    "more than %d values for '%.*s'",
				    MTP_CASEFILE_WORDS, t->klen, t->key);
	w->n = 0;
	for (int i = 0; i < n; i++) {
		size_t bad = allowed ? strspn(items[i].s, allowed)
				     : strlen(items[i].s);

		if (items[i].s[bad])
			return mtp_cf_error(
				ln, items[i].col + (int)bad,
				"character '%c' not allowed in '%.*s'",
				items[i].s[bad], t->klen, t->key);
		snprintf(w->v[w->n++], MTP_CASEFILE_WORD, "%s", items[i].s);
	}
	return MTP_OK;
}

const struct mtp_cf_token *mtp_cf_find_key(const struct mtp_cf_line *ln,
					   enum mtp_cf_key id)
{
	for (int i = 0; i < ln->n; i++)
		if (ln->tok[i].id == id)
			return &ln->tok[i];
	return NULL;
}

/* tags= and backends= of any line. */
enum mtp_status mtp_cf_common_words(const struct mtp_cf_line *ln,
				    struct mtp_casefile_entry *e)
{
	const struct mtp_cf_token *t = mtp_cf_find_key(ln, K_TAGS);
	enum mtp_status st = MTP_OK;

	if (t)
		st = mtp_cf_words(ln, t, MTP_CF_ALNUM "_-", &e->tags);
	t = mtp_cf_find_key(ln, K_BACKENDS);
	if (!st && t)
		st = mtp_cf_words(ln, t, MTP_CF_ALNUM "_-.:*", &e->backends);
	return st;
}

enum mtp_status mtp_cf_budget_error(const struct mtp_cf_parser *ps,
				    const struct mtp_cf_line *ln, int col,
				    const char *what)
{
	const struct mtp_cf_file *f = &ps->open[ps->depth - 1];

	if (!f->site && !ln) {
		snprintf(ps->err, ps->errn, "%s: the case file expands into %s",
			 f->name, what);
		return MTP_ERR_INVALID;
	}
	if (!f->site)
		return mtp_cf_error(ln, col, "the case file expands into %s",
				    what);
	return mtp_cf_error(f->site, f->col,
			    "include '%s': the case file and its includes "
			    "expand into %s (%d files read)",
			    f->name, what, ps->files);
}

enum mtp_status mtp_cf_entry_add(const struct mtp_cf_line *ln, int col,
				 struct mtp_casefile_entry **out)
{
	struct mtp_casefile *cf = ln->ps->cf;
	char what[64];

	if (cf->n == MTP_CASEFILE_MAX_ENTRIES) {
		snprintf(what, sizeof(what), "more than %d entries",
			 MTP_CASEFILE_MAX_ENTRIES);
		return mtp_cf_budget_error(ln->ps, ln, col, what);
	}
	if (cf->n == cf->cap) {
		int cap = cf->cap ? 2 * cf->cap : 32;
		struct mtp_casefile_entry *e =
			realloc(cf->entries, (size_t)cap * sizeof(*e));

		if (!e)
			return mtp_cf_error(ln, col, "out of memory");
		cf->entries = e;
		cf->cap = cap;
	}
	*out = &cf->entries[cf->n++];
	memset(*out, 0, sizeof(**out));
	return MTP_OK;
}

unsigned mtp_cf_key_lines(enum mtp_cf_key id)
{
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (keys[i].id == id)
			return keys[i].lines;
	return L_GEN; /* attr.<name> */
}
