/*
 * The weight audit's findings as JSON, in the style of the run results
 * (reports/json.c: a format name and version, the command, the machine's
 * host, a summary and the exit code), written under a temporary name and
 * renamed, so that a crash never leaves a partial file behind.
 */
#include "mtp/weightmap.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mtp/config.h"

static void jstr(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

static void write_finding(FILE *f, const struct mtp_wm_finding *x)
{
	const struct mtp_diag_info *d = mtp_diag_info(x->diag);

	fputs("{\"code\":", f);
	jstr(f, d->name);
	fputs(",\"section\":", f);
	jstr(f, d->section);
	fputs(",\"key\":", f);
	jstr(f, x->key);
	fputs(",\"target\":", f);
	jstr(f, x->target);
	fputs(",\"text\":", f);
	jstr(f, x->text);
	fputs(",\"history\":", f);
	jstr(f, d->history);
	fputs("}", f);
}

static void write_header(FILE *f, const struct mtp_wm_audit *a,
			 const struct mtp_wm_config *c, const char *command)
{
	char host[256] = "", when[64];
	time_t t = time(NULL);

	gethostname(host, sizeof(host) - 1);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
	fputs("{\"format\":\"mtpcheck-weight-audit\",\"format_version\":1,", f);
	fputs("\"mtpcheck_version\":", f);
	jstr(f, MTP_VERSION);
	fputs(",\"command\":", f);
	jstr(f, command);
	fputs(",\"created\":", f);
	jstr(f, when);
	fputs(",\"machine\":{\"host\":", f);
	jstr(f, host);
	fputs("},\"family\":", f);
	jstr(f, mtp_family_name(c->family));
	fprintf(f, ",\"layer\":%d,\"mtp_layers\":%d,\"loader\":", c->layer,
		c->mtp_layers);
	jstr(f, mtp_loader_name(c->loader));
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
		jstr(f, a->notes[i]);
	}
	fputs("],\n", f);
}

enum mtp_status mtp_wm_audit_json(const struct mtp_wm_audit *a,
				  const struct mtp_wm_config *c,
				  const char *command, const char *path,
				  char *err, size_t errn)
{
	char tmp[4096 + 32];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp%ld", path, (long)getpid());
	f = fopen(tmp, "w");
	if (!f) {
		snprintf(err, errn, "%s: cannot write: %s", path,
			 strerror(errno));
		return MTP_ERR_IO;
	}
	write_header(f, a, c, command);
	fputs("\"findings\":[\n", f);
	for (int i = 0; i < a->n; i++) {
		write_finding(f, &a->f[i]);
		fputs(i + 1 < a->n ? ",\n" : "\n", f);
	}
	fputs("]}\n", f);
	if (ferror(f) | fclose(f) || rename(tmp, path) != 0) {
		snprintf(err, errn, "%s: cannot write: %s", path,
			 strerror(errno));
		remove(tmp);
		return MTP_ERR_IO;
	}
	return MTP_OK;
}
