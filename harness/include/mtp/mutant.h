/*
 * Mutants: backend wrappers that reproduce a known bug on purpose over any
 * correct backend, so that the self-test can show each diagnosis is caught and
 * named. Selected as --backend mutant:<DIAGNOSIS>[:<base backend>].
 */
#ifndef MTP_MUTANT_H
#define MTP_MUTANT_H

#include "mtp/backend.h"
#include "mtp/diagnose.h"

/* spec is "<DIAGNOSIS>[:<base>]" (base defaults to ref). */
enum mtp_status mtp_mutant_open(const char *spec, struct mtp_backend **out,
				char *why, size_t whyn);

/* Whether a mutant reproduces diagnosis d. */
bool mtp_mutant_exists(enum mtp_diag d);

#endif
