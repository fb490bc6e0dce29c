/*
 * Bench files in `mtpcheck report` (merge.c hands them here): each file's
 * rows become a night of the bench history (run->bench), labelled with the
 * file's date; files of one run_id are one night. A row is keyed by op, shape
 * and backend@host, so two machines' rows stay apart (a row its night has
 * twice is dropped after the merge, merge_dedup.c). Every field is checked
 * before it is kept: the file is the bench writer's, but it may have been
 * edited or cut, and a bad row is one line naming the file and the field.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "merge_int.h"
#include "mtp/bench.h"
#include "mtp/meta.h"
#include "mtp/textsafe.h"

#define MAX_SAMPLES 1000000 /* per row: far more than bench takes */
#define MAX_TEXT 65536	    /* a record's field: far more than a page needs */

static const char *sval(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItem(o, k);

	return cJSON_IsString(v) ? v->valuestring : "";
}

/* Text from the file, bounded and cleaned (textsafe.h). */
static void clean(char *dst, size_t n, const char *src)
{
	mtp_text_sanitize(dst, n, src, strlen(src) + 1);
}

static bool samples(const cJSON *r, struct mtp_bench_point *p, const char *path,
		    int i, char *err, size_t errn)
{
	const cJSON *a = cJSON_GetObjectItem(r, "samples_s");
	int n = cJSON_IsArray(a) ? cJSON_GetArraySize(a) : 0;

	if (a && (!cJSON_IsArray(a) || n > MAX_SAMPLES)) {
		snprintf(err, errn, "%s: rows[%d].samples_s: %s", path, i,
			 n > MAX_SAMPLES ? "more than a million samples"
					 : "not an array");
		return false;
	}
	if (!n)
		return true;
	p->samples = malloc((size_t)n * sizeof(*p->samples));
	if (!p->samples) {
		snprintf(err, errn, "%s: out of memory", path);
		return false;
	}
	for (const cJSON *v = a->child; v; v = v->next) {
		if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) ||
		    v->valuedouble < 0) {
			snprintf(err, errn,
				 "%s: rows[%d].samples_s[%d]: not a finite "
				 "number >= 0",
				 path, i, p->n_samples);
			return false;
		}
		p->samples[p->n_samples++] = v->valuedouble;
	}
	return true;
}

/* The device line the file's meta records for backend name, or "". */
static const char *device_of(const cJSON *root, const char *name)
{
	const cJSON *meta = cJSON_GetObjectItem(root, "meta");
	const cJSON *bes = cJSON_GetObjectItem(meta, "backends");

	for (const cJSON *b = cJSON_IsArray(bes) ? bes->child : NULL; b;
	     b = b->next)
		if (!strcmp(sval(b, "name"), name))
			return sval(b, "device");
	return "";
}

/* Field k of o, a string or an array of strings (notes: the lines of a
 * Markdown text), each cleaned and the strings joined by newlines, into
 * *dst (malloc'ed); absent: *dst unchanged. False with the line for a field of another type, or longer
 * than MAX_TEXT. */
static bool rec_text(const struct mtp_jwhere *w, const cJSON *o, const char *k,
		     char **dst)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	const cJSON *one = cJSON_IsString(v) ? v : NULL;
	size_t cap = 1, len = 0;
	char *s;

	if (!v)
		return true;
	if (!one && !cJSON_IsArray(v))
		return mtp_jw_refuse(w, k, "not a string or array of strings");
	for (const cJSON *p = one ? one : v->child; p; p = one ? NULL : p->next)
		if (!cJSON_IsString(p) || strlen(p->valuestring) > MAX_TEXT)
			return mtp_jw_refuse(w, k,
					     cJSON_IsString(p)
						     ? "longer than 65536 bytes"
						     : "holds a non-string");
		else
			cap += 4 * strlen(p->valuestring) + 3;
	if (!(s = malloc(cap)))
		return mtp_jw_refuse(w, k, "out of memory");
	*s = '\0';
	for (const cJSON *p = one ? one : v->child; p;
	     p = one ? NULL : p->next) {
		if (len)
			s[len++] = '\n';
		mtp_text_sanitize(s + len, cap - len, p->valuestring,
				  strlen(p->valuestring) + 1);
		len += strlen(s + len);
	}
	free(*dst);
	*dst = s;
	return true;
}

/* The fields of a record, by name (mtp/bench.h). */
static const struct {
	const char *name;
	size_t at;
} rec_fields[] = {
	{"section", offsetof(struct mtp_bench_record, section)},
	{"title", offsetof(struct mtp_bench_record, title)},
	{"date", offsetof(struct mtp_bench_record, date)},
	{"variant", offsetof(struct mtp_bench_record, variant)},
	{"machine", offsetof(struct mtp_bench_record, machine)},
	{"commit", offsetof(struct mtp_bench_record, commit)},
	{"command", offsetof(struct mtp_bench_record, command)},
	{"prediction", offsetof(struct mtp_bench_record, prediction)},
	{"reason", offsetof(struct mtp_bench_record, reason)},
	{"notes", offsetof(struct mtp_bench_record, notes)},
};

/* The night's record: the meta's date, commit and command line, then
 * the collection's record (outer, or NULL), then the file's own. */
static bool read_record(struct mtp_bench_record *rec, const cJSON *root,
			const cJSON *outer, const char *path, char *err,
			size_t errn)
{
	struct mtp_jwhere w = {.path = path, .err = err, .errn = errn};
	const cJSON *meta = cJSON_GetObjectItem(root, "meta");
	const cJSON *objs[] = {outer, cJSON_GetObjectItem(root, "record")};

	snprintf(w.at, sizeof(w.at), "meta");
	if (!rec_text(&w, meta, "date", &rec->date) ||
	    !rec_text(&w, meta, "build_commit", &rec->commit) ||
	    !rec_text(&w, meta, "command_line", &rec->command))
		return false;
	if (*sval(meta, "commit") &&
	    !rec_text(&w, meta, "commit", &rec->commit))
		return false;
	snprintf(w.at, sizeof(w.at), "record");
	for (int k = 0; k < 2; k++) {
		if (objs[k] && !cJSON_IsObject(objs[k]))
			return mtp_jw_refuse(&w, NULL, "not an object");
		for (size_t i = 0;
		     objs[k] && i < sizeof(rec_fields) / sizeof(rec_fields[0]);
		     i++)
			if (!rec_text(
				    &w, objs[k], rec_fields[i].name,
				    (char **)((char *)rec + rec_fields[i].at)))
				return false;
	}
	return true;
}

/* One row into p (night, label backend@host); false with err. */
static bool take_row(const cJSON *root, const cJSON *r, const char *host,
		     const char *variant, struct mtp_bench_point *p,
		     const char *path, int i, char *err, size_t errn)
{
	struct mtp_jwhere w = {.path = path, .err = err, .errn = errn};
	struct mtp_bench_row *row = &p->row;
	const unsigned need = MTP_JW_REQUIRED | MTP_JW_FINITE_NONNEG;
	const unsigned may = MTP_JW_FINITE_NONNEG;
	char be[96];
	double flops = 0;

	snprintf(w.at, sizeof(w.at), "rows[%d]", i);
	if (!cJSON_IsObject(r))
		return mtp_jw_refuse(&w, NULL, "not an object");
	if (!mtp_jw_text(&w, r, "op", true, row->op, sizeof(row->op)) ||
	    !mtp_jw_text(&w, r, "shape", true, row->shape,
			 sizeof(row->shape)) ||
	    !mtp_jw_text(&w, r, "backend", true, be, sizeof(be)) ||
	    !mtp_jw_text(&w, r, "check", false, row->check,
			 sizeof(row->check)) ||
	    !mtp_jw_text(&w, r, "note", false, row->note, sizeof(row->note)) ||
	    !mtp_jw_text(&w, r, "vs_baseline", false, row->vs_base,
			 sizeof(row->vs_base)) ||
	    !mtp_jw_num(&w, r, "median_s", need, &row->median) ||
	    !mtp_jw_num(&w, r, "iqr_pct", may, &row->iqr_pct) ||
	    !mtp_jw_num(&w, r, "gb_per_s", may, &row->gb_per_s) ||
	    !mtp_jw_num(&w, r, "fraction_of_peak", may, &row->frac_peak) ||
	    !mtp_jw_num(&w, r, "speedup_vs_ref", may, &row->speedup_vs_ref) ||
	    !mtp_jw_num(&w, r, "flops", may, &flops) ||
	    !samples(r, p, path, i, err, errn) ||
	    !rec_text(&w, r, "prediction", &p->prediction) ||
	    !rec_text(&w, r, "reason", &p->reason))
		return false;
	row->gflop_per_s = row->median > 0 ? flops / row->median / 1e9 : 0;
	clean(p->device, sizeof(p->device),
	      device_of(root, sval(r, "backend")));
	snprintf(row->backend, sizeof(row->backend), "%.60s%s%.60s%s%.40s%s",
		 be, *host ? "@" : "", host, variant ? " (" : "",
		 variant ? variant : "", variant ? ")" : "");
	return true;
}

/* The night of this file: the one of its run_id, else a new one (with
 * its record, outer the collection's); -1 out of memory, -2 with err. */
static int night_of(struct mtp_bench_history *h, const cJSON *root,
		    const cJSON *outer, const char *path, char *err,
		    size_t errn)
{
	const cJSON *meta = cJSON_GetObjectItem(root, "meta");
	const char *id = sval(meta, "run_id"), *date = sval(meta, "date");
	const char *base = strrchr(path, '/');
	struct mtp_bench_night *n;
	void *v;

	for (int k = 0; *id && k < h->n_nights; k++)
		if (!strcmp(h->nights[k].run_id, id))
			return k;
	v = realloc(h->nights, (size_t)(h->n_nights + 1) * sizeof(*h->nights));
	if (!v)
		return -1;
	h->nights = v;
	n = &h->nights[h->n_nights];
	memset(n, 0, sizeof(*n));
	base = base ? base + 1 : path;
	clean(n->run_id, sizeof(n->run_id), id);
	clean(n->file, sizeof(n->file), base);
	if (strlen(date) >= 16) { /* 2026-12-01T13:27:00Z: 2026-12-01 13:27 */
		char when[32];

		snprintf(when, sizeof(when), "%.10s %.5s", date, date + 11);
		clean(n->label, sizeof(n->label), when);
	} else {
		clean(n->label, sizeof(n->label), base);
	}
	h->n_nights++;
	return read_record(&n->rec, root, outer, path, err, errn)
		       ? h->n_nights - 1
		       : -2;
}

static enum mtp_status add_bench(struct mtp_run *run, const char *path,
				 const cJSON *root, const cJSON *outer,
				 char *err, size_t errn)
{
	const cJSON *rows = cJSON_GetObjectItem(root, "rows");
	const char *host = sval(cJSON_GetObjectItem(root, "meta"), "host");
	struct mtp_bench_history *h;
	int night, i = 0;

	if (!cJSON_IsArray(rows)) {
		snprintf(err, errn, "%s: rows: %s", path,
			 rows ? "not an array"
			      : "missing (a bench file has a "
				"\"rows\" array)");
		return MTP_ERR_INVALID;
	}
	if (!run->bench && !(run->bench = calloc(1, sizeof(*run->bench))))
		goto nomem;
	h = run->bench;
	night = night_of(h, root, outer, path, err, errn);
	if (night == -2)
		return MTP_ERR_INVALID;
	if (night < 0)
		goto nomem;
	for (const cJSON *r = rows->child; r; r = r->next, i++) {
		struct mtp_bench_point p;

		memset(&p, 0, sizeof(p));
		p.night = night;
		if (!take_row(root, r, host, h->nights[night].rec.variant, &p,
			      path, i, err, errn)) {
			mtp_bench_point_fini(&p);
			return MTP_ERR_INVALID;
		}
		if (h->n_points == h->cap_points) {
			int cap = h->cap_points ? 2 * h->cap_points : 64;
			void *v = realloc(h->points,
					  (size_t)cap * sizeof(*h->points));

			if (!v) {
				mtp_bench_point_fini(&p);
				goto nomem;
			}
			h->points = v;
			h->cap_points = cap;
		}
		h->points[h->n_points++] = p;
	}
	return MTP_OK;
nomem:
	snprintf(err, errn, "%s: out of memory", path);
	return MTP_ERR_NOMEM;
}

enum mtp_status mtp_merge_bench(struct mtp_run *run, const char *path,
				const cJSON *root, char *err, size_t errn)
{
	return add_bench(run, path, root, NULL, err, errn);
}

/* Run i (r) of collection path, its record's defaults in outer. */
static enum mtp_status add_run(struct mtp_run *run, const char *path, int i,
			       const cJSON *r, const cJSON *outer, char *err,
			       size_t errn)
{
	char at[320];
	struct mtp_jwhere w = {.path = at, .err = err, .errn = errn};
	const cJSON *sv = cJSON_GetObjectItemCaseSensitive(r, "schema_version");

	snprintf(at, sizeof(at), "%s: runs[%d]", path, i);
	if (!cJSON_IsObject(r) || strcmp(sval(r, "format"), "mtpcheck-bench"))
		return mtp_jw_refuse(&w, "format",
				     "not an mtpcheck-bench document"),
		       MTP_ERR_INVALID;
	if (!mtp_schema_accept(at, cJSON_GetStringValue(sv), sv, err, errn))
		return MTP_ERR_INVALID;
	return add_bench(run, at, r, outer, err, errn);
}

enum mtp_status mtp_merge_bench_collection(struct mtp_run *run,
					   const char *path, const cJSON *root,
					   char *err, size_t errn)
{
	struct mtp_jwhere w = {.path = path, .err = err, .errn = errn};
	const cJSON *runs = cJSON_GetObjectItem(root, "runs");
	const cJSON *outer = cJSON_GetObjectItem(root, "record");
	cJSON *rest; /* outer without its notes: they show once */
	enum mtp_status st = MTP_OK;
	int i = 0;

	if (!cJSON_IsArray(runs))
		return mtp_jw_refuse(&w, "runs", "missing or not an array"),
		       MTP_ERR_INVALID;
	rest = cJSON_Duplicate(outer, true);
	if (outer && !rest)
		return mtp_jw_refuse(&w, "record", "out of memory"),
		       MTP_ERR_NOMEM;
	cJSON_DeleteItemFromObject(rest, "notes");
	for (const cJSON *r = runs->child; !st && r; r = r->next, i++)
		st = add_run(run, path, i, r, i ? rest : outer, err, errn);
	cJSON_Delete(rest);
	return st;
}
