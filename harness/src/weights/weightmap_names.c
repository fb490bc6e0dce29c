/*
 * The audit's name sets: appended, sorted once, looked up by bisection
 * (weightmap_io.c reads them from files and index files).
 */
#include "mtp/weightmap.h"

#include <stdlib.h>
#include <string.h>

enum mtp_status mtp_wm_names_add(struct mtp_wm_names *s, const char *name)
{
	char *copy;

	if (s->n == s->cap) {
		int cap = s->cap ? 2 * s->cap : 256;
		void *v = realloc(s->v, (size_t)cap * sizeof(*s->v));

		if (!v)
			return MTP_ERR_NOMEM;
		s->v = v;
		s->cap = cap;
	}
	copy = strdup(name);
	if (!copy)
		return MTP_ERR_NOMEM;
	s->v[s->n++] = copy;
	s->sorted = false;
	return MTP_OK;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void mtp_wm_names_sort(struct mtp_wm_names *s)
{
	int o = 0;

	if (s->n)
		qsort(s->v, (size_t)s->n, sizeof(*s->v), cmp_str);
	for (int i = 0; i < s->n; i++) {
		if (o && strcmp(s->v[o - 1], s->v[i]) == 0)
			free(s->v[i]);
		else
			s->v[o++] = s->v[i];
	}
	s->n = o;
	s->sorted = true;
}

bool mtp_wm_names_has(const struct mtp_wm_names *s, const char *name)
{
	if (s->sorted)
		return bsearch(&name, s->v, (size_t)s->n, sizeof(*s->v),
			       cmp_str);
	for (int i = 0; i < s->n; i++)
		if (strcmp(s->v[i], name) == 0)
			return true;
	return false;
}

void mtp_wm_names_fini(struct mtp_wm_names *s)
{
	for (int i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	memset(s, 0, sizeof(*s));
}
