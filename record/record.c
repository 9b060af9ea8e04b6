/* record/record.c — placeholder until the command is written. */
#include "../commands.h"
#include "../util.h"

int cmd_record(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return error("'record' is not written yet") ? 1 : 1;
}
