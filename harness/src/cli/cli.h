/*
 * Subsystem cli: the command line: main(), every command's options and
 * checks before anything runs (preflight), report and selftest. The top:
 * nothing depends on it.
 *
 * May depend on: ops, judge, fixture, backends, run, reports, results, bench, weights, util
 * Its interface: the commands, called from main.c (cli.c's mtp_cli_main).
 */
#ifndef MTP_SUBSYSTEM_CLI_H
#define MTP_SUBSYSTEM_CLI_H

/* The command line: argv in, exit code out (docs/ARCHITECTURE.md). */
int mtp_cli_main(int argc, char **argv);

#endif
