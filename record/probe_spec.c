/*
 * probe_spec.c — what `record --probe 'BINARY:FUNCTION(ARG, ...)'` asks for, checked against the binary
 * before anything is attached: the function's symbol, and for each ARG the x86-64 System V integer argument
 * register that holds it at the function's entry.
 *
 * ARG is a parameter's DWARF name, arg0..arg5 (the raw registers rdi rsi rdx rcx r8 r9), or str(ARG) for a
 * NUL-terminated string it points to. A named parameter is placed by the ABI's classification of the
 * parameters before it (integers and pointers take the next integer register, floating point ones take none)
 * and, where the DWARF location at the entry pc is a plain register, that register must agree. Anything the
 * classification cannot place for certain (a parameter after a struct passed by value, a long double,
 * an __int128) is refused with the reason: a value attached to the wrong parameter is worse than none.
 *
 * The DWARF comes from libdwfl's standard search (the binary's own sections, its .gnu_debuglink, the
 * /usr/lib/debug build-ID tree), as convert finds it.
 */
#include <ctype.h>
#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../formats/recording.h"
#include "../util.h"
#include "recorder.h"

/* DWARF register numbers of rdi rsi rdx rcx r8 r9 (the x86-64 psABI's DWARF numbering). */
static const int arg_dwarf_reg[PROBE_ARG_REGS] = { 5, 4, 1, 2, 8, 9 };
static const char *const arg_reg_name[PROBE_ARG_REGS] = { "rdi", "rsi", "rdx", "rcx", "r8", "r9" };

static char *trim(char *s)
{
	char *end;

	while (isspace((unsigned char)*s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		*--end = 0;
	return s;
}

static bool valid_name(const char *s)
{
	if (!*s || !(isalpha((unsigned char)*s) || *s == '_'))
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_')
			return false;
	return true;
}

/* "arg0".."arg5": the register index, else -1. */
static int raw_arg(const char *name)
{
	if (strncmp(name, "arg", 3) || name[3] < '0' || name[3] > '5' || name[4])
		return -1;
	return name[3] - '0';
}

int probe_parse(struct probe *p, const char *spec)
{
	char *copy = xstrdup(spec), *colon, *open, *close, *args, *tok;
	int ret = -1;

	memset(p, 0, sizeof(*p));
	p->spec = xstrdup(spec);
	/* The binary may contain ':' only before the last one that precedes '(' */
	open = strchr(copy, '(');
	close = strrchr(copy, ')');
	if (!open || !close || close < open || *trim(close + 1)) {
		error("--probe '%s': expected BINARY:FUNCTION(ARG, ...)", spec);
		goto out;
	}
	*open = 0;
	*close = 0;
	colon = strrchr(copy, ':');
	if (!colon || colon == copy) {
		error("--probe '%s': expected BINARY:FUNCTION(ARG, ...)", spec);
		goto out;
	}
	*colon = 0;
	p->binary = xstrdup(trim(copy));
	p->function = xstrdup(trim(colon + 1));
	if (!*p->binary || !valid_name(p->function)) {
		error("--probe '%s': '%s' is not a function name", spec, p->function);
		goto out;
	}
	args = open + 1;
	if (!*trim(args)) {
		ret = 0; /* no arguments: the hit alone (time, thread, CFA) */
		goto out;
	}
	/* strsep, not strtok: "f(a,,b)" and "f(a,)" have an empty argument, which is an error, not nothing */
	while ((tok = strsep(&args, ","))) {
		struct probe_arg *a;
		char *name = trim(tok);
		bool str = false;
		size_t len = strlen(name);

		if (!len) {
			error("--probe '%s': an empty argument (two commas, or one at the end)", spec);
			goto out;
		}
		if (p->arg_count == PROBE_ARGS_MAX_SPEC) {
			error("--probe '%s': at most %d arguments", spec, PROBE_ARGS_MAX_SPEC);
			goto out;
		}
		if (!strncmp(name, "str(", 4) && len > 5 && name[len - 1] == ')') {
			name[len - 1] = 0;
			name = trim(name + 4);
			str = true;
		}
		if (!valid_name(name)) {
			error("--probe '%s': '%s' is not a parameter name, argN or str(NAME)", spec, trim(tok));
			goto out;
		}
		for (unsigned int i = 0; i < p->arg_count; i++)
			if (!strcmp(p->args[i].name, name) && p->args[i].string == str) {
				error("--probe '%s': '%s' is named twice", spec, name);
				goto out;
			}
		a = &p->args[p->arg_count++];
		a->name = xstrdup(name);
		a->string = str;
		a->reg = raw_arg(name);
		a->type = str ? "str" : "u64";
		a->bytes = 8;
	}
	ret = 0;
out:
	free(copy);
	return ret;
}

void probe_release(struct probe *p)
{
	for (unsigned int i = 0; i < p->arg_count; i++)
		free(p->args[i].name);
	free(p->spec);
	free(p->binary);
	free(p->path);
	free(p->function);
	memset(p, 0, sizeof(*p));
}

/* A type with typedefs and qualifiers peeled off; false when it has none (void) or cannot be read. */
static bool peel_type(Dwarf_Die *die, Dwarf_Die *type)
{
	Dwarf_Attribute attr;
	Dwarf_Die cur = *die;

	for (int depth = 0; depth < 16; depth++) {
		if (!dwarf_attr_integrate(&cur, DW_AT_type, &attr) || !dwarf_formref_die(&attr, type))
			return false;
		switch (dwarf_tag(type)) {
		case DW_TAG_typedef:
		case DW_TAG_const_type:
		case DW_TAG_volatile_type:
		case DW_TAG_restrict_type:
		case DW_TAG_atomic_type:
			cur = *type;
			continue;
		default:
			return true;
		}
	}
	return false;
}

/* Whether the type of die is a pointer to a character type (char, signed or unsigned, char8_t): what str() may
 * read, as perf probe's string type; an int * or a const std::string & (a reference) points to no string. */
static bool points_to_chars(Dwarf_Die *die)
{
	Dwarf_Die pointer, pointee;
	Dwarf_Attribute attr;
	Dwarf_Word size = 0, encoding = 0;

	if (!peel_type(die, &pointer) || dwarf_tag(&pointer) != DW_TAG_pointer_type || !peel_type(&pointer, &pointee) ||
	    dwarf_tag(&pointee) != DW_TAG_base_type)
		return false;
	if (dwarf_attr_integrate(&pointee, DW_AT_byte_size, &attr))
		dwarf_formudata(&attr, &size);
	if (dwarf_attr_integrate(&pointee, DW_AT_encoding, &attr))
		dwarf_formudata(&attr, &encoding);
	return size == 1 && (encoding == DW_ATE_signed_char || encoding == DW_ATE_unsigned_char ||
			     encoding == DW_ATE_signed || encoding == DW_ATE_unsigned || encoding == DW_ATE_UTF);
}

enum param_class {
	CLASS_INTEGER, /* one integer register: integers, pointers, references, enums */
	CLASS_FLOAT,   /* an SSE register: takes no integer register */
	CLASS_UNKNOWN  /* anything else: struct or union by value, long double, __int128, ... */
};

/*
 * The ABI class of a parameter and, for INTEGER, the TYPE of its PROBE string ("s64", "u64", "ptr") and its
 * size in bytes (*bytes: 8 for a pointer): an int fills the low 4 bytes of its register, and the ABI leaves the
 * rest undefined (a caller's `mov %edi, %esi` passes on whatever the upper half held), so the recorder extends
 * the value from its size (probes.c).
 */
static enum param_class classify(Dwarf_Die *param, const char **type_name, unsigned int *bytes, const char **why)
{
	Dwarf_Die type, underlying;
	Dwarf_Word size = 0, encoding = 0;
	Dwarf_Attribute attr;

	*why = NULL;
	*bytes = 8;
	if (!peel_type(param, &type)) {
		*why = "its type is unknown";
		return CLASS_UNKNOWN;
	}
	if (dwarf_attr_integrate(&type, DW_AT_byte_size, &attr))
		dwarf_formudata(&attr, &size);
	if (size == 1 || size == 2 || size == 4) /* an integer's or an enum's: a pointer takes the whole register */
		*bytes = (unsigned int)size;
	switch (dwarf_tag(&type)) {
	case DW_TAG_pointer_type:
	case DW_TAG_reference_type:
	case DW_TAG_rvalue_reference_type:
	case DW_TAG_ptr_to_member_type:
		*type_name = "ptr";
		return dwarf_tag(&type) == DW_TAG_ptr_to_member_type && size > 8 ? CLASS_UNKNOWN : CLASS_INTEGER;
	case DW_TAG_enumeration_type:
		/* signed unless its underlying type (DWARF 5, gcc: unsigned int for an enum without negative values)
		 * says otherwise */
		*type_name = "s64";
		if (peel_type(&type, &underlying) && dwarf_attr_integrate(&underlying, DW_AT_encoding, &attr) &&
		    dwarf_formudata(&attr, &encoding) == 0 &&
		    (encoding == DW_ATE_unsigned || encoding == DW_ATE_unsigned_char || encoding == DW_ATE_boolean))
			*type_name = "u64";
		return CLASS_INTEGER;
	case DW_TAG_base_type:
		if (dwarf_attr_integrate(&type, DW_AT_encoding, &attr))
			dwarf_formudata(&attr, &encoding);
		if (encoding == DW_ATE_float && size <= 8)
			return CLASS_FLOAT;
		if (size > 8 || size == 0) {
			*why = "it is wider than one register";
			return CLASS_UNKNOWN;
		}
		switch (encoding) {
		case DW_ATE_signed:
		case DW_ATE_signed_char:
			*type_name = "s64";
			return CLASS_INTEGER;
		case DW_ATE_unsigned:
		case DW_ATE_unsigned_char:
		case DW_ATE_boolean:
		case DW_ATE_UTF:
			*type_name = "u64";
			return CLASS_INTEGER;
		default:
			*why = "it is not an integer or a pointer";
			return CLASS_UNKNOWN;
		}
	case DW_TAG_structure_type:
	case DW_TAG_class_type:
	case DW_TAG_union_type:
		*why = "it is a struct or union passed by value";
		return CLASS_UNKNOWN;
	default:
		*why = "it is not an integer or a pointer";
		return CLASS_UNKNOWN;
	}
}

/* The DWARF register a parameter is in at pc when its location there is one plain register, else -1. */
static int entry_register(Dwarf_Die *param, Dwarf_Addr pc)
{
	Dwarf_Attribute attr;
	Dwarf_Op *expr;
	size_t len;

	if (!dwarf_attr_integrate(param, DW_AT_location, &attr))
		return -1;
	if (dwarf_getlocation_addr(&attr, pc, &expr, &len, 1) != 1 || len != 1)
		return -1;
	if (expr[0].atom >= DW_OP_reg0 && expr[0].atom <= DW_OP_reg31)
		return expr[0].atom - DW_OP_reg0;
	if (expr[0].atom == DW_OP_regx)
		return (int)expr[0].number;
	return -1;
}

struct param_info {
	const char *name; /* "" for an unnamed one */
	int reg;	  /* 0..5, or -1 */
	const char *type;
	unsigned int bytes; /* its size: the register's low bytes that hold it */
	const char *why;    /* reg -1: why it has none */
	int location;	 /* DWARF register at entry, or -1 */
	bool chars;	 /* a pointer to characters (points_to_chars): str() may read it */
};

/*
 * The unit holding addr. libdw 0.188 finds it by .debug_aranges only, which clang does not write by default
 * (`--probe` of every clang binary said "no DWARF"): else by each unit's own ranges, as convert's cu_index does.
 */
static Dwarf_Die *unit_of(Dwfl_Module *mod, Dwarf_Addr addr, Dwarf_Die *mem, Dwarf_Addr *bias)
{
	Dwarf_Die *cu = dwfl_module_addrdie(mod, addr, bias);
	Dwarf_CU *unit = NULL;
	Dwarf *dw;

	if (cu)
		return cu;
	dw = dwfl_module_getdwarf(mod, bias);
	while (dw && dwarf_get_units(dw, unit, &unit, NULL, NULL, mem, NULL) == 0)
		if (dwarf_tag(mem) == DW_TAG_compile_unit && dwarf_haspc(mem, addr - *bias) == 1)
			return mem;
	return NULL;
}

/* The subprogram DIE of the function whose entry is addr (bias applied), out-of-line instance or not. */
static bool find_subprogram(Dwfl_Module *mod, Dwarf_Addr addr, Dwarf_Die *out, Dwarf_Addr *bias)
{
	Dwarf_Die unit, *cu = unit_of(mod, addr, &unit, bias), *scopes = NULL;
	int n;
	bool found = false;

	if (!cu)
		return false;
	n = dwarf_getscopes(cu, addr - *bias, &scopes);
	for (int i = n - 1; i >= 0 && !found; i--) {
		if (dwarf_tag(&scopes[i]) == DW_TAG_subprogram) {
			*out = scopes[i];
			found = true;
		}
	}
	free(scopes);
	return found;
}

/*
 * Whether subprogram sp returns its value in memory, through a pointer the caller passes in rdi ahead of every
 * parameter, which DWARF does not list: a struct, class or union of more than 16 bytes, or one the ABI passes by
 * reference (a C++ class with a non-trivial copy constructor or destructor: DW_AT_calling_convention, as gcc and
 * clang write it). The parameters then start at rsi: `this` of a method returning a std::string was read from
 * the return slot's address, and each parameter after it from the one before's register.
 */
enum return_way { RETURN_IN_REGISTERS, RETURN_IN_MEMORY, RETURN_UNKNOWN };

static enum return_way returns_in_memory(Dwarf_Die *sp)
{
	Dwarf_Die type;
	Dwarf_Attribute attr;
	Dwarf_Word size = 0, convention = 0;

	if (!peel_type(sp, &type))
		return RETURN_IN_REGISTERS; /* void */
	if (dwarf_tag(&type) != DW_TAG_structure_type && dwarf_tag(&type) != DW_TAG_class_type &&
	    dwarf_tag(&type) != DW_TAG_union_type)
		return RETURN_IN_REGISTERS;
	if (dwarf_attr_integrate(&type, DW_AT_calling_convention, &attr) && dwarf_formudata(&attr, &convention) == 0 &&
	    convention == DW_CC_pass_by_reference)
		return RETURN_IN_MEMORY;
	/* A class the DWARF only declares (clang's limited debug info leaves std::string's definition to
	 * libstdc++'s): its size and whether it is trivial are unknown. */
	if (!dwarf_attr_integrate(&type, DW_AT_byte_size, &attr) || dwarf_formudata(&attr, &size) != 0)
		return RETURN_UNKNOWN;
	return size > 16 ? RETURN_IN_MEMORY : RETURN_IN_REGISTERS;
}

/* Fills params (at most max) from the formal parameters of subprogram sp; returns how many. */
static size_t list_params(Dwarf_Die *sp, Dwarf_Addr pc, struct param_info *params, size_t max)
{
	Dwarf_Die child;
	size_t n = 0;
	enum return_way returned = returns_in_memory(sp);
	int next_reg = returned == RETURN_IN_MEMORY ? 1 : 0;
	/* why no later parameter can be placed */
	const char *blocked = returned == RETURN_UNKNOWN ? "the function returns a class the DWARF only declares: "
							  "whether its address takes rdi is unknown"
							: NULL;
	/* A function only its own file calls (no DW_AT_external) may have had an unused parameter taken out of its
	 * signature (clang's dead argument elimination): that parameter has no location, and the registers then
	 * hold the ones after it. An external function keeps the ABI's signature, used or not. */
	bool internal = !dwarf_hasattr_integrate(sp, DW_AT_external);

	if (dwarf_child(sp, &child) != 0)
		return 0;
	do {
		struct param_info *pi;
		const char *type = "u64", *why;
		enum param_class cls;

		if (dwarf_tag(&child) == DW_TAG_unspecified_parameters)
			break;
		if (dwarf_tag(&child) != DW_TAG_formal_parameter)
			continue;
		if (n == max)
			break;
		pi = &params[n++];
		pi->name = dwarf_diename(&child) ?: "";
		pi->reg = -1;
		pi->location = entry_register(&child, pc);
		pi->chars = points_to_chars(&child);
		cls = classify(&child, &type, &pi->bytes, &why);
		pi->type = type;
		if (blocked) {
			pi->why = blocked;
			/* unless DWARF says which argument register holds it at the entry */
			for (int r = 0; r < PROBE_ARG_REGS && cls == CLASS_INTEGER; r++)
				if (pi->location >= 0 && pi->location == arg_dwarf_reg[r]) {
					pi->reg = r;
					pi->why = NULL;
				}
			continue;
		}
		if (cls == CLASS_FLOAT) {
			pi->why = "it is a floating-point value (passed in an SSE register)";
			continue;
		}
		if (internal && !dwarf_hasattr_integrate(&child, DW_AT_location)) {
			pi->why = "it has no location: the compiler may have taken it out of this static function's "
				  "signature";
			blocked = "a parameter before it may have been taken out of this static function's signature";
			continue;
		}
		if (cls == CLASS_UNKNOWN) {
			pi->why = why;
			blocked = "a parameter before it is passed in a way this probe cannot follow";
			continue;
		}
		if (next_reg == PROBE_ARG_REGS) {
			pi->why = "it is passed on the stack, after the six integer argument registers";
			continue;
		}
		pi->reg = next_reg++;
	} while (dwarf_siblingof(&child, &child) == 0);
	return n;
}

static const Dwfl_Callbacks offline_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

/*
 * The address (ELF virtual address, st_value) of the function symbol name in mod: 1, or 0 when there is
 * none, or -1 when it is an IFUNC (its symbol is the resolver, not code that runs per call).
 */
static int find_function(Dwfl_Module *mod, const char *name, GElf_Addr *value)
{
	int n = dwfl_module_getsymtab(mod), found = 0;

	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *s = dwfl_module_getsym_info(mod, i, &sym, &addr, NULL, NULL, NULL);

		if (!s || sym.st_shndx == SHN_UNDEF || strcmp(s, name))
			continue;
		if (GELF_ST_TYPE(sym.st_info) == STT_FUNC) {
			*value = sym.st_value;
			return 1;
		}
		if (GELF_ST_TYPE(sym.st_info) == STT_GNU_IFUNC)
			found = -1;
	}
	return found;
}

/*
 * Whether the compiler inlined subprogram sp (its out-of-line instance) somewhere: its abstract instance says so
 * (DW_INL_inlined, DW_INL_declared_inlined). A uprobe at the entry sees only the calls of the out-of-line copy:
 * a probe on a function inlined at its busy call sites counted 0 hits and said nothing.
 */
static bool inlined_somewhere(Dwarf_Die *sp)
{
	Dwarf_Attribute attr;
	Dwarf_Word inl;

	return dwarf_attr_integrate(sp, DW_AT_inline, &attr) && dwarf_formudata(&attr, &inl) == 0 &&
	       (inl == DW_INL_inlined || inl == DW_INL_declared_inlined);
}

/*
 * A clone gcc made of function (NAME.constprop.0, NAME.isra.0, NAME.part.0: its abstract instance has DW_AT_inline
 * too, though nothing may be inlined), as a new string, or NULL when the symbol table has none.
 */
static char *clone_of(Dwfl_Module *mod, const char *function, GElf_Addr entry)
{
	int n = dwfl_module_getsymtab(mod);
	size_t len = strlen(function);

	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *s = dwfl_module_getsym_info(mod, i, &sym, &addr, NULL, NULL, NULL);

		/* not its cold part, nor an alias at its own entry (NAME.localalias), whose calls are hits */
		if (s && GELF_ST_TYPE(sym.st_info) == STT_FUNC && sym.st_shndx != SHN_UNDEF && !strncmp(s, function, len) &&
		    s[len] == '.' && strncmp(s + len, ".cold", 5) && strcmp(s + len, ".localalias") && sym.st_value != entry)
			return xstrdup(s);
	}
	return NULL;
}

bool probe_same_place(const struct probe *a, const struct probe *b)
{
	if (a->address != b->address)
		return false;
	if (a->build_id_size && a->build_id_size == b->build_id_size)
		return !memcmp(a->build_id, b->build_id, a->build_id_size);
	return !strcmp(a->path, b->path);
}

/* "r, id, name" (at most size bytes) */
static void param_list(const struct param_info *params, size_t n, char *out, size_t size)
{
	size_t len = 0;

	out[0] = 0;
	for (size_t i = 0; i < n && len + 1 < size; i++)
		len += (size_t)snprintf(out + len, size - len, "%s%s", i ? ", " : "", *params[i].name ? params[i].name : "?");
	if (!n)
		snprintf(out, size, "none");
}

int probe_resolve(struct probe *p)
{
	struct param_info params[64];
	char list[512];
	size_t n = 0;
	Dwfl *dwfl = NULL;
	Dwfl_Module *mod;
	Dwarf_Die sp;
	Dwarf_Addr bias = 0;
	GElf_Addr value;
	struct stat st;
	bool have_dwarf;
	int ret = -1, fd;

	p->path = realpath(p->binary, NULL);
	if (!p->path)
		return error("--probe '%s': cannot find '%s': %s", p->spec, p->binary, strerror(errno));
	/* Read as root: a regular file only, never a device or FIFO that would block or mislead */
	fd = open(p->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return error("--probe '%s': cannot open '%s': %s", p->spec, p->path, strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return error("--probe '%s': '%s' is not a regular file", p->spec, p->path);
	}
	dwfl = dwfl_begin(&offline_callbacks);
	if (!dwfl) {
		close(fd);
		return error("cannot start libdwfl: %s", dwfl_errmsg(-1));
	}
	dwfl_report_begin(dwfl);
	mod = dwfl_report_offline(dwfl, p->path, p->path, fd); /* libdwfl owns fd from here on */
	dwfl_report_end(dwfl, NULL, NULL);
	if (!mod) {
		error("--probe '%s': '%s' is not an ELF file libdw can read: %s", p->spec, p->path, dwfl_errmsg(-1));
		goto out;
	}
	switch (find_function(mod, p->function, &value)) {
	case 0:
		error("--probe '%s': no function '%s' in '%s'", p->spec, p->function, p->path);
		goto out;
	case -1:
		error("--probe '%s': '%s' in '%s' is an IFUNC, resolved when the program is loaded to one of several "
		      "implementations: probe the implementation the program uses",
		      p->spec, p->function, p->path);
		goto out;
	}
	p->address = value;
	if (build_id_read(p->path, p->build_id, &p->build_id_size) < 0)
		p->build_id_size = 0;
	/* The symbol's address as libdwfl reports the module (at its link-time addresses: bias 0 offline for an
	 * executable; a shared object is placed at a base libdwfl chooses). */
	{
		GElf_Addr mod_bias = 0;

		dwfl_module_getelf(mod, &mod_bias);
		have_dwarf = find_subprogram(mod, value + mod_bias, &sp, &bias);
		if (have_dwarf)
			n = list_params(&sp, value + mod_bias - bias, params, sizeof(params) / sizeof(params[0]));
		if (have_dwarf && inlined_somewhere(&sp)) {
			char *clone = clone_of(mod, p->function, value);

			if (clone)
				warning("--probe '%s': %s has copies in '%s' (DWARF: DW_AT_inline): inlined into callers or "
					"compiled as clones (%s): the calls made to those do not reach its entry, and are not "
					"hits",
					p->spec, p->function, p->path, clone);
			else
				warning("--probe '%s': %s is also inlined into callers in '%s' (DWARF: DW_AT_inline): the "
					"calls made there do not reach its entry, and are not hits",
					p->spec, p->function, p->path);
			free(clone);
		}
	}
	param_list(params, n, list, sizeof(list));
	for (unsigned int i = 0; i < p->arg_count; i++) {
		struct probe_arg *a = &p->args[i];
		size_t j;

		if (a->reg >= 0) { /* argN: the raw register; typed when DWARF knows that parameter */
			for (j = 0; j < n; j++)
				if (params[j].reg == a->reg)
					break;
			if (!a->string && j < n) {
				a->type = params[j].type;
				a->bytes = params[j].bytes;
			}
			continue;
		}
		if (!have_dwarf) {
			error("--probe '%s': no DWARF for '%s' in '%s' (nor a debug file for it): parameter '%s' cannot be "
			      "found; use arg0..arg5",
			      p->spec, p->function, p->path, a->name);
			goto out;
		}
		for (j = 0; j < n; j++)
			if (!strcmp(params[j].name, a->name))
				break;
		if (j == n) {
			error("--probe '%s': %s has no parameter '%s'; its parameters are: %s", p->spec, p->function, a->name,
			      list);
			goto out;
		}
		if (params[j].reg < 0) {
			error("--probe '%s': parameter '%s' of %s cannot be read at its entry: %s", p->spec, a->name,
			      p->function, params[j].why);
			goto out;
		}
		if (params[j].location >= 0 && params[j].location != arg_dwarf_reg[params[j].reg]) {
			error("--probe '%s': parameter '%s' of %s: the ABI puts it in %s, but its DWARF location at the "
			      "entry is DWARF register %d; refusing a value that may be another's",
			      p->spec, a->name, p->function, arg_reg_name[params[j].reg], params[j].location);
			goto out;
		}
		if (a->string && !params[j].chars) {
			error("--probe '%s': str(%s): parameter '%s' of %s is not a pointer to char: str() reads the "
			      "NUL-terminated characters a char * points to",
			      p->spec, a->name, a->name, p->function);
			goto out;
		}
		a->reg = params[j].reg;
		if (!a->string) {
			a->type = params[j].type;
			a->bytes = params[j].bytes;
		}
	}
	ret = 0;
out:
	dwfl_end(dwfl);
	return ret;
}
