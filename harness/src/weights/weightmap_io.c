/*
 * The audit's inputs: name sets and name pairs, and the files they come
 * from (text lists captured from an engine, or a safetensors index). Every
 * error is one line naming the file, and the line where there is one, so a
 * capture script that printed the wrong thing is found at once.
 */
#include "mtp/safetensors.h"
#include "mtp/textio.h"
#include "mtp/weightmap.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Room left in a name for the loader's renames (mtp.0. -> model.layers.N.
 * and the like), so that a name read here never overflows a mapping. */
#define NAME_READ_MAX (MTP_WM_NAME_MAX - 64)

enum mtp_status mtp_wm_pairs_add(struct mtp_wm_pairs *p, const char *a,
				 const char *b, int line)
{
	struct mtp_wm_pair *e;

	if (p->n == p->cap) {
		int cap = p->cap ? 2 * p->cap : 64;
		void *v = realloc(p->v, (size_t)cap * sizeof(*p->v));

		if (!v)
			return MTP_ERR_NOMEM;
		p->v = v;
		p->cap = cap;
	}
	e = &p->v[p->n];
	e->a = strdup(a);
	e->b = strdup(b);
	e->line = line;
	e->shard[0] = '\0';
	e->expert = -1;
	if (!e->a || !e->b) {
		free(e->a);
		free(e->b);
		return MTP_ERR_NOMEM;
	}
	p->n++;
	return MTP_OK;
}

void mtp_wm_pairs_fini(struct mtp_wm_pairs *p)
{
	for (int i = 0; i < p->n; i++) {
		free(p->v[i].a);
		free(p->v[i].b);
	}
	free(p->v);
	memset(p, 0, sizeof(*p));
}

/* Strips the line end and surrounding blanks; NULL for a line to ignore
 * (blank, or a '#' comment). */
static char *trim_line(char *s)
{
	size_t n;

	s += strspn(s, " \t");
	n = strlen(s);
	while (n && strchr(" \t\r\n", s[n - 1]))
		s[--n] = '\0';
	return *s && *s != '#' ? s : NULL;
}

/* A tensor or module name: printable, no blanks, not too long. */
static const char *name_problem(const char *s)
{
	if (strlen(s) >= NAME_READ_MAX)
		return "name longer than 191 characters";
	for (; *s; s++)
		if ((unsigned char)*s <= ' ' || *s == '"' || *s == '\\')
			return "not a name (blank, quote or control character "
			       "in it)";
	return NULL;
}

/* A list file's size cap: a real checkpoint's index names about 100 000
 * tensors (some 10 MB of names); a larger file is not a list (a sparse
 * file, a runaway capture). */
#define LIST_MAX_BYTES (256ull << 20)

/* Opens an input list: a regular file of at most LIST_MAX_BYTES (a FIFO,
 * a device or a folder is refused at once, never waited on); NULL with the
 * one-line error naming the file. */
static FILE *open_list(const char *path, char *err, size_t errn)
{
	char why[128];
	int fd = mtp_open_input(path, LIST_MAX_BYTES, why, sizeof(why));
	FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;

	if (!f) {
		if (fd >= 0) {
			snprintf(why, sizeof(why), "%s", strerror(errno));
			close(fd);
		}
		snprintf(err, errn, "%s: cannot read: %s", path, why);
	}
	return f;
}

/* Calls take(line text, line number) for every line that is not ignored;
 * take returns NULL or the problem with the line. */
static enum mtp_status read_lines(const char *path, char *err, size_t errn,
				  const char *(*take)(char *s, int line,
						      void *ctx),
				  void *ctx, int *n_taken)
{
	FILE *f = open_list(path, err, errn);
	char *buf = NULL, *s;
	size_t cap = 0;
	int line = 0;
	const char *why = NULL;

	*n_taken = 0;
	if (!f)
		return MTP_ERR_IO;
	while (!why && getline(&buf, &cap, f) >= 0) {
		line++;
		s = trim_line(buf);
		if (s && !(why = take(s, line, ctx)))
			(*n_taken)++;
	}
	if (!why && ferror(f))
		why = "read error";
	free(buf);
	fclose(f);
	if (why) {
		snprintf(err, errn, "%s:%d: %s", path, line, why);
		return MTP_ERR_INVALID;
	}
	if (!*n_taken) {
		snprintf(err, errn, "%s: no names in the file", path);
		return MTP_ERR_INVALID;
	}
	return MTP_OK;
}

static const char *take_name(char *s, int line, void *ctx)
{
	const char *why = name_problem(s);

	(void)line;
	if (why)
		return why;
	return mtp_wm_names_add(ctx, s) ? "out of memory" : NULL;
}

struct params_ctx {
	struct mtp_wm_names *names;
	struct mtp_wm_pairs *shapes;
};

/* "name" or "name<TAB>shape=D0,D1,..." (a scalar: "shape="). */
static const char *take_param(char *s, int line, void *ctx)
{
	struct params_ctx *pc = ctx;
	char *tab = strchr(s, '\t');
	const char *why;

	if (tab) {
		*tab++ = '\0';
		tab += strspn(tab, " ");
		if (strncmp(tab, "shape=", 6) ||
		    tab[6 + strspn(tab + 6, "0123456789,")])
			return "expected NAME or NAME<TAB>shape=D0,D1,...";
		tab += 6;
	}
	if ((why = take_name(s, line, pc->names)))
		return why;
	if (tab && pc->shapes && mtp_wm_pairs_add(pc->shapes, s, tab, line))
		return "out of memory";
	return NULL;
}

enum mtp_status mtp_wm_read_params(const char *path, struct mtp_wm_names *out,
				   struct mtp_wm_pairs *shapes, char *err,
				   size_t errn)
{
	struct params_ctx pc = {out, shapes};
	enum mtp_status st;
	int n;

	memset(out, 0, sizeof(*out));
	if (shapes)
		memset(shapes, 0, sizeof(*shapes));
	st = read_lines(path, err, errn, take_param, &pc, &n);
	if (st) {
		mtp_wm_names_fini(out);
		if (shapes)
			mtp_wm_pairs_fini(shapes);
	}
	return st;
}

struct pairs_ctx {
	struct mtp_wm_pairs *out;
	bool allow_empty_b;
};

/* MAP's further columns: shard=S and expert=E are kept, the rest are
 * comments. */
static void take_columns(const char *cols, struct mtp_wm_pair *e)
{
	while (cols && *cols) {
		size_t n = strcspn(cols, "\t");

		if (!strncmp(cols, "shard=", 6) && n - 6 < sizeof(e->shard))
			snprintf(e->shard, sizeof(e->shard), "%.*s",
				 (int)(n - 6), cols + 6);
		else if (!strncmp(cols, "expert=", 7))
			e->expert = atoi(cols + 7);
		cols += n + (cols[n] == '\t');
	}
}

static const char *take_pair(char *s, int line, void *ctx)
{
	struct pairs_ctx *pc = ctx;
	char *tab = strchr(s, '\t'), *cols;
	const char *why;

	/* "name<TAB>" loses its tab to trim_line: an empty value */
	if (!tab && pc->allow_empty_b)
		tab = s + strlen(s);
	else if (!tab)
		return "expected NAME<TAB>VALUE";
	else
		*tab++ = '\0';
	tab += strspn(tab, " ");
	cols = tab + strcspn(tab, "\t");
	cols = *cols ? (*cols = '\0', cols + 1) : NULL;
	if ((why = name_problem(s)) || (*tab && (why = name_problem(tab))))
		return why;
	if (!*tab && !pc->allow_empty_b)
		return "expected NAME<TAB>VALUE (the value is empty)";
	if (mtp_wm_pairs_add(pc->out, s, tab, line))
		return "out of memory";
	take_columns(cols, &pc->out->v[pc->out->n - 1]);
	return NULL;
}

enum mtp_status mtp_wm_read_pairs(const char *path, bool allow_empty_b,
				  struct mtp_wm_pairs *out, char *err,
				  size_t errn)
{
	struct pairs_ctx pc = {out, allow_empty_b};
	enum mtp_status st;
	int n;

	memset(out, 0, sizeof(*out));
	st = read_lines(path, err, errn, take_pair, &pc, &n);
	if (st)
		mtp_wm_pairs_fini(out);
	return st;
}

enum mtp_status mtp_wm_read_names(const char *path, struct mtp_wm_names *out,
				  char *err, size_t errn)
{
	return mtp_wm_read_params(path, out, NULL, err, errn);
}

/* A safetensors index is JSON: its first non-blank byte is '{'. False
 * with the error when the file cannot be read as a list. */
static bool looks_like_json(const char *path, bool *json, char *err,
			    size_t errn)
{
	FILE *f = open_list(path, err, errn);
	int ch = EOF;

	if (!f)
		return false;
	do
		ch = fgetc(f);
	while (ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n');
	fclose(f);
	*json = ch == '{';
	return true;
}

/* The "weight_map" keys of an index, read by the one safetensors reader
 * (mtp/safetensors.h: bounded, strict; no libcjson needed). */
static enum mtp_status index_keys(const char *path, struct mtp_wm_names *out,
				  char *err, size_t errn)
{
	struct mtp_st_index ix;
	enum mtp_status st = mtp_safetensors_index_open(path, &ix, err, errn);

	for (int i = 0; st == MTP_OK && i < ix.n; i++)
		if ((st = mtp_wm_names_add(out, ix.v[i].name)))
			snprintf(err, errn, "%s: out of memory", path);
	mtp_safetensors_index_close(&ix);
	return st;
}

enum mtp_status mtp_wm_read_keys(const char *path, struct mtp_wm_names *out,
				 char *err, size_t errn)
{
	enum mtp_status st;
	bool json;

	if (!looks_like_json(path, &json, err, errn))
		return MTP_ERR_IO;
	if (!json)
		return mtp_wm_read_names(path, out, err, errn);
	memset(out, 0, sizeof(*out));
	st = index_keys(path, out, err, errn);
	for (int i = 0; st == MTP_OK && i < out->n; i++) {
		const char *why = name_problem(out->v[i]);

		if (why) {
			snprintf(err, errn, "%s: weight_map key %d: %s", path,
				 i + 1, why);
			st = MTP_ERR_INVALID;
		}
	}
	if (st == MTP_OK && out->n == 0) {
		snprintf(err, errn, "%s: \"weight_map\" has no keys", path);
		st = MTP_ERR_INVALID;
	}
	if (st)
		mtp_wm_names_fini(out);
	return st;
}
