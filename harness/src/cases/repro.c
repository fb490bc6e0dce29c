/*
 * Where a result comes from, as shown and as replayed. The file part of a
 * fixture case's name does not depend on the working directory: it is the
 * path relative to the source tree or to the installed data folder when the
 * file lies in one of them (so the bundled fixtures read fixtures/norms.h5
 * from any folder and from an installed binary), else the file's base name. The repro line uses absolute paths and every option that changes
 * what a case does (--backend-lib, --isolate/--timeout, --seed,
 * --mem-limit), so it replays the same verdict from any folder.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mtp/config.h"
#include "util/util.h"
#include "repro.h"

/* REAL's part under the folder ROOT, or NULL when it is not under it. */
static const char *under(const char *real, const char *root)
{
	size_t rl = strlen(root);

	return strncmp(real, root, rl) == 0 && real[rl] == '/' ? real + rl + 1
							       : NULL;
}

void mtp_display_name(const char *path, char *out, size_t n)
{
	char real[PATH_MAX], root[PATH_MAX];
	const char *slash, *rel = NULL;

	if (strcmp(path, "generated") == 0 || !realpath(path, real)) {
		snprintf(out, n, "%s", path);
		return;
	}
	if (realpath(MTP_SOURCE_DIR, root))
		rel = under(real, root);
	if (!rel && mtp_data_root(root, sizeof(root)))
		rel = under(real, root);
	if (rel) {
		snprintf(out, n, "%s", rel);
		return;
	}
	slash = strrchr(real, '/');
	snprintf(out, n, "%s", slash ? slash + 1 : real);
}

static void shell_quote(char *dst, size_t n, const char *s)
{
	bool plain = *s != 0;

	for (const char *p = s; *p; p++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWX"
			    "YZ0123456789_.-/:,=+",
			    *p))
			plain = false;
	if (plain || strchr(s, '\''))
		snprintf(dst, n, "%s", plain ? s : "'(unquotable path)'");
	else
		snprintf(dst, n, "'%s'", s);
}

/* An absolute, quoted path (as given if it cannot be resolved). */
static void abs_arg(const char *path, char *out, size_t n)
{
	char real[PATH_MAX];

	shell_quote(out, n, realpath(path, real) ? real : path);
}

/* The options after the source: isolation, seed, memory budget. */
static void repro_options(const struct mtp_run_opts *o, char *buf, size_t n)
{
	size_t k = 0;

	buf[0] = 0;
	if (o->isolate && !o->verify)
		k += (size_t)snprintf(buf + k, n - k, " --isolate");
	if (o->timeout != MTP_DEFAULT_TIMEOUT && !o->verify && k < n)
		k += (size_t)snprintf(buf + k, n - k, " --timeout %g",
				      o->timeout);
	if (o->seed_set && !o->verify && k < n)
		k += (size_t)snprintf(buf + k, n - k, " --seed %llu",
				      (unsigned long long)o->seed);
	if (o->mem_limit && k < n)
		k += (size_t)snprintf(buf + k, n - k, " --mem-limit %s",
				      o->mem_limit);
	if (o->det.invariance && k < n) /* the determinism modes */
		k += (size_t)snprintf(buf + k, n - k, " --invariance");
	if (o->det.invariance && o->det.ulps && k < n)
		k += (size_t)snprintf(buf + k, n - k, " --invariance-ulps %lld",
				      (long long)o->det.ulps);
	if (o->det.bitwise && k < n)
		snprintf(buf + k, n - k, " --repeat %d --bitwise",
			 o->det.repeat);
}

/* A repro line longer than the result holds is not cut silently. */
static void put(char *dst, size_t n, const char *src)
{
	size_t len = strlen(src);

	if (len >= n)
		len = (size_t)snprintf(dst, n,
				       "(repro line too long: run with "
				       "shorter paths)");
	else
		memcpy(dst, src, len + 1);
}

/* The dump of a verify result: its file, or for merged rank files those
 * files (the repro names them; the result's file the first, "+N"). */
static void rank_files(const struct mtp_run *run, const char *path,
		       struct mtp_result *r, char *f, size_t n)
{
	const char *p = run->tp_ranks;
	char one[PATH_MAX], q[PATH_MAX + 4];
	size_t k = 0;
	int count = 0;

	if (!run->tp_merged || strcmp(path, run->tp_merged) != 0) {
		abs_arg(path, f, n);
		return;
	}
	f[0] = 0;
	while (p && *p && k < n) {
		size_t len = strcspn(p, "\n");

		snprintf(one, sizeof(one), "%.*s", (int)len, p);
		if (count++ == 0)
			mtp_display_name(one, r->file, sizeof(r->file));
		abs_arg(one, q, sizeof(q));
		k += (size_t)snprintf(f + k, n - k, "%s%s", k ? " " : "", q);
		p += len + (p[len] != 0);
	}
	k = strlen(r->file);
	if (count > 1 && k < sizeof(r->file))
		snprintf(r->file + k, sizeof(r->file) - k, "+%d", count - 1);
}

void mtp_result_origin(const struct mtp_run *run, struct mtp_result *r,
		       const char *path)
{
	const struct mtp_run_opts *o = &run->opts;
	char f[PATH_MAX + 4], b[140], lib[PATH_MAX + 20] = "", opt[160];
	char line[3 * PATH_MAX];

	mtp_display_name(path, r->file, sizeof(r->file));
	shell_quote(b, sizeof(b), r->backend);
	repro_options(o, opt, sizeof(opt));
	if (o->backend_lib && !o->verify) {
		abs_arg(o->backend_lib, f, sizeof(f));
		snprintf(lib, sizeof(lib), " --backend-lib %s", f);
	}
	if (o->verify) {
		rank_files(run, path, r, f, sizeof(f));
		snprintf(line, sizeof(line), "mtpcheck verify %s --filter %s%s",
			 f, r->case_id, opt);
		put(r->repro, sizeof(r->repro), line);
		return;
	}
	abs_arg(r->generated ? o->case_file : path, f, sizeof(f));
	snprintf(line, sizeof(line),
		 "mtpcheck run --backend %s%s --%s %s --filter %s%s", b, lib,
		 r->generated ? "cases" : "fixtures", f, r->case_id, opt);
	put(r->repro, sizeof(r->repro), line);
}
