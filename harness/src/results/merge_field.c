/*
 * The typed field readers of `mtpcheck report`: a results or bench file may
 * have been edited, cut or written by something else, so every field the
 * merge keeps is checked for its type (and range) as it is read, and the
 * first bad one refuses the file with one line naming the file, the object
 * and the field. One set of readers serves results, outputs and bench rows.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "merge_int.h"
#include "mtp/textsafe.h"

#define MAX_COUNT 9007199254740992.0 /* 2^53: exact in a JSON number */

bool mtp_jw_refuse(const struct mtp_jwhere *w, const char *k, const char *why)
{
	const char *dot = *w->at && k ? "." : "";

	if (!*w->at && !k)
		snprintf(w->err, w->errn, "%s: %s", w->path, why);
	else
		snprintf(w->err, w->errn, "%s: %s%s%s: %s", w->path, w->at, dot,
			 k ? k : "", why);
	return false;
}

/* Field k, or NULL; false (refused) when absent and required. */
static bool field(const struct mtp_jwhere *w, const cJSON *o, const char *k,
		  bool required, const cJSON **v)
{
	*v = cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, k) : NULL;
	if (*v && cJSON_IsNull(*v) && !required)
		*v = NULL; /* null: as absent, where the field may be absent */
	if (!*v && required)
		return mtp_jw_refuse(w, k, "missing");
	return true;
}

bool mtp_jw_str(const struct mtp_jwhere *w, const cJSON *o, const char *k,
		bool required, const char **s)
{
	const cJSON *v;

	*s = "";
	if (!field(w, o, k, required, &v))
		return false;
	if (v && !cJSON_IsString(v))
		return mtp_jw_refuse(w, k, "not a string");
	if (v)
		*s = v->valuestring;
	return true;
}

bool mtp_jw_text(const struct mtp_jwhere *w, const cJSON *o, const char *k,
		 bool required, char *dst, size_t n)
{
	const char *s;

	if (!mtp_jw_str(w, o, k, required, &s))
		return false;
	mtp_text_sanitize(dst, n, s, strlen(s) + 1);
	return true;
}

/* "inf", "-inf" or "nan" (the writer's non-finite numbers) into *x. */
static bool special(const char *s, double *x)
{
	if (!strcmp(s, "inf"))
		*x = INFINITY;
	else if (!strcmp(s, "-inf"))
		*x = -INFINITY;
	else if (!strcmp(s, "nan"))
		*x = NAN;
	else
		return false;
	return true;
}

bool mtp_jw_num(const struct mtp_jwhere *w, const cJSON *o, const char *k,
		unsigned flags, double *x)
{
	const cJSON *v;

	*x = 0;
	if (!field(w, o, k, flags & MTP_JW_REQUIRED, &v))
		return false;
	if (!v)
		return true;
	if (cJSON_IsString(v) && (flags & MTP_JW_SPECIAL) &&
	    special(v->valuestring, x))
		return true;
	if (!cJSON_IsNumber(v))
		return mtp_jw_refuse(w, k,
				     flags & MTP_JW_SPECIAL
					     ? "not a number (nor \"inf\", "
					       "\"-inf\", \"nan\")"
					     : "not a number");
	if ((flags & MTP_JW_FINITE_NONNEG) &&
	    (!isfinite(v->valuedouble) || v->valuedouble < 0))
		return mtp_jw_refuse(w, k, "not a finite number >= 0");
	*x = v->valuedouble;
	return true;
}

/* Whether x is a whole number in [0, 2^53]. */
static bool is_count(double x)
{
	return isfinite(x) && x >= 0 && x <= MAX_COUNT && x == floor(x);
}

bool mtp_jw_count(const struct mtp_jwhere *w, const cJSON *o, const char *k,
		  bool required, int64_t *x)
{
	const cJSON *v;

	*x = 0;
	if (!field(w, o, k, required, &v))
		return false;
	if (!v)
		return true;
	if (!cJSON_IsNumber(v) || !is_count(v->valuedouble))
		return mtp_jw_refuse(w, k, "not an integer from 0 to 2^53");
	*x = (int64_t)v->valuedouble;
	return true;
}

bool mtp_jw_bool(const struct mtp_jwhere *w, const cJSON *o, const char *k,
		 bool required, bool *b)
{
	const cJSON *v;

	*b = false;
	if (!field(w, o, k, required, &v))
		return false;
	if (v && !cJSON_IsBool(v))
		return mtp_jw_refuse(w, k, "not true or false");
	*b = v && cJSON_IsTrue(v);
	return true;
}

bool mtp_jw_kind(const struct mtp_jwhere *w, const cJSON *o, const char *k,
		 bool required, bool object, const cJSON **v)
{
	if (!field(w, o, k, required, v))
		return false;
	if (*v && (object ? !cJSON_IsObject(*v) : !cJSON_IsArray(*v)))
		return mtp_jw_refuse(w, k,
				     object ? "not an object" : "not an array");
	return true;
}

bool mtp_jw_counts(const struct mtp_jwhere *w, const cJSON *o, const char *k,
		   bool required, int len, int64_t *dst, int *n)
{
	const cJSON *a;
	int most = len < 0 ? -len : len, i = 0;
	char why[64];

	*n = 0;
	if (!mtp_jw_kind(w, o, k, required, false, &a))
		return false;
	if (!a)
		return true;
	if (cJSON_GetArraySize(a) > most ||
	    (len > 0 && cJSON_GetArraySize(a) != len)) {
		snprintf(why, sizeof(why), "not %s%d integers",
			 len < 0 ? "at most " : "", most);
		return mtp_jw_refuse(w, k, why);
	}
	for (const cJSON *v = a->child; v; v = v->next, i++) {
		if (!cJSON_IsNumber(v) || !is_count(v->valuedouble)) {
			snprintf(why, sizeof(why), "%.40s[%d]", k, i);
			return mtp_jw_refuse(w, why,
					     "not an integer from 0 to 2^53");
		}
		dst[i] = (int64_t)v->valuedouble;
	}
	*n = i;
	return true;
}
