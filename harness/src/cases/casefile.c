/*
 * Case files (docs/CASES.md): the parser of files, lines, key=value tokens,
 * fixture selections and includes (generated lines expand in
 * casefile_gen.c, tags select in casefile_select.c). A suite is data, so a
 * typo must stop the run before anything runs: every line is checked here,
 * and each error is one line naming the file, the line, the column and the
 * problem.
 */
#include "mtp/casefile.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "casefile_int.h"
#include "mtp/textio.h"

#define MAX_LINE 4096
#define MAX_FILE_BYTES (1 << 20)

/* ---- paths ------------------------------------------------------------ */

static void path_dir(const char *path, char *dir, size_t n)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		snprintf(dir, n, ".");
	else if (slash == path)
		snprintf(dir, n, "/");
	else
		snprintf(dir, n, "%.*s", (int)(slash - path), path);
}

/* dir/rel (or rel if absolute), with "." and "dir/.." removed lexically. */
static bool path_join(const char *dir, const char *rel, char *out, size_t n)
{
	char tmp[2 * MTP_PATH_MAX], *parts[MTP_PATH_MAX / 2], *save;
	int np = 0;
	bool abs;
	size_t len = 0;

	if (rel[0] == '/')
		snprintf(tmp, sizeof(tmp), "%s", rel);
	else
		snprintf(tmp, sizeof(tmp), "%s/%s", dir, rel);
	abs = tmp[0] == '/';
	for (char *p = strtok_r(tmp, "/", &save); p;
	     p = strtok_r(NULL, "/", &save)) {
		if (strcmp(p, ".") == 0)
			continue;
		if (strcmp(p, "..") == 0 && np > 0 &&
		    strcmp(parts[np - 1], ".."))
			np--;
		else if (!(strcmp(p, "..") == 0 && abs && np == 0))
			parts[np++] = p;
	}
	out[0] = 0;
	if (abs)
		len = (size_t)snprintf(out, n, "/");
	for (int i = 0; i < np && len < n; i++)
		len += (size_t)snprintf(out + len, n - len, "%s%s",
					i ? "/" : "", parts[i]);
	if (np == 0 && !abs)
		len = (size_t)snprintf(out, n, ".");
	return len < n;
}

/* ---- fixture and include lines, files --------------------------------- */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static enum mtp_status fixture_add(const struct mtp_cf_line *ln,
				   const struct mtp_casefile_entry *proto,
				   const char *path, int col)
{
	struct mtp_casefile_entry *e;
	enum mtp_status st = mtp_cf_entry_add(ln, col, &e);

	if (st)
		return st;
	*e = *proto;
	snprintf(e->path, sizeof(e->path), "%s", path);
	return MTP_OK;
}

/* A folder stands for its *.h5 files, in name order. */
static enum mtp_status fixture_folder(const struct mtp_cf_line *ln,
				      const struct mtp_casefile_entry *proto,
				      const char *dir, int col)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **names = NULL, path[MTP_PATH_MAX];
	int n = 0, cap = 0;
	enum mtp_status st = MTP_OK;

	if (!d)
		return mtp_cf_error(ln, col, "cannot list '%s': %s", dir,
				    strerror(errno));
	while (!st && (de = readdir(d))) {
		size_t len = strlen(de->d_name);
		char **v = names;

		if (len <= 3 || strcmp(de->d_name + len - 3, ".h5") != 0)
			continue;
		if (n == cap)
			v = realloc(names, (size_t)(cap = cap ? 2 * cap : 64) *
						   sizeof(*names));
		if (v)
			names = v;
		if (!v || !(names[n++] = strdup(de->d_name)))
			st = MTP_ERR_NOMEM;
	}
	closedir(d);
	if (n)
		qsort(names, (size_t)n, sizeof(names[0]), cmp_str);
	for (int i = 0; i < n; i++) {
		if (!st && names[i] &&
		    !path_join(dir, names[i], path, sizeof(path)))
			st = mtp_cf_error(ln, col, "path too long");
		else if (!st && names[i])
			st = fixture_add(ln, proto, path, col);
		free(names[i]);
	}
	free(names);
	if (!st && n == 0)
		st = mtp_cf_error(ln, col, "no *.h5 file in the folder '%s'",
				  dir);
	return st == MTP_ERR_NOMEM ? mtp_cf_error(ln, col, "out of memory")
				   : st;
}

/* fixtures=... : one entry per file (a folder: per *.h5 file in it). */
static enum mtp_status line_fixtures(const struct mtp_cf_line *ln,
				     const struct mtp_casefile_entry *proto)
{
	const struct mtp_cf_token *t = mtp_cf_find_key(ln, K_FIXTURES);
	struct mtp_cf_item items[MTP_CF_MAX_ITEMS];
	int n;
	enum mtp_status st = mtp_cf_items(ln, t, items, &n);

	for (int i = 0; !st && i < n; i++) {
		char path[MTP_PATH_MAX];
		struct stat sb;

		if (!path_join(ln->dir, items[i].s, path, sizeof(path)))
			return mtp_cf_error(ln, items[i].col, "path too long");
		if (stat(path, &sb) != 0)
			return mtp_cf_error(
				ln, items[i].col,
				"no fixture file or folder '%s' (%s)", path,
				strerror(errno));
		if (S_ISDIR(sb.st_mode))
			st = fixture_folder(ln, proto, path, items[i].col);
		else if (!S_ISREG(sb.st_mode))
			return mtp_cf_error(
				ln, items[i].col,
				"'%s' is neither a regular file nor "
				"a folder",
				path);
		else
			st = fixture_add(ln, proto, path, items[i].col);
	}
	return st;
}

static enum mtp_status parse_file(struct mtp_cf_parser *ps, const char *path,
				  const struct mtp_cf_line *from, int col);

/* include=... : the files' entries, with this line's tags added. */
static enum mtp_status line_include(const struct mtp_cf_line *ln,
				    const struct mtp_casefile_entry *proto)
{
	const struct mtp_cf_token *t = mtp_cf_find_key(ln, K_INCLUDE);
	struct mtp_cf_item items[MTP_CF_MAX_ITEMS];
	int n;
	enum mtp_status st = mtp_cf_items(ln, t, items, &n);

	for (int i = 0; !st && i < n; i++) {
		char path[MTP_PATH_MAX];
		int first = ln->ps->cf->n;

		if (!path_join(ln->dir, items[i].s, path, sizeof(path)))
			return mtp_cf_error(ln, items[i].col, "path too long");
		st = parse_file(ln->ps, path, ln, items[i].col);
		for (int k = first; !st && k < ln->ps->cf->n; k++) {
			struct mtp_casefile_words *w =
				&ln->ps->cf->entries[k].tags;

			for (int j = 0; j < proto->tags.n; j++) {
				bool have = false;

				for (int m = 0; m < w->n; m++)
					have = have ||
					       strcmp(w->v[m],
						      proto->tags.v[j]) == 0;
				if (have)
					continue;
				if (w->n == MTP_CASEFILE_WORDS)
					return mtp_cf_error(
						ln, t->col,
						"more than %d tags on an entry",
						MTP_CASEFILE_WORDS);
				snprintf(w->v[w->n++], MTP_CASEFILE_WORD, "%s",
					 proto->tags.v[j]);
			}
		}
	}
	return st;
}

static enum mtp_status line_parse(struct mtp_cf_line *ln)
{
	static const char *const kind_name[] = {"", "fixtures=", "op=", "",
						"include="};
	struct mtp_casefile_entry proto;
	unsigned kind = 0;
	enum mtp_status st;

	for (int i = 0; i < ln->n; i++) {
		unsigned k = ln->tok[i].id == K_FIXTURES  ? L_FIX
			     : ln->tok[i].id == K_OP	  ? L_GEN
			     : ln->tok[i].id == K_INCLUDE ? L_INC
							  : 0;

		if (k && kind)
			return mtp_cf_error(ln, ln->tok[i].col,
					    "'%s' and '%s' cannot share a line",
					    kind_name[k], kind_name[kind]);
		if (k)
			kind = k;
	}
	if (!kind)
		return mtp_cf_error(ln, ln->tok[0].col,
				    "a line needs op=, fixtures= or include=");
	for (int i = 0; i < ln->n; i++)
		if (!(mtp_cf_key_lines(ln->tok[i].id) & kind))
			return mtp_cf_error(ln, ln->tok[i].col,
					    "key '%.*s' does not go with %s",
					    ln->tok[i].klen, ln->tok[i].key,
					    kind_name[kind]);
	memset(&proto, 0, sizeof(proto));
	proto.kind =
		kind == L_FIX ? MTP_CASEFILE_FIXTURES : MTP_CASEFILE_GENERATED;
	snprintf(proto.origin, sizeof(proto.origin), "%s:%d", ln->file, ln->no);
	st = mtp_cf_common_words(ln, &proto);
	if (!st && kind == L_FIX && mtp_cf_find_key(ln, K_FILTER))
		st = mtp_cf_words(ln, mtp_cf_find_key(ln, K_FILTER), NULL,
				  &proto.filters);
	if (st)
		return st;
	if (kind == L_FIX)
		return line_fixtures(ln, &proto);
	if (kind == L_GEN)
		return mtp_cf_line_generated(ln, &proto);
	return line_include(ln, &proto);
}

/* Parses text line by line as the innermost file open. */
static enum mtp_status parse_text(struct mtp_cf_parser *ps, const char *text)
{
	struct mtp_cf_line *ln = calloc(1, sizeof(*ln));
	char dir[MTP_PATH_MAX], buf[MAX_LINE + 1];
	enum mtp_status st = MTP_OK;

	if (!ln)
		return MTP_ERR_NOMEM;
	ln->ps = ps;
	ln->file = ps->open[ps->depth - 1].name;
	path_dir(ln->file, dir, sizeof(dir));
	ln->dir = dir;
	for (const char *p = text; !st && *p; ln->no++) {
		size_t len = strcspn(p, "\n");

		ln->no++;
		if (len > MAX_LINE) {
			st = mtp_cf_error(ln, MAX_LINE + 1,
					  "line longer than %d characters",
					  MAX_LINE);
			break;
		}
		memcpy(buf, p, len);
		buf[len] = 0;
		p += len + (p[len] == '\n');
		st = mtp_cf_tokenize(ln, buf);
		if (!st && ln->n)
			st = line_parse(ln);
		ln->no--;
	}
	free(ln);
	return st;
}

/* The text of an open file (closed here): at most 1 MiB, no NUL byte. */
static char *slurp(int fd, char *why, size_t n)
{
	FILE *f = fdopen(fd, "rb");
	char *buf = NULL;
	size_t len = 0;

	if (!f) {
		snprintf(why, n, "%s", strerror(errno));
		close(fd);
		return NULL;
	}
	buf = malloc(MAX_FILE_BYTES + 1);
	if (buf)
		len = fread(buf, 1, MAX_FILE_BYTES + 1, f);
	if (!buf || ferror(f) || len > MAX_FILE_BYTES || memchr(buf, 0, len)) {
		snprintf(why, n, "%s",
			 !buf			? "out of memory"
			 : ferror(f)		? "read error"
			 : len > MAX_FILE_BYTES ? "larger than 1 MiB"
						: "not a text file");
		free(buf);
		buf = NULL;
	} else {
		buf[len] = 0;
	}
	fclose(f);
	return buf;
}

/* Pushes the record of a file about to be parsed: its absolute path,
 * normalised lexically (for messages), its identity and include line. */
static void file_push(struct mtp_cf_parser *ps, const char *name,
		      const struct stat *sb, const struct mtp_cf_line *site,
		      int col)
{
	struct mtp_cf_file *f = &ps->open[ps->depth++];
	char cwd[MTP_PATH_MAX];

	if (name[0] == '/' || !getcwd(cwd, sizeof(cwd)))
		snprintf(cwd, sizeof(cwd), "/");
	if (!path_join(cwd, name, f->ident, sizeof(f->ident)))
		snprintf(f->ident, sizeof(f->ident), "%s", name);
	f->name = name;
	f->dev = sb ? sb->st_dev : 0;
	f->ino = sb ? sb->st_ino : 0;
	f->site = site;
	f->col = col;
}

/* Whether two files are one: the same device and inode, or, where one is
 * text not read from a file, the same path. */
static bool same_file(const struct mtp_cf_file *a, const struct mtp_cf_file *b)
{
	if (a->ino && b->ino)
		return a->ino == b->ino && a->dev == b->dev;
	return strcmp(a->ident, b->ident) == 0;
}

/* The file just pushed is one open already: "include cycle: A -> B -> A". */
static enum mtp_status cycle_check(struct mtp_cf_parser *ps)
{
	const struct mtp_cf_file *f = &ps->open[ps->depth - 1];
	char chain[MTP_ERR_MAX] = "";
	int i = 0;

	while (i < ps->depth - 1 && !same_file(f, &ps->open[i]))
		i++;
	if (i == ps->depth - 1)
		return MTP_OK;
	for (int k = i; k < ps->depth; k++)
		snprintf(chain + strlen(chain), sizeof(chain) - strlen(chain),
			 "%s%s", k > i ? " -> " : "", ps->open[k].ident);
	return mtp_cf_error(f->site, f->col, "include cycle: %s", chain);
}

/* Whether one more file of `bytes` fits the parse's budgets. */
static enum mtp_status budget_check(struct mtp_cf_parser *ps, long bytes)
{
	char what[64] = "";

	if (++ps->files > MTP_CASEFILE_MAX_FILES)
		snprintf(what, sizeof(what), "more than %d files",
			 MTP_CASEFILE_MAX_FILES);
	else if ((ps->bytes += bytes) > MTP_CASEFILE_MAX_BYTES)
		snprintf(what, sizeof(what), "more than %ld bytes",
			 (long)MTP_CASEFILE_MAX_BYTES);
	return what[0] ? mtp_cf_budget_error(ps, NULL, 0, what) : MTP_OK;
}

/* The text of a case file and its identity; an error names the include
 * line `from` (NULL: the top file). */
static enum mtp_status read_text(struct mtp_cf_parser *ps, const char *path,
				 const struct mtp_cf_line *from, int col,
				 struct stat *sb, char **text)
{
	char why[128];
	int fd = mtp_open_regular(path, why, sizeof(why)); /* never a FIFO */

	*text = NULL;
	if (fd >= 0 && fstat(fd, sb) != 0) {
		snprintf(why, sizeof(why), "%s", strerror(errno));
		close(fd);
	} else if (fd >= 0) {
		*text = slurp(fd, why, sizeof(why));
	}
	if (*text)
		return MTP_OK;
	if (from)
		return mtp_cf_error(from, col, "cannot read include '%s': %s",
				    path, why);
	snprintf(ps->err, ps->errn, "%s: cannot read: %s", path, why);
	return MTP_ERR_IO;
}

static enum mtp_status parse_file(struct mtp_cf_parser *ps, const char *path,
				  const struct mtp_cf_line *from, int col)
{
	struct stat sb;
	char *text;
	enum mtp_status st;

	if (ps->depth > MTP_CASEFILE_MAX_DEPTH)
		return mtp_cf_error(from, col, "includes nested deeper than %d",
				    MTP_CASEFILE_MAX_DEPTH);
	st = read_text(ps, path, from, col, &sb, &text);
	if (st)
		return st;
	file_push(ps, path, &sb, from, col);
	st = cycle_check(ps);
	if (!st)
		st = budget_check(ps, (long)strlen(text));
	if (!st)
		st = parse_text(ps, text);
	ps->depth--;
	free(text);
	return st;
}

enum mtp_status mtp_casefile_parse(const char *path, struct mtp_casefile *cf,
				   char *err, size_t errn)
{
	struct mtp_cf_parser *ps = calloc(1, sizeof(*ps));
	enum mtp_status st;

	if (!ps)
		return MTP_ERR_NOMEM;
	ps->cf = cf;
	ps->err = err;
	ps->errn = errn;
	st = parse_file(ps, path, NULL, 0);
	free(ps);
	return st;
}

enum mtp_status mtp_casefile_parse_text(const char *name, const char *text,
					struct mtp_casefile *cf, char *err,
					size_t errn)
{
	struct mtp_cf_parser *ps = calloc(1, sizeof(*ps));
	enum mtp_status st;

	if (!ps)
		return MTP_ERR_NOMEM;
	ps->cf = cf;
	ps->err = err;
	ps->errn = errn;
	file_push(ps, name, NULL, NULL, 0);
	st = parse_text(ps, text);
	free(ps);
	return st;
}

void mtp_casefile_fini(struct mtp_casefile *cf)
{
	free(cf->entries);
	memset(cf, 0, sizeof(*cf));
}
