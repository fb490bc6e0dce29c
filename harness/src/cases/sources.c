/*
 * Where a run's cases come from: fixture files (given with --fixtures, or
 * selected by a case file with their own filters and backends), generated
 * problems of a case file, the --filter globs, and this shard's share.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "repro.h"
#include "cases.h"

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static bool push_path(char ***v, int *n, int *cap, int **org, int origin,
		      const char *dir, const char *name)
{
	size_t dl = strlen(dir), pl;

	if (*n == *cap) {
		*cap = *cap ? 2 * *cap : 16;
		*v = realloc(*v, (size_t)*cap * sizeof(**v));
		*org = realloc(*org, (size_t)*cap * sizeof(**org));
		if (!*v || !*org)
			return false;
	}
	while (name && dl > 1 && dir[dl - 1] == '/')
		dl--;
	pl = dl + (name ? strlen(name) : 0) + 2;
	(*v)[*n] = malloc(pl);
	if (!(*v)[*n])
		return false;
	if (name)
		snprintf((*v)[*n], pl, "%.*s/%s", (int)dl, dir, name);
	else
		snprintf((*v)[*n], pl, "%s", dir);
	(*org)[(*n)++] = origin;
	return true;
}

/* Expands folders into their *.h5 files, sorted; files stay as given.
 * origin[k] is the index of the input path k came from. A folder without
 * any *.h5 is an error naming it (-1). */
static int expand_paths(const char *const *in, int nin, char ***paths,
			int **origin)
{
	int n = 0, cap = 0;
	char **v = NULL;
	int *org = NULL;
	bool ok = true;

	for (int i = 0; ok && i < nin; i++) {
		struct stat sb;
		DIR *d;
		struct dirent *e;
		int first = n;

		if (stat(in[i], &sb) != 0 || !S_ISDIR(sb.st_mode) ||
		    !(d = opendir(in[i]))) {
			ok = push_path(&v, &n, &cap, &org, i, in[i], NULL);
			continue;
		}
		while (ok && (e = readdir(d))) {
			size_t len = strlen(e->d_name);

			if (len >= 4 && strcmp(e->d_name + len - 3, ".h5") == 0)
				ok = push_path(&v, &n, &cap, &org, i, in[i],
					       e->d_name);
		}
		closedir(d);
		if (ok && n == first) {
			fprintf(stderr,
				"mtpcheck: --fixtures %s: no *.h5 file in the "
				"folder\n",
				in[i]);
			ok = false;
		}
		if (ok)
			qsort(v + first, (size_t)(n - first), sizeof(*v),
			      cmp_str);
	}
	if (!ok) {
		for (int k = 0; k < n; k++)
			free(v[k]);
		free(v);
		free(org);
		v = NULL;
		org = NULL;
	}
	*paths = v;
	*origin = org;
	return ok ? n : -1;
}

/* A filter FILE:ID names the file as shown (repro.c) or as given. */
static bool filter_ok(const char *const *pats, int n, const char *path,
		      const char *id)
{
	char shown[MTP_PATH_MAX];

	if (mtp_filter_match(pats, n, path, id))
		return true;
	mtp_display_name(path, shown, sizeof(shown));
	return strcmp(shown, path) && mtp_filter_match(pats, n, shown, id);
}

/* --op: the op is one of the comma-separated names (none given: all). */
static bool op_selected(const struct mtp_run *run, const struct mtp_op *op)
{
	const char *p = run->opts.ops;
	size_t n = op ? strlen(op->name) : 0;

	while (p && *p) {
		size_t k = strcspn(p, ",");

		if (op && k == n && !strncmp(p, op->name, n))
			return true;
		p += k + (p[k] == ',');
	}
	return !run->opts.ops;
}

static bool case_selected(const struct mtp_run *run, const struct sources *s,
			  int f, const char *id)
{
	const struct mtp_fixture *fx = &s->fx[f];

	return filter_ok(run->opts.filters, run->opts.n_filters, fx->path,
			 id) &&
	       (!s->sel[f] ||
		mtp_casefile_fixture_match(s->sel[f], fx->path, id));
}

/* The distinct tags of the case file's entries, comma separated. */
static void file_tags(const struct mtp_casefile *cf, char *out, size_t n)
{
	size_t len = 0;

	out[0] = 0;
	for (int e = 0; e < cf->n; e++) {
		for (int t = 0; t < cf->entries[e].tags.n; t++) {
			const char *tag = cf->entries[e].tags.v[t];
			bool seen = false;

			for (int p = 0; p < e && !seen; p++)
				for (int q = 0; q < cf->entries[p].tags.n; q++)
					seen = seen ||
					       !strcmp(tag,
						       cf->entries[p].tags.v[q]);
			if (!seen && len < n)
				len += (size_t)snprintf(out + len, n - len,
							"%s%s", len ? ", " : "",
							tag);
		}
	}
}

/* Whether this shard keeps any of the n selected problems. */
static bool kept_any(const struct mtp_run *run, int n)
{
	return n > (run->opts.shard_n > 1 ? run->opts.shard_i : 0);
}

/* One line saying why no case was selected (the run then tests nothing
 * and exits 125); an invalid input has said so already. */
static void say_none_selected(const struct mtp_run *run,
			      const struct sources *s, int n)
{
	const struct mtp_run_opts *o = &run->opts;
	char why[MTP_ERR_MAX], tags[256];
	size_t len = 0;

	if (run->n_invalid_inputs)
		return;
	file_tags(&s->cf, tags, sizeof(tags));
	if (n)
		snprintf(why, sizeof(why), "--shard %d/%d of %d case%s",
			 o->shard_i, o->shard_n, n, n == 1 ? "" : "s");
	else if (o->case_file && !s->cf.n)
		snprintf(why, sizeof(why), "%s has no entries", o->case_file);
	else if (o->case_file && o->tags && o->tags[0] && !s->cs.n_fixtures &&
		 !s->cs.n_specs)
		snprintf(why, sizeof(why), "--tags %s in %s (%s%s)", o->tags,
			 o->case_file,
			 tags[0] ? "its tags: " : "it has no tags", tags);
	else {
		len = (size_t)snprintf(why, sizeof(why), "%s%s",
				       o->ops ? "--op " : "",
				       o->ops ? o->ops : "");
		for (int i = 0; i < o->n_filters && len < sizeof(why); i++)
			len += (size_t)snprintf(why + len, sizeof(why) - len,
						"%s--filter %s", len ? " " : "",
						o->filters[i]);
		if (!len)
			snprintf(why, sizeof(why), "the inputs hold no case");
	}
	fprintf(stderr, "mtpcheck: no case matched the selection: %s\n", why);
}

/* Every selected problem in run order, then this shard's share of them
 * (--shard k/n keeps items k, k+n, k+2n, ...). */
int mtp_sources_select(const struct mtp_run *run, const struct sources *s,
		       struct item **out)
{
	int n = 0, cap = 64, kept = 0;
	struct item *v = malloc((size_t)cap * sizeof(*v));

	for (int f = 0; v && f < s->nfx; f++) {
		for (int i = 0; v && i < s->fx[f].n_cases; i++) {
			if (!op_selected(run, s->fx[f].cases[i].op) ||
			    !case_selected(run, s, f, s->fx[f].cases[i].id))
				continue;
			if (n == cap)
				v = realloc(v, (size_t)(cap *= 2) * sizeof(*v));
			if (v)
				v[n++] = (struct item){f, i, -1};
		}
	}
	for (int g = 0; v && g < s->cs.n_specs; g++) {
		if (!op_selected(run, s->cs.specs[g].op) ||
		    !mtp_filter_match(run->opts.filters, run->opts.n_filters,
				      "generated", s->cs.gen[g].id))
			continue;
		if (n == cap)
			v = realloc(v, (size_t)(cap *= 2) * sizeof(*v));
		if (v)
			v[n++] = (struct item){-1, -1, g};
	}
	if (v && !kept_any(run, n))
		say_none_selected(run, s, n);
	for (int k = 0; v && k < n; k++)
		if (run->opts.shard_n <= 1 ||
		    k % run->opts.shard_n == run->opts.shard_i)
			v[kept++] = v[k];
	*out = v;
	return v ? kept : 0;
}

void mtp_sources_list(const struct mtp_run *run, const struct sources *s,
		      const struct item *it, int n)
{
	char shown[MTP_PATH_MAX], file[MTP_PATH_MAX + 16];

	for (int k = 0; k < n; k++) {
		if (it[k].f >= 0) {
			const struct mtp_fixture *fx = &s->fx[it[k].f];
			const struct mtp_case *c = &fx->cases[it[k].i];

			mtp_display_name(fx->path, shown, sizeof(shown));
			fprintf(run->opts.out, "%s:%s  %s %s\n", shown, c->id,
				c->op->name, mtp_family_name(c->family));
		} else {
			int g = it[k].g;
			const char *org = s->cs.gen[g].origin;
			const char *colon = strrchr(org, ':');

			snprintf(file, sizeof(file), "%.*s",
				 (int)(colon ? colon - org : (long)strlen(org)),
				 org);
			mtp_display_name(file, shown, sizeof(shown));
			fprintf(run->opts.out, "generated:%s  %s %s  (%s%s)\n",
				s->cs.gen[g].id, s->cs.specs[g].op->name,
				mtp_family_name(s->cs.specs[g].family), shown,
				colon ? colon : "");
		}
	}
}

/* --op selects some case of the inputs. */
static void check_ops(struct mtp_run *run, const struct sources *s)
{
	bool hit = !run->opts.ops || run->n_invalid_inputs;

	for (int f = 0; !hit && f < s->nfx; f++)
		for (int i = 0; !hit && i < s->fx[f].n_cases; i++)
			hit = op_selected(run, s->fx[f].cases[i].op);
	for (int g = 0; !hit && g < s->cs.n_specs; g++)
		hit = op_selected(run, s->cs.specs[g].op);
	if (hit)
		return;
	fprintf(stderr,
		"mtpcheck: --op %s: selects no case of these inputs "
		"(mtpcheck list cases)\n",
		run->opts.ops);
	run->n_usage++;
}

/* Every --filter pattern selects something (a typo is an error before the
 * first case, not an empty run); not checked when an input was invalid or
 * when there is no case to filter (--tags selected none). */
static void check_filters(struct mtp_run *run, const struct sources *s)
{
	const struct mtp_run_opts *o = &run->opts;

	if (!s->nfx && !s->cs.n_specs)
		return; /* nothing to filter: the empty selection says so */
	for (int p = 0; !run->n_invalid_inputs && p < o->n_filters; p++) {
		bool hit = false;

		for (int f = 0; !hit && f < s->nfx; f++)
			for (int i = 0; !hit && i < s->fx[f].n_cases; i++)
				hit = filter_ok(&o->filters[p], 1,
						s->fx[f].path,
						s->fx[f].cases[i].id);
		for (int g = 0; !hit && g < s->cs.n_specs; g++)
			hit = mtp_filter_match(&o->filters[p], 1, "generated",
					       s->cs.gen[g].id);
		if (hit)
			continue;
		fprintf(stderr,
			"mtpcheck: --filter %s: selects no case (mtpcheck "
			"list cases)\n",
			o->filters[p]);
		run->n_usage++;
	}
	check_ops(run, s);
}

/* Fixture paths and their case-file selections, or --fixtures' paths. */
static bool collect_paths(struct mtp_run *run, struct sources *s, char ***paths,
			  int *npaths, const struct mtp_casefile_fixture ***sel)
{
	const struct mtp_run_opts *o = &run->opts;
	const char **in;
	int nin = 0, *origin = NULL;
	char err[MTP_ERR_MAX];

	s->cf.has_default_seed = o->seed_set;
	s->cf.default_seed = o->seed;
	if (o->case_file) {
		if (mtp_casefile_parse(o->case_file, &s->cf, err,
				       sizeof(err)) ||
		    mtp_casefile_select(&s->cf, o->tags, &s->cs, err,
					sizeof(err))) {
			fprintf(stderr, "mtpcheck: %s\n", err);
			run->n_usage++;
			return false;
		}
	}
	in = calloc((size_t)s->cs.n_fixtures + (size_t)o->n_inputs + 1,
		    sizeof(*in));
	if (!in)
		return false;
	for (int i = 0; o->case_file && i < s->cs.n_fixtures; i++)
		in[nin++] = s->cs.fixtures[i].path;
	for (int i = 0; i < o->n_inputs; i++)
		in[nin++] = o->inputs[i];
	*npaths = expand_paths(in, nin, paths, &origin);
	free(in);
	if (*npaths < 0) {
		run->n_usage++;
		*npaths = 0;
	}
	*sel = calloc((size_t)*npaths + 1, sizeof(**sel));
	for (int k = 0; *sel && k < *npaths; k++)
		(*sel)[k] = o->case_file && origin[k] < s->cs.n_fixtures
				    ? &s->cs.fixtures[origin[k]]
				    : NULL;
	free(origin);
	return *sel != NULL;
}

void mtp_sources_open(struct mtp_run *run, struct sources *s)
{
	const struct mtp_casefile_fixture **sel = NULL;
	char **paths = NULL, err[MTP_ERR_MAX];
	int npaths = 0;

	if (!collect_paths(run, s, &paths, &npaths, &sel))
		return;
	if (run->opts.verify &&
	    mtp_fixture_tp_merge(paths, &npaths, s->merged, sizeof(s->merged),
				 s->ranks, sizeof(s->ranks), err,
				 sizeof(err))) {
		fprintf(stderr, "mtpcheck: %s\n", err);
		run->n_invalid_inputs++;
	}
	run->tp_merged = s->merged[0] ? s->merged : NULL;
	run->tp_ranks = s->ranks;
	s->fx = calloc((size_t)npaths + 1, sizeof(*s->fx));
	s->sel = calloc((size_t)npaths + 1, sizeof(*s->sel));
	for (int i = 0; s->fx && s->sel && i < npaths; i++) {
		if (mtp_fixture_open(paths[i], &run->opts.limits,
				     &s->fx[s->nfx], err,
				     sizeof(err)) == MTP_OK) {
			s->sel[s->nfx++] = sel[i];
		} else {
			fprintf(stderr, "mtpcheck: %s\n", err);
			run->n_invalid_inputs++;
		}
	}
	for (int i = 0; i < npaths; i++)
		free(paths[i]);
	free(paths);
	free(sel);
	check_filters(run, s);
}

void mtp_sources_close(struct sources *s)
{
	for (int f = 0; f < s->nfx; f++)
		mtp_fixture_close(&s->fx[f]);
	free(s->fx);
	free(s->sel);
	if (s->merged[0])
		unlink(s->merged);
	mtp_case_selection_fini(&s->cs);
	mtp_casefile_fini(&s->cf);
}
