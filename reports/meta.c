/*
 * The metadata every report carries (meta.h). Collected once per process:
 * the JSON, JUnit and HTML writers of one run show the same run id and date.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "mtp/backend.h"
#include "mtp/config.h"
#include "mtp/meta.h"
#include "mtp/runner.h"
#include "mtp/textio.h"
#include "mtp/textsafe.h"

static char g_cmdline[1024];
static const char *g_commit;
static struct mtp_determinism g_det;
static bool g_det_set;

void mtp_meta_set_argv(int argc, char *const *argv)
{
	size_t at = 0;

	for (int i = 0; i < argc && at + 1 < sizeof(g_cmdline); i++) {
		int k = snprintf(g_cmdline + at, sizeof(g_cmdline) - at, "%s%s",
				 i ? " " : "", argv[i]);

		if (k < 0)
			break;
		at += (size_t)k;
	}
}

void mtp_meta_set_commit(const char *commit)
{
	g_commit = commit;
}

void mtp_meta_set_determinism(const struct mtp_determinism *d)
{
	g_det = *d;
	g_det_set = true;
}

bool mtp_meta_determinism_text(char *buf, size_t n)
{
	int k = 0;

	buf[0] = 0;
	if (!g_det_set)
		return false;
	if (g_det.invariance && g_det.ulps)
		k = snprintf(buf, n, "--invariance (within %lld ulps)",
			     (long long)g_det.ulps);
	else if (g_det.invariance)
		k = snprintf(buf, n, "--invariance (bitwise)");
	if (g_det.bitwise && k >= 0 && (size_t)k < n)
		snprintf(buf + k, n - (size_t)k, "%s--repeat %d --bitwise",
			 k ? ", " : "", g_det.repeat);
	if (!buf[0])
		snprintf(buf, n, "none: one run per case");
	return true;
}

static void cpu_model(char *buf, size_t n)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[512];

	snprintf(buf, n, "unknown");
	while (f && fgets(line, sizeof(line), f)) {
		char *c = strchr(line, ':');

		if (strncmp(line, "model name", 10) || !c)
			continue;
		c += 1 + (c[1] == ' ');
		c[strcspn(c, "\n")] = 0;
		snprintf(buf, n, "%s", c);
		break;
	}
	if (f)
		fclose(f);
}

/* The run id: given, else the CI system's run, else host-date-pid. */
static void run_id_of(const char *given, const struct mtp_meta *m, char *buf,
		      size_t n)
{
	const char *gh = getenv("GITHUB_RUN_ID"),
		   *at = getenv("GITHUB_RUN_ATTEMPT");
	const char *env[] = {"MTP_RUN_ID", "CI_PIPELINE_ID", "BUILD_TAG"};

	if (given && *given) {
		snprintf(buf, n, "%s", given);
		return;
	}
	if (gh && *gh) {
		snprintf(buf, n, "github-%s-%s", gh, at ? at : "1");
		return;
	}
	for (size_t i = 0; i < sizeof(env) / sizeof(env[0]); i++)
		if (getenv(env[i]) && *getenv(env[i])) {
			snprintf(buf, n, "%s", getenv(env[i]));
			return;
		}
	snprintf(buf, n, "%.120s-%s-%ld", m->host, m->date, (long)getpid());
}

void mtp_meta_get(struct mtp_meta *m, const char *run_id)
{
	static struct mtp_meta cached;
	static bool done;
	const char *c = g_commit ? g_commit : getenv("MTP_COMMIT");
	const char *omp = getenv("OMP_NUM_THREADS");

	if (!done) {
		struct utsname u;
		time_t t = time(NULL);

		memset(&cached, 0, sizeof(cached));
		snprintf(cached.version, sizeof(cached.version), "%s",
			 MTP_VERSION);
		snprintf(cached.build_commit, sizeof(cached.build_commit), "%s",
			 MTP_BUILD_COMMIT);
		gethostname(cached.host, sizeof(cached.host) - 1);
		if (uname(&u) == 0)
			snprintf(cached.system, sizeof(cached.system),
				 "%.50s %.60s %.40s", u.sysname, u.release,
				 u.machine);
		cpu_model(cached.cpu_model, sizeof(cached.cpu_model));
		cached.cpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
		strftime(cached.date, sizeof(cached.date), "%Y-%m-%dT%H:%M:%SZ",
			 gmtime(&t));
		run_id_of(NULL, &cached, cached.run_id, sizeof(cached.run_id));
		done = true;
	}
	*m = cached;
	snprintf(m->commit, sizeof(m->commit), "%s", c ? c : "");
	m->threads = omp && atoi(omp) > 0 ? atoi(omp) : m->cpus;
	snprintf(m->command_line, sizeof(m->command_line), "%s", g_cmdline);
	if (run_id && *run_id)
		snprintf(m->run_id, sizeof(m->run_id), "%s", run_id);
}

void mtp_meta_device(const char *name, const char *known, char *buf, size_t n)
{
	char info[MTP_BACKEND_DEVICE_MAX] = "", why[256];
	struct mtp_backend *be = NULL;
	const char *base = strrchr(name, ':');
	bool builtin = false;

	base = base ? base + 1 : name;
	for (int i = 0; i < mtp_backend_builtin_count(); i++)
		builtin |= !strcmp(mtp_backend_builtin(i)->name, base);
	if (known)
		snprintf(info, sizeof(info), "%s", known);
	else if (builtin &&
		 !mtp_backend_open(name, NULL, &be, why, sizeof(why))) {
		mtp_backend_device_info(be, info, sizeof(info));
		mtp_backend_close(be);
	} else if (!builtin) {
		snprintf(info, sizeof(info),
			 "module backend (no worker of it opened in this run)");
	}
	mtp_text_sanitize(buf, n, info, sizeof(info));
}

static void describe(FILE *f, const char *name, const char *known)
{
	char info[MTP_BACKEND_DEVICE_MAX];

	mtp_meta_device(name, known, info, sizeof(info));
	fputs("{\"name\":", f);
	mtp_json_str(f, name);
	fputs(",\"device\":", f);
	mtp_json_str(f, info);
	fputs("}", f);
}

void mtp_meta_json(FILE *f, const char *run_id, uint64_t seed,
		   const char *const *backends, int n_backends,
		   const char *const *devices)
{
	struct mtp_meta m;

	mtp_meta_get(&m, run_id);
	fputs("\"schema_version\":\"" MTP_SCHEMA_VERSION "\",\"meta\":{", f);
	fputs("\"tool\":\"mtpcheck\",\"version\":", f);
	mtp_json_str(f, m.version);
	fputs(",\"build_commit\":", f);
	mtp_json_str(f, m.build_commit);
	fputs(",\"commit\":", f);
	mtp_json_str(f, m.commit);
	fputs(",\"run_id\":", f);
	mtp_json_str(f, m.run_id);
	fputs(",\"host\":", f);
	mtp_json_str(f, m.host);
	fputs(",\"system\":", f);
	mtp_json_str(f, m.system);
	fputs(",\"cpu_model\":", f);
	mtp_json_str(f, m.cpu_model);
	fprintf(f, ",\"cpus\":%d,\"threads\":%d,\"command_line\":", m.cpus,
		m.threads);
	mtp_json_str(f, m.command_line);
	fputs(",\"date\":", f);
	mtp_json_str(f, m.date);
	fprintf(f, ",\"seed\":%llu,", (unsigned long long)seed);
	if (g_det_set)
		fprintf(f,
			"\"determinism\":{\"repeat\":%d,\"bitwise\":%s,"
			"\"invariance\":%s,\"invariance_ulps\":%lld},",
			g_det.repeat, g_det.bitwise ? "true" : "false",
			g_det.invariance ? "true" : "false",
			(long long)g_det.ulps);
	fputs("\"backends\":[", f);
	for (int i = 0; i < n_backends; i++) {
		if (i)
			fputc(',', f);
		describe(f, backends[i], devices ? devices[i] : NULL);
	}
	fputs("]}", f);
}

static void prop(FILE *f, const char *name, const char *value)
{
	fputs("    <property name=\"", f);
	mtp_xml_str(f, name);
	fputs("\" value=\"", f);
	mtp_xml_str(f, value);
	fputs("\"/>\n", f);
}

void mtp_meta_junit(FILE *f, const char *run_id, uint64_t seed,
		    const char *const *backends, int n_backends,
		    const char *const *devices)
{
	struct mtp_meta m;
	char num[64], name[160], info[MTP_BACKEND_DEVICE_MAX];

	mtp_meta_get(&m, run_id);
	fputs("  <properties>\n", f);
	prop(f, "schema_version", MTP_SCHEMA_VERSION);
	prop(f, "mtpcheck.version", m.version);
	prop(f, "mtpcheck.build_commit", m.build_commit);
	prop(f, "commit", m.commit);
	prop(f, "run_id", m.run_id);
	prop(f, "host", m.host);
	prop(f, "system", m.system);
	prop(f, "cpu_model", m.cpu_model);
	snprintf(num, sizeof(num), "%d", m.threads);
	prop(f, "threads", num);
	prop(f, "command_line", m.command_line);
	prop(f, "date", m.date);
	snprintf(num, sizeof(num), "%llu", (unsigned long long)seed);
	prop(f, "seed", num);
	if (mtp_meta_determinism_text(info, sizeof(info)))
		prop(f, "determinism", info);
	for (int i = 0; i < n_backends; i++) {
		snprintf(name, sizeof(name), "device.%.140s", backends[i]);
		mtp_meta_device(backends[i], devices ? devices[i] : NULL, info,
				sizeof(info));
		prop(f, name, info);
	}
	fputs("  </properties>\n", f);
}

bool mtp_schema_accept(const char *path, const char *version, bool present,
		       char *err, size_t errn)
{
	char *end, shown[48]; /* the version as a one-line quote */
	long major;

	if (!present)
		return true; /* written before schema_version: 1.x */
	if (!version) {
		snprintf(err, errn, "%s: schema_version is not a string", path);
		return false;
	}
	mtp_text_sanitize(shown, sizeof(shown), version, 40);
	major = strtol(version, &end, 10);
	if (end == version || (*end && *end != '.') || major < 1) {
		snprintf(err, errn, "%s: schema_version '%s' is not M.N", path,
			 shown);
		return false;
	}
	if (major > MTP_SCHEMA_MAJOR) {
		snprintf(err, errn,
			 "%s: schema_version %s is newer than this mtpcheck "
			 "reads (%d.x): use a newer mtpcheck",
			 path, shown, MTP_SCHEMA_MAJOR);
		return false;
	}
	return true;
}
