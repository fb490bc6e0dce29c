/* Internal to the bench page: the GB/s-vs-T plots (bench_plot.c). */
#ifndef MTP_BENCH_PLOT_H
#define MTP_BENCH_PLOT_H

#include <stdbool.h>
#include <stdio.h>

#include "mtp/bench.h"

/* A row whose IQR is over this % of its median is "noisy", never "ok". */
#define MTP_BENCH_NOISY_PCT 10.0

bool mtp_bench_noisy(const struct mtp_bench_row *r);
/* "<tr><td>op</td><td>shape</td><td>backend</td>", escaped: how every
 * table of the bench pages starts a row. */
void mtp_bench_key_cells(FILE *f, const struct mtp_bench_row *r);
void mtp_bench_plots(FILE *f, const struct mtp_bench_row *rows, int n);

#endif
