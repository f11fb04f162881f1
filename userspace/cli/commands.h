/* SPDX-License-Identifier: MIT */
/* One entry point per subcommand; main.c dispatches on argv[1]. Each gets
 * argv starting at the subcommand name and returns the process exit status
 * (0 ok, 1 failure found / check failed, 2 usage or environment error). */
#ifndef CONCSCHED_COMMANDS_H
#define CONCSCHED_COMMANDS_H

#include "lib/log.h" /* EXIT_USAGE */

int cmd_doctor(int argc, char **argv);
int cmd_observe(int argc, char **argv);
int cmd_attach(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_sites(int argc, char **argv);
int cmd_vm(int argc, char **argv);
int cmd_sched(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_minimize(int argc, char **argv);
int cmd_estimate(int argc, char **argv);
int cmd_experiment(int argc, char **argv);

#endif
