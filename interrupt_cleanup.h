/*
 * interrupt_cleanup.h — stackrec stopped by Ctrl-C, kill or a hang-up leaves none of its temporary files
 * behind (interrupt_cleanup.c).
 */
#ifndef STACKREC_INTERRUPT_CLEANUP_H
#define STACKREC_INTERRUPT_CLEANUP_H

/* Installs the handlers of SIGINT, SIGTERM and SIGHUP, for the whole process: once, at the start of main
 * (record then puts its own for SIGINT and SIGTERM, which end a recording rather than stop it). */
void interrupt_cleanup_install(void);

#endif
