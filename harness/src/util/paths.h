/* Internal: where mtpcheck finds its backend modules and bundled data, in a
 * build tree and once installed (docs/ARCHITECTURE.md, "Installed layout"). */
#ifndef MTP_PATHS_H
#define MTP_PATHS_H

#include <stdbool.h>
#include <stddef.h>

/* The backend module FILE: in $MTP_BACKEND_PATH when it is set; else beside
 * the binary (a build tree) when it is there; else in the installed module
 * folder (lib/mtpcheck/ beside the binary's bin/). */
void mtp_module_path(const char *file, char *buf, size_t n);

/* The installed data folder (share/mtpcheck/ beside the binary's bin/) as a
 * real path, when it exists. */
bool mtp_data_root(char *buf, size_t n);

/* A bundled file or folder, REL as in the source tree ("cases/quick.case",
 * "fixtures/weights"): in the working directory when it is there, else in
 * the installed data folder when it is there, else in the source tree the
 * binary was configured from. */
void mtp_data_path(const char *rel, char *buf, size_t n);

#endif
