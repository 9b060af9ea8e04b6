/*
 * call_site.h — whether a return address comes back from a call to a given function: the instruction before
 * it, read from its module's file, and that call's target, named by the symbol table (or, through the PLT, by
 * the relocation of the slot the PLT entry jumps through).
 *
 * The unwinder asks it where no CFI covers the sampled pc (hand-written assembly such as libgmp's mpn
 * routines): there a frame-pointer step reads the return address at rbp + 8, which skips the caller when the
 * interrupted function made no frame of its own (rbp is still its caller's). A return address that follows a
 * call of another function shows that skip; the word on top of the stack, if it follows a call of the
 * function itself, is the return address instead.
 */
#ifndef STACKREC_CONVERT_CALL_SITE_H
#define STACKREC_CONVERT_CALL_SITE_H

#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stdint.h>

#include "elf_symbols.h"
#include "module_file.h"

enum call_site {
	CALL_SITE_UNKNOWN, /* cannot tell: no code bytes (no file, a debug file alone), an indirect call, a
			    * return address no call made (a signal handler's: see call_site_follows_no_call), a
			    * callee or a function without a name */
	CALL_SITE_CALLS,   /* follows a direct call to the function */
	CALL_SITE_OTHER,   /* follows a direct call to another function, which may have reached it by a tail call */
	CALL_SITE_NONE,	   /* follows no call instruction: not a return address */
};

/* A module as call_site_check reads it: its file and its symbol table (built on first use, kept by the caller). */
struct call_site_module {
	const struct module_file *file;
	struct elf_symbols *symbols;
};

/*
 * Whether the return address at file offset ra_offset of ra's module follows a call to the function at Dwfl
 * address pc of pc's module (the same module when ra->file == pc->file): a direct call to that function's entry,
 * or through a PLT entry whose slot's relocation names it. Only ra's instructions and PLT, and pc's symbols, are
 * read.
 */
enum call_site call_site_check(const struct call_site_module *ra, uint64_t ra_offset, const struct call_site_module *pc,
			       Dwarf_Addr pc_addr);

/*
 * The function the PLT entry holding ELF address addr of mf jumps to (.plt, .plt.sec or .plt.got, entries of
 * the section's entry size): the symbol its GOT slot's relocation names, or NULL.
 */
const char *call_site_plt_function(const struct module_file *mf, GElf_Addr addr);

/*
 * Whether the code before the return address at file offset ra_offset of mf is readable and holds no call
 * instruction: then it is no return address (a frame-pointer walk through code without frame pointers took a
 * word of data or a saved register for one), unless it is where the kernel has a signal handler return
 * (rt_sigreturn's trampoline), glibc's makecontext the context's function (__start_context) or Go's runtime a
 * goroutine (runtime.goexit + 1).
 */
bool call_site_follows_no_call(const struct module_file *mf, uint64_t ra_offset);
/* A return address that no call made, but where the kernel, the C library or Go's runtime has a function return. */
enum call_site_made {
	CALL_SITE_MADE_NONE,
	/* rt_sigreturn's trampoline (glibc's __restore_rt), where a signal handler returns: the frame of the signal
	 * delivery, named at its own address (the byte before it is a nop that no symbol covers) */
	CALL_SITE_MADE_SIGRETURN,
	/* glibc's __start_context, where makecontext has a context's function return: the outermost frame of that
	 * context's stack, named at its own address (the byte before it is another function's padding); nothing
	 * called it, and the words above it are the context's data, where a walk went on to callers that never
	 * called */
	CALL_SITE_MADE_START_CONTEXT,
	CALL_SITE_MADE_GOEXIT /* Go's runtime.goexit + 1, where a goroutine's function returns */
};
/* Which such return address the one at file offset ra_offset of mf is, if any (its code, read from the file). */
enum call_site_made call_site_made_return(const struct module_file *mf, uint64_t ra_offset);

#endif
