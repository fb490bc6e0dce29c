/*
 * `mtpcheck report`: merges JSON results files (one per vendor machine, or one
 * per night) into one run and renders it with the same writers as `run`.
 * Each file's backends become columns labelled backend@host, with the device
 * line the file recorded; the same label seen again (another night) gets the
 * file's date, so the matrix shows the trend side by side. A merged report
 * (command "report") records where each column came from ("merge"), so that
 * read again it gives back its inputs' columns, and what two inputs both hold
 * (the same run given twice, a merged report beside its inputs) is counted
 * once (merge_dedup.c). Bench files among the inputs become the bench history
 * (merge_bench.c). Every field is checked as it is read (merge_field.c,
 * merge_result.c). Built with libcjson (merge_none.c stands in otherwise).
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "merge_int.h"
#include "mtp/meta.h"
#include "mtp/runner.h"
#include "mtp/textio.h"
#include "mtp/textsafe.h"

/* The labels earlier files used, and the run each came from: a shard of
 * the same run (same run_id; without one, the same host, command and
 * minute of creation) shares its column, another run gets a dated one. */
struct seen {
	int n, cap, last;
	struct {
		char label[128], run[160], column[128];
	} * v;
};

/* What a results file says about all its results. */
struct file_facts {
	struct mtp_jwhere w;
	const char *host, *created, *command, *command_line;
	char run[160];	       /* the run_id, else command|created */
	const cJSON *backends; /* meta.backends, or NULL */
	const cJSON *columns;  /* a merged report's merge.columns */
	struct column_entry {
		char column[128];
		struct mtp_column_origin o;
	} * origins; /* theirs, in order (malloc'ed) */
	int n_origins, last;
	bool weights_only; /* a verify --weights-only */
	bool merged;	   /* a report's output (command "report") */
};

/* Whether command line s holds the word w. */
static bool has_word(const char *s, const char *w)
{
	size_t n = strlen(w);

	for (const char *p = strstr(s, w); p; p = strstr(p + 1, w))
		if ((p == s || p[-1] == ' ') && (!p[n] || p[n] == ' '))
			return true;
	return false;
}

/* merge.columns of a merged report: where each column came from. */
static bool read_origins(struct file_facts *ff)
{
	struct mtp_jwhere w = ff->w;
	int k = 0;

	ff->origins = calloc((size_t)cJSON_GetArraySize(ff->columns) + 1,
			     sizeof(*ff->origins));
	if (!ff->origins)
		return mtp_jw_refuse(&w, "merge", "out of memory");
	for (const cJSON *c = ff->columns->child; c; c = c->next, k++) {
		struct mtp_column_origin *o = &ff->origins[k].o;

		snprintf(w.at, sizeof(w.at), "merge.columns[%d]", k);
		if (!cJSON_IsObject(c))
			return mtp_jw_refuse(&w, NULL, "not an object");
		if (!mtp_jw_text(&w, c, "column", true, ff->origins[k].column,
				 sizeof(ff->origins[k].column)) ||
		    !mtp_jw_text(&w, c, "backend", true, o->backend,
				 sizeof(o->backend)) ||
		    !mtp_jw_text(&w, c, "host", true, o->host,
				 sizeof(o->host)) ||
		    !mtp_jw_text(&w, c, "run_id", true, o->run,
				 sizeof(o->run)) ||
		    !mtp_jw_text(&w, c, "created", false, o->created,
				 sizeof(o->created)) ||
		    !mtp_jw_bool(&w, c, "weights_only", false,
				 &o->weights_only))
			return false;
	}
	ff->n_origins = k;
	return true;
}

/* The top of a results file: its run, host, date and devices, all of
 * them checked for their types. */
static bool read_facts(struct file_facts *ff, const cJSON *root)
{
	struct mtp_jwhere *w = &ff->w, at = *w;
	const cJSON *machine, *meta, *merge;
	const char *id;

	if (!mtp_jw_str(w, root, "command", false, &ff->command) ||
	    !mtp_jw_str(w, root, "created", false, &ff->created) ||
	    !mtp_jw_str(w, root, "run_id", false, &id) ||
	    !mtp_jw_kind(w, root, "machine", false, true, &machine) ||
	    !mtp_jw_kind(w, root, "meta", false, true, &meta) ||
	    !mtp_jw_kind(w, root, "merge", false, true, &merge))
		return false;
	snprintf(at.at, sizeof(at.at), "machine");
	if (!mtp_jw_str(&at, machine, "host", false, &ff->host))
		return false;
	snprintf(at.at, sizeof(at.at), "meta");
	if (!mtp_jw_str(&at, meta, "command_line", false, &ff->command_line) ||
	    !mtp_jw_kind(&at, meta, "backends", false, false, &ff->backends))
		return false;
	snprintf(at.at, sizeof(at.at), "merge");
	if (merge &&
	    !mtp_jw_kind(&at, merge, "columns", true, false, &ff->columns))
		return false;
	if (*id)
		snprintf(ff->run, sizeof(ff->run), "%s", id);
	else
		snprintf(ff->run, sizeof(ff->run), "%s|%.16s", ff->command,
			 ff->created);
	ff->merged = !strcmp(ff->command, "report");
	ff->weights_only = !strcmp(ff->command, "verify") &&
			   has_word(ff->command_line, "--weights-only");
	return !ff->columns || read_origins(ff);
}

/* Where result w (its backend be) came from: the file's backend@host and
 * run; in a merged report, the origin it records for the column (one
 * written before merge.columns: the column itself, of the file's run). */
static bool origin_of(struct file_facts *ff, const struct mtp_jwhere *w,
		      const char *be, struct mtp_column_origin *o)
{
	bool old = ff->merged && !ff->columns;

	memset(o, 0, sizeof(*o));
	if (ff->columns) {
		for (int k = 0; k < ff->n_origins; k++, ff->last++) {
			ff->last %= ff->n_origins; /* from the one before */
			if (!strcmp(ff->origins[ff->last].column, be)) {
				*o = ff->origins[ff->last].o;
				return true;
			}
		}
		return mtp_jw_refuse(w, "backend",
				     "a column that merge.columns lacks");
	}
	mtp_text_sanitize(o->backend, sizeof(o->backend), be, strlen(be) + 1);
	mtp_text_sanitize(o->host, sizeof(o->host), old ? "" : ff->host,
			  strlen(old ? "" : ff->host) + 1);
	mtp_text_sanitize(o->run, sizeof(o->run), ff->run, sizeof(ff->run));
	mtp_text_sanitize(o->created, sizeof(o->created), ff->created,
			  strlen(ff->created) + 1);
	o->weights_only = ff->weights_only;
	return true;
}

/* The column of (label, run): the one this run got before (a shard), the
 * label itself if no other run used it, else the label dated. */
static const char *column(struct seen *s, const char *label, const char *run,
			  const char *created)
{
	bool other = false;

	if (s->last < s->n && !strcmp(s->v[s->last].label, label) &&
	    !strcmp(s->v[s->last].run, run))
		return s->v[s->last].column; /* as the result before */
	for (int i = 0; i < s->n; i++) {
		if (strcmp(s->v[i].label, label))
			continue;
		if (!strcmp(s->v[i].run, run))
			return s->v[s->last = i].column;
		other = true;
	}
	if (s->n == s->cap) {
		int cap = s->cap ? 2 * s->cap : 32;
		void *v = realloc(s->v, (size_t)cap * sizeof(*s->v));

		if (!v)
			return NULL;
		s->v = v;
		s->cap = cap;
	}
	snprintf(s->v[s->n].label, sizeof(s->v[s->n].label), "%s", label);
	snprintf(s->v[s->n].run, sizeof(s->v[s->n].run), "%s", run);
	snprintf(s->v[s->n].column, sizeof(s->v[s->n].column), "%.110s%s%.16s",
		 label, other ? " " : "", other ? created : "");
	for (int i = 0; other && i < s->n; i++) /* two runs in one minute */
		if (!strcmp(s->v[i].column, s->v[s->n].column))
			snprintf(s->v[s->n].column, sizeof(s->v[s->n].column),
				 "%.80s %.40s", label, run);
	s->last = s->n;
	return s->v[s->n++].column;
}

/* Column col's device, the one its file's meta records for the name the
 * result carries (first seen wins: the shards of a run share their
 * devices), and where the column came from. */
static bool add_device(struct mtp_run *run, const struct file_facts *ff,
		       const char *col, const char *name,
		       const struct mtp_column_origin *o)
{
	const char *dev = "unknown (the results file records no device)";

	for (int i = run->n_devices - 1; i >= 0; i--)
		if (!strcmp(run->devices[i].name, col))
			return true;
	for (const cJSON *b = ff->backends ? ff->backends->child : NULL; b;
	     b = b->next) {
		const cJSON *nm = cJSON_GetObjectItemCaseSensitive(b, "name");
		const cJSON *d = cJSON_GetObjectItemCaseSensitive(b, "device");

		if (cJSON_IsString(nm) && !strcmp(nm->valuestring, name) &&
		    cJSON_IsString(d) && *d->valuestring)
			dev = d->valuestring;
	}
	if (!mtp_run_set_device(run, col, dev))
		return false;
	run->devices[run->n_devices - 1].origin = *o;
	return true;
}

/* Room for one more result. */
static bool grow(struct mtp_run *run)
{
	int cap = run->cap ? 2 * run->cap : 256;
	struct mtp_result *v;

	if (run->n < run->cap)
		return true;
	v = realloc(run->results, (size_t)cap * sizeof(*v));
	if (!v)
		return false;
	run->results = v;
	run->cap = cap;
	return true;
}

/* Result i (o) of the file into the run, in its column. */
static enum mtp_status add_result(struct mtp_run *run, struct file_facts *ff,
				  struct seen *seen, const cJSON *o, int i)
{
	struct mtp_jwhere w = ff->w;
	struct mtp_column_origin og;
	struct mtp_merge_origin from;
	char label[128], safe[sizeof(run->devices->name)];
	const char *be, *col;

	snprintf(w.at, sizeof(w.at), "results[%d]", i);
	if (!cJSON_IsObject(o))
		return mtp_jw_refuse(&w, NULL, "not an object"),
		       MTP_ERR_INVALID;
	if (!mtp_jw_str(&w, o, "backend", true, &be) ||
	    !origin_of(ff, &w, be, &og))
		return MTP_ERR_INVALID;
	snprintf(label, sizeof(label), "%.60s%s%.60s", og.backend,
		 *og.host ? "@" : "", og.host);
	col = column(seen, label, og.run, og.created);
	if (col) { /* the name the device list keeps (mtp_run_set_device) */
		mtp_text_sanitize(safe, sizeof(safe), col, strlen(col) + 1);
		col = safe;
	}
	if (!col || !add_device(run, ff, col, be, &og) || !grow(run)) {
		snprintf(w.err, w.errn, "%s: out of memory", w.path);
		return MTP_ERR_NOMEM;
	}
	/* a PASSED without a compared element stands only in a weights-only
	 * column: every result of a column shares its origin's word on that */
	for (int d = 0; d < run->n_devices; d++)
		if (!strcmp(run->devices[d].name, col) &&
		    run->devices[d].origin.weights_only != og.weights_only)
			return mtp_jw_refuse(&w, "backend",
					     "a column whose results disagree "
					     "on weights_only"),
			       MTP_ERR_INVALID;
	from.weights_only = og.weights_only;
	if (!mtp_merge_result(&w, o, col, &from, &run->results[run->n]))
		return MTP_ERR_INVALID;
	run->n++;
	return MTP_OK;
}

static enum mtp_status add_results(struct mtp_run *run, struct file_facts *ff,
				   const cJSON *root, struct seen *seen)
{
	const cJSON *results;
	enum mtp_status st = MTP_OK;
	int i = 0;

	if (!mtp_jw_kind(&ff->w, root, "results", true, false, &results) ||
	    !read_facts(ff, root))
		return MTP_ERR_INVALID;
	for (const cJSON *o = results->child; !st && o; o = o->next, i++)
		st = add_result(run, ff, seen, o, i);
	return st;
}

static enum mtp_status add_file(struct mtp_run *run, const char *path,
				const cJSON *root, struct seen *seen, char *err,
				size_t errn)
{
	struct file_facts ff = {.w = {.path = path, .err = err, .errn = errn}};
	const cJSON *sv;
	const char *format;
	enum mtp_status st;

	if (!cJSON_IsObject(root))
		return mtp_jw_refuse(&ff.w, NULL,
				     "not a JSON object (not an "
				     "mtpcheck results or bench "
				     "file)"),
		       MTP_ERR_INVALID;
	sv = cJSON_GetObjectItemCaseSensitive(root, "schema_version");
	if (!mtp_schema_accept(path, cJSON_GetStringValue(sv), sv, err, errn))
		return MTP_ERR_INVALID;
	if (!mtp_jw_str(&ff.w, root, "format", true, &format))
		return MTP_ERR_INVALID;
	if (!strcmp(format, "mtpcheck-bench"))
		return mtp_merge_bench(run, path, root, err, errn);
	if (!strcmp(format, "mtpcheck-bench-collection"))
		return mtp_merge_bench_collection(run, path, root, err, errn);
	if (strcmp(format, "mtpcheck-results"))
		return mtp_jw_refuse(&ff.w, "format",
				     "not an mtpcheck results or bench file "
				     "(mtpcheck-results, mtpcheck-bench)"),
		       MTP_ERR_INVALID;
	st = add_results(run, &ff, root, seen);
	free(ff.origins);
	return st;
}

/* File path parsed, or NULL with the line in err. */
static cJSON *parse(const char *path, char *err, size_t errn)
{
	char why[128] = "";
	size_t len;
	char *text = mtp_read_text_len(path, &len, why, sizeof(why));
	const char *end = NULL;
	cJSON *root = NULL;

	if (!text)
		snprintf(err, errn, "%s: cannot read: %s", path, why);
	else if (strlen(text) != len)
		snprintf(err, errn,
			 "%s: not valid JSON (a NUL byte at byte %zu)", path,
			 strlen(text));
	else if (!len)
		snprintf(err, errn, "%s: not valid JSON (an empty file)", path);
	else if (!(root = cJSON_ParseWithLengthOpts(text, len + 1, &end, 1)))
		snprintf(err, errn,
			 "%s: not valid JSON (error at byte %zu of %zu: cut "
			 "short or damaged)",
			 path, end ? (size_t)(end - text) : (size_t)0, len);
	free(text);
	return root;
}

enum mtp_status mtp_run_merge(struct mtp_run *run, const char *const *paths,
			      int n, char *err, size_t errn)
{
	enum mtp_status st = MTP_OK;
	struct seen seen = {0};

	snprintf(run->command, sizeof(run->command), "report");
	for (int i = 0; !st && i < n; i++) {
		cJSON *root = parse(paths[i], err, errn);

		st = root ? add_file(run, paths[i], root, &seen, err, errn)
			  : MTP_ERR_INVALID;
		cJSON_Delete(root);
	}
	free(seen.v);
	if (!st && run->bench && !mtp_merge_drop_bench_repeats(run->bench))
		st = MTP_ERR_NOMEM;
	if (!st && (run->n_repeats = mtp_merge_drop_repeats(run)) < 0)
		st = MTP_ERR_NOMEM;
	if (st == MTP_ERR_NOMEM)
		snprintf(err, errn, "%s: out of memory",
			 n ? paths[n - 1] : "report");
	run->n_merged = n;
	return st;
}
