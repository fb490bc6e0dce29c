/*
 * Where the binary's companions are. A build tree keeps the backend modules
 * beside mtpcheck and the cases and fixtures in the source tree; an install
 * (cmake --install, the .deb) puts them in folders named relative to the
 * binary's own (config.h: MTP_INSTALL_MODULE_REL, MTP_INSTALL_DATA_REL), so
 * a prefix can be moved or chosen at install time. Nothing here depends on
 * the working directory except the data lookup's first try, which keeps
 * `mtpcheck run` inside a checkout reading that checkout's cases.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mtp/config.h"
#include "paths.h"

/* The folder of the running binary, or "." when /proc cannot say. */
static void exe_dir(char *buf, size_t n)
{
	char exe[PATH_MAX];
	ssize_t k = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;

	if (k <= 0) {
		snprintf(buf, n, ".");
		return;
	}
	exe[k] = 0;
	slash = strrchr(exe, '/');
	if (slash)
		*slash = 0;
	snprintf(buf, n, "%s", slash && *exe ? exe : "/");
}

static bool exists(const char *path)
{
	struct stat sb;

	return stat(path, &sb) == 0;
}

void mtp_module_path(const char *file, char *buf, size_t n)
{
	const char *env = getenv("MTP_BACKEND_PATH");
	char dir[PATH_MAX], installed[2 * PATH_MAX];

	if (env && *env) {
		snprintf(buf, n, "%s/%s", env, file);
		return;
	}
	exe_dir(dir, sizeof(dir));
	snprintf(installed, sizeof(installed), "%s/%s", dir,
		 MTP_INSTALL_MODULE_REL);
	snprintf(buf, n, "%s/%s", dir, file);
	/* a load error names the installed path only where there is an
	 * install */
	if (!exists(buf) && exists(installed))
		snprintf(buf, n, "%s/%s", installed, file);
}

bool mtp_data_root(char *buf, size_t n)
{
	char dir[PATH_MAX], path[2 * PATH_MAX], real[PATH_MAX];
	struct stat sb;

	exe_dir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/%s", dir, MTP_INSTALL_DATA_REL);
	if (stat(path, &sb) != 0 || !S_ISDIR(sb.st_mode) ||
	    !realpath(path, real))
		return false;
	snprintf(buf, n, "%s", real);
	return true;
}

void mtp_data_path(const char *rel, char *buf, size_t n)
{
	char root[PATH_MAX];

	if (exists(rel)) {
		snprintf(buf, n, "%s", rel);
		return;
	}
	if (mtp_data_root(root, sizeof(root))) {
		snprintf(buf, n, "%s/%s", root, rel);
		if (exists(buf))
			return;
	}
	snprintf(buf, n, "%s/%s", MTP_SOURCE_DIR, rel);
}
