/*
 * Run metadata that every report carries (docs/RESULTS.md): the tool's
 * version and build commit, the commit under test, the run id, the machine,
 * the command line, the date; and the schema version readers check.
 */
#ifndef MTP_META_H
#define MTP_META_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The schema of every JSON file (results, bench, selftest, weight audit): a
 * reader accepts its own major version and older ones, and refuses a newer
 * major with one line. */
#define MTP_SCHEMA_VERSION "2.2"
#define MTP_SCHEMA_MAJOR 2

/* The command line, kept for the reports (set once by main). */
void mtp_meta_set_argv(int argc, char *const *argv);
/* --commit: the commit of the code under test (else $MTP_COMMIT). */
void mtp_meta_set_commit(const char *commit);

struct mtp_determinism; /* mtp/runner.h */

/* The determinism modes of the run (run --invariance, --repeat N
 * --bitwise), set once by the command line: reports of a run or a verify
 * carry them; bench, selftest and audit files, which never set them, do
 * not. */
void mtp_meta_set_determinism(const struct mtp_determinism *d);
/* "--invariance (bitwise), --repeat 3 --bitwise" or "none: one run per
 * case" into buf; false (buf "") if never set. */
bool mtp_meta_determinism_text(char *buf, size_t n);

struct mtp_meta {
	char version[32];      /* mtpcheck's */
	char build_commit[64]; /* git describe at configure time */
	char commit[128];      /* code under test: --commit or $MTP_COMMIT */
	char run_id[256];      /* --run-id, CI environment, or generated */
	char host[256];
	char system[160];    /* uname: sysname release arch */
	char cpu_model[160]; /* /proc/cpuinfo "model name" */
	int cpus;	     /* online */
	int threads;	     /* $OMP_NUM_THREADS, else cpus */
	char command_line[1024];
	char date[32]; /* UTC ISO 8601 */
};

/* Fills m (cached: every writer of one process gets the same run id and
 * date); run_id may be NULL. */
void mtp_meta_get(struct mtp_meta *m, const char *run_id);

/* Writes `"schema_version":...,"meta":{...}` (no braces around, no trailing
 * comma): the common head of every JSON file. backends: the names run, each
 * described by devices[i] when given and not NULL (an opened backend's
 * device line, from its worker), else by mtp_meta_device; seed as given. */
void mtp_meta_json(FILE *f, const char *run_id, uint64_t seed,
		   const char *const *backends, int n_backends,
		   const char *const *devices);

/* JUnit <properties> with the same facts, indented for a testsuite; each
 * backend's device line as property device.NAME (devices as for
 * mtp_meta_json). */
void mtp_meta_junit(FILE *f, const char *run_id, uint64_t seed,
		    const char *const *backends, int n_backends,
		    const char *const *devices);

/* The device line of backend `name` into buf (cleaned, cut at n): known
 * when given (what its worker sent), else a built-in (or a mutant over one)
 * opened here for it, else a module's "no worker of it opened" line (a
 * module is never opened in the writer's process: a driver fault must not
 * take the report with it). */
void mtp_meta_device(const char *name, const char *known, char *buf, size_t n);

/* Checks a file's "schema_version" string (NULL: absent, taken as 1.x):
 * false with "PATH: ..." in err if unreadable or of a newer major. */
bool mtp_schema_accept(const char *path, const char *version, bool present,
		       char *err, size_t errn);

#endif
