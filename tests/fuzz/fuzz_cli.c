/*
 * libFuzzer target of the command line's source and option handling: the
 * first line of the input is the argument list of `mtpcheck run`, `verify`,
 * `list` or `report` (split at spaces), the rest is the text of the case file
 * fuzz.case, and mtp_cli_main runs them in process. Side effects are
 * contained: everything runs in a sandbox folder under $MTP_FUZZ_TMP where
 * `fx` links to the tiny seed fixtures ($MTP_FUZZ_FIXTURES), absolute paths
 * and `..` in arguments are replaced, --backend-lib (a dlopen of anything),
 * --isolate/--timeout (processes that outlive an input) and --mem-limit are
 * dropped, and the memory budget is 16 MiB, so a generated case cannot take
 * more. Fails on an exit code that is not one of 0, 1, 2 and 125, and (through
 * the sanitizers) on any crash, leak or undefined behaviour.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mtp/config.h"
#include "mtp/membudget.h"

#define MAX_ARGS 40

int mtp_cli_main(int argc, char **argv);

static void sandbox(void)
{
	static int ready;
	const char *tmp = getenv("MTP_FUZZ_TMP");
	const char *fx = getenv("MTP_FUZZ_FIXTURES");
	char dir[4096];

	if (ready)
		return;
	ready = 1;
	snprintf(dir, sizeof(dir), "%s/cli-%ld", tmp ? tmp : "/tmp",
		 (long)getpid());
	if ((mkdir(dir, 0700) && access(dir, W_OK)) || chdir(dir)) {
		perror("fuzz_cli: sandbox");
		abort();
	}
	if (symlink(fx ? fx : MTP_SOURCE_DIR "/fixtures", "fx"))
		(void)0; /* there from an earlier input of this process */
	int null = open("/dev/null", O_WRONLY);

	if (null >= 0)
		dup2(null, STDOUT_FILENO); /* the console: not checked */
}

static bool dropped(const char *a, bool *takes)
{
	static const char *const drop1[] = {"--backend-lib", "--timeout",
					    "--mem-limit"};

	*takes = false;
	for (size_t i = 0; i < sizeof(drop1) / sizeof(drop1[0]); i++)
		if (!strcmp(a, drop1[i]))
			return *takes = true;
	return !strcmp(a, "--isolate");
}

/* argv from the first line; the command is run unless it names another. */
static int make_args(char *line, char **argv)
{
	static const char *const cmds[] = {"run", "verify", "list", "report"};
	int n = 0;
	bool skip = false, takes;

	argv[n++] = "mtpcheck";
	for (char *t = strtok(line, " \t\r"); t && n < MAX_ARGS - 3;
	     t = strtok(NULL, " \t\r")) {
		if (skip) {
			skip = false;
			continue;
		}
		if (dropped(t, &takes)) {
			skip = takes;
			continue;
		}
		if (t[0] == '/' || strstr(t, ".."))
			t = "x"; /* nothing outside the sandbox is named */
		argv[n++] = t;
	}
	bool known = false;

	for (size_t i = 0; n > 1 && i < sizeof(cmds) / sizeof(cmds[0]); i++)
		known |= !strcmp(argv[1], cmds[i]);
	if (!known) {
		memmove(argv + 2, argv + 1, (size_t)(n - 1) * sizeof(*argv));
		argv[1] = "run";
		n++;
	}
	if (!strcmp(argv[1], "run") || /* never the default suite */
	    (!strcmp(argv[1], "list") && n > 2 && !strcmp(argv[2], "cases"))) {
		argv[n++] = "--cases";
		argv[n++] = "fuzz.case";
	}
	argv[n] = NULL;
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), *argv[MAX_ARGS + 1], *nl;
	FILE *f;
	int rc;

	if (!text)
		return 0;
	sandbox();
	memcpy(text, data, size);
	text[size] = 0;
	nl = strchr(text, '\n');
	f = fopen("fuzz.case", "w");
	if (f) {
		fputs(nl ? nl + 1 : "", f);
		fclose(f);
	}
	if (nl)
		*nl = 0;
	mtp_mem_budget_set(16u << 20);
	rc = mtp_cli_main(make_args(text, argv), argv);
	free(text);
	if (rc != 0 && rc != 1 && rc != 2 && rc != 125) {
		fprintf(stderr, "fuzz_cli: exit code %d\n", rc);
		abort();
	}
	return 0;
}
