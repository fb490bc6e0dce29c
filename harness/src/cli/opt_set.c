/*
 * The setters of the option table's rows (options.c): each checks one
 * option's value and stores it, or says in a few words why it is refused
 * (the parser, opt_parse.c, makes that the one usage line).
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "mtp/membudget.h"
#include "mtp/meta.h"
#include "mtp/runner.h"
#include "options.h"

static int refuse(char *why, size_t n, const char *fmt, const char *name,
		  const char *val)
{
	snprintf(why, n, fmt, name, val);
	return -1;
}

/* Splits a comma-separated value (in place) into dst[*n...max-1]. */
static int split_into(const char **dst, int *n, int max, char *val)
{
	for (char *tok = strtok(val, ","); tok; tok = strtok(NULL, ",")) {
		if (*n >= max)
			return -1;
		dst[(*n)++] = tok;
	}
	return 0;
}

static bool parse_u64(const char *s, uint64_t *v)
{
	char *end;

	errno = 0;
	unsigned long long x = strtoull(s, &end, 0);

	if (errno || end == s || *end || *s == '-')
		return false;
	*v = x;
	return true;
}

/* A decimal integer from lo to hi. */
static bool parse_range(const char *s, long long lo, long long hi, long long *v)
{
	char *end;

	errno = 0;
	*v = strtoll(s, &end, 10);
	return s[0] && !errno && !*end && *v >= lo && *v <= hi;
}

int mtp_opt_int(const char *name, const char *val, long long lo, long long hi,
		const char *what, long long *x, char *why, size_t n)
{
	if (parse_range(val, lo, hi, x))
		return 0;
	snprintf(why, n, "%s: '%s' is not %s", name, val, what);
	return -1;
}

/* --- run, verify, selftest: a struct mtp_run_opts --- */

int mtp_opt_set_backends(void *dst, void *at, const char *name, const char *val,
			 char *why, size_t n)
{
	struct mtp_run_opts *o = dst;

	(void)at, (void)name;
	if (split_into(o->backends, &o->n_backends, MTP_MAX_BACKENDS,
		       (char *)val))
		return refuse(why, n, "more than 16 backends%s%s", "", "");
	return 0;
}

int mtp_opt_set_fixtures(void *dst, void *at, const char *name, const char *val,
			 char *why, size_t n)
{
	struct mtp_run_opts *o = dst;

	(void)at;
	if (o->n_inputs >= MTP_MAX_INPUTS)
		return refuse(why, n,
			      "more than 64 %s%s (list them in a case file: "
			      "fixtures=...)",
			      name, "");
	o->inputs[o->n_inputs++] = val;
	return 0;
}

int mtp_opt_set_dump(void *dst, void *at, const char *name, const char *val,
		     char *why, size_t n)
{
	struct mtp_run_opts *o = dst;

	(void)at;
	(void)name;
	if (o->n_inputs >= MTP_MAX_INPUTS) /* several: rank files (FORMAT.md) */
		return refuse(why, n, "more than 64 dumps%s%s", "", "");
	o->inputs[o->n_inputs++] = val;
	return 0;
}

int mtp_opt_set_filters(void *dst, void *at, const char *name, const char *val,
			char *why, size_t n)
{
	struct mtp_run_opts *o = dst;

	(void)at;
	if (split_into(o->filters, &o->n_filters, MTP_MAX_INPUTS, (char *)val))
		return refuse(why, n, "more than 64 %s patterns%s", name, "");
	return 0;
}

/* Every name of a comma-separated list is an op. */
static bool ops_known(const char *list)
{
	char name[64];

	for (const char *p = list; *p;) {
		size_t k = strcspn(p, ",");

		snprintf(name, sizeof(name), "%.*s", (int)k, p);
		if (k >= sizeof(name) || !mtp_op_find(name))
			return false;
		p += k + (p[k] == ',');
	}
	return *list != 0;
}

int mtp_opt_set_ops(void *dst, void *at, const char *name, const char *val,
		    char *why, size_t n)
{
	(void)dst;
	if (!ops_known(val))
		return refuse(why, n,
			      "%s %s: not an op name (mtpcheck list ops)", name,
			      val);
	*(const char **)at = val;
	return 0;
}

int mtp_opt_set_timeout(void *dst, void *at, const char *name, const char *val,
			char *why, size_t n)
{
	char *end;
	double t = strtod(val, &end);

	(void)dst;
	if (*end || !(t > 0 && t < 1e6))
		return refuse(why, n, "%s: '%s' is not a number of seconds",
			      name, val);
	*(double *)at = t;
	return 0;
}

int mtp_opt_set_shard(void *dst, void *at, const char *name, const char *val,
		      char *why, size_t n)
{
	struct mtp_run_opts *o = dst;
	char *end;
	long si = strtol(val, &end, 10),
	     sn = *end == '/' ? strtol(end + 1, &end, 10) : 0;

	(void)at;
	if (*end || sn < 1 || si < 0 || si >= sn || sn > 100000)
		return refuse(why, n, "%s: '%s' is not I/N with 0 <= I < N",
			      name, val);
	o->shard_i = (int)si;
	o->shard_n = (int)sn;
	return 0;
}

int mtp_opt_set_u64(void *dst, void *at, const char *name, const char *val,
		    char *why, size_t n)
{
	(void)dst;
	if (!parse_u64(val, at))
		return refuse(why, n, "%s: '%s' is not an unsigned integer",
			      name, val);
	return 0;
}

int mtp_opt_set_seed(void *dst, void *at, const char *name, const char *val,
		     char *why, size_t n)
{
	if (mtp_opt_set_u64(dst, at, name, val, why, n))
		return -1;
	((struct mtp_run_opts *)dst)->seed_set = true;
	return 0;
}

int mtp_opt_set_mem_limit(void *dst, void *at, const char *name,
			  const char *val, char *why, size_t n)
{
	uint64_t b;

	(void)dst;
	if (!mtp_mem_parse(val, &b))
		return refuse(why, n,
			      "%s: '%s' is not a size such as 40G or 512M",
			      name, val);
	mtp_mem_budget_set(b);
	*(const char **)at = val;
	return 0;
}

int mtp_opt_set_commit(void *dst, void *at, const char *name, const char *val,
		       char *why, size_t n)
{
	(void)dst, (void)at, (void)name, (void)why, (void)n;
	mtp_meta_set_commit(val);
	return 0;
}

/* --- bench: a struct mtp_bench_opts --- */

int mtp_opt_set_bench_backends(void *dst, void *at, const char *name,
			       const char *val, char *why, size_t n)
{
	struct mtp_bench_opts *o = dst;

	(void)at, (void)name;
	if (split_into(o->backends, &o->n_backends, MTP_BENCH_MAXL,
		       (char *)val))
		return refuse(why, n, "more than 16 backends%s%s", "", "");
	return 0;
}

int mtp_opt_set_bench_ops(void *dst, void *at, const char *name,
			  const char *val, char *why, size_t n)
{
	struct mtp_bench_opts *o = dst;

	(void)at;
	for (char *t = strtok((char *)val, ","); t; t = strtok(NULL, ",")) {
		if (!mtp_op_find(t))
			return refuse(why, n,
				      "unknown op '%s'%s (mtpcheck list ops)",
				      t, "");
		if (o->n_ops == MTP_OP_COUNT) {
			snprintf(why, n, "%s: more than %d ops", name,
				 MTP_OP_COUNT);
			return -1;
		}
		o->ops[o->n_ops++] = mtp_op_find(t);
	}
	return 0;
}

/* --T, --H: their list at `at`, its length in the int after it (n_t, n_h
 * follow ts and hs). */
int mtp_opt_set_shapes(void *dst, void *at, const char *name, const char *val,
		       char *why, size_t n)
{
	struct mtp_bench_opts *o = dst;
	int64_t *list = at;
	int *len = list == o->ts ? &o->n_t : &o->n_h, k = 0;
	char buf[256], *save;
	long long x;

	snprintf(buf, sizeof(buf), "%s", val);
	for (char *t = strtok_r(buf, ",", &save); t && k < MTP_BENCH_MAXL;
	     t = strtok_r(NULL, ",", &save)) {
		if (!parse_range(t, 1, INT64_MAX, &x))
			k = -1;
		if (k < 0)
			break;
		list[k++] = x;
	}
	if (k <= 0)
		return refuse(why, n,
			      "%s: '%s' is not a list of positive integers",
			      name, val);
	*len = k;
	return 0;
}

int mtp_opt_set_i64(void *dst, void *at, const char *name, const char *val,
		    char *why, size_t n)
{
	long long x;

	(void)dst;
	if (mtp_opt_int(name, val, 1, INT64_MAX, "a positive integer", &x, why,
			n))
		return -1;
	*(int64_t *)at = x;
	return 0;
}

int mtp_opt_set_bench_seed(void *dst, void *at, const char *name,
			   const char *val, char *why, size_t n)
{
	long long x;

	(void)dst;
	if (mtp_opt_int(name, val, 1, INT64_MAX, "a positive integer", &x, why,
			n))
		return -1;
	*(uint64_t *)at = (uint64_t)x;
	return 0;
}

/* --reps, and --launches (at most 4096 launches in one graph). */
int mtp_opt_set_count(void *dst, void *at, const char *name, const char *val,
		      char *why, size_t n)
{
	long long x;

	if (mtp_opt_int(name, val, 1, INT64_MAX, "a positive integer", &x, why,
			n))
		return -1;
	if (at == &((struct mtp_bench_opts *)dst)->topt.launches && x > 4096)
		x = 4096;
	*(int *)at = x > 1000000000 ? 1000000000 : (int)x;
	return 0;
}

int mtp_opt_set_repeats(void *dst, void *at, const char *name, const char *val,
			char *why, size_t n)
{
	long long x;

	(void)dst;
	if (mtp_opt_int(name, val, 1, MTP_BENCH_MAX_REPEATS,
			"a count from 1 to 9", &x, why, n))
		return -1;
	*(int *)at = (int)x;
	return 0;
}

/* A number of at least lo and below hi; fails with what it is not. */
static int set_number(void *at, const char *name, const char *val, double lo,
		      double hi, const char *what, char *why, size_t n)
{
	char *end;
	double x = strtod(val, &end);

	if (end == val || *end || !(x >= lo && x < hi)) {
		snprintf(why, n, "%s: '%s' is not %s", name, val, what);
		return -1;
	}
	*(double *)at = x;
	return 0;
}

int mtp_opt_set_min_time(void *dst, void *at, const char *name, const char *val,
			 char *why, size_t n)
{
	(void)dst;
	return set_number(at, name, val, 0, 1e6, "a number of seconds", why, n);
}

int mtp_opt_set_min_effect(void *dst, void *at, const char *name,
			   const char *val, char *why, size_t n)
{
	(void)dst;
	if (set_number(at, name, val, 0, 10, "a fraction", why, n))
		return -1;
	if (*(double *)at > 0)
		return 0;
	return refuse(why, n, "%s: '%s' is not a fraction", name, val);
}

int mtp_opt_set_bisect(void *dst, void *at, const char *name, const char *val,
		       char *why, size_t n)
{
	struct mtp_bench_opts *o = dst;

	(void)at, (void)name, (void)val, (void)why, (void)n;
	o->gate = o->bisect = true;
	return 0;
}

/* --- report: a struct mtp_report_opts --- */

int mtp_opt_set_report_path(void *dst, void *at, const char *name,
			    const char *val, char *why, size_t n)
{
	struct mtp_report_opts *o = dst;

	(void)at, (void)name, (void)why, (void)n;
	o->paths[o->n_paths++] = val;
	return 0;
}
