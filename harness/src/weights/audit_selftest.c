/*
 * `mtpcheck audit-weights --selftest`: the weight audit's own mutants. Each
 * loader variant that reproduces a known mapping bug runs over the bundled
 * key lists (fixtures/weights, written by hand from SPEC.md §6's tables,
 * with the engine parameters derived by hand, not by this code) and must
 * be caught and named as its own bug; the fixed loader must be clean.
 */
#include <stdio.h>
#include <string.h>

#include "mtp/weightmap.h"
#include "util/util.h"

struct selftest_case {
	const char *list; /* fixtures/weights/<list>.{keys,params}.txt */
	enum mtp_family family;
	int layer;
	enum mtp_loader loader;
	enum mtp_diag want; /* NONE: must be clean */
	const char *named;  /* a finding's key or target must contain it */
};

static const struct selftest_case cases[] = {
	{"deepseek_v4_flash", MTP_FAMILY_DEEPSEEK_V4, 43, MTP_LOADER_FIXED,
	 MTP_DIAG_NONE, NULL},
	{"deepseek_v4_flash", MTP_FAMILY_DEEPSEEK_V4, 43,
	 MTP_LOADER_BUGGY_REMAP, MTP_DIAG_STALE_WEIGHT_REMAP, "norm_gate"},
	{"deepseek_v4_flash", MTP_FAMILY_DEEPSEEK_V4, 43, MTP_LOADER_NO_ALIAS,
	 MTP_DIAG_MTP_HEAD_EMBED_UNLOADED, "shared_head.head.weight"},
	{"deepseek_v4_flash", MTP_FAMILY_DEEPSEEK_V4, 43, MTP_LOADER_NO_PREFIX,
	 MTP_DIAG_EH_PROJ_NO_PREFIX, "e_proj"},
	{"deepseek_v3", MTP_FAMILY_DEEPSEEK_V3, 61, MTP_LOADER_FIXED,
	 MTP_DIAG_NONE, NULL},
};

/* fixtures/weights here, installed or in the source tree (paths.c) */
static const char *default_dir(void)
{
	static char path[4096];

	mtp_data_path("fixtures/weights", path, sizeof(path));
	return path;
}

/* Whether the findings are the wanted ones: none, or all of diagnosis
 * want with at least one naming `named`. */
static bool judged_right(const struct selftest_case *t,
			 const struct mtp_wm_audit *a, int *other)
{
	bool named = false;

	*other = 0;
	for (int i = 0; i < a->n; i++) {
		*other += a->f[i].diag != t->want;
		named |= strstr(a->f[i].key, t->named ? t->named : "\x01") ||
			 strstr(a->f[i].target, t->named ? t->named : "\x01");
	}
	return t->want == MTP_DIAG_NONE ? a->n == 0
					: a->n > 0 && !*other && named;
}

static bool run_case(const char *dir, const struct selftest_case *t,
		     bool verbose)
{
	char keys_path[4096], params_path[4096], err[512] = "";
	struct mtp_wm_names keys = {0}, params = {0};
	struct mtp_wm_inputs in = {.keys = &keys, .params = &params};
	struct mtp_wm_config c;
	struct mtp_wm_audit a = {0};
	bool ok = false;
	int other = 0;

	snprintf(keys_path, sizeof(keys_path), "%s/%s.keys.txt", dir, t->list);
	snprintf(params_path, sizeof(params_path), "%s/%s.params.txt", dir,
		 t->list);
	mtp_wm_config_init(&c, t->family, t->layer, 1);
	c.loader = t->loader;
	if (mtp_wm_read_keys(keys_path, &keys, err, sizeof(err)) ||
	    mtp_wm_read_names(params_path, &params, err, sizeof(err)))
		goto fail;
	mtp_wm_names_sort(&params);
	if (mtp_wm_audit_run(&c, &in, &a, err, sizeof(err)))
		goto fail;
	ok = judged_right(t, &a, &other);
	printf("%-18s %-12s %-24s %2d finding(s)%s  %s\n", t->list,
	       mtp_loader_name(t->loader),
	       t->want ? mtp_diag_info(t->want)->name : "(clean)", a.n,
	       other ? ", some named otherwise" : "", ok ? "ok" : "MISSED");
	for (int i = 0; i < a.n && (verbose || !ok); i++)
		printf("    %s %s -> %s: %s\n",
		       mtp_diag_info(a.f[i].diag)->name, a.f[i].key,
		       a.f[i].target, a.f[i].text);
	mtp_wm_audit_fini(&a);
	goto out;
fail:
	printf("%-18s %-12s ERROR %s\n", t->list, mtp_loader_name(t->loader),
	       err);
out:
	mtp_wm_names_fini(&keys);
	mtp_wm_names_fini(&params);
	return ok;
}

int mtp_wm_selftest(const char *dir, bool verbose)
{
	int n = (int)(sizeof(cases) / sizeof(cases[0])), passed = 0;

	if (!dir)
		dir = default_dir();
	printf("%-18s %-12s %-24s\n", "key list", "loader", "expected");
	for (int i = 0; i < n; i++)
		passed += run_case(dir, &cases[i], verbose);
	printf("audit-weights selftest: %d of %d loader variants judged as "
	       "expected "
	       "(bugs caught and named, fixed loader clean)\n",
	       passed, n);
	return passed == n ? MTP_EXIT_OK : MTP_EXIT_FAIL;
}
