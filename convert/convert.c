/* convert/convert.c — placeholder until the command is written. */
#include "../commands.h"
#include "../util.h"

int cmd_convert(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return error("'convert' is not written yet") ? 1 : 1;
}
