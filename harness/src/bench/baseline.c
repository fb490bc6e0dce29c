/*
 * Reading a bench JSON file as a baseline, with cJSON. (Built when libcjson
 * is found; baseline_none.c stands in otherwise.)
 */
#include "mtp/baseline.h"
#include "mtp/meta.h"
#include "mtp/textio.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* (max - min) / min of the repeats' medians, 0 without them. */
static double repeat_spread(const cJSON *rm)
{
	double lo = 0, hi = 0;
	bool any = false;

	for (const cJSON *v = cJSON_IsArray(rm) ? rm->child : NULL; v;
	     v = v->next) {
		if (!cJSON_IsNumber(v) || !(v->valuedouble > 0))
			continue;
		lo = any && lo < v->valuedouble ? lo : v->valuedouble;
		hi = any && hi > v->valuedouble ? hi : v->valuedouble;
		any = true;
	}
	return any ? (hi - lo) / lo : 0;
}

static bool take_row(const cJSON *r, struct mtp_baseline_row *row)
{
	const cJSON *op = cJSON_GetObjectItem(r, "op");
	const cJSON *shape = cJSON_GetObjectItem(r, "shape");
	const cJSON *be = cJSON_GetObjectItem(r, "backend");
	const cJSON *sm = cJSON_GetObjectItem(r, "samples_s");
	int n = cJSON_IsArray(sm) ? cJSON_GetArraySize(sm) : 0;

	if (!cJSON_IsString(op) || !cJSON_IsString(shape) ||
	    !cJSON_IsString(be) || n < 1)
		return false;
	snprintf(row->op, sizeof(row->op), "%s", op->valuestring);
	snprintf(row->shape, sizeof(row->shape), "%s", shape->valuestring);
	snprintf(row->backend, sizeof(row->backend), "%s", be->valuestring);
	row->samples = malloc((size_t)n * sizeof(double));
	if (!row->samples)
		return false;
	row->n = 0;
	for (const cJSON *v = sm->child; v; v = v->next)
		if (cJSON_IsNumber(v))
			row->samples[row->n++] = v->valuedouble;
	row->spread = repeat_spread(cJSON_GetObjectItem(r, "repeat_medians_s"));
	return row->n > 0;
}

enum mtp_status mtp_baseline_load(const char *path, struct mtp_baseline *b,
				  char *err, size_t errn)
{
	char *text = mtp_read_text(path);
	bool read_ok = text != NULL;
	cJSON *root = text ? cJSON_Parse(text) : NULL;
	const cJSON *rows = root ? cJSON_GetObjectItem(root, "rows") : NULL;
	int n = cJSON_IsArray(rows) ? cJSON_GetArraySize(rows) : -1;

	const cJSON *sv =
		root ? cJSON_GetObjectItem(root, "schema_version") : NULL;

	memset(b, 0, sizeof(*b));
	free(text);
	if (root &&
	    !mtp_schema_accept(path, cJSON_GetStringValue(sv), sv, err, errn)) {
		cJSON_Delete(root);
		return MTP_ERR_INVALID;
	}
	if (n < 0) {
		snprintf(err, errn, "%s: %s", path,
			 !read_ok ? "cannot read the file"
			 : !root  ? "not valid JSON"
				  : "no \"rows\" array (not a bench file?)");
		cJSON_Delete(root);
		return MTP_ERR_INVALID;
	}
	b->rows = calloc((size_t)n + 1, sizeof(*b->rows));
	for (const cJSON *r = rows->child; b->rows && r; r = r->next)
		if (take_row(r, &b->rows[b->n]))
			b->n++;
	cJSON_Delete(root);
	if (!b->rows) {
		snprintf(err, errn, "%s: out of memory", path);
		return MTP_ERR_NOMEM;
	}
	return MTP_OK;
}

const struct mtp_baseline_row *mtp_baseline_find(const struct mtp_baseline *b,
						 const char *op,
						 const char *shape,
						 const char *backend)
{
	for (int i = 0; i < b->n; i++)
		if (!strcmp(b->rows[i].op, op) &&
		    !strcmp(b->rows[i].shape, shape) &&
		    !strcmp(b->rows[i].backend, backend))
			return &b->rows[i];
	return NULL;
}

void mtp_baseline_free(struct mtp_baseline *b)
{
	for (int i = 0; i < b->n; i++)
		free(b->rows[i].samples);
	free(b->rows);
	memset(b, 0, sizeof(*b));
}
