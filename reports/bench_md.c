/*
 * The benchmarks page of `mtpcheck report --markdown`: a reference of the
 * current figures, not a diary. The bench files' records (docs/RESULTS.md,
 * "Bench records") say where each run's figures sit, what was predicted
 * and why a miss missed; this page shows per section the newest figure of
 * every row (op, shape, backend@host and variant), each linked to its run
 * (machine, commit, command, prediction, reason), the runs newest first,
 * and every row's earlier figures one click below. Nothing in it depends
 * on when or where it was written, so CI can regenerate it and compare.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_groups.h"
#include "mtp/bench.h"
#include "mtp/textio.h"

struct page {
	const struct mtp_bench_history *h;
	struct mtp_bench_groups g;
	int *rank;   /* night -> its number by date, 1 = oldest */
	int *order;  /* date order -> night */
	int *newest; /* group -> its newest point */
};

static const char *or_empty(const char *s)
{
	return s ? s : "";
}

/* Text for a table cell: bars escaped (the text is clean: no newline). */
static void cell(FILE *f, const char *s)
{
	for (s = or_empty(s); *s; s++) {
		if (*s == '|')
			fputc('\\', f);
		fputc(*s, f);
	}
}

static const char *date_of(const struct mtp_bench_night *n)
{
	return n->rec.date ? n->rec.date : "";
}

static const struct mtp_bench_history *sort_h; /* qsort has no argument */

/* Nights by date, then file name: not by the order given, which a
 * shell's glob sets by its locale. */
static int by_date(const void *pa, const void *pb)
{
	int a = *(const int *)pa, b = *(const int *)pb;
	int c = strcmp(date_of(&sort_h->nights[a]),
		       date_of(&sort_h->nights[b]));

	if (!c)
		c = strcmp(sort_h->nights[a].file, sort_h->nights[b].file);
	return c ? c : (a > b) - (a < b);
}

/* A group's place: its oldest run, then its row's place in that run. */
struct gkey {
	int rank, row, g;
};

static int by_gkey(const void *pa, const void *pb)
{
	const struct gkey *a = pa, *b = pb;

	if (a->rank != b->rank)
		return (a->rank > b->rank) - (a->rank < b->rank);
	return (a->row > b->row) - (a->row < b->row);
}

/* Orders the groups by their oldest run (by date) and the row's place in
 * it, so that the page does not depend on the order of the files. */
static bool order_groups(struct page *p)
{
	struct mtp_bench_groups *g = &p->g;
	struct gkey *k = malloc((size_t)(g->n + 1) * sizeof(*k));
	int *start = malloc((size_t)(g->n + 1) * sizeof(int));
	int *count = malloc((size_t)(g->n + 1) * sizeof(int));
	bool ok = k && start && count;

	for (int gi = 0; ok && gi < g->n; gi++) {
		k[gi] = (struct gkey){INT_MAX, INT_MAX, gi};
		for (int i = g->start[gi]; i < g->start[gi] + g->count[gi];
		     i++) {
			int r = p->rank[g->sorted[i]->night];
			int at = (int)(g->sorted[i] - p->h->points);

			if (r < k[gi].rank ||
			    (r == k[gi].rank && at < k[gi].row))
				k[gi] = (struct gkey){r, at, gi};
		}
	}
	if (ok) {
		qsort(k, (size_t)g->n, sizeof(*k), by_gkey);
		for (int i = 0; i < g->n; i++) {
			start[i] = g->start[k[i].g];
			count[i] = g->count[k[i].g];
		}
		memcpy(g->start, start, (size_t)g->n * sizeof(int));
		memcpy(g->count, count, (size_t)g->n * sizeof(int));
	}
	free(start);
	free(count);
	free(k);
	return ok;
}

static const char *section_of(const struct page *p, int night)
{
	const char *s = p->h->nights[night].rec.section;

	return s && *s ? s : "Other figures";
}

static void figure(FILE *f, const struct mtp_bench_row *r)
{
	double us = r->median * 1e6;

	fprintf(f, "%.*f µs", us < 1 ? 3 : us < 100 ? 2 : 1, us);
	if (r->gb_per_s > 0)
		fprintf(f, ", %.4g GB/s", r->gb_per_s);
	if (r->frac_peak > 0)
		fprintf(f, ", %.1f %% of copy", 100 * r->frac_peak);
}

static void run_link(FILE *f, const struct page *p, int night)
{
	fprintf(f, "[#%d](#run-%d)", p->rank[night], p->rank[night]);
}

static void table_row(FILE *f, const struct page *p, int gi)
{
	const struct mtp_bench_point *q = &p->h->points[p->newest[gi]];
	const struct mtp_bench_row *r = &q->row;

	fputs("| ", f);
	cell(f, r->op);
	fputs(" | ", f);
	cell(f, r->shape);
	fputs(" | ", f);
	cell(f, r->backend);
	fputs(" | ", f);
	figure(f, r);
	fputs(" | ", f);
	cell(f, r->check);
	if (r->iqr_pct > 10)
		fputs(" (noisy)", f);
	fputs(" | ", f);
	run_link(f, p, q->night);
	fputs(" | ", f);
	cell(f, q->prediction);
	fputs(" | ", f);
	cell(f, q->reason);
	fputs(" | ", f);
	if (p->g.count[gi] > 1)
		fprintf(f, "[%d](#row-%d)", p->g.count[gi] - 1, gi + 1);
	fputs(" |\n", f);
}

/* Section sec's runs, newest first, each linked to its entry. */
static void section_runs(FILE *f, const struct page *p, const char *sec)
{
	const char *sep = "\nRuns: ";

	for (int k = p->h->n_nights - 1; k >= 0; k--) {
		const struct mtp_bench_night *n = &p->h->nights[p->order[k]];

		if (strcmp(section_of(p, p->order[k]), sec))
			continue;
		fprintf(f, "%s[#%d %s](#run-%d)", sep, k + 1,
			n->rec.title && *n->rec.title ? n->rec.title : n->file,
			k + 1);
		sep = "; ";
	}
	fputs(".\n", f);
}

/* The tables: one per section, in the order the sections first appear
 * among the runs by date, each row a group whose newest run is there;
 * under it the section's runs. */
static void tables(FILE *f, const struct page *p)
{
	const struct mtp_bench_history *h = p->h;

	for (int k = 0; k < h->n_nights; k++) {
		const char *sec = section_of(p, p->order[k]);
		bool seen = false, any = false;

		for (int j = 0; j < k && !seen; j++)
			seen = !strcmp(section_of(p, p->order[j]), sec);
		if (seen)
			continue;
		fprintf(f, "\n## %s\n", sec);
		for (int gi = 0; gi < p->g.n; gi++) {
			if (strcmp(section_of(p,
					      h->points[p->newest[gi]].night),
				   sec))
				continue;
			if (!any)
				fputs("\n| op | shape | backend | median, "
				      "GB/s, "
				      "% of copy | check | run | prediction | "
				      "reason for a miss | earlier |\n|---|---|"
				      "---|---|---|---|---|---|---|\n",
				      f);
			any = true;
			table_row(f, p, gi);
		}
		section_runs(f, p, sec);
	}
}

/* The machine of a run without one in its record: its device lines. */
static void devices(FILE *f, const struct page *p, int night)
{
	const struct mtp_bench_history *h = p->h;
	int shown = 0;

	for (int i = 0; i < h->n_points; i++) {
		const struct mtp_bench_point *q = &h->points[i];
		bool dup = false;

		if (q->night != night || !*q->device)
			continue;
		for (int j = 0; j < i && !dup; j++)
			dup = h->points[j].night == night &&
			      !strcmp(h->points[j].device, q->device);
		if (!dup)
			fprintf(f, "%s%s", shown++ ? "; " : "", q->device);
	}
	if (!shown)
		fputs("(not recorded)", f);
}

static void field(FILE *f, const char *name, const char *v, bool code)
{
	if (v && *v)
		fprintf(f, "- %s: %s%s%s\n", name, code ? "`" : "", v,
			code ? "`" : "");
}

static void run_entry(FILE *f, const struct page *p, int night)
{
	const struct mtp_bench_night *n = &p->h->nights[night];
	const struct mtp_bench_record *r = &n->rec;
	int rows = 0, current = 0;

	for (int i = 0; i < p->h->n_points; i++)
		rows += p->h->points[i].night == night;
	for (int gi = 0; gi < p->g.n; gi++)
		current += p->h->points[p->newest[gi]].night == night;
	fprintf(f, "\n### <a id=\"run-%d\"></a>#%d %s\n\n", p->rank[night],
		p->rank[night], r->title && *r->title ? r->title : n->file);
	fprintf(f, "- file: `%s`; %d rows, %d of them current; %s\n", n->file,
		rows, current, section_of(p, night));
	field(f, "date", r->date, false);
	fputs("- machine: ", f);
	if (r->machine && *r->machine)
		fputs(r->machine, f);
	else
		devices(f, p, night);
	fputc('\n', f);
	field(f, "variant", r->variant, false);
	field(f, "commit", r->commit, true);
	field(f, "command", r->command, true);
	field(f, "prediction", r->prediction, false);
	field(f, "reason for a miss", r->reason, false);
	if (r->notes && *r->notes)
		fprintf(f, "\n%s\n", r->notes);
}

/* Every row that ran more than once: its figures, oldest run first. */
static void earlier(FILE *f, const struct page *p)
{
	fputs("\n## Earlier figures\n\nEvery row that more than one run "
	      "measured, its figures oldest first.\n\n",
	      f);
	for (int gi = 0; gi < p->g.n; gi++) {
		const struct mtp_bench_point *const *v =
			&p->g.sorted[p->g.start[gi]];
		int n = p->g.count[gi], *idx;

		if (n < 2 || !(idx = malloc((size_t)n * sizeof(*idx))))
			continue;
		for (int i = 0; i < n; i++)
			idx[i] = i;
		for (int i = 1; i < n; i++) /* by date: n is small */
			for (int j = i;
			     j > 0 && p->rank[v[idx[j]]->night] <
					      p->rank[v[idx[j - 1]]->night];
			     j--) {
				int t = idx[j];

				idx[j] = idx[j - 1];
				idx[j - 1] = t;
			}
		fprintf(f, "- <a id=\"row-%d\"></a>%s %s %s:", gi + 1,
			v[0]->row.op, v[0]->row.shape, v[0]->row.backend);
		for (int i = 0; i < n; i++) {
			fputs(i ? ";" : "", f);
			fputc(' ', f);
			figure(f, &v[idx[i]]->row);
			fputc(' ', f);
			run_link(f, p, v[idx[i]]->night);
		}
		fputc('\n', f);
		free(idx);
	}
}

static void body(FILE *f, const void *arg)
{
	const struct page *p = arg;

	fprintf(f,
		"# Benchmarks\n\n<!-- Generated by `mtpcheck report "
		"--markdown` from the bench files and their records: edit "
		"those, not this page. -->\n\nThe current figures of %d "
		"bench runs (%d rows): per section, the newest figure of each "
		"row (op, shape, backend@host and variant), linked to its run "
		"(machine, commit, command, prediction and the reason for a "
		"miss, under \"Runs\"); a row that ran before links to its "
		"earlier figures (\"Earlier figures\"). How the figures are "
		"taken: docs/RESULTS.md (bench files and records) and "
		"docs/CI.md (reading the benchmarks). The same rows night by "
		"night, with the change test: `mtpcheck report FILES --html "
		"PAGE`, section \"Bench history\".\n",
		p->h->n_nights, p->h->n_points);
	tables(f, p);
	fputs("\n## Runs\n\nNewest first.\n", f);
	for (int k = p->h->n_nights - 1; k >= 0; k--)
		run_entry(f, p, p->order[k]);
	earlier(f, p);
}

static void page_fini(struct page *p)
{
	mtp_bench_groups_fini(&p->g);
	free(p->rank);
	free(p->order);
	free(p->newest);
}

/* Ranks the nights by date and finds each group's newest point. */
static bool page_init(struct page *p, const struct mtp_bench_history *h)
{
	int nn = h->n_nights;

	memset(p, 0, sizeof(*p));
	p->h = h;
	p->rank = malloc((size_t)(nn + 1) * sizeof(int));
	p->order = malloc((size_t)(nn + 1) * sizeof(int));
	if (!p->rank || !p->order || !mtp_bench_groups_init(&p->g, h))
		return false;
	p->newest = malloc((size_t)(p->g.n + 1) * sizeof(int));
	if (!p->newest)
		return false;
	for (int k = 0; k < nn; k++)
		p->order[k] = k;
	sort_h = h;
	qsort(p->order, (size_t)nn, sizeof(int), by_date);
	for (int k = 0; k < nn; k++)
		p->rank[p->order[k]] = k + 1;
	if (!order_groups(p))
		return false;
	for (int gi = 0; gi < p->g.n; gi++) {
		const struct mtp_bench_point *best = NULL;

		for (int i = 0; i < p->g.count[gi]; i++) {
			const struct mtp_bench_point *q =
				p->g.sorted[p->g.start[gi] + i];

			if (!best || p->rank[q->night] >= p->rank[best->night])
				best = q;
		}
		p->newest[gi] = (int)(best - h->points);
	}
	return true;
}

enum mtp_status mtp_bench_history_markdown(const struct mtp_bench_history *h,
					   const char *path, char *err,
					   size_t errn)
{
	static const struct mtp_bench_history none = {0};
	struct page p;
	enum mtp_status st = MTP_ERR_NOMEM;

	if (page_init(&p, h ? h : &none))
		st = mtp_write_atomic(path, body, &p, err, errn);
	else
		snprintf(err, errn, "%s: out of memory", path);
	page_fini(&p);
	return st;
}
