/*
 * `mtpcheck bench`'s options (docs/BENCHMARKS.md): the usage text, the
 * parsing and checking of every option, and the defaults of what was left
 * unset. bench.c runs what they select.
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

static const char usage_bench[] =
	"usage: mtpcheck bench [options]\n"
	"\n"
	"  --backend LIST    backends to time (default: ref,cpu when built)\n"
	"  --op LIST         ops (default: the memory-bound ops and hc_pre)\n"
	"  --T LIST          tokens (default 1,64,512,4096)\n"
	"  --H LIST          hidden sizes (default 4096,7168)\n"
	"  --M N --V N --F N hc_mult (4), vocabulary (1024), FFN width (256)\n"
	"  --warm            time on hot caches (no input rotation)\n"
	"  --graph           time graph replays where the backend has them\n"
	"  --launches N      with --graph: N launches in one graph, each on "
	"its\n"
	"                    own copy of the inputs (up to 256 MiB of copies,\n"
	"                    then reused), timed per launch; the same graph "
	"on\n"
	"                    one copy (warm) is printed beside it\n"
	"  --reps N          at least N timed launches (default 10)\n"
	"  --min-time S      and at least S seconds each (default 0.2)\n"
	"  --no-check        do not check the timed outputs against the "
	"reference\n"
	"  --no-unfused      skip the unfused comparison rows\n"
	"  --seed N          seed of the generated inputs\n"
	"  --json FILE       write the rows as JSON (with the raw samples)\n"
	"  --html FILE       write the rows as a self-contained HTML page\n"
	"  --csv FILE        write the rows as CSV (--md FILE: a Markdown "
	"table)\n"
	"  --baseline FILE   compare with an earlier --json file: FASTER, "
	"SLOWER,\n"
	"                    SAME or AMBIGUOUS (Mann-Whitney U on the "
	"samples,\n"
	"                    p < 0.01, and a change of at least --min-effect)\n"
	"  --min-effect F    smallest change of the median that counts (0.05)\n"
	"  --gate            exit 1 if any row is SLOWER than the baseline\n"
	"  --gate-repeats N  time each row N times (default 3 with "
	"--baseline,\n"
	"                    else 1); a change counts only if every repeat "
	"shows\n"
	"                    it above the noise floor: --min-effect widened "
	"to\n"
	"                    the repeats' spread (and the baseline's)\n"
	"  --bisect          as --gate, and exit 125 if any row is AMBIGUOUS\n"
	"                    (for git bisect run)\n";

static int parse_list(const char *v, int64_t *out, int max)
{
	int n = 0;
	char buf[256], *save;

	snprintf(buf, sizeof(buf), "%s", v);
	for (char *t = strtok_r(buf, ",", &save); t && n < max;
	     t = strtok_r(NULL, ",", &save)) {
		char *end;
		long long x = strtoll(t, &end, 10);

		if (*end || x <= 0)
			return -1;
		out[n++] = x;
	}
	return n;
}

int mtp_bench_parse_args(struct bench *b, int argc, char **argv)
{
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		char word[64];
		bool takes;

		snprintf(word, sizeof(word), " %s ", a);
		takes = strstr(" --backend --op --T --H --M --V --F --reps "
			       "--launches "
			       "--min-time --seed --json "
			       "--baseline --min-effect --html --csv --md "
			       "--gate-repeats ",
			       word) != NULL;
		int64_t one[1];

		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			fputs(usage_bench, stdout);
			return 0;
		}
		if (takes && !v) {
			fprintf(stderr, "mtpcheck bench: %s needs a value\n",
				a);
			return 2;
		}
		i += takes;
		if ((!strcmp(a, "--backend") || !strcmp(a, "--op")) &&
		    b->n_owned ==
			    (int)(sizeof(b->owned) / sizeof(b->owned[0]))) {
			fprintf(stderr,
				"mtpcheck bench: too many --backend and "
				"--op options\n");
			return 2;
		}
		if (!strcmp(a, "--backend")) {
			char *copy = b->owned[b->n_owned++] = strdup(v), *save;

			if (!copy) {
				fprintf(stderr,
					"mtpcheck bench: out of memory\n");
				return 2;
			}

			for (char *t = strtok_r(copy, ",", &save);
			     t && b->n_backends < MAXL;
			     t = strtok_r(NULL, ",", &save))
				b->backends[b->n_backends++] = t;
		} else if (!strcmp(a, "--op")) {
			char *copy = b->owned[b->n_owned++] = strdup(v), *save;

			if (!copy) {
				fprintf(stderr,
					"mtpcheck bench: out of memory\n");
				return 2;
			}

			for (char *t = strtok_r(copy, ",", &save); t;
			     t = strtok_r(NULL, ",", &save)) {
				if (!mtp_op_find(t)) {
					fprintf(stderr,
						"mtpcheck bench: unknown op "
						"'%s' (mtpcheck list ops)\n",
						t);
					return 2;
				}
				b->ops[b->n_ops++] = mtp_op_find(t);
			}
		} else if (!strcmp(a, "--T") || !strcmp(a, "--H")) {
			int n = parse_list(v, a[2] == 'T' ? b->ts : b->hs,
					   MAXL);

			if (n <= 0) {
				fprintf(stderr,
					"mtpcheck bench: %s: '%s' is not a "
					"list of positive integers\n",
					a, v);
				return 2;
			}
			*(a[2] == 'T' ? &b->n_t : &b->n_h) = n;
		} else if (!strcmp(a, "--M") || !strcmp(a, "--V") ||
			   !strcmp(a, "--F") || !strcmp(a, "--reps") ||
			   !strcmp(a, "--launches") || !strcmp(a, "--seed")) {
			if (parse_list(v, one, 1) != 1) {
				fprintf(stderr,
					"mtpcheck bench: %s: '%s' is not a "
					"positive integer\n",
					a, v);
				return 2;
			}
			if (!strcmp(a, "--M"))
				b->m = one[0];
			else if (!strcmp(a, "--V"))
				b->v = one[0];
			else if (!strcmp(a, "--F"))
				b->f = one[0];
			else if (!strcmp(a, "--reps"))
				b->topt.min_reps = (int)one[0];
			else if (!strcmp(a, "--launches"))
				b->topt.launches =
					one[0] > 4096 ? 4096 : (int)one[0];
			else
				b->seed = (uint64_t)one[0];
		} else if (!strcmp(a, "--gate-repeats")) {
			if (parse_list(v, one, 1) != 1 ||
			    one[0] > BENCH_MAX_REPEATS) {
				fprintf(stderr,
					"mtpcheck bench: --gate-repeats: '%s' "
					"is not a count from 1 to %d\n",
					v, BENCH_MAX_REPEATS);
				return 2;
			}
			b->repeats = (int)one[0];
		} else if (!strcmp(a, "--min-time")) {
			b->topt.min_seconds = atof(v);
		} else if (!strcmp(a, "--json")) {
			b->json_path = v;
		} else if (!strcmp(a, "--html")) {
			b->html_path = v;
		} else if (!strcmp(a, "--csv")) {
			b->csv_path = v;
		} else if (!strcmp(a, "--md")) {
			b->md_path = v;
		} else if (!strcmp(a, "--baseline")) {
			b->baseline_path = v;
		} else if (!strcmp(a, "--min-effect")) {
			b->min_effect = atof(v);
			if (!(b->min_effect > 0 && b->min_effect < 10)) {
				fprintf(stderr,
					"mtpcheck bench: --min-effect: '%s' is "
					"not a fraction\n",
					v);
				return 2;
			}
		} else if (!strcmp(a, "--gate")) {
			b->gate = true;
		} else if (!strcmp(a, "--bisect")) {
			b->gate = b->bisect = true;
		} else if (!strcmp(a, "--warm")) {
			b->topt.warm = true;
		} else if (!strcmp(a, "--graph")) {
			b->topt.graph = true;
		} else if (!strcmp(a, "--no-check")) {
			b->check = false;
		} else if (!strcmp(a, "--no-unfused")) {
			b->unfused = false;
		} else {
			fprintf(stderr,
				"mtpcheck bench: unknown argument '%s' (see "
				"--help)\n",
				a);
			return 2;
		}
	}
	return -1;
}

void mtp_bench_defaults(struct bench *b)
{
	static const int64_t ts[] = {1, 64, 512, 4096}, hs[] = {4096, 7168};

	if (!b->n_backends) {
		b->backends[b->n_backends++] = "ref";
		if (mtp_backend_absent_reason("cpu") == NULL)
			b->backends[b->n_backends++] = "cpu";
	}
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
