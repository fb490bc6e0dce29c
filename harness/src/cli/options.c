/*
 * The one option table of mtpcheck: a row per option of every command (its
 * name, argument, the commands that take it, how its value is checked and
 * stored, its help text). The parser, each command's --help, `mtpcheck list
 * options` and the docs check (tools/ci/options.py) all read these rows, so
 * an option is added, described or retired here and nowhere else. An option
 * name that two storage places need (run's --json and bench's) is a row for
 * each, with disjoint commands. The setters are in opt_set.c.
 */
#include <stddef.h>

#include "bench/bench.h"
#include "mtp/runner.h"
#include "weights/weights.h"
#include "options.h"

#define RVS (MTP_CMD_RUN | MTP_CMD_VERIFY | MTP_CMD_SELFTEST)
#define RS (MTP_CMD_RUN | MTP_CMD_SELFTEST)
#define RV (MTP_CMD_RUN | MTP_CMD_VERIFY)
#define RUN(f) offsetof(struct mtp_run_opts, f)
#define BENCH(f) offsetof(struct mtp_bench_opts, f)
#define AUDIT(f) offsetof(struct mtp_audit_opts, f)
#define REPORT(f) offsetof(struct mtp_report_opts, f)

/* --- the table: per command, in the order of its --help --- */

#define B MTP_CMD_BENCH
#define A MTP_CMD_AUDIT
#define P MTP_CMD_REPORT
#define V MTP_CMD_VERIFY
#define FLAG MTP_OPT_FLAG
#define STR MTP_OPT_STR
#define SET MTP_OPT_SET

const struct mtp_cli_opt mtp_cli_opts[] = {
	/* run, verify, selftest */
	{"DUMP.h5", NULL, "", V, SET, 0, mtp_opt_set_dump,
	 "the dumps to judge (several: the rank files of one\n"
	 "tensor-parallel step are merged, FORMAT.md)"},
	{"--backend", NULL, "LIST", RS, SET, 0, mtp_opt_set_backends,
	 "backends, comma separated, e.g. ref,cpu  cuda\n"
	 "mutant:PRE_NORM_RECYCLE:ref (default: ref; selftest: ref,\n"
	 "and cpu when built)"},
	{"--backend-lib", NULL, "SO", RS, STR, RUN(backend_lib), NULL,
	 "an external backend built against mtp/backend.h"},
	{"--cases", NULL, "FILE", RS, STR, RUN(case_file), NULL,
	 "a case file (docs/CASES.md; default: cases/quick.case)"},
	{"--tags", NULL, "LIST", RS, STR, RUN(tags), NULL,
	 "run the case file's entries with one of these tags"},
	{"--fixtures", NULL, "PATH", RS, SET, 0, mtp_opt_set_fixtures,
	 "a fixture file or a folder of *.h5 (repeatable)"},
	{"--filter", NULL, "PAT", RVS, SET, 0, mtp_opt_set_filters,
	 "case ids to run: an exact id, or a glob such as\n"
	 "'rmsnorm.*' (repeatable, or comma separated)"},
	{"--op", NULL, "NAME[,NAME]", RVS, SET, RUN(ops), mtp_opt_set_ops,
	 "only cases of these ops (mtpcheck list ops)"},
	{"--json", NULL, "FILE", RVS, STR, RUN(json_path), NULL,
	 "write the results as JSON (selftest: its detection matrix)"},
	{"--junit", NULL, "FILE", RV, STR, RUN(junit_path), NULL,
	 "write the results as JUnit XML (one testcase per result)"},
	{"--html", NULL, "FILE", RV, STR, RUN(html_path), NULL,
	 "write a self-contained HTML report (opens offline)"},
	{"--shard", NULL, "I/N", RS, SET, 0, mtp_opt_set_shard,
	 "run every N-th selected problem, starting at I (0-based),\n"
	 "so that N machines split a suite"},
	{"--isolate", NULL, NULL, RS, FLAG, RUN(isolate), NULL,
	 "a fresh process per case (by default each backend runs in\n"
	 "one worker process, restarted after a crash: either way a\n"
	 "crash or a hang is a CRASHED or TIMEOUT verdict and the\n"
	 "run goes on)"},
	{"--timeout", NULL, "S", RS, SET, RUN(timeout), mtp_opt_set_timeout,
	 "seconds a case may take on a backend (default 600)"},
	{"--seed", NULL, "N", RS, SET, RUN(seed), mtp_opt_set_seed,
	 "seed of the generated problems whose case-file line\n"
	 "has no seed= (default 1; in their ids as .s<N>)"},
	{"--max-bytes", NULL, "N", RVS, SET, RUN(limits.max_dataset_bytes),
	 mtp_opt_set_u64,
	 "refuse any dataset larger than N bytes (default 4 GiB)"},
	{"--mem-limit", NULL, "SIZE", RVS, SET, RUN(mem_limit),
	 mtp_opt_set_mem_limit,
	 "memory one case may take, e.g. 40G (default: 50 % of\n"
	 "physical memory); a case over it is refused"},
	{"--run-id", NULL, "ID", RS, STR, RUN(run_id), NULL,
	 "the run's id in the JSON results: shards given the same\n"
	 "one merge into one column (mtpcheck report)"},
	{"--commit", NULL, "REV", RVS, SET, 0, mtp_opt_set_commit,
	 "the commit under test, for the reports (default:\n"
	 "$MTP_COMMIT)"},
	{"--invariance", NULL, NULL, MTP_CMD_RUN, FLAG, RUN(det.invariance),
	 NULL,
	 "each token's outputs computed alone (T = 1) and at another\n"
	 "row must have the bits they have in the batch"},
	{"--invariance-ulps", NULL, "N", MTP_CMD_RUN, SET, RUN(det),
	 mtp_opt_set_ulps, "... or lie within N ulps of them (default 0)"},
	{"--repeat", NULL, "N", MTP_CMD_RUN, SET, RUN(det), mtp_opt_set_repeat,
	 "with --bitwise: run each case N times on fresh inputs"},
	{"--bitwise", NULL, NULL, MTP_CMD_RUN, FLAG, RUN(det.bitwise), NULL,
	 "the reruns must have the same bits, else NONDETERMINISTIC\n"
	 "(--bitwise alone: --repeat 2)"},
	{"--weights", NULL, "DIR", RVS, STR, RUN(weights_dir), NULL,
	 "read weights by reference from the safetensors files in\n"
	 "DIR (hash checked); without it such cases are SKIPPED"},
	{"--weights-only", NULL, NULL, V, FLAG, RUN(weights_only), NULL,
	 "only the head/embedding weight sanity rule\n"
	 "(SHARED_HEAD_UNINIT); no reference run"},
	{"--full-logits", NULL, NULL, RVS, FLAG, RUN(full_logits), NULL,
	 "captured-block steps: judge every vocabulary row (default:\n"
	 "a sample when V > 8192, stated in the result)"},
	{"--list", NULL, NULL, MTP_CMD_RUN, FLAG, RUN(list_only), NULL,
	 "list the selected cases and stop"},
	{"--quiet", "-q", NULL, RVS, FLAG, RUN(quiet), NULL,
	 "the summary only"},
	{"--verbose", "-v", NULL, RVS, FLAG, RUN(verbose), NULL,
	 "every case, and every output: error, threshold, origin"},

	/* bench */
	{"--backend", NULL, "LIST", B, SET, 0, mtp_opt_set_bench_backends,
	 "backends to time (default: ref,cpu when built)"},
	{"--op", NULL, "LIST", B, SET, 0, mtp_opt_set_bench_ops,
	 "ops (default: the memory-bound ops and hc_pre)"},
	{"--T", NULL, "LIST", B, SET, BENCH(ts), mtp_opt_set_shapes,
	 "tokens (default 1,64,512,4096)"},
	{"--H", NULL, "LIST", B, SET, BENCH(hs), mtp_opt_set_shapes,
	 "hidden sizes (default 4096,7168)"},
	{"--M", NULL, "N", B, SET, BENCH(m), mtp_opt_set_i64,
	 "hc_mult (default 4)"},
	{"--V", NULL, "N", B, SET, BENCH(v), mtp_opt_set_i64,
	 "vocabulary (default 1024)"},
	{"--F", NULL, "N", B, SET, BENCH(f), mtp_opt_set_i64,
	 "FFN width (default 256)"},
	{"--warm", NULL, NULL, B, FLAG, BENCH(topt.warm), NULL,
	 "time on hot caches (no input rotation)"},
	{"--graph", NULL, NULL, B, FLAG, BENCH(topt.graph), NULL,
	 "time graph replays where the backend has them"},
	{"--launches", NULL, "N", B, SET, BENCH(topt.launches),
	 mtp_opt_set_count,
	 "with --graph: N launches in one graph, each on its\n"
	 "own copy of the inputs (up to 256 MiB of copies,\n"
	 "then reused), timed per launch; the same graph on\n"
	 "one copy (warm) is printed beside it"},
	{"--reps", NULL, "N", B, SET, BENCH(topt.min_reps), mtp_opt_set_count,
	 "at least N timed launches (default 10)"},
	{"--min-time", NULL, "S", B, SET, BENCH(topt.min_seconds),
	 mtp_opt_set_min_time, "and at least S seconds each (default 0.2)"},
	{"--no-check", NULL, NULL, B, MTP_OPT_OFF, BENCH(check), NULL,
	 "do not check the timed outputs against the reference"},
	{"--no-unfused", NULL, NULL, B, MTP_OPT_OFF, BENCH(unfused), NULL,
	 "skip the unfused comparison rows"},
	{"--seed", NULL, "N", B, SET, BENCH(seed), mtp_opt_set_bench_seed,
	 "seed of the generated inputs (default 1)"},
	{"--json", NULL, "FILE", B, STR, BENCH(json_path), NULL,
	 "write the rows as JSON (with the raw samples)"},
	{"--html", NULL, "FILE", B, STR, BENCH(html_path), NULL,
	 "write the rows as a self-contained HTML page"},
	{"--csv", NULL, "FILE", B, STR, BENCH(csv_path), NULL,
	 "write the rows as CSV"},
	{"--md", NULL, "FILE", B, STR, BENCH(md_path), NULL,
	 "write the rows as a Markdown table"},
	{"--baseline", NULL, "FILE", B, STR, BENCH(baseline_path), NULL,
	 "compare with an earlier --json file: FASTER, SLOWER,\n"
	 "SAME or AMBIGUOUS (Mann-Whitney U on the samples,\n"
	 "p < 0.01, and a change of at least --min-effect)"},
	{"--min-effect", NULL, "F", B, SET, BENCH(min_effect),
	 mtp_opt_set_min_effect,
	 "smallest change of the median that counts (0.05)"},
	{"--gate", NULL, NULL, B, FLAG, BENCH(gate), NULL,
	 "exit 1 if any row is SLOWER than the baseline"},
	{"--gate-repeats", NULL, "N", B, SET, BENCH(repeats),
	 mtp_opt_set_repeats,
	 "time each row N times (default 3 with --baseline,\n"
	 "else 1); a change counts only if every repeat shows\n"
	 "it above the noise floor: --min-effect widened to\n"
	 "the repeats' spread (and the baseline's)"},
	{"--bisect", NULL, NULL, B, SET, 0, mtp_opt_set_bisect,
	 "as --gate, and exit 125 if any row is AMBIGUOUS\n"
	 "(for git bisect run)"},

	/* report */
	{"FILE.json", NULL, "", P, SET, 0, mtp_opt_set_report_path,
	 "a results or bench file"},
	{"--html", NULL, "FILE", P, STR, REPORT(html), NULL,
	 "write the merged report as a self-contained HTML page"},
	{"--junit", NULL, "FILE", P, STR, REPORT(junit), NULL,
	 "write the merged results as JUnit XML"},
	{"--json", NULL, "FILE", P, STR, REPORT(json), NULL,
	 "write the merged results as JSON"},
	{"--markdown", NULL, "FILE", P, STR, REPORT(markdown), NULL,
	 "write the benchmarks page of the bench files: per\n"
	 "section of their records the newest figure of each\n"
	 "row with its run's machine, commit, command,\n"
	 "prediction and reason for a miss, and every row's\n"
	 "earlier figures (docs/RESULTS.md, \"Bench records\")"},

	/* audit-weights */
	{"--family", NULL, "F", A, STR, AUDIT(family), NULL,
	 "deepseek_v4, deepseek_v3 or glm (mtpcheck list families)"},
	{"--layer", NULL, "N", A, STR, AUDIT(layer), NULL,
	 "index of the first MTP layer (V4-Flash 43, V4-Pro and\n"
	 "V3 61, GLM-4.5 92, GLM-5.x 78)"},
	{"--mtp-layers", NULL, "K", A, STR, AUDIT(mtp_layers), NULL,
	 "number of MTP layers (default 1)"},
	{"--keys", NULL, "KEYS", A, STR, AUDIT(keys), NULL,
	 "checkpoint tensor names, one a line, or a\n"
	 "model.safetensors.index.json"},
	{"--checkpoint", NULL, "DIR", A, STR, AUDIT(checkpoint), NULL,
	 "instead of --keys: a checkpoint folder, read from its\n"
	 "safetensors headers (no tensor data): adds the checks\n"
	 "each MTP tensor loads into one parameter, each\n"
	 "parameter from one tensor, FP8 scales, shapes"},
	{"--params", NULL, "PARAMS", A, STR, AUDIT(params), NULL,
	 "the engine's parameter names, one a line, optionally\n"
	 "NAME<TAB>shape=D0,D1 (default: the parameters the\n"
	 "fixed loader produces from KEYS)"},
	{"--modules", NULL, "MODS", A, STR, AUDIT(modules), NULL,
	 "the engine's modules, NAME<TAB>QUANT_PREFIX lines"},
	{"--mapping", NULL, "MAP", A, STR, AUDIT(mapping), NULL,
	 "the engine's resolved mapping, KEY<TAB>PARAM lines:\n"
	 "judged instead of a simulated --loader"},
	{"--loader", NULL, "L", A, STR, AUDIT(loader), NULL,
	 "the simulated loader: fixed (default), buggy-remap,\n"
	 "no-alias, no-prefix (the bugs: deepseek_v4 only),\n"
	 "or dspark (V4.1's DSpark drafter; also implied by\n"
	 "PARAMS or MAP naming model.main_proj)"},
	{"--expert-dtype", NULL, "D", A, STR, AUDIT(expert_dtype), NULL,
	 "V4 routed experts: fp4 (default) or fp8"},
	{"--engine", NULL, "E", A, STR, AUDIT(engine), NULL,
	 "whose loader rules are simulated, and whose\n"
	 "parameter names PARAMS is judged against:\n"
	 "vllm@0.33 (default; measured: routed_experts,\n"
	 "no V4 alias step), vllm@0.23, or spec (the\n"
	 "SPEC.md §6 loader; the bundled lists of\n"
	 "fixtures/weights are written for it:\n"
	 "audit them with --engine spec)"},
	{"--json", NULL, "FILE", A, STR, AUDIT(json), NULL,
	 "write the findings as JSON (docs/RESULTS.md)"},
	{"--commit", NULL, "REV", A, STR, AUDIT(commit), NULL,
	 "the commit under test, for the JSON's metadata\n"
	 "(default: $MTP_COMMIT)"},
	{"--run-id", NULL, "ID", A, STR, AUDIT(run_id), NULL,
	 "the run id in the JSON's metadata (default: the CI\n"
	 "system's run, else host-date-pid)"},
	{"--print-mapping", NULL, NULL, A, FLAG, AUDIT(print_mapping), NULL,
	 "print the simulated loader's mapping and stop:\n"
	 "KEY<TAB>PARAM[<TAB>shard=S][<TAB>expert=E] lines (a\n"
	 "--mapping file), skipped keys as '# ' comments"},
	{"--selftest", NULL, NULL, A, FLAG, AUDIT(selftest), NULL,
	 "run every loader variant over the bundled key lists\n"
	 "and check each bug is caught and named, and the fixed\n"
	 "loader is clean"},
	{"--fixtures", NULL, "DIR", A, STR, AUDIT(fixtures), NULL,
	 "the bundled lists (default: fixtures/weights)"},
	{"--verbose", "-v", NULL, A, FLAG, AUDIT(verbose), NULL,
	 "list the notes and each diagnosis's history"},
};

const int mtp_cli_n_opts =
	(int)(sizeof(mtp_cli_opts) / sizeof(mtp_cli_opts[0]));
