/*
 * Between mutant.c (the wrapper and the step bugs, on the base's own
 * kernels) and mutant_edit.c (a row's edit of the inputs and after_run of
 * the outputs, through host copies).
 */
#ifndef MTP_MUTANT_INT_H
#define MTP_MUTANT_INT_H

#include "bugs/bugs.h"
#include "mtp/mutant.h"

/* Runs the call on base with its inputs as row->edit has them. */
enum mtp_status mtp_mutant_edit_launch(struct mtp_backend *base,
				       const struct mtp_bug_class *row,
				       const struct mtp_call *c);
/* row->after_run on every output of a call base has run. */
enum mtp_status mtp_mutant_after_run(struct mtp_backend *base,
				     const struct mtp_bug_class *row,
				     const struct mtp_call *c);

#endif
