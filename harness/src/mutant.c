/*
 * Mutants (DESIGN.md "Rules and diagnoses"): not written yet. Until they are,
 * asking for one is a usage error that says so, rather than a silent pass.
 */
#include <stdio.h>

#include "mtp/mutant.h"

enum mtp_status mtp_mutant_open(const char *spec, struct mtp_backend **out,
				char *why, size_t whyn)
{
	*out = NULL;
	snprintf(why, whyn, "mutant '%s': mutants are not implemented yet", spec);
	return MTP_ERR_INVALID;
}
