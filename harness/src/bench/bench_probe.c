/*
 * mtpcheck bench's backends: each opened, its copy bandwidth probed, and,
 * where it computes on the host CPU, the host's FMA peak (probed once per
 * run); the probes as the JSON file's "inputs".
 */
#include <stdbool.h>
#include <stdio.h>

#include "mtp/backend.h"
#include "mtp/fixture.h" /* MTP_ERR_MAX */
#include "mtp/timing.h"

#include "bench_int.h"

/* Whether be computes on the host CPU (its buffers are host memory). */
static bool on_host(const struct mtp_backend *be)
{
	return be->iface->upload == mtp_host_copy;
}

void mtp_bench_open_backends(struct bench *b)
{
	char why[MTP_ERR_MAX], info[256];
	bool probed = false;

	for (int i = 0; i < b->n_backends; i++) {
		if (b->no_open[i])
			continue; /* its open ended an earlier bench process */
		mtp_bench_sup_open(b, i);
		if (mtp_backend_open(b->backends[i], NULL, &b->be[i], why,
				     sizeof(why))) {
			printf("backend %s: SKIPPED (%s)\n", b->backends[i],
			       why);
			continue;
		}
		mtp_backend_device_info(b->be[i], info, sizeof(info));
		mtp_probe_copy_bandwidth(b->be[i], 256u << 20, &b->peak[i]);
		snprintf(b->device[i], sizeof(b->device[i]),
			 "%.200s; copy bandwidth %.1f GB/s", info,
			 b->peak[i] / 1e9);
		printf("backend %-8s %s; copy bandwidth %.1f GB/s (256 MiB, "
		       "median of 10)\n",
		       b->backends[i], info, b->peak[i] / 1e9);
		if (!on_host(b->be[i]))
			continue;
		if (!probed)
			mtp_probe_fma_host(&b->fma);
		probed = true;
		b->fma_peak[i] = b->fma.flops_per_s;
		printf("backend %-8s host FMA peak %.1f GFLOP/s (fp32, %d "
		       "threads; ymm %.1f, zmm %.1f; median of 5)\n",
		       b->backends[i], b->fma.flops_per_s / 1e9, b->fma.threads,
		       b->fma.ymm / 1e9, b->fma.zmm / 1e9);
	}
}
