/*
 * The weight audit's findings as JSON, in the style of the run results
 * (reports/json.c: a format name, the schema version and the run metadata of
 * reports/meta.c, the command, a summary and the exit code), written under a
 * temporary name and renamed, so that a crash never leaves a partial file
 * behind.
 */
#include "mtp/weightmap.h"

#include <stdio.h>

#include "mtp/config.h"
#include "mtp/meta.h"
#include "mtp/textio.h"

static void write_finding(FILE *f, const struct mtp_wm_finding *x)
{
	const struct mtp_bug_class *d = mtp_diag_info(x->diag);

	fputs("{\"code\":", f);
	mtp_json_str(f, d->name);
	fputs(",\"section\":", f);
	mtp_json_str(f, d->section);
	fputs(",\"key\":", f);
	mtp_json_str(f, x->key);
	fputs(",\"target\":", f);
	mtp_json_str(f, x->target);
	fputs(",\"text\":", f);
	mtp_json_str(f, x->text);
	fputs(",\"history\":", f);
	mtp_json_str(f, d->history);
	fputs("}", f);
}

static void write_header(FILE *f, const struct mtp_wm_audit *a,
			 const struct mtp_wm_config *c, const char *command,
			 const char *run_id)
{
	struct mtp_meta m;

	mtp_meta_get(&m, run_id);
	/* the version 1 fields stay (older readers use them); meta has all:
	 * no backend runs and nothing is generated, so no backends, seed 0 */
	fputs("{\"format\":\"mtpcheck-weight-audit\",\"format_version\":1,", f);
	mtp_meta_json(f, run_id, 0, NULL, 0, NULL);
	fputs(",\"mtpcheck_version\":", f);
	mtp_json_str(f, MTP_VERSION);
	fputs(",\"command\":", f);
	mtp_json_str(f, command);
	fputs(",\"created\":", f);
	mtp_json_str(f, m.date);
	fputs(",\"machine\":{\"host\":", f);
	mtp_json_str(f, m.host);
	fputs("},\"family\":", f);
	mtp_json_str(f, mtp_family_name(c->family));
	fprintf(f, ",\"layer\":%d,\"mtp_layers\":%d,\"loader\":", c->layer,
		c->mtp_layers);
	mtp_json_str(f, c->dspark ? "dspark" : mtp_loader_name(c->loader));
	fputs(",\"checkpoint_kind\":", f);
	mtp_json_str(f, mtp_wm_kind_name(a->kind));
	fprintf(f,
		",\"summary\":{\"keys\":%d,\"mtp_keys\":%d,\"mapped\":%d,"
		"\"skipped\":%d,\"params\":%d,\"mtp_keys_unloaded\":%d,"
		"\"params_unloaded\":%d,\"modules\":%d,\"findings\":%d}",
		a->n_keys, a->n_mtp_keys, a->n_mapped, a->n_skipped,
		a->n_params, a->n_mtp_unloaded, a->n_params_unloaded,
		a->n_modules, a->n);
	fprintf(f, ",\"exit_code\":%d,\"notes\":[",
		a->n ? MTP_EXIT_FAIL : MTP_EXIT_OK);
	for (int i = 0; i < a->n_notes; i++) {
		fputs(i ? "," : "", f);
		mtp_json_str(f, a->notes[i]);
	}
	fputs("],\n", f);
}

struct audit_doc {
	const struct mtp_wm_audit *a;
	const struct mtp_wm_config *c;
	const char *command, *run_id;
};

static void body(FILE *f, const void *arg)
{
	const struct audit_doc *d = arg;

	write_header(f, d->a, d->c, d->command, d->run_id);
	fputs("\"findings\":[\n", f);
	for (int i = 0; i < d->a->n; i++) {
		write_finding(f, &d->a->f[i]);
		fputs(i + 1 < d->a->n ? ",\n" : "\n", f);
	}
	fputs("]}\n", f);
}

enum mtp_status mtp_wm_audit_json(const struct mtp_wm_audit *a,
				  const struct mtp_wm_config *c,
				  const char *command, const char *run_id,
				  const char *path, char *err, size_t errn)
{
	struct audit_doc d = {a, c, command, run_id};

	return mtp_write_atomic(path, body, &d, err, errn);
}
