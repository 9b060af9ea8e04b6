/*
 * file_cut_guard.h — a file read through a mapping and cut short meanwhile by another program stops stackrec
 * with one line naming it, exit status 1, instead of a bus error (file_cut_guard.c).
 */
#ifndef STACKREC_FILE_CUT_GUARD_H
#define STACKREC_FILE_CUT_GUARD_H

/* Installs the SIGBUS handler, for the whole process: once, at the start of main. */
void file_cut_guard_install(void);

#endif
