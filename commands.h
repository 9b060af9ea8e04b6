/* commands.h — the subcommands of stackrec; each returns the process exit status. */
#ifndef STACKREC_COMMANDS_H
#define STACKREC_COMMANDS_H

#define STACKREC_VERSION "0.1.0"

/*
 * Exit statuses every command shares: 0 success; 1 failure (nothing useful written: the input cannot be read,
 * the output cannot be written); 2 bad usage; EXIT_PARTIAL when the output was written from an input that is
 * damaged or incomplete (frames unreadable, missing, read twice or out of order, cut short, blocks skipped), so
 * that a script can tell a partial profile from a whole one (docs/convert.md, "Exit status").
 */
#define EXIT_PARTIAL 3

int cmd_record(int argc, char **argv);	/* record/record.c */
int cmd_convert(int argc, char **argv); /* convert/convert.c */
int cmd_info(int argc, char **argv);	/* convert/info.c */
int cmd_archive(int argc, char **argv); /* convert/archive.c */
int cmd_symbolize(int argc, char **argv); /* convert/symbolize.c */

#endif
