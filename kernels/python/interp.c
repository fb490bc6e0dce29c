/*
 * The python backend's interpreter: started once per process, lazily, in
 * the process that opens the backend (a worker of run, bench's child), with
 * the GIL released after; fork by the harness handled as os.fork does; the
 * mtpcheck package of this build first on sys.path. MTP_PYTHON may name a
 * venv of the interpreter mtpcheck was built with, nothing else: libpython
 * is linked in at build time.
 */
#include "py_internal.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static pthread_once_t py_once = PTHREAD_ONCE_INIT;
static char py_init_error[512];
static enum mtp_status py_init_status; /* of py_init_error */

/*
 * Fork with the interpreter alive: a fork by the harness (--isolate) takes
 * the GIL around fork() as os.fork does, so that the child inherits a
 * consistent interpreter. A fork by Python itself (os.fork, subprocess)
 * happens with the GIL held and does its own bookkeeping: left alone.
 */
static PyGILState_STATE fork_gil;
static bool fork_ours;

static void fork_prepare(void)
{
	fork_ours = !PyGILState_Check();
	if (!fork_ours)
		return;
	fork_gil = PyGILState_Ensure();
	PyOS_BeforeFork();
}

static void fork_parent(void)
{
	if (!fork_ours)
		return;
	PyOS_AfterFork_Parent();
	PyGILState_Release(fork_gil);
}

static void fork_child(void)
{
	if (!fork_ours)
		return;
	PyOS_AfterFork_Child();
	PyGILState_Release(fork_gil);
}

/* The folder holding the mtpcheck package this module was built with: the
 * installed copy (MTP_PY_INSTALL_REL from this module's folder, e.g.
 * lib/mtpcheck/ -> share/mtpcheck/python/) when there is one, else the
 * source tree's python/. */
static void package_dir(char *buf, size_t n)
{
	Dl_info info;
	const char *slash = NULL;
	struct stat sb;
	char probe[4096];

	if (dladdr((void *)&package_dir, &info) && info.dli_fname)
		slash = strrchr(info.dli_fname, '/');
	if (slash) {
		snprintf(buf, n, "%.*s/%s", (int)(slash - info.dli_fname),
			 info.dli_fname, MTP_PY_INSTALL_REL);
		snprintf(probe, sizeof(probe), "%s/mtpcheck/adapters", buf);
		if (stat(probe, &sb) == 0 && S_ISDIR(sb.st_mode))
			return;
	}
	snprintf(buf, n, "%s", MTP_PY_PACKAGE_DIR);
}

/* Puts that folder first on sys.path: its adapters speak this module's
 * protocol, so they win over a pip-installed mtpcheck package. */
static bool add_package_dir(void)
{
	PyObject *path = PySys_GetObject("path"); /* borrowed */
	char where[4096];
	PyObject *dir;

	package_dir(where, sizeof(where));
	dir = PyUnicode_FromString(where);
	bool ok = path && dir && PyList_Insert(path, 0, dir) == 0;

	Py_XDECREF(dir);
	return ok;
}

/* mtpcheck loads this module RTLD_LOCAL, which hides libpython's symbols
 * from the extension modules that Python loads in turn (NumPy's "Importing
 * the numpy C-extensions failed"): make them global. */
static void export_libpython(void)
{
	Dl_info info;

	if (dladdr((void *)&Py_InitializeFromConfig, &info) && info.dli_fname)
		dlopen(info.dli_fname, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD);
}

/* The embedded interpreter's version ("3.11.7"), from libpython itself. */
void mtp_py_version(char *buf, size_t n)
{
	snprintf(buf, n, "%s", Py_GetVersion());
	buf[strcspn(buf, " ")] = 0;
}

/* The version a venv's pyvenv.cfg declares ("version = 3.11.2", or
 * virtualenv's "version_info = 3.11.2.final.0"), from the folder of its
 * python or the one above; "" if there is no pyvenv.cfg. */
static void venv_version(const char *exe, char *buf, size_t n)
{
	char path[4096], line[512];
	const char *slash = strrchr(exe, '/');
	FILE *f = NULL;

	buf[0] = 0;
	for (int up = 0; slash && up < 2 && !f; up++) {
		int len = (int)(slash - exe);

		snprintf(path, sizeof(path), "%.*s/pyvenv.cfg", len, exe);
		f = fopen(path, "r");
		while (slash > exe && *--slash != '/')
			;
		if (*slash != '/')
			slash = NULL;
	}
	while (f && fgets(line, sizeof(line), f)) {
		char key[64], val[128];

		if (sscanf(line, " %63[a-z_] = %127s", key, val) == 2 &&
		    (!strcmp(key, "version") || !strcmp(key, "version_info")))
			snprintf(buf, n, "%s", val);
	}
	if (f)
		fclose(f);
}

/* MTP_PYTHON only picks a virtual environment of the embedded interpreter
 * (its site-packages): libpython is linked in when mtpcheck is built and
 * cannot be swapped at run time. Another interpreter (/usr/bin/python3 for
 * a pyenv build) would mix its standard library with this libpython and
 * still miss its packages, so it is refused (exit 2) with what to do. */
static bool venv_usable(const char *exe)
{
	char mine[64], theirs[128];
	size_t n;

	if (!strcmp(exe, MTP_PY_EXECUTABLE))
		return true;
	mtp_py_version(mine, sizeof(mine));
	venv_version(exe, theirs, sizeof(theirs));
	n = strlen(mine);
	if (theirs[0] && !strncmp(theirs, mine, n) &&
	    (theirs[n] == 0 || theirs[n] == '.'))
		return true;
	snprintf(py_init_error, sizeof(py_init_error),
		 "MTP_PYTHON=%s is not a virtual environment of the embedded "
		 "Python %s (%s%s%s): MTP_PYTHON picks only a venv made by "
		 "that interpreter; another interpreter needs mtpcheck built "
		 "for it: cmake -DPython3_EXECUTABLE=%s",
		 exe, MTP_PY_EXECUTABLE, mine,
		 theirs[0] ? "; the venv's is " : "", theirs, exe);
	py_init_status = MTP_ERR_INVALID;
	return false;
}

static void py_init(void)
{
	const char *exe = getenv("MTP_PYTHON");
	PyConfig config;
	PyStatus s;

	if (Py_IsInitialized())
		return; /* a host that embeds Python already */
	if (exe && *exe && !venv_usable(exe))
		return;
	export_libpython();
	PyConfig_InitPythonConfig(&config);
	config.install_signal_handlers = 0;
	config.parse_argv = 0;
	/* the interpreter (a venv's python) whose prefix and packages to use */
	s = PyConfig_SetBytesString(&config, &config.program_name,
				    exe && *exe ? exe : MTP_PY_EXECUTABLE);
	if (!PyStatus_Exception(s))
		s = Py_InitializeFromConfig(&config);
	PyConfig_Clear(&config);
	if (PyStatus_Exception(s)) {
		snprintf(py_init_error, sizeof(py_init_error),
			 "cannot start Python: %s",
			 s.err_msg ? s.err_msg : "?");
		py_init_status = MTP_ERR_UNAVAILABLE;
		return;
	}
	if (!add_package_dir())
		PyErr_Clear();
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	PyEval_SaveThread(); /* release the GIL: methods take it */
}

enum mtp_status mtp_py_start(struct mtp_backend *be)
{
	pthread_once(&py_once, py_init);
	if (py_init_status || !Py_IsInitialized())
		return mtp_backend_fail(be,
					py_init_status ? py_init_status
						       : MTP_ERR_UNAVAILABLE,
					"%s", py_init_error);
	return MTP_OK;
}
