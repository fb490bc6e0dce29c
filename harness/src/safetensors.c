/*
 * A strict safetensors reader (harness/include/mtp/safetensors.h): its own
 * bounded JSON parser for the header (no recursion beyond MAX_DEPTH, every
 * read checked against the end of the buffer), then the checks on dtypes,
 * shapes and offsets, then per-tensor reads with pread.
 */
#include "mtp/safetensors.h"

#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_DEPTH 16
#define MAX_TENSORS (1 << 20)

struct cur {
	const char *p, *end;
	const char *what; /* the file, for messages */
	char *err;
	size_t errn;
};

static enum mtp_status bad(struct cur *c, const char *obj, const char *why)
{
	snprintf(c->err, c->errn, "%s: %s: %s", c->what, obj, why);
	for (char *q = c->err; *q; q++)
		if ((unsigned char)*q < 0x20 || *q == 0x7f)
			*q = '?';
	return MTP_ERR_INVALID;
}

static void ws(struct cur *c)
{
	while (c->p < c->end && strchr(" \t\r\n", *c->p) && *c->p)
		c->p++;
}

static bool eat(struct cur *c, char ch)
{
	ws(c);
	if (c->p < c->end && *c->p == ch) {
		c->p++;
		return true;
	}
	return false;
}

static int hexval(char h)
{
	if (h >= '0' && h <= '9')
		return h - '0';
	if (h >= 'a' && h <= 'f')
		return h - 'a' + 10;
	if (h >= 'A' && h <= 'F')
		return h - 'A' + 10;
	return -1;
}

/* \uXXXX (BMP, no surrogates) as UTF-8 into o; returns bytes or -1. */
static int utf8_of(struct cur *c, char *o)
{
	unsigned u = 0;

	if (c->end - c->p < 4)
		return -1;
	for (int i = 0; i < 4; i++) {
		int h = hexval(c->p[i]);

		if (h < 0)
			return -1;
		u = u * 16 + (unsigned)h;
	}
	c->p += 4;
	if (u >= 0xd800 && u < 0xe000)
		return -1;
	if (u < 0x80)
		return o[0] = (char)u, 1;
	if (u < 0x800)
		return o[0] = (char)(0xc0 | u >> 6),
		       o[1] = (char)(0x80 | (u & 63)), 2;
	o[0] = (char)(0xe0 | u >> 12);
	o[1] = (char)(0x80 | ((u >> 6) & 63));
	o[2] = (char)(0x80 | (u & 63));
	return 3;
}

/* A JSON string into buf (NUL-terminated, at most n-1 bytes, no NUL). */
static bool str(struct cur *c, char *buf, size_t n)
{
	size_t k = 0;

	if (!eat(c, '"'))
		return false;
	while (c->p < c->end && *c->p != '"') {
		char tmp[4];
		int m = 1;

		if ((unsigned char)*c->p < 0x20)
			return false;
		tmp[0] = *c->p++;
		if (tmp[0] == '\\') {
			if (c->p >= c->end)
				return false;
			char e = *c->p++;
			const char *from = "\"\\/bfnrt",
				   *to = "\"\\/\b\f\n\r\t";
			const char *f = e ? strchr(from, e) : NULL;

			if (e == 'u')
				m = utf8_of(c, tmp);
			else if (f)
				tmp[0] = to[f - from];
			else
				return false;
			if (m < 0 || (m == 1 && tmp[0] == 0))
				return false;
		}
		if (k + (size_t)m >= n)
			return false;
		memcpy(buf + k, tmp, (size_t)m);
		k += (size_t)m;
	}
	if (c->p >= c->end)
		return false;
	c->p++;
	buf[k] = 0;
	return true;
}

/* A non-negative integer below 2^63. */
static bool uint(struct cur *c, uint64_t *v)
{
	ws(c);
	*v = 0;
	if (c->p >= c->end || *c->p < '0' || *c->p > '9')
		return false;
	while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
		if (*v > (UINT64_C(1) << 62) / 5)
			return false;
		*v = *v * 10 + (uint64_t)(*c->p++ - '0');
	}
	return c->p >= c->end || !strchr(".eE", *c->p) || !*c->p;
}

/* An array of at most max non-negative integers. */
static bool uints(struct cur *c, uint64_t *v, int max, int *n)
{
	*n = 0;
	if (!eat(c, '['))
		return false;
	if (eat(c, ']'))
		return true;
	do {
		if (*n >= max || !uint(c, &v[*n]))
			return false;
		(*n)++;
	} while (eat(c, ','));
	return eat(c, ']');
}

/* Skips any JSON value (the __metadata__ object), depth-bounded. */
static bool skip(struct cur *c, int depth)
{
	char s[1024];
	uint64_t u;

	if (depth > MAX_DEPTH)
		return false;
	ws(c);
	if (c->p >= c->end)
		return false;
	if (*c->p == '"')
		return str(c, s, sizeof(s));
	if (*c->p == '{' || *c->p == '[') {
		bool obj = *c->p++ == '{';

		if (eat(c, obj ? '}' : ']'))
			return true;
		do {
			if (obj && (!str(c, s, sizeof(s)) || !eat(c, ':')))
				return false;
			if (!skip(c, depth + 1))
				return false;
		} while (eat(c, ','));
		return eat(c, obj ? '}' : ']');
	}
	if (*c->p >= '0' && *c->p <= '9')
		return uint(c, &u);
	for (int i = 0; i < 3; i++) {
		const char *lit = (const char *[]){"true", "false", "null"}[i];
		size_t l = strlen(lit);

		if ((size_t)(c->end - c->p) >= l && !memcmp(c->p, lit, l)) {
			c->p += l;
			return true;
		}
	}
	return false;
}

size_t mtp_safetensors_dtype_size(const char *dtype)
{
	static const struct {
		const char *name;
		size_t size;
	} t[] = {{"F64", 8},  {"F32", 4},     {"F16", 2},     {"BF16", 2},
		 {"I64", 8},  {"I32", 4},     {"I16", 2},     {"I8", 1},
		 {"U64", 8},  {"U32", 4},     {"U16", 2},     {"U8", 1},
		 {"BOOL", 1}, {"F8_E4M3", 1}, {"F8_E5M2", 1}, {"F8_E8M0", 1}};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (strcmp(t[i].name, dtype) == 0)
			return t[i].size;
	return 0;
}

/* One tensor's object: {"dtype":..., "shape":[...], "data_offsets":[b,e]}. */
static enum mtp_status tensor_obj(struct cur *c, struct mtp_st_tensor *t)
{
	char key[32];
	uint64_t dims[MTP_ST_MAX_DIMS], off[2];
	int seen = 0, nd = 0, no = 0;

	if (!eat(c, '{'))
		return bad(c, t->name, "not a JSON object");
	do {
		if (!str(c, key, sizeof(key)) || !eat(c, ':'))
			return bad(c, t->name, "malformed key");
		if (!strcmp(key, "dtype") && !(seen & 1)) {
			seen |= 1;
			if (!str(c, t->dtype, sizeof(t->dtype)))
				return bad(c, t->name, "dtype: not a string");
		} else if (!strcmp(key, "shape") && !(seen & 2)) {
			seen |= 2;
			if (!uints(c, dims, MTP_ST_MAX_DIMS, &nd))
				return bad(c, t->name,
					   "shape: not a list of at most 8 "
					   "non-negative integers");
		} else if (!strcmp(key, "data_offsets") && !(seen & 4)) {
			seen |= 4;
			if (!uints(c, off, 2, &no) || no != 2)
				return bad(c, t->name,
					   "data_offsets: not [begin, end]");
		} else {
			return bad(c, t->name,
				   "unknown or repeated key (dtype, shape, "
				   "data_offsets)");
		}
	} while (eat(c, ','));
	if (!eat(c, '}') || seen != 7)
		return bad(c, t->name,
			   "needs exactly dtype, shape and data_offsets");
	t->ndim = nd;
	for (int i = 0; i < nd; i++)
		t->shape[i] = (int64_t)dims[i];
	t->begin = off[0];
	t->end = off[1];
	return MTP_OK;
}

/* dtype known, size = numel * elem without overflow, range inside data. */
static enum mtp_status tensor_check(struct cur *c, struct mtp_st_tensor *t,
				    uint64_t data_size)
{
	uint64_t bytes;

	t->elem_size = mtp_safetensors_dtype_size(t->dtype);
	if (!t->elem_size)
		return bad(c, t->name, "unknown dtype");
	bytes = t->elem_size;
	for (int i = 0; i < t->ndim; i++) {
		uint64_t d = (uint64_t)t->shape[i];

		if (d && bytes > UINT64_MAX / d)
			return bad(c, t->name, "shape overflows");
		bytes *= d;
	}
	if (t->begin > t->end || t->end > data_size)
		return bad(c, t->name, "data_offsets outside the data section");
	if (t->end - t->begin != bytes)
		return bad(c, t->name,
			   "data_offsets span differs from shape x dtype size");
	return MTP_OK;
}

static int by_begin(const void *a, const void *b)
{
	const struct mtp_st_tensor *x = a, *y = b;

	return x->begin < y->begin ? -1 : x->begin > y->begin;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct mtp_st_tensor *)a)->name,
		      ((const struct mtp_st_tensor *)b)->name);
}

/* No two names alike, no two non-empty ranges overlapping. */
static enum mtp_status disjoint(struct cur *c, const struct mtp_safetensors *st)
{
	struct mtp_st_tensor *s;
	enum mtp_status r = MTP_OK;

	if (st->n < 2)
		return MTP_OK;
	s = malloc((size_t)st->n * sizeof(*s));
	if (!s)
		return MTP_ERR_NOMEM;
	memcpy(s, st->tensors, (size_t)st->n * sizeof(*s));
	qsort(s, (size_t)st->n, sizeof(*s), by_name);
	for (int i = 1; !r && i < st->n; i++)
		if (!strcmp(s[i].name, s[i - 1].name))
			r = bad(c, s[i].name, "tensor named twice");
	qsort(s, (size_t)st->n, sizeof(*s), by_begin);
	for (int i = 1, last = 0; !r && i < st->n; i++) {
		if (s[i].begin == s[i].end)
			continue;
		if (s[last].end > s[i].begin && s[last].end != s[last].begin)
			r = bad(c, s[i].name, "data overlaps another tensor's");
		last = i;
	}
	free(s);
	return r;
}

static enum mtp_status add_tensor(struct cur *c, struct mtp_safetensors *st,
				  const char *name, uint64_t data_size)
{
	struct mtp_st_tensor *t;
	enum mtp_status r;

	if (!name[0])
		return bad(c, "header", "a tensor with an empty name");
	if (st->n >= MAX_TENSORS)
		return bad(c, name, "too many tensors");
	t = realloc(st->tensors, (size_t)(st->n + 1) * sizeof(*t));
	if (!t)
		return MTP_ERR_NOMEM;
	st->tensors = t;
	t = &st->tensors[st->n];
	memset(t, 0, sizeof(*t));
	snprintf(t->name, sizeof(t->name), "%s", name);
	r = tensor_obj(c, t);
	if (!r)
		r = tensor_check(c, t, data_size);
	if (!r)
		st->n++;
	return r;
}

enum mtp_status mtp_safetensors_parse(const char *json, size_t hlen,
				      uint64_t data_size,
				      struct mtp_safetensors *st, char *err,
				      size_t errn)
{
	struct cur c = {json, json + hlen, st->path[0] ? st->path : "header",
			err, errn};
	char name[MTP_ST_NAME_MAX];
	enum mtp_status r = MTP_OK;

	st->data_size = data_size;
	if (!eat(&c, '{'))
		return bad(&c, "header", "not a JSON object");
	if (!eat(&c, '}')) {
		do {
			if (!str(&c, name, sizeof(name)) || !eat(&c, ':'))
				return bad(&c, "header",
					   "malformed tensor name (at most "
					   "255 bytes)");
			if (!strcmp(name, "__metadata__"))
				r = skip(&c, 0) ? MTP_OK
						: bad(&c, name, "malformed");
			else
				r = add_tensor(&c, st, name, data_size);
		} while (!r && eat(&c, ','));
		if (!r && !eat(&c, '}'))
			r = bad(&c, "header", "malformed JSON object");
	}
	ws(&c);
	if (!r && c.p != c.end)
		r = bad(&c, "header", "bytes after the JSON object");
	return r ? r : disjoint(&c, st);
}

static enum mtp_status read_header(int fd, struct mtp_safetensors *st,
				   uint64_t size, char *err, size_t errn)
{
	unsigned char n8[8];
	uint64_t hlen = 0;
	char *json;
	enum mtp_status r;

	if (size < 8 || pread(fd, n8, 8, 0) != 8) {
		snprintf(err, errn, "%s: shorter than its 8-byte header length",
			 st->path);
		return MTP_ERR_INVALID;
	}
	for (int i = 7; i >= 0; i--)
		hlen = hlen << 8 | n8[i];
	if (hlen > size - 8 || hlen > MTP_ST_HEADER_MAX) {
		snprintf(err, errn,
			 "%s: header length %llu is past the end of the file "
			 "or over %u bytes",
			 st->path, (unsigned long long)hlen, MTP_ST_HEADER_MAX);
		return MTP_ERR_INVALID;
	}
	json = malloc(hlen + 1);
	if (!json)
		return MTP_ERR_NOMEM;
	if (pread(fd, json, hlen, 8) != (ssize_t)hlen) {
		snprintf(err, errn, "%s: cannot read the header", st->path);
		free(json);
		return MTP_ERR_IO;
	}
	st->data_start = 8 + hlen;
	r = mtp_safetensors_parse(json, hlen, size - 8 - hlen, st, err, errn);
	free(json);
	return r;
}

enum mtp_status mtp_safetensors_open(const char *path,
				     struct mtp_safetensors *st, char *err,
				     size_t errn)
{
	struct stat sb;
	int fd;
	enum mtp_status r;

	memset(st, 0, sizeof(*st));
	snprintf(st->path, sizeof(st->path), "%s", path);
	fd = open(path, O_RDONLY);
	if (fd < 0 || fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		snprintf(err, errn, "%s: cannot open it as a regular file",
			 path);
		if (fd >= 0)
			close(fd);
		return MTP_ERR_IO;
	}
	r = read_header(fd, st, (uint64_t)sb.st_size, err, errn);
	close(fd);
	if (r)
		mtp_safetensors_close(st);
	return r;
}

const struct mtp_st_tensor *
mtp_safetensors_find(const struct mtp_safetensors *st, const char *name)
{
	for (int i = 0; i < st->n; i++)
		if (strcmp(st->tensors[i].name, name) == 0)
			return &st->tensors[i];
	return NULL;
}

enum mtp_status mtp_safetensors_read(const struct mtp_safetensors *st,
				     const struct mtp_st_tensor *t, void *dst,
				     char *err, size_t errn)
{
	int fd = open(st->path, O_RDONLY);
	uint64_t n = t->end - t->begin, done = 0;

	if (fd < 0) {
		snprintf(err, errn, "%s: cannot open it", st->path);
		return MTP_ERR_IO;
	}
	while (done < n) {
		ssize_t k = pread(fd, (char *)dst + done, n - done,
				  (off_t)(st->data_start + t->begin + done));

		if (k <= 0)
			break;
		done += (uint64_t)k;
	}
	close(fd);
	if (done != n) {
		snprintf(err, errn, "%s: %s: the file ends inside the tensor",
			 st->path, t->name);
		return MTP_ERR_IO;
	}
	return MTP_OK;
}

void mtp_safetensors_close(struct mtp_safetensors *st)
{
	free(st->tensors);
	st->tensors = NULL;
	st->n = 0;
}

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
			r = bad(c, "weight_map", "a tensor named twice");
	free(s);
	return r;
}

/* The "weight_map" object: tensor name -> file name. */
static enum mtp_status weight_map(struct cur *c, struct mtp_st_index *ix)
{
	struct mtp_st_index_entry e;
	const char *why;

	if (!eat(c, '{'))
		return bad(c, "weight_map", "not a JSON object");
	if (eat(c, '}'))
		return MTP_OK;
	do {
		void *v;

		if (!str(c, e.name, sizeof(e.name)) || !e.name[0] ||
		    !eat(c, ':'))
			return bad(c, "weight_map",
				   "malformed tensor name (1 to 255 bytes)");
		if (!str(c, e.file, sizeof(e.file)))
			return bad(c, e.name, "file: not a string");
		if ((why = index_file_problem(e.file)))
			return bad(c, e.name, why);
		if (ix->n >= MAX_TENSORS)
			return bad(c, "weight_map", "too many tensors");
		v = realloc(ix->v, (size_t)(ix->n + 1) * sizeof(*ix->v));
		if (!v)
			return MTP_ERR_NOMEM;
		ix->v = v;
		ix->v[ix->n++] = e;
	} while (eat(c, ','));
	return eat(c, '}') ? MTP_OK
			   : bad(c, "weight_map", "malformed JSON object");
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
	if (!eat(&c, '{'))
		return bad(&c, "index", "not a JSON object");
	if (!eat(&c, '}')) {
		do {
			if (!str(&c, key, sizeof(key)) || !eat(&c, ':')) {
				r = bad(&c, "index", "malformed member name");
			} else if (!strcmp(key, "weight_map")) {
				r = seen ? bad(&c, key, "given twice")
					 : weight_map(&c, ix);
				seen = true;
			} else if (!skip(&c, 0)) {
				r = bad(&c, key, "malformed value");
			}
		} while (!r && eat(&c, ','));
		if (!r && !eat(&c, '}'))
			r = bad(&c, "index", "malformed JSON object");
	}
	ws(&c);
	if (!r && c.p != c.end)
		r = bad(&c, "index", "bytes after the JSON object");
	if (!r && !seen)
		r = bad(&c, "weight_map", "missing");
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
	char *json;
	ssize_t got = 0;
	enum mtp_status r;
	int fd = open(path, O_RDONLY);

	memset(ix, 0, sizeof(*ix));
	if (fd < 0 || fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) ||
	    (uint64_t)sb.st_size > MTP_ST_HEADER_MAX) {
		snprintf(err, errn,
			 "%s: cannot open it as a regular file of at most %u "
			 "bytes",
			 path, MTP_ST_HEADER_MAX);
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
