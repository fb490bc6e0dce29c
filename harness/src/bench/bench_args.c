/*
 * `mtpcheck bench`'s options (docs/BENCHMARKS.md) once the CLI's option
 * table has parsed them (cli/options.c): their defaults, taken into the
 * bench's state, and what was left unset filled. bench.c runs what they
 * select.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_int.h"

static const char *const default_ops[] = {"rmsnorm",
					  "add_rmsnorm",
					  "fused_eh_norm",
					  "fused_mtp_input_rmsnorm",
					  "mtp_shared_head_rmsnorm",
					  "hc_post",
					  "hc_head",
					  "hc_pre"};

void mtp_bench_opts_init(struct mtp_bench_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->m = 4;
	o->v = 1024;
	o->f = 256;
	o->check = o->unfused = true;
	o->seed = 1;
	o->min_effect = 0.05;
	mtp_timing_opts_init(&o->topt);
}

void mtp_bench_take_opts(struct bench *b, const struct mtp_bench_opts *o)
{
	memcpy(b->backends, o->backends, sizeof(b->backends));
	b->n_backends = o->n_backends;
	memcpy(b->ops, o->ops, sizeof(b->ops));
	b->n_ops = o->n_ops;
	memcpy(b->ts, o->ts, sizeof(b->ts));
	memcpy(b->hs, o->hs, sizeof(b->hs));
	b->n_t = o->n_t;
	b->n_h = o->n_h;
	b->m = o->m;
	b->v = o->v;
	b->f = o->f;
	b->check = o->check;
	b->unfused = o->unfused;
	b->seed = o->seed;
	b->topt = o->topt;
	b->json_path = o->json_path;
	b->html_path = o->html_path;
	b->csv_path = o->csv_path;
	b->md_path = o->md_path;
	b->baseline_path = o->baseline_path;
	b->gate = o->gate;
	b->bisect = o->bisect;
	b->min_effect = o->min_effect;
	b->repeats = o->repeats;
}

void mtp_bench_defaults(struct bench *b)
{
	static const int64_t ts[] = {1, 64, 512, 4096}, hs[] = {4096, 7168};

	if (!b->n_backends)
		b->n_backends = mtp_backend_defaults(true, b->backends, MAXL);
	for (size_t i = 0;
	     !b->n_ops && i < sizeof(default_ops) / sizeof(*default_ops); i++)
		b->ops[i] = mtp_op_find(default_ops[i]);
	if (!b->n_ops)
		b->n_ops = (int)(sizeof(default_ops) / sizeof(*default_ops));
	for (int i = 0; !b->n_t && i < 4; i++)
		b->ts[i] = ts[i];
	b->n_t = b->n_t ? b->n_t : 4;
	for (int i = 0; !b->n_h && i < 2; i++)
		b->hs[i] = hs[i];
	b->n_h = b->n_h ? b->n_h : 2;
	if (!b->repeats)
		b->repeats = b->baseline_path ? 3 : 1;
}
