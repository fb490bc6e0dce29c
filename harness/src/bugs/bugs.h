/*
 * Subsystem bugs: the table of bug classes (mtp/bug_list.h), one row per
 * file here (struct mtp_bug_class, mtp/bugclass.h), and what the rows
 * share: which inputs are heads, block scales, another layer's; the
 * allocation of an edited input. The judge (hypotheses) and the mutant
 * backend both iterate this table.
 *
 * May depend on: core, ops
 * Its interface: mtp/bugclass.h and the declarations below.
 */
#ifndef MTP_SUBSYSTEM_BUGS_H
#define MTP_SUBSYSTEM_BUGS_H

#include <stdbool.h>
#include <stdint.h>

#include "mtp/bugclass.h"

#define MTP_BUG(id, row) extern const struct mtp_bug_class mtp_bug_##row;
#include "mtp/bug_list.h"
#undef MTP_BUG

/* Row d of the table (the empty NONE row for an unknown d). */
const struct mtp_bug_class *mtp_bug_get(enum mtp_diag d);

/* ---- for the rows ------------------------------------------------------ */

bool mtp_bug_is_chain(const struct mtp_call *c);
/* mtp_step or draft_chain */
bool mtp_bug_is_step(const struct mtp_call *c);
/* The call's family has mHC streams (V4-style). */
bool mtp_bug_mhc(const struct mtp_call *c);
/* Input `name` is in the call with data. */
bool mtp_bug_present(const struct mtp_call *c, const char *name);
/* "layer.1/head_weight" -> "head_weight". */
const char *mtp_bug_base(const char *name);
bool mtp_bug_ends_with(const char *s, const char *suffix);
/* Input i is a head weight (head_weight of any layer, an lm_head's weight),
 * or a head's block scale. */
bool mtp_bug_is_head(const struct mtp_call *c, int i);
bool mtp_bug_is_head_scale(const struct mtp_call *c, int i);
/* The call has a block-scale input (square: a square one). */
bool mtp_bug_has_scales(const struct mtp_call *c, bool square);
/* The index of layer (l+1) mod L's input named like input i (same shape),
 * or i when there is none. */
int mtp_bug_other_layer(const struct mtp_call *c, int i);
/* The index of a tensor-parallel call's partials input ("parts" of an
 * all_reduce, "block_out_parts" of a step), or -1. */
int mtp_bug_tp_parts(const struct mtp_call *c);
/* t: rank tp_rank's view of the call's partials x ([P][n] doubles). */
void mtp_bug_tp_view(struct mtp_bug_tp *t, const struct mtp_bug_tp_ops *ops,
		     const struct mtp_call *c, const double *x);
/* e->own[i] allocated like input i with dtype dt (zeros), and in[i] set to
 * it. */
enum mtp_status mtp_bug_own(struct mtp_bug_edit *e, int i, enum mtp_dtype dt);

#endif
