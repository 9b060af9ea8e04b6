#!/usr/bin/env bash
test_description='stackrec symbolize on what bench section F measures: scopes gcc emits overlapping, C++ functions without a DWARF linkage name'
. "$(dirname "$0")/test-lib.sh"

unset DEBUGINFOD_URLS

# helper is inlined into the second of two sibling blocks of work. The assembly is then edited so that the
# first block's range runs to the end of work and so covers helper's code too: gcc emits such overlapping
# siblings (with LTO: libbfd's bfd_elf_size_dynamic_sections, where libdw's first-sibling rule misses the
# inlined bfd_assert and names the caller at bfd_assert's line).
cat >overlap.c <<'SRC'
volatile int sink;

static inline __attribute__((always_inline)) int helper(int x)
{
	sink = x;
	return sink * 7;
}

__attribute__((noinline)) int work(int a)
{
	int r = 0;
	{
		volatile int first = a * 3;
		r += first;
	}
	{
		volatile int second = a + 1;
		r += helper(second);
	}
	return r;
}

int main(int argc, char **argv)
{
	(void)argv;
	return work(argc) & 1;
}
SRC

test_expect_success 'overlapping sibling scopes: the one with the inlined function at the address wins' '
	gcc -O2 -g -gdwarf-4 -S -o overlap.s overlap.c &&
	# the first block: the first range list of .debug_ranges; its last pair ends at work'"'"'s end instead
	awk "/^\.Ldebug_ranges0:/ { r = 1 } r == 1 && /\.quad\t0$/ { r = 2; sub(/.LBE[0-9]+$/, \".LFE1\", prev) }
		NR > 1 { print prev } { prev = \$0 } END { print prev }" overlap.s >edited.s &&
	! cmp -s overlap.s edited.s &&
	gcc -g -o overlap edited.s &&
	start=$(nm overlap | awk "\$3 == \"work\" { print \$1 }") &&
	size=$(nm -S overlap | awk "\$4 == \"work\" { print \$2 }") &&
	for o in $(seq 0 $((0x$size - 1))); do printf "%x\n" $((0x$start + o)); done >addrs &&
	stackrec symbolize -e overlap -f <addrs >out &&
	paste - - <out >pairs &&
	# every address at a line of helper (4-7) is named helper, and there are some
	awk -F"\t" "{ n = split(\$2, p, \":\"); l = p[n] + 0 } l >= 4 && l <= 7 { h++; if (\$1 != \"helper\") { print; bad++ } }
		END { exit !(h > 0 && !bad) }" pairs
'

if command -v g++ >/dev/null; then test_set_prereq CXX; else test_unset_prereq CXX "no g++"; fi

# gcc gives the std::function handlers of a lambda DWARF with DW_AT_name only (_M_invoke, _M_manager):
# which instance they are is in the ELF symbol that starts where the function does, the name binutils prints.
cat >lambda.cc <<'SRC'
#include <cstdio>
#include <functional>
__attribute__((noinline)) unsigned long run(const std::function<unsigned long(int)> &f, int n) { return f(n); }
int main(int argc, char **)
{
	std::function<unsigned long(int)> fib = [&](int k) -> unsigned long { return k < 2 ? k : fib(k - 1) + fib(k - 2); };
	std::printf("%lu\n", run(fib, argc + 20));
}
SRC

test_expect_success CXX 'a C++ function with only DW_AT_name is named by the ELF symbol starting where it does' '
	g++ -O2 -g -o lambda lambda.cc &&
	nm lambda | awk "\$3 ~ /_M_invoke|_M_manager/ { print \$1, \$3 }" >handlers &&
	test_line_count handlers -ge 1 &&
	while read -r a name; do
		stackrec symbolize -e lambda -f 0x$a $(printf "%x" $((0x$a + 3))) >out &&
		printf "%s\n" "$name" "$name" >expect && sed -n "1p;3p" out >actual && test_cmp expect actual &&
		stackrec symbolize -e lambda -f -C 0x$a >out &&
		c++filt "$name" >expect && head -n 1 out >actual && test_cmp expect actual || return 1
	done <handlers
'

test_done
