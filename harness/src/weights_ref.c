/*
 * Weights by reference (FORMAT.md v2): a real-size dump names the
 * checkpoint tensor instead of carrying it, and `verify --weights DIR` reads
 * it from the user's safetensors file with the hash checked. A reference is
 * never followed without --weights, and never outside DIR (no absolute path,
 * no "..").
 */
#include "mtp/fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mtp/safetensors.h"
#include "mtp/sha256.h"

static bool is_hex64(const char *s)
{
	if (strlen(s) != 64)
		return false;
	for (; *s; s++)
		if (!strchr("0123456789abcdefABCDEF", *s))
			return false;
	return true;
}

/* No absolute path, no ".." component, no empty name, no backslash. */
static bool path_inside(const char *p)
{
	const char *s = p;

	if (!*p || *p == '/' || strchr(p, '\\'))
		return false;
	while (*s) {
		size_t len = strcspn(s, "/");

		if (len == 2 && s[0] == '.' && s[1] == '.')
			return false;
		s += len;
		s += *s == '/';
	}
	return true;
}

enum mtp_status mtp_weight_ref_check(const struct mtp_weight_ref *w, char *why,
				     size_t n)
{
	if (!path_inside(w->file)) {
		snprintf(why, n,
			 "ref_file '%s' must be a path relative to --weights "
			 "DIR, without '..'",
			 w->file);
		return MTP_ERR_INVALID;
	}
	if (!w->tensor[0]) {
		snprintf(why, n, "ref_tensor is empty");
		return MTP_ERR_INVALID;
	}
	if (!is_hex64(w->sha256)) {
		snprintf(why, n, "ref_sha256 is not 64 hex digits");
		return MTP_ERR_INVALID;
	}
	return MTP_OK;
}

/* The safetensors dtype that stores a FORMAT.md dtype. */
static const char *st_dtype(enum mtp_dtype dt)
{
	switch (dt) {
	case MTP_F64: return "F64";
	case MTP_F32: return "F32";
	case MTP_F16: return "F16";
	case MTP_BF16: return "BF16";
	case MTP_I64: return "I64";
	case MTP_I32: return "I32";
	default: return "?";
	}
}

bool mtp_weight_hash_ok(const struct mtp_tensor *t, const char *sha256)
{
	char hex[65];

	mtp_sha256_hex(t->data ? t->data : "", mtp_tensor_nbytes(t), hex);
	return strlen(sha256) == 64 && strncasecmp(hex, sha256, 64) == 0;
}

static bool same_shape(const struct mtp_st_tensor *s,
		       const struct mtp_tensor *t)
{
	if (s->ndim != t->ndim)
		return false;
	for (int i = 0; i < t->ndim; i++)
		if (s->shape[i] != t->shape[i])
			return false;
	return true;
}

static enum mtp_status read_ref(const struct mtp_safetensors *st,
				const struct mtp_weight_ref *w,
				struct mtp_tensor *t, char *why, size_t n)
{
	const struct mtp_st_tensor *s = mtp_safetensors_find(st, w->tensor);
	int64_t shape[MTP_MAX_DIMS];

	if (!s) {
		snprintf(why, n, "%s: no tensor '%s'", st->path, w->tensor);
		return MTP_ERR_INVALID;
	}
	if (strcmp(s->dtype, st_dtype(t->dtype)) || !same_shape(s, t)) {
		snprintf(why, n,
			 "%s: tensor '%s' is %s of rank %d, the dump declares "
			 "%s of rank %d (ref_shape)",
			 st->path, w->tensor, s->dtype, s->ndim,
			 mtp_dtype_name(t->dtype), t->ndim);
		return MTP_ERR_INVALID;
	}
	memcpy(shape, t->shape, sizeof(shape));
	if (mtp_tensor_alloc(t, t->dtype, t->ndim, shape))
		return MTP_ERR_NOMEM;
	if (t->data && mtp_safetensors_read(st, s, t->data, why, n))
		return MTP_ERR_INVALID;
	if (!mtp_weight_hash_ok(t, w->sha256)) {
		snprintf(why, n,
			 "%s: tensor '%s': its bytes do not hash to the "
			 "ref_sha256 the dump declares (another checkpoint?)",
			 st->path, w->tensor);
		return MTP_ERR_INVALID;
	}
	return MTP_OK;
}

enum mtp_status mtp_weight_ref_load(const char *dir,
				    const struct mtp_weight_ref *w,
				    struct mtp_tensor *t, char *why, size_t n)
{
	struct mtp_safetensors st;
	char path[1024];
	enum mtp_status r;

	if (!dir) {
		snprintf(why, n,
			 "inputs/%s is a weight by reference (%s: %s): give "
			 "--weights DIR to read it",
			 w->name, w->file, w->tensor);
		return MTP_ERR_UNAVAILABLE;
	}
	if (mtp_weight_ref_check(w, why, n))
		return MTP_ERR_INVALID;
	snprintf(path, sizeof(path), "%s/%s", dir, w->file);
	r = mtp_safetensors_open(path, &st, why, n);
	if (r)
		return r == MTP_ERR_NOMEM ? r : MTP_ERR_INVALID;
	r = read_ref(&st, w, t, why, n);
	mtp_safetensors_close(&st);
	return r;
}
