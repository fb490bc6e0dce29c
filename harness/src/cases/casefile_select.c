/*
 * What a suite runs: the entries of parsed case files that a tag filter
 * selects, turned into the two lists the runner consumes (fixture paths with
 * their case-id filters, and generated problems), each fixture and each
 * generated case id once, so that `include=quick.case tags=nightly` plus a
 * line of its own never runs a case twice.
 */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mtp/casefile.h"
#include "mtp/runner.h"

/* --filter and filter=: a pattern without a glob character names a case id
 * or FILE:ID exactly; one with a glob matches either. */
static bool has_glob(const char *p)
{
	return strpbrk(p, "*?[") != NULL;
}

bool mtp_filter_match(const char *const *pats, int n, const char *file,
		      const char *case_id)
{
	char full[MTP_PATH_MAX + 160];

	if (n == 0)
		return true;
	snprintf(full, sizeof(full), "%s:%s", file, case_id);
	for (int i = 0; i < n; i++) {
		if (!has_glob(pats[i])) {
			if (strcmp(pats[i], case_id) == 0 ||
			    strcmp(pats[i], full) == 0)
				return true;
		} else if (fnmatch(pats[i], case_id, 0) == 0 ||
			   fnmatch(pats[i], full, 0) == 0) {
			return true;
		}
	}
	return false;
}

static bool has_word(const struct mtp_casefile_words *w, const char *s,
		     size_t len)
{
	for (int i = 0; i < w->n; i++)
		if (strlen(w->v[i]) == len && strncmp(w->v[i], s, len) == 0)
			return true;
	return false;
}

/* Any tag of the entry is in the comma-separated filter. */
static bool tag_selected(const struct mtp_casefile_words *tags,
			 const char *filter)
{
	if (!filter || !*filter)
		return true;
	for (const char *s = filter; *s;) {
		size_t len = strcspn(s, ",");

		if (len && has_word(tags, s, len))
			return true;
		s += len + (s[len] == ',');
	}
	return false;
}

/* dst := dst united with src, where an empty list means "all". */
static bool words_unite(struct mtp_casefile_words *dst,
			const struct mtp_casefile_words *src)
{
	if (dst->n == 0)
		return true;
	if (src->n == 0) {
		dst->n = 0;
		return true;
	}
	for (int i = 0; i < src->n; i++) {
		if (has_word(dst, src->v[i], strlen(src->v[i])))
			continue;
		if (dst->n == MTP_CASEFILE_WORDS)
			return false;
		snprintf(dst->v[dst->n++], MTP_CASEFILE_WORD, "%s", src->v[i]);
	}
	return true;
}

static enum mtp_status add_fixture(struct mtp_case_selection *sel,
				   const struct mtp_casefile_entry *e,
				   char *err, size_t errn)
{
	struct mtp_casefile_fixture *f;

	for (int i = 0; i < sel->n_fixtures; i++) {
		f = &sel->fixtures[i];
		if (strcmp(f->path, e->path))
			continue;
		if (!words_unite(&f->filters, &e->filters) ||
		    !words_unite(&f->backends, &e->backends)) {
			snprintf(err, errn,
				 "%s: more than %d filters or backends for "
				 "fixture '%s'",
				 e->origin, MTP_CASEFILE_WORDS, e->path);
			return MTP_ERR_INVALID;
		}
		return MTP_OK;
	}
	f = &sel->fixtures[sel->n_fixtures++];
	snprintf(f->path, sizeof(f->path), "%s", e->path);
	f->filters = e->filters;
	f->backends = e->backends;
	snprintf(f->origin, sizeof(f->origin), "%s", e->origin);
	return MTP_OK;
}

static void add_gen(struct mtp_case_selection *sel,
		    const struct mtp_casefile_entry *e)
{
	struct mtp_casefile_gen *g;

	for (int i = 0; i < sel->n_specs; i++) {
		if (strcmp(sel->gen[i].id, e->id) == 0) {
			if (!words_unite(&sel->gen[i].backends, &e->backends))
				sel->gen[i].backends.n = 0;
			return;
		}
	}
	g = &sel->gen[sel->n_specs];
	sel->specs[sel->n_specs++] = e->spec;
	snprintf(g->id, sizeof(g->id), "%s", e->id);
	g->backends = e->backends;
	snprintf(g->origin, sizeof(g->origin), "%s", e->origin);
}

enum mtp_status mtp_casefile_select(const struct mtp_casefile *cf,
				    const char *tags,
				    struct mtp_case_selection *sel, char *err,
				    size_t errn)
{
	size_t n = (size_t)cf->n + 1;
	enum mtp_status st = MTP_OK;

	memset(sel, 0, sizeof(*sel));
	sel->fixtures = calloc(n, sizeof(*sel->fixtures));
	sel->specs = calloc(n, sizeof(*sel->specs));
	sel->gen = calloc(n, sizeof(*sel->gen));
	if (!sel->fixtures || !sel->specs || !sel->gen) {
		mtp_case_selection_fini(sel);
		snprintf(err, errn, "out of memory");
		return MTP_ERR_NOMEM;
	}
	for (int i = 0; !st && i < cf->n; i++) {
		const struct mtp_casefile_entry *e = &cf->entries[i];

		if (!tag_selected(&e->tags, tags))
			continue;
		if (e->kind == MTP_CASEFILE_FIXTURES)
			st = add_fixture(sel, e, err, errn);
		else
			add_gen(sel, e);
	}
	if (st)
		mtp_case_selection_fini(sel);
	return st;
}

void mtp_case_selection_fini(struct mtp_case_selection *sel)
{
	free(sel->fixtures);
	free(sel->specs);
	free(sel->gen);
	memset(sel, 0, sizeof(*sel));
}

bool mtp_casefile_fixture_match(const struct mtp_casefile_fixture *fx,
				const char *file, const char *case_id)
{
	const char *pats[MTP_CASEFILE_WORDS];

	for (int i = 0; i < fx->filters.n; i++)
		pats[i] = fx->filters.v[i];
	return mtp_filter_match(pats, fx->filters.n, file, case_id);
}

bool mtp_casefile_backend_ok(const struct mtp_casefile_words *backends,
			     const char *backend)
{
	if (backends->n == 0)
		return true;
	for (int i = 0; i < backends->n; i++)
		if (strcmp(backends->v[i], backend) == 0 ||
		    fnmatch(backends->v[i], backend, 0) == 0)
			return true;
	return false;
}
