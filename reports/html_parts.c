/*
 * Parts of the HTML run report (html.c): the metadata header, the failures
 * grouped by verdict/diagnosis x backend x op (each group a <details> with
 * its cases and, per output, the worst element, the normwise error against
 * its budget and the ULP histogram as inline SVG), and the few lines of
 * script that sort and filter tables. Without script the page reads the same.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "html_parts.h"
#include "report_file.h"
#include "mtp/meta.h"
#include "mtp/textsafe.h"

static void esc(FILE *f, const char *s)
{
	mtp_xml_str(f, s);
}

static void dt(FILE *f, const char *k, const char *v)
{
	fprintf(f, "<dt>%s</dt><dd>", k);
	esc(f, v && *v ? v : "-");
	fputs("</dd>", f);
}

/* Every backend's device line (driver, runtime), one entry each. */
static void devices_of(FILE *f, const struct mtp_run *run)
{
	const char **names, **devices;
	int n = mtp_report_backends(run, &names, &devices);
	char info[MTP_BACKEND_DEVICE_MAX];

	for (int i = 0; i < n; i++) {
		mtp_meta_device(names[i], devices[i], info, sizeof(info));
		fputs("<dt class=\"device\">device of ", f);
		esc(f, names[i]);
		fputs("</dt><dd class=\"device\">", f);
		esc(f, info[0] ? info : "-");
		fputs("</dd>", f);
	}
	if (n >= 0) {
		free(names);
		free(devices);
	}
}

void mtp_html_meta(FILE *f, const struct mtp_run *run)
{
	struct mtp_meta m;
	char num[96];

	mtp_meta_get(&m, run->opts.run_id);
	fputs("<details open id=\"meta\"><summary>Run metadata</summary>"
	      "<dl class=\"meta\">",
	      f);
	dt(f, "mtpcheck", m.version);
	dt(f, "build commit", m.build_commit);
	dt(f, "commit under test", m.commit);
	dt(f, "run id", m.run_id);
	dt(f, "host", m.host);
	dt(f, "system", m.system);
	dt(f, "CPU", m.cpu_model);
	snprintf(num, sizeof(num), "%d of %d CPUs", m.threads, m.cpus);
	dt(f, "threads", num);
	dt(f, "date (UTC)", m.date);
	if (strcmp(run->command, "report")) {
		snprintf(num, sizeof(num), "%llu",
			 (unsigned long long)run->opts.seed);
		dt(f, "seed", num);
	}
	if (strcmp(run->command, "report") &&
	    mtp_meta_determinism_text(num, sizeof(num)))
		dt(f, "determinism", num);
	dt(f, "command line", m.command_line);
	devices_of(f, run);
	fputs("</dl></details>\n", f);
}

/* The group a result falls in: verdict, diagnosis, backend and op. */
static bool same_group(const struct mtp_result *a, const struct mtp_result *b)
{
	return a->verdict == b->verdict && a->diag.diag == b->diag.diag &&
	       a->op == b->op && !strcmp(a->backend, b->backend);
}

static bool reported(const struct mtp_result *r)
{
	return r->verdict != MTP_PASSED && r->verdict != MTP_SKIPPED &&
	       r->verdict != MTP_UNIMPLEMENTED;
}

/* The ULP histogram as bars (log height): 0, 1, 2, 3-4, ... >256. */
static void histogram(FILE *f, const struct mtp_cmp *c)
{
	static const char *const lab[MTP_ULP_BUCKETS] = {
		"0", "1", "2", "3-4", "5-8", "9-16", "17-256", ">256"};
	double top = 0;

	for (int i = 0; i < MTP_ULP_BUCKETS; i++)
		top = fmax(top, log10(1.0 + (double)c->ulp_hist[i]));
	fputs("<svg class=\"hist\" width=\"200\" height=\"48\" role=\"img\">"
	      "<title>elements per ULP distance (log scale)</title>",
	      f);
	for (int i = 0; i < MTP_ULP_BUCKETS; i++) {
		double h =
			top > 0 ? 34 * log10(1.0 + (double)c->ulp_hist[i]) / top
				: 0;

		fprintf(f,
			"<rect x=\"%d\" y=\"%.1f\" width=\"22\" "
			"height=\"%.1f\" "
			"fill=\"%s\"><title>%s ULP: %lld</title></rect>"
			"<text x=\"%d\" y=\"46\" font-size=\"7\">%s</text>",
			i * 25, 36 - h, h, i < 5 ? "#66bb6a" : "#e53935",
			lab[i], (long long)c->ulp_hist[i], i * 25, lab[i]);
	}
	fputs("</svg>", f);
}

static void output_row(FILE *f, const struct mtp_cmp *c)
{
	fputs("<tr><td>", f);
	esc(f, c->name);
	fprintf(f, "</td><td>%s</td>",
		c->passed ? "ok" : "<strong>FAILED</strong>");
	if (!c->shape_ok) {
		fputs("<td colspan=\"4\">", f);
		esc(f, c->shape_msg);
		fputs("</td></tr>\n", f);
		return;
	}
	fprintf(f, "<td>%.3g</td><td>", c->headroom);
	for (int d = 0; c->worst >= 0 && d < c->worst_ndim; d++)
		fprintf(f, "%s%lld", d ? "," : "[",
			(long long)c->worst_coord[d]);
	fprintf(f, "%s got %.6g want %.6g</td>",
		c->worst >= 0 && c->worst_ndim ? "]" : "", c->worst_got,
		c->worst_want);
	if (c->tol.budget)
		fprintf(f, "<td>%.3g of %.3g</td><td>", c->rel_norm,
			c->tol.norm_max);
	else
		fprintf(f, "<td>%.3g (no budget)</td><td>", c->rel_norm);
	histogram(f, c);
	fputs("</td></tr>\n", f);
}

static void case_detail(FILE *f, const struct mtp_result *r)
{
	fputs("<div class=\"case\"><code>", f);
	esc(f, r->file);
	fputs(":", f);
	esc(f, r->case_id);
	fputs("</code>: ", f);
	esc(f, r->message);
	if (r->diag.diag) {
		fputs("<br><strong>diagnosis</strong>: ", f);
		esc(f, r->diag.text);
	}
	char agree[400];

	if (mtp_agreement_text(r->cmp, r->n_cmp, agree, sizeof(agree))) {
		fputs("<br><strong>draft agreement</strong> by step: ", f);
		esc(f, agree);
	}
	fputs("<br>repro: <code>", f);
	esc(f, r->repro);
	fputs("</code>", f);
	if (r->n_cmp)
		fputs("<div class=\"w\"><table class=\"out\"><tr><th>output"
		      "</th><th></th><th>error / threshold</th><th>worst "
		      "element</th><th>normwise vs budget</th><th>ULP "
		      "histogram</th></tr>\n",
		      f);
	for (int i = 0; i < r->n_cmp; i++)
		output_row(f, &r->cmp[i]);
	fputs(r->n_cmp ? "</table></div></div>\n" : "</div>\n", f);
}

static void group(FILE *f, const struct mtp_run *run, int first, bool open,
		  const char *(*color)(enum mtp_verdict))
{
	const struct mtp_result *g = &run->results[first];
	int n = 0;

	for (int i = first; i < run->n; i++)
		n += same_group(&run->results[i], g);
	fprintf(f,
		"<details class=\"grp\"%s><summary><span class=\"v\" "
		"style=\"background:%s\">%s</span> <strong>%s</strong> "
		"&times; ",
		open ? " open" : "", color(g->verdict),
		mtp_verdict_name(g->verdict),
		g->diag.diag ? mtp_diag_info(g->diag.diag)->name
			     : "no diagnosis");
	esc(f, g->backend);
	fprintf(f, " &times; %s: %d case%s</summary>\n",
		g->op ? g->op->name : "-", n, n == 1 ? "" : "s");
	for (int i = first; i < run->n; i++)
		if (same_group(&run->results[i], g))
			case_detail(f, &run->results[i]);
	fputs("</details>\n", f);
}

void mtp_html_failures(FILE *f, const struct mtp_run *run,
		       const char *(*color)(enum mtp_verdict))
{
	int groups = 0,
	    *first = malloc((size_t)(run->n > 0 ? run->n : 1) * sizeof(*first));

	fputs("<h2 id=\"failures\">Failures by diagnosis &times; backend "
	      "&times; op</h2>\n",
	      f);
	if (!first) {
		fputs("<p>The failures could not be grouped: out of memory."
		      "</p>\n",
		      f);
		return;
	}
	for (int i = 0; i < run->n; i++) {
		bool seen = false;

		if (!reported(&run->results[i]))
			continue;
		/* against the groups so far, not every result before it */
		for (int g = 0; g < groups && !seen; g++)
			seen = same_group(&run->results[first[g]],
					  &run->results[i]);
		if (seen)
			continue;
		group(f, run, i, groups == 0, color); /* the first one open */
		first[groups++] = i;
	}
	free(first);
	if (!groups)
		fputs("<p id=\"nofail\">None.</p>\n", f);
}

const char *mtp_html_css(void)
{
	return "dl.meta{display:grid;grid-template-columns:max-content auto;"
	       "gap:0 1em;margin:.3em 0}dt{font-weight:600}dd{margin:0;"
	       "word-break:break-all}details.grp{margin:.3em 0;border:1px "
	       "solid #ddd;padding:.2em .5em}summary{cursor:pointer}"
	       ".case{margin:.4em 0 .8em}.w{overflow-x:auto;max-width:100%}"
	       "th.s{cursor:pointer}th.s:after{content:' \\2195';color:#999}"
	       "#filt{margin:.5em 0;width:20em;max-width:100%}"
	       "@media (max-width:600px){body{margin:.5em;font-size:13px}"
	       "table{display:block;overflow-x:auto;max-width:100%}"
	       "dl.meta{grid-template-columns:auto}h1{font-size:1.3em}}";
}

/* Click a header to sort its table; type to hide rows without the text. */
const char *mtp_html_script(void)
{
	return "<script>\n"
	       "document.querySelectorAll('table.st').forEach(function(t){\n"
	       " t.querySelectorAll('th').forEach(function(h,c){h.className="
	       "'s';\n"
	       "  h.onclick=function(){var rs=[].slice.call(t.rows,1),d=h."
	       "dataset.d=h.dataset.d=='1'?'-1':'1';\n"
	       "   rs.sort(function(a,b){var x=a.cells[c].textContent,y=b."
	       "cells[c].textContent,p=parseFloat(x),q=parseFloat(y);\n"
	       "    return d*(isNaN(p)||isNaN(q)?x.localeCompare(y):p-q);});\n"
	       "   rs.forEach(function(r){t.tBodies[0].appendChild(r);});};});"
	       "});\n"
	       "var fi=document.getElementById('filt');if(fi){fi.hidden=false;"
	       "fi.oninput=function(){var w=fi.value.toLowerCase();\n"
	       " document.querySelectorAll('table.st tr').forEach(function(r,"
	       "i){if(r.parentNode.rows[0]!==r)r.hidden=w&&r.textContent."
	       "toLowerCase().indexOf(w)<0;});};}\n"
	       "</script>\n";
}
