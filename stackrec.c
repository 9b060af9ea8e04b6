/*
 * stackrec.c — the command: dispatches `stackrec record|convert|info|archive|symbolize` to their implementations.
 */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "file_cut_guard.h"
#include "interrupt_cleanup.h"
#include "util.h"

static const struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
} commands[] = {
	{ "record", cmd_record, "sample stacks with eBPF into a recording file" },
	{ "convert", cmd_convert, "symbolize a recording offline into folded, pprof or JSON output" },
	{ "info", cmd_info, "show what a recording contains" },
	{ "archive", cmd_archive, "bundle the binaries and debug files a recording needs into one file" },
	{ "symbolize", cmd_symbolize, "name addresses of a binary, as GNU addr2line does" },
};

static void usage(FILE *out)
{
	fprintf(out, "usage: stackrec <command> [<args>]\n\n");
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		fprintf(out, "   %-9s  %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "\nstackrec <command> --help shows a command's options.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("stackrec %s\n", STACKREC_VERSION);
		return 0;
	}
	file_cut_guard_install();
	interrupt_cleanup_install();
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++) {
		char name[32];

		if (strcmp(argv[1], commands[i].name))
			continue;
		/* getopt names the program in its messages by argv[0]: "stackrec record: unrecognized option" */
		snprintf(name, sizeof(name), "stackrec %s", commands[i].name);
		argv[1] = name;
		return commands[i].run(argc - 1, argv + 1);
	}
	error("'%s' is not a stackrec command", argv[1]);
	usage(stderr);
	return 2;
}
