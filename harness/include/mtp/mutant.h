/*
 * Mutants: backend wrappers that reproduce a known bug on purpose over any
 * correct backend, so that the self-test can show each diagnosis is caught and
 * named. Selected as --backend mutant:<DIAGNOSIS>[:<base backend>].
 */
#ifndef MTP_MUTANT_H
#define MTP_MUTANT_H

#include "mtp/backend.h"
#include "mtp/diagnose.h"

/* Opens a backend by name: mtp_backend_open (backends/registry.c), passed in
 * so that the mutants need not know the registry that opens them. */
typedef enum mtp_status (*mtp_backend_opener)(const char *name, const char *lib,
					      struct mtp_backend **out,
					      char *why, size_t whyn);

/* spec is "<DIAGNOSIS>:<base>" (the registry gives the default base), the
 * base opened with open_base. */
enum mtp_status mtp_mutant_open(const char *spec, mtp_backend_opener open_base,
				struct mtp_backend **out, char *why,
				size_t whyn);

/* Whether a mutant reproduces diagnosis d. */
bool mtp_mutant_exists(enum mtp_diag d);

#endif
