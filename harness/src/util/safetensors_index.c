/*
 * A sharded checkpoint's index (model.safetensors.index.json,
 * harness/include/mtp/safetensors.h), read with the bounded JSON cursor of
 * the header reader (st_json.h).
 */
#include "mtp/safetensors.h"
#include "mtp/textio.h"

#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "st_json.h"

/* A file name of the index: a *.safetensors file in the index's folder. */
static const char *index_file_problem(const char *f)
{
	size_t n = strlen(f), m = strlen(".safetensors");

	if (!n || f[0] == '.' || strchr(f, '/') || strchr(f, '\\'))
		return "file: not a file name in the index's folder";
	if (n <= m || strcmp(f + n - m, ".safetensors"))
		return "file: not a *.safetensors name";
	return NULL;
}

static int by_entry_name(const void *a, const void *b)
{
	return strcmp(((const struct mtp_st_index_entry *)a)->name,
		      ((const struct mtp_st_index_entry *)b)->name);
}

/* No tensor named twice (JSON allows repeated members; the index may not). */
static enum mtp_status index_unique(struct cur *c,
				    const struct mtp_st_index *ix)
{
	struct mtp_st_index_entry *s;
	enum mtp_status r = MTP_OK;

	if (ix->n < 2)
		return MTP_OK;
	s = malloc((size_t)ix->n * sizeof(*s));
	if (!s)
		return MTP_ERR_NOMEM;
	memcpy(s, ix->v, (size_t)ix->n * sizeof(*s));
	qsort(s, (size_t)ix->n, sizeof(*s), by_entry_name);
	for (int i = 1; !r && i < ix->n; i++)
		if (!strcmp(s[i].name, s[i - 1].name))
			r = stj_bad(c, "weight_map", "a tensor named twice");
	free(s);
	return r;
}

/* The "weight_map" object: tensor name -> file name. */
static enum mtp_status weight_map(struct cur *c, struct mtp_st_index *ix)
{
	struct mtp_st_index_entry e;
	const char *why;

	if (!stj_eat(c, '{'))
		return stj_bad(c, "weight_map", "not a JSON object");
	if (stj_eat(c, '}'))
		return MTP_OK;
	do {
		void *v;

		if (!stj_str(c, e.name, sizeof(e.name)) || !e.name[0] ||
		    !stj_eat(c, ':'))
			return stj_bad(
				c, "weight_map",
				"malformed tensor name (1 to 255 bytes)");
		if (!stj_str(c, e.file, sizeof(e.file)))
			return stj_bad(c, e.name, "file: not a string");
		if ((why = index_file_problem(e.file)))
			return stj_bad(c, e.name, why);
		if (ix->n >= STJ_MAX_TENSORS)
			return stj_bad(c, "weight_map", "too many tensors");
		v = realloc(ix->v, (size_t)(ix->n + 1) * sizeof(*ix->v));
		if (!v)
			return MTP_ERR_NOMEM;
		ix->v = v;
		ix->v[ix->n++] = e;
	} while (stj_eat(c, ','));
	return stj_eat(c, '}')
		       ? MTP_OK
		       : stj_bad(c, "weight_map", "malformed JSON object");
}

enum mtp_status mtp_safetensors_index_parse(const char *json, size_t len,
					    const char *what,
					    struct mtp_st_index *ix, char *err,
					    size_t errn)
{
	struct cur c = {json, json + len, what ? what : "index", err, errn};
	char key[MTP_ST_NAME_MAX];
	enum mtp_status r = MTP_OK;
	bool seen = false;

	memset(ix, 0, sizeof(*ix));
	if (!stj_eat(&c, '{'))
		return stj_bad(&c, "index", "not a JSON object");
	if (!stj_eat(&c, '}')) {
		do {
			if (!stj_str(&c, key, sizeof(key)) ||
			    !stj_eat(&c, ':')) {
				r = stj_bad(&c, "index",
					    "malformed member name");
			} else if (!strcmp(key, "weight_map")) {
				r = seen ? stj_bad(&c, key, "given twice")
					 : weight_map(&c, ix);
				seen = true;
			} else if (!stj_skip(&c, 0)) {
				r = stj_bad(&c, key, "malformed value");
			}
		} while (!r && stj_eat(&c, ','));
		if (!r && !stj_eat(&c, '}'))
			r = stj_bad(&c, "index", "malformed JSON object");
	}
	stj_ws(&c);
	if (!r && c.p != c.end)
		r = stj_bad(&c, "index", "bytes after the JSON object");
	if (!r && !seen)
		r = stj_bad(&c, "weight_map", "missing");
	if (!r)
		r = index_unique(&c, ix);
	if (r)
		mtp_safetensors_index_close(ix);
	return r;
}

enum mtp_status mtp_safetensors_index_open(const char *path,
					   struct mtp_st_index *ix, char *err,
					   size_t errn)
{
	struct stat sb;
	char *json, why[128];
	ssize_t got = 0;
	enum mtp_status r;
	int fd = mtp_open_input(path, MTP_ST_HEADER_MAX, why, sizeof(why));

	memset(ix, 0, sizeof(*ix));
	if (fd < 0 || fstat(fd, &sb) < 0) {
		snprintf(err, errn, "%s: cannot read: %s", path,
			 fd < 0 ? why : "fstat failed");
		if (fd >= 0)
			close(fd);
		return MTP_ERR_IO;
	}
	json = malloc((size_t)sb.st_size + 1);
	if (json)
		got = pread(fd, json, (size_t)sb.st_size, 0);
	close(fd);
	if (!json)
		return MTP_ERR_NOMEM;
	if (got != (ssize_t)sb.st_size) {
		snprintf(err, errn, "%s: cannot read it", path);
		free(json);
		return MTP_ERR_IO;
	}
	r = mtp_safetensors_index_parse(json, (size_t)sb.st_size, path, ix, err,
					errn);
	free(json);
	return r;
}

void mtp_safetensors_index_close(struct mtp_st_index *ix)
{
	free(ix->v);
	ix->v = NULL;
	ix->n = 0;
}
