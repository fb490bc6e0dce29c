/*
 * The memory budget (mtp/membudget.h): byte counts from declared shapes,
 * the default from the machine's memory, and the one-line refusal.
 */
#include "mtp/membudget.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static uint64_t sat_mul(uint64_t a, uint64_t b)
{
	uint64_t r;

	return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

static uint64_t shape_bytes(enum mtp_dtype dt, int ndim, const int64_t *shape)
{
	uint64_t b = mtp_dtype_size(dt);

	for (int i = 0; i < ndim; i++)
		b = sat_mul(b, shape[i] > 0 ? (uint64_t)shape[i] : 0);
	return b;
}

static uint64_t meminfo_total(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[256];
	unsigned long long kb = 0;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "MemTotal: %llu kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	if (!kb) {
		long pages = sysconf(_SC_PHYS_PAGES),
		     psz = sysconf(_SC_PAGESIZE);

		return pages > 0 && psz > 0 ? (uint64_t)pages * (uint64_t)psz
					    : 0;
	}
	return (uint64_t)kb * 1024;
}

static uint64_t cgroup_max(void)
{
	FILE *f = fopen("/sys/fs/cgroup/memory.max", "r");
	unsigned long long v = 0;

	if (f) {
		if (fscanf(f, "%llu", &v) != 1)
			v = 0; /* "max": no limit */
		fclose(f);
	}
	return (uint64_t)v;
}

uint64_t mtp_mem_default_limit(void)
{
	uint64_t total = meminfo_total(), cg = cgroup_max();

	if (cg && (!total || cg < total))
		total = cg;
	return total ? total / 100 * MTP_MEM_DEFAULT_PERCENT : 4ull << 30;
}

static uint64_t budget;
static bool budget_set;

uint64_t mtp_mem_budget(void)
{
	if (!budget_set && !budget)
		budget = mtp_mem_default_limit();
	return budget;
}

void mtp_mem_budget_set(uint64_t bytes)
{
	budget = bytes;
	budget_set = true;
}

bool mtp_mem_budget_is_set(void)
{
	return budget_set;
}

bool mtp_mem_parse(const char *s, uint64_t *bytes)
{
	static const char units[] = "KMGT";
	char *end;
	double v;
	int shift = 0;

	if (!s || !isdigit((unsigned char)*s))
		return false;
	v = strtod(s, &end);
	if (*end) {
		const char *u = strchr(units, toupper((unsigned char)*end));

		if (!u)
			return false;
		shift = 10 * (int)(u - units + 1);
		end++;
		if (strcmp(end, "") && strcmp(end, "B") && strcmp(end, "iB"))
			return false;
	}
	v = ldexp(v, shift);
	if (!(v >= 1 && v < 1.8e19))
		return false;
	*bytes = (uint64_t)v;
	return true;
}

void mtp_mem_str(uint64_t bytes, char *buf, size_t n)
{
	if (bytes == UINT64_MAX)
		snprintf(buf, n, "more than 16 EiB");
	else
		snprintf(buf, n, "%.1f %s (%llu bytes)",
			 (double)bytes /
				 (bytes >= 1u << 30 ? 1u << 30 : 1u << 20),
			 bytes >= 1u << 30 ? "GiB" : "MiB",
			 (unsigned long long)bytes);
}

uint64_t mtp_mem_list_bytes(const struct mtp_tensor_list *l)
{
	uint64_t b = 0;

	for (int i = 0; i < l->n; i++)
		b = sat_add(b,
			    shape_bytes(l->items[i].t.dtype, l->items[i].t.ndim,
					l->items[i].t.shape));
	return b;
}

uint64_t mtp_mem_outputs_bytes(const struct mtp_signature *sig,
			       const struct mtp_dims *d, enum mtp_dtype act)
{
	uint64_t b = 0;

	for (int i = 0; i < sig->n_out; i++) {
		int64_t shape[MTP_MAX_DIMS];
		int nd;

		if (mtp_tspec_shape(&sig->out[i], d, &nd, shape))
			b = sat_add(b, shape_bytes(mtp_tspec_dtype(&sig->out[i],
								   act),
						   nd, shape));
	}
	return b;
}

uint64_t mtp_mem_case_bytes(const struct mtp_case *c,
			    const struct mtp_signature *sig,
			    const struct mtp_dims *d, enum mtp_dtype act)
{
	uint64_t in = mtp_mem_list_bytes(&c->inputs);
	uint64_t out = mtp_mem_outputs_bytes(sig, d, act);
	uint64_t b = in;

	b = sat_add(b, mtp_mem_list_bytes(&c->expected));
	b = sat_add(b, mtp_mem_list_bytes(&c->observed));
	b = sat_add(b, sat_mul(3, out));
	/* a golden runs on backends, each in its worker process: the worker's
	 * copy of the inputs, a host backend's buffers (inputs and outputs)
	 * and the outputs it downloads; a dump is judged in the harness */
	if (c->observed.n == 0)
		b = sat_add(b, sat_add(sat_mul(2, in), sat_mul(2, out)));
	return b;
}

enum mtp_status mtp_mem_check(uint64_t need, uint64_t limit, char *why,
			      size_t n)
{
	char a[64], b[64];

	if (!limit || need <= limit)
		return MTP_OK;
	mtp_mem_str(need, a, sizeof(a));
	mtp_mem_str(limit, b, sizeof(b));
	snprintf(why, n,
		 "needs %s of memory, over the budget of %s (raise it with "
		 "--mem-limit)",
		 a, b);
	return MTP_ERR_LIMIT;
}
