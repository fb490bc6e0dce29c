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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "merge_int.h"
#include "mtp/bench.h"
#include "mtp/textsafe.h"

#define MAX_SAMPLES 1000000 /* per row: far more than bench takes */

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

/* One row into p (night, label backend@host); false with err. */
static bool take_row(const cJSON *root, const cJSON *r, const char *host,
		     struct mtp_bench_point *p, const char *path, int i,
		     char *err, size_t errn)
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
	    !samples(r, p, path, i, err, errn))
		return false;
	row->gflop_per_s = row->median > 0 ? flops / row->median / 1e9 : 0;
	clean(p->device, sizeof(p->device),
	      device_of(root, sval(r, "backend")));
	if (*host)
		snprintf(row->backend, sizeof(row->backend), "%.60s@%.60s", be,
			 host);
	else
		snprintf(row->backend, sizeof(row->backend), "%s", be);
	return true;
}

/* The night of this file: the one of its run_id, else a new one. */
static int night_of(struct mtp_bench_history *h, const cJSON *root,
		    const char *path)
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
	return h->n_nights++;
}

enum mtp_status mtp_merge_bench(struct mtp_run *run, const char *path,
				const cJSON *root, char *err, size_t errn)
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
	night = night_of(h, root, path);
	if (night < 0)
		goto nomem;
	for (const cJSON *r = rows->child; r; r = r->next, i++) {
		struct mtp_bench_point p;

		memset(&p, 0, sizeof(p));
		p.night = night;
		if (!take_row(root, r, host, &p, path, i, err, errn)) {
			free(p.samples);
			return MTP_ERR_INVALID;
		}
		if (h->n_points == h->cap_points) {
			int cap = h->cap_points ? 2 * h->cap_points : 64;
			void *v = realloc(h->points,
					  (size_t)cap * sizeof(*h->points));

			if (!v) {
				free(p.samples);
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
