/* commands.h — the subcommands of stackrec; each returns the process exit status. */
#ifndef STACKREC_COMMANDS_H
#define STACKREC_COMMANDS_H

#define STACKREC_VERSION "0.1.0"

int cmd_record(int argc, char **argv);	/* record/record.c */
int cmd_convert(int argc, char **argv); /* convert/convert.c */
int cmd_info(int argc, char **argv);	/* convert/info.c */
int cmd_archive(int argc, char **argv); /* convert/archive.c */
int cmd_symbolize(int argc, char **argv); /* convert/symbolize.c */

#endif
