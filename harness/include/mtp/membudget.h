/*
 * The memory budget: how many bytes one case (its inputs, goldens and
 * observed tensors, the reference's outputs and scratch, the backend's
 * outputs) may make the harness allocate. It is computed from the declared
 * shapes before anything is allocated, so that a file declaring huge
 * datasets (sparse on disk) is refused with one line instead of ending in the
 * kernel's OOM killer. A run loads one case at a time, so the run's peak is
 * its largest case. Default: MTP_MEM_DEFAULT_PERCENT of the machine's
 * physical memory (or of the cgroup's limit when lower); `--mem-limit` sets
 * another. Other parts of the tool (generated cases, bench) call the same
 * functions.
 */
#ifndef MTP_MEMBUDGET_H
#define MTP_MEMBUDGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mtp/fixture.h"

#define MTP_MEM_DEFAULT_PERCENT 50

/* The process's budget per case: the default until set; 0 set: none. The
 * fixture reader and the case-file selection check against it. */
uint64_t mtp_mem_budget(void);
void mtp_mem_budget_set(uint64_t bytes);
/* Whether --mem-limit (mtp_mem_budget_set) chose it. */
bool mtp_mem_budget_is_set(void);

/* MTP_MEM_DEFAULT_PERCENT of physical memory (MemTotal, or the cgroup's
 * memory.max when lower); 4 GiB when neither can be read. */
uint64_t mtp_mem_default_limit(void);
/* "40G", "512M", "1.5T", "65536" (bytes); K/M/G/T are powers of 1024, an
 * optional trailing "B" or "iB" is accepted. False on anything else. */
bool mtp_mem_parse(const char *s, uint64_t *bytes);
/* "12.0 GiB (12884901888 bytes)" */
void mtp_mem_str(uint64_t bytes, char *buf, size_t n);

/* Bytes of the tensors of a list (declared shapes; saturates). */
uint64_t mtp_mem_list_bytes(const struct mtp_tensor_list *l);
/* Bytes of a signature's outputs under bound dims (saturates). */
uint64_t mtp_mem_outputs_bytes(const struct mtp_signature *sig,
			       const struct mtp_dims *d, enum mtp_dtype act);
/* What running a case needs: its tensors plus three copies of the outputs
 * (the reference's, the backend's, the reference's scratch); for a golden
 * (no observed/ datasets), which runs in a backend's worker process, also
 * two more copies of the inputs and of the outputs (the worker's, and a host
 * backend's buffers). */
uint64_t mtp_mem_case_bytes(const struct mtp_case *c,
			    const struct mtp_signature *sig,
			    const struct mtp_dims *d, enum mtp_dtype act);
/* MTP_OK if need <= limit (limit 0: no budget), else MTP_ERR_LIMIT and
 * "needs X of memory, over the budget of Y (--mem-limit)" in why. */
enum mtp_status mtp_mem_check(uint64_t need, uint64_t limit, char *why,
			      size_t n);

#endif
