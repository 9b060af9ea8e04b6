/* convert/info.c — placeholder until the command is written. */
#include "../commands.h"
#include "../util.h"

int cmd_info(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return error("'info' is not written yet") ? 1 : 1;
}
