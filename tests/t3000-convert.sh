#!/usr/bin/env bash
test_description='stackrec convert: synthetic recordings of a real binary, symbolized and folded exactly'
# No root, no BPF: recordings are written by tests/unit/test-convert.c ("test-convert write OUT <script",
# see the top of that file) pointing at programs compiled here, with instruction pointers chosen from
# nm and objdump so that every expected frame is known.
. "$(dirname "$0")/test-lib.sh"

test_unit_tap "$UNIT_DIR/test-convert"

BASE=0x555555554000 # where text_mapping (test-lib.sh) maps the programs

test_expect_success 'build the program: noinline outer → always_inline middle → noinline leaf' '
	cat >prog.c <<-\EOF &&
	volatile unsigned long sink;

	__attribute__((noinline)) unsigned long leaf(unsigned long x)
	{
		for (int i = 0; i < 1000; i++)
			x = x * 6364136223846793005ul + 1;
		return x;
	}

	static inline __attribute__((always_inline)) unsigned long middle(unsigned long x)
	{
		unsigned long y = leaf(x);

		sink = y;
		return y ^ 3;
	}

	__attribute__((noinline)) unsigned long outer(unsigned long x)
	{
		unsigned long y = middle(x);

		sink = y;
		return y + 1;
	}

	int main(void)
	{
		sink = outer(sink);
		return 0;
	}
	EOF
	cc -O2 -g -fno-omit-frame-pointer -o prog prog.c &&
	sed "s/outer/other_outer/g; s/middle/other_middle/g; s/leaf/other_leaf/g" prog.c >prog2.c &&
	cc -O2 -g -fno-omit-frame-pointer -o prog2 prog2.c &&
	test -n "$(ret_after_call outer leaf)" &&
	test -n "$(ret_after_call main outer)"
'

# The stack main → outer → (middle inlined) → leaf, leaf first.
user_stack() {
	local p=${1:-prog} pre=${2:-}
	echo "$(runtime $(printf "%x" $((0x$(vaddr ${pre}leaf $p) + 16)))),$(runtime $(ret_after_call ${pre}outer ${pre}leaf $p)),$(runtime $(ret_after_call main ${pre}outer $p))"
}

cat >kallsyms.txt <<\EOF
ffffffff81000000 T entry_SYSCALL_64
ffffffff81000100 T do_syscall_64
ffffffff81000400 t read_zero
ffffffffc0001000 t ext4_read	[ext4]
EOF

test_expect_success 'write a recording in three frames' '
	{
		echo "host hostname=test" &&
		text_mapping 100 prog $(build_id prog) 1 &&
		echo "kallsyms $PWD/kallsyms.txt" &&
		echo "repeat 5 sample 100 100 prog 10 $(user_stack) -" &&
		echo "flush" &&
		echo "repeat 3 sample 100 101 worker 20 $(user_stack) ffffffff81000410,ffffffff81000110" &&
		echo "sample 100 101 worker 21 - ffffffffc0001010,ffffffff81000110" &&
		echo "flush" &&
		echo "repeat 2 sample 100 100 prog 30 - - -14" &&
		echo "sample 100 100 prog 31 7f0000001234 -" &&
		echo "stats 12" &&
		echo "end"
	} >script &&
	write_rec good.rec <script >offsets &&
	test_line_count offsets = 2
'

test_expect_success 'convert to folded: exact stacks, inlined middle as its own frame, kernel _[k]' '
	cat >expect <<-\EOF &&
	prog;[unknown] 1
	prog;[user stack error -EFAULT] 2
	prog;main;outer;middle;leaf 5
	worker;do_syscall_64_[k];ext4_read_[k] 1
	worker;main;outer;middle;leaf;do_syscall_64_[k];read_zero_[k] 3
	EOF
	stackrec convert good.rec >actual &&
	test_cmp expect actual
'

test_expect_success '--pid, --tid, --annotate, --addrs' '
	cat >expect <<-\EOF &&
	prog-100/100;[unknown <0x7f0000001234>] 1
	prog-100/100;[user stack error -EFAULT] 2
	prog-100/100;main;outer;middle_[i];leaf 5
	worker-100/101;do_syscall_64_[k];ext4_read_[k] 1
	worker-100/101;main;outer;middle_[i];leaf;do_syscall_64_[k];read_zero_[k] 3
	EOF
	stackrec convert good.rec --tid --annotate --addrs >actual &&
	test_cmp expect actual &&
	stackrec convert good.rec --pid >actual &&
	grep -q "^prog-100;main;outer;middle;leaf 5$" actual
'

test_expect_success 'every line is one flamegraph.pl accepts' '
	perl -ne "chomp; exit 1 unless /^(.*)\s+?(\d+(?:\.\d*)?)$/ && \$1 !~ /\s\d+(\.\d*)?$/" actual
'

test_expect_success 'converting twice, to stdout or -o, gives identical bytes' '
	stackrec convert good.rec >one &&
	stackrec convert good.rec -o two &&
	stackrec convert good.rec -f folded -o three &&
	test_cmp one two &&
	test_cmp one three &&
	! ls -A | grep "^\.two\."
'

test_expect_success ROOT '-o to a character device (a copy of /dev/null) leaves it a device' '
	mknod nulldev c 1 3 &&
	stackrec convert good.rec -o nulldev &&
	test -c nulldev
'

test_expect_success '-o to a FIFO or a symbolic link writes through it and leaves it as it was' '
	mkfifo fifo &&
	{ cat fifo >from-fifo & } &&
	stackrec convert good.rec -o fifo &&
	wait &&
	test -p fifo &&
	test_cmp one from-fifo &&
	ln -s target link &&
	stackrec convert good.rec -o link &&
	test -L link &&
	test_cmp one target
'

# Memory grows with distinct stacks, not with samples or the file's size: the same three stacks in 60,000 and in
# 3,000,000 samples (a 14 MB file) convert in nearly the same peak resident memory. Not a timing test.
max_rss_kb() { /usr/bin/time -f %M -o "$1.rss" "$STACKREC" convert "$1" -o "$1.folded" && cat "$1.rss"; }
test_expect_success 'three million samples of three stacks convert in the memory of sixty thousand' '
	for n in 20000 1000000; do
		{
			echo "host hostname=test" &&
			echo "mapping 100 400000 401000 0 /bin/prog - 1" &&
			echo "repeat-timed $n sample 100 100 prog 10 400010,400020,400030 -" &&
			echo "repeat-timed $n sample 100 101 prog 10 400040,400020,400030 ffffffff81000410" &&
			echo "repeat-timed $n sample 100 100 prog 10 400050,400030 -" &&
			echo "end"
		} >many.script &&
		write_rec many-$n.rec <many.script || return 1
	done &&
	test $(stat -c %s many-1000000.rec) -gt $((10 * 1024 * 1024)) &&
	small=$(max_rss_kb many-20000.rec) && big=$(max_rss_kb many-1000000.rec) &&
	echo "peak RSS: $small KB for 60,000 samples, $big KB for 3,000,000" &&
	test $((big - small)) -lt 4096 &&
	grep -q "^prog;\[prog\];\[prog\] 1000000$" many-1000000.rec.folded
'

test_expect_success '-v prints one summary line on stderr and nothing on stdout changes' '
	stackrec convert good.rec -v >verbose.out 2>verbose.err &&
	test_cmp one verbose.out &&
	grep "^stackrec: .good.rec.: 12 samples, 5 stacks, .* 1 unnamed" verbose.err &&
	stackrec convert good.rec >quiet.out 2>quiet.err &&
	test ! -s quiet.err
'

# With more than one job, a module of the first process that a sample lands in is opened for the symbolizer
# while pass 1 still reads the file (module_prefetch_guess), before any sample is unwound; one no sample lands
# in (prog2, mapped by the same process far from its samples) is not opened at all, and the output is what
# one job gives. Guesses not started when pass 2 begins are dropped: with
# STACKREC_TEST_PREFETCH_GUESSES, pass 2 waits for them, so that a loaded machine cannot make this test fail.
test_expect_success 'with -j 2 modules samples land in are opened while the recording is read, not the others' '
	{
		echo "host hostname=test" &&
		text_mapping 100 prog $(build_id prog) 1 &&
		printf "mapping 100 7f0000000000 7f0000100000 0 %s %s 1\n" "$PWD/prog2" $(build_id prog2) &&
		text_mapping 200 prog2 $(build_id prog2) 1 &&
		echo "repeat 1000 sample 100 100 prog 10 $(user_stack) -" &&
		echo "end"
	} >script-guess &&
	write_rec guess.rec <script-guess >/dev/null &&
	stackrec convert -j 1 guess.rec >expect &&
	grep -q "main;outer;middle;leaf 1000" expect &&
	STACKREC_TEST_PREFETCH_GUESSES=1 stackrec convert -j 2 -v guess.rec >actual 2>err &&
	test_cmp expect actual &&
	grep "/prog.: opened for symbolizing while reading the recording" err &&
	! grep "/prog2.: opened" err
'

test_expect_success 'a file with another build ID at the recorded path is not used; the reason is given' '
	{
		text_mapping 100 prog 0123456789abcdef0123456789abcdef01234567 1 &&
		echo "sample 100 100 prog 10 $(user_stack) -" &&
		echo "end"
	} >script.mismatch &&
	write_rec mismatch.rec <script.mismatch >/dev/null &&
	stackrec convert mismatch.rec -v --addrs >actual 2>err &&
	off=$(printf "%x" $((0x$(vaddr leaf) + 16))) &&
	grep -q "^prog;\[prog <0x[0-9a-f]*>\];\[prog <0x[0-9a-f]*>\];\[prog <0x$off>\] 1$" actual &&
	! grep -q leaf actual &&
	grep -q "build ID mismatch" err
'

test_expect_success 'a missing file is found by build ID under --debug-dir' '
	id=$(build_id prog) &&
	mkdir -p dbg/.build-id/${id:0:2} gone &&
	cp prog dbg/.build-id/${id:0:2}/${id:2}.debug &&
	cp prog gone/prog &&
	text_mapping 100 gone/prog $id 1 >script.gone &&
	echo "sample 100 100 prog 10 $(user_stack) -" >>script.gone &&
	echo end >>script.gone &&
	write_rec gone.rec <script.gone >/dev/null &&
	rm gone/prog &&
	stackrec convert gone.rec >without &&
	grep -q "^prog;\[prog\]" without &&
	stackrec convert gone.rec --debug-dir dbg >with &&
	echo "prog;main;outer;middle;leaf 1" >expect &&
	test_cmp expect with
'

test_expect_success 'a stripped binary is named from its separate debug file (.gnu_debuglink, --debug-dir)' '
	mkdir -p strip1 strip2 &&
	objcopy --only-keep-debug prog strip1/prog.debug &&
	objcopy --strip-all --add-gnu-debuglink=strip1/prog.debug prog strip1/prog &&
	test "$(build_id strip1/prog)" = "$(build_id prog)" &&
	{
		text_mapping 100 strip1/prog $(build_id prog) 1 &&
		echo "sample 100 100 prog 10 $(user_stack) -" &&
		echo end
	} >script.strip &&
	write_rec strip.rec <script.strip >/dev/null &&
	echo "prog;main;outer;middle;leaf 1" >expect &&
	stackrec convert strip.rec >actual &&
	test_cmp expect actual &&
	id=$(build_id prog) &&
	mkdir -p dbg2/.build-id/${id:0:2} &&
	mv strip1/prog.debug dbg2/.build-id/${id:0:2}/${id:2}.debug &&
	stackrec convert strip.rec >actual &&
	grep -q "^prog;\[prog\]" actual &&
	stackrec convert strip.rec --debug-dir dbg2 >actual &&
	test_cmp expect actual
'

test_expect_success '[vdso] frames are named from the running kernel'"'"'s vDSO when it is the recorded one' '
	vdso_script 1 >script.vdso &&
	write_rec vdso.rec <script.vdso >/dev/null &&
	stackrec convert vdso.rec >actual &&
	echo "t;__vdso_clock_gettime 1" >expect &&
	test_cmp expect actual &&
	sed "s/kernel_release=.*/kernel_release=0.0-other/" script.vdso >script.vdso2 &&
	write_rec vdso2.rec <script.vdso2 >/dev/null &&
	stackrec convert vdso2.rec >actual &&
	echo "t;[vdso] 1" >expect &&
	test_cmp expect actual &&
	stackrec convert vdso2.rec --addrs >actual &&
	echo "t;[vdso <0x$(printf %x $((0x$sym + 4)))>] 1" >expect &&
	test_cmp expect actual &&
	id=$(build_id vdso.so) &&
	sed "s/ - 1\$/ $id 1/; s/kernel_release=.*/kernel_release=0.0-other/" script.vdso >script.vdso3 &&
	write_rec vdso3.rec <script.vdso3 >/dev/null &&
	stackrec convert vdso3.rec >actual &&
	echo "t;__vdso_clock_gettime 1" >expect &&
	test_cmp expect actual
'

test_expect_success 'after an exec, the new image names the addresses' '
	{
		text_mapping 300 prog2 $(build_id prog2) 1 &&
		echo "exec 300 100" &&
		text_mapping 300 prog $(build_id prog) 100 &&
		echo "sample 300 300 p 50 $(user_stack prog2 other_) -" &&
		echo "sample 300 300 p 150 $(user_stack) -" &&
		echo "end"
	} >script.exec &&
	write_rec exec.rec <script.exec >/dev/null &&
	stackrec convert exec.rec >actual &&
	cat >expect <<-\EOF &&
	p;main;other_outer;other_middle;other_leaf 1
	p;main;outer;middle;leaf 1
	EOF
	test_cmp expect actual
'

# The script of three periods of process 300's mappings: prog2, an exec into prog at 5 ms, prog2 mapped over
# it at 10 ms; in each, two samples 1 ms apart whose line ends in $1 (what follows the time).
periods_script() {
	text_mapping 300 prog2 $(build_id prog2) 1 &&
	echo "repeat 2 sample 300 300 p 1000 $1" &&
	echo "exec 300 5000000" &&
	text_mapping 300 prog $(build_id prog) 5000000 &&
	echo "repeat 2 sample 300 300 p 6000000 $1" &&
	text_mapping 300 prog2 $(build_id prog2) 10000000 &&
	echo "repeat 2 sample 300 300 p 11000000 $1" &&
	echo "end"
}

# Repeated fp stacks are resolved once per process and period of its mappings (stack_memo.h): the same
# instruction pointers, repeated before and after an exec, and after a later mapping over them, name what was
# mapped when each sample was taken.
test_expect_success 'the same raw stack, repeated across an exec and a new mapping, names what each sample ran' '
	periods_script "$(user_stack) -" >script.memo &&
	write_rec memo.rec <script.memo >/dev/null &&
	stackrec convert memo.rec >actual &&
	cat >expect <<-\EOF &&
	p;main;other_outer;other_middle;other_leaf 4
	p;main;outer;middle;leaf 2
	EOF
	test_cmp expect actual
'

# A dwarf walk's frames are remembered by process, period of its mappings, pc and kind of address (unwind.c's
# place_frame, convert.c's placed_location): the same registers and stack words, before and after an exec and
# a later mapping over the same addresses, name what was mapped when each sample was taken. Each sample is
# stopped at leaf's first instruction, the word at rsp its return address into outer.
test_expect_success 'the same dwarf sample, repeated across an exec and a new mapping, names what each sample ran' '
	pc=$(runtime $(vaddr leaf)) in_outer=$(runtime $(ret_after_call outer leaf)) &&
	periods_script "- - top=$in_outer dwarf=$pc" >script.dwarf &&
	write_rec dwarf.rec <script.dwarf >/dev/null &&
	stackrec convert dwarf.rec >actual &&
	cat >expect <<-\EOF &&
	p;other_outer;other_middle;other_leaf 4
	p;outer;middle;leaf 2
	EOF
	test_cmp expect actual
'

# Repeated fp samples are counted from the memo of whole samples (convert.c, sample_key): only a sample of the
# same thread, name, kind, errors, IPs, period and leaf repair is the same stack. Here the same IPs, interleaved,
# in two threads, under two names, on and off the CPU, with a stack error, and with two leaf repairs: each
# sample at leaf's first instruction (frameless there), the word at rsp the return address into outer (the
# walk skipped outer: put back), into main (what the walk found: nothing to put back), or another address in
# main (no call comes before it: not a return address, so nothing is put back, as for main).
test_expect_success 'repeated fp samples that differ in thread, name, kind, error or leaf repair stay apart' '
	pc=$(runtime $(vaddr leaf)) in_outer=$(runtime $(ret_after_call outer leaf)) &&
	in_main=$(runtime $(ret_after_call main outer)) && main4=$(runtime $(printf "%x" $((0x$(vaddr main) + 4)))) &&
	{
		text_mapping 300 prog $(build_id prog) 1 &&
		for i in 1 2; do
			echo "sample 300 300 p 1000 $pc,$in_main - top=$in_outer" &&
			echo "sample 300 300 p 2000 $pc,$in_main - top=$in_main" &&
			echo "sample 300 301 p 3000 $pc,$in_main - top=$in_outer" &&
			echo "sample 300 300 q 4000 $pc,$in_main - top=$in_outer" &&
			echo "sample 300 300 p 5000 $pc,$in_main - top=$in_outer kind=off weight=7000" &&
			echo "sample 300 300 p 6000 $pc,$in_main - -14 top=$in_outer" &&
			echo "sample 300 300 p 7000 $pc,$in_main - top=$in_outer" &&
			echo "sample 300 300 p 8000 $pc,$in_main - top=$main4" || return 1
		done &&
		echo "end"
	} >script.samples &&
	write_rec samples.rec <script.samples >/dev/null &&
	stackrec convert samples.rec --tid >actual &&
	cat >expect <<-\EOF &&
	p-300/300;[user stack error -EFAULT];main;outer;middle;leaf 2
	p-300/300;main;leaf 4
	p-300/300;main;outer;middle;leaf 4
	p-300/301;main;outer;middle;leaf 2
	q-300/300;main;outer;middle;leaf 2
	EOF
	test_cmp expect actual &&
	stackrec convert samples.rec --kind off >actual &&
	echo "p;main;outer;middle;leaf 14" >expect &&
	test_cmp expect actual &&
	stackrec convert samples.rec -v -o /dev/null 2>err &&
	grep "of samples had a frameless leaf" err
'

# A frame-pointer walk through code without frame pointers takes a saved register or a word of data for a return
# address. Where no call instruction comes before it (main + 4, inside main's first instructions), neither it nor
# what the walk found beyond it is the stack: the stack is cut there and says [incomplete], and --explain says
# why. Where a signal handler returns, at rt_sigreturn's trampoline (mov $15, %rax; syscall, after a nop as in
# glibc's __restore_rt), a makecontext function, at glibc's __start_context, or a goroutine, at Go's
# runtime.goexit + 1 (a nop before it, a call at it), no call comes before either, but the kernel, the C library
# or Go's runtime made that return address: it stays, the first two named at their own address (the byte before
# is no function's), and __start_context ends its stack (the words above it are the context's data).
test_expect_success 'an fp return address that follows no call cuts the stack there; a signal trampoline does not' '
	cat >tramp.c <<-\EOF &&
	__asm__(".text\n.globl tramp\n.type tramp, @function\ntramp:\n nop\n mov $15, %rax\n syscall\n"
		".size tramp, . - tramp\n"
		" nop\n nop\n nop\n nop\n nop\n nop\n nop\n nop\n nop\n"
		".globl start_ctx\n.type start_ctx, @function\nstart_ctx:\n mov %rbx, %rsp\n mov (%rsp), %rdi\n"
		" test %rdi, %rdi\n hlt\n.size start_ctx, . - start_ctx\n"
		".globl goexit_like\n.type goexit_like, @function\ngoexit_like:\n nop\n call handler\n hlt\n"
		".size goexit_like, . - goexit_like\n");
	__attribute__((noinline)) void handler(void) { __asm__ volatile("" ::: "memory"); }
	int main(void) { handler(); return 0; }
	EOF
	cc -O2 -g -fno-omit-frame-pointer -o tramp tramp.c &&
	pc=$(runtime $(vaddr leaf)) in_outer=$(runtime $(ret_after_call outer leaf)) &&
	in_main=$(runtime $(ret_after_call main outer)) && main4=$(runtime $(printf "%x" $((0x$(vaddr main) + 4)))) &&
	{
		text_mapping 300 prog $(build_id prog) 1 &&
		echo "sample 300 300 p 1000 $pc,$in_outer,$main4,$in_main -" &&
		echo "sample 300 300 p 2000 $pc,$in_outer,$main4,$in_main -" &&
		echo "sample 300 300 p 3000 $pc,$in_outer,$in_main -" &&
		text_mapping 400 tramp $(build_id tramp) 1 &&
		echo "sample 400 400 t 4000 $(runtime $(vaddr handler tramp)),$(runtime $(printf "%x" $((0x$(vaddr tramp tramp) + 1)))),$(runtime $(ret_after_call main handler tramp)) -" &&
		echo "sample 400 400 c 5000 $(runtime $(vaddr handler tramp)),$(runtime $(vaddr start_ctx tramp)) -" &&
		echo "sample 400 400 g 6000 $(runtime $(vaddr handler tramp)),$(runtime $(printf "%x" $((0x$(vaddr goexit_like tramp) + 1)))) -" &&
		# at the handler'"'"'s first byte, no frame of its own: the leaf repair puts __start_context back from
		# the top of the stack, which ends the stack there (the walk'"'"'s main below it is the context'"'"'s data)
		echo "sample 400 400 d 7000 $(runtime $(vaddr handler tramp)),$(runtime $(ret_after_call main handler tramp)) - top=$(runtime $(vaddr start_ctx tramp))" &&
		echo "end"
	} >script.samples &&
	write_rec cut.rec <script.samples >/dev/null &&
	stackrec convert cut.rec >actual &&
	cat >expect <<-\EOF &&
	c;start_ctx;handler 1
	d;start_ctx;handler 1
	g;goexit_like;handler 1
	p;[incomplete];outer;middle;leaf 2
	p;main;outer;middle;leaf 1
	t;main;tramp;handler 1
	EOF
	test_cmp expect actual &&
	stackrec convert cut.rec --explain -o /dev/null 2>err &&
	cat err &&
	grep -x "explain: 28.6% of samples end in \[incomplete\]: a return address that follows no call: .*record with --call-graph dwarf" err
'

# A repeated fp sample's leaf is repaired by the recipe the memo keeps with it (unwind.h, unwind_leaf_recipe):
# which of the sample's values are rsp and rip, for the registers the sample kept. The same samples keeping rbp
# as well (before rsp and rip among their values), after one that did not, are repaired as their own words say
# (read at the first one's slots, rip would be rsp: not the leaf, nothing to put back, as for the first).
test_expect_success 'repeated fp samples that kept other registers are repaired alike' '
	pc=$(runtime $(vaddr leaf)) in_outer=$(runtime $(ret_after_call outer leaf)) &&
	in_main=$(runtime $(ret_after_call main outer)) &&
	{
		text_mapping 300 prog $(build_id prog) 1 &&
		echo "sample 300 300 p 1000 $pc,$in_main - top=$in_main" &&
		for i in 1 2; do
			echo "sample 300 300 p 2000 $pc,$in_main - top=$in_outer rbp=7ffc0100" &&
			echo "sample 300 300 p 3000 $pc,$in_main - top=$in_outer" || return 1
		done &&
		echo "end"
	} >script.regs &&
	write_rec regs.rec <script.regs >/dev/null &&
	stackrec convert regs.rec >actual &&
	cat >expect <<-\EOF &&
	p;main;leaf 1
	p;main;outer;middle;leaf 4
	EOF
	test_cmp expect actual
'

# Samples repeated byte for byte but for their time, weight and CPU are counted from the raw sample memo
# (raw_sample_memo.h), their repeats in the profile all at once: each counts its own weight and time, and what the
# first counted besides it counts too. An fp sample whose leaf's caller is put back, a dwarf one in a library
# whose file is gone (its CFI unknown: [incomplete]), and an off-CPU one of three weights, each on CPUs 0 and 1 at
# other times.
test_expect_success 'samples repeated but for time, weight and CPU count their own weights, and what the first did' '
	pc=$(runtime $(vaddr leaf)) in_outer=$(runtime $(ret_after_call outer leaf)) &&
	in_main=$(runtime $(ret_after_call main outer)) &&
	{
		text_mapping 300 prog $(build_id prog) 1 &&
		echo "mapping 300 7f0000000000 7f0000100000 0 $PWD/libgone.so - 1" &&
		echo "repeat-timed 3 sample 300 300 p 1000 $pc,$in_main - top=$in_outer" &&
		echo "repeat-timed 2 sample 300 300 p 5000000 - - top=0 dwarf=7f0000001000" &&
		for w in 5000 7000 11000; do
			echo "repeat-timed 2 sample 300 300 p 9000000 $(user_stack) - kind=off weight=$w" || return 1
		done &&
		echo "end"
	} >script.raw &&
	write_rec raw.rec <script.raw >/dev/null &&
	stackrec convert raw.rec --explain >actual 2>explain &&
	cat >expect <<-\EOF &&
	p;[incomplete];[libgone.so] 2
	p;main;outer;middle;leaf 3
	EOF
	test_cmp expect actual &&
	grep "^explain: 27.3% of samples had a frameless leaf" explain &&
	grep "^explain: 18.2% of samples end in \[incomplete\]: the module.s file was not found" explain &&
	stackrec convert raw.rec --kind off >actual &&
	echo "p;main;outer;middle;leaf 46" >expect &&
	test_cmp expect actual &&
	stackrec convert raw.rec -f trace -o raw.trace &&
	grep -c "\"type\":\"sample\"" raw.trace >actual &&
	echo 11 >expect &&
	test_cmp expect actual &&
	grep "\"total_samples\":11,\"total_weight_ns\":5046000," raw.trace
'

test_expect_success 'a cut-short recording converts its intact frames and exits 1 with one line' '
	second=$(sed -n 2p offsets) &&
	head -c $((second + 20)) good.rec >cut.rec &&
	test_must_fail stackrec convert cut.rec -o cut.folded 2>err &&
	cat >expect <<-\EOF &&
	prog;main;outer;middle;leaf 5
	worker;do_syscall_64_[k];ext4_read_[k] 1
	worker;main;outer;middle;leaf;do_syscall_64_[k];read_zero_[k] 3
	EOF
	test_cmp expect cut.folded &&
	test_line_count err = 1 &&
	grep "^stackrec: error: .cut.rec. is cut short" err
'

test_expect_success 'a corrupted middle frame is skipped; the rest converts; exit 1 with one line' '
	first=$(sed -n 1p offsets) second=$(sed -n 2p offsets) &&
	cp good.rec bad.rec &&
	printf "\377\377\377\377" | dd of=bad.rec bs=1 seek=$(((first + second) / 2)) conv=notrunc 2>/dev/null &&
	test_must_fail stackrec convert bad.rec >bad.folded 2>err &&
	cat >expect <<-\EOF &&
	prog;[unknown] 1
	prog;[user stack error -EFAULT] 2
	prog;main;outer;middle;leaf 5
	EOF
	test_cmp expect bad.folded &&
	test_line_count err = 1 &&
	grep "^stackrec: error: .bad.rec. is damaged" err
'

# Frame N starts where the Nth "flush" says the file ended; its CRC is bytes 12..15 of its header.
test_expect_success 'a recording of 40 frames, 30 of them with a bad CRC' '
	text_mapping 100 prog $(build_id prog) 1 >script40 &&
	for i in $(seq 1 40); do
		echo "sample 100 100 prog $i $(user_stack) -" &&
		echo "flush" || return 1
	done >>script40 &&
	echo "end" >>script40 &&
	write_rec many.rec <script40 >many-offsets &&
	test_line_count many-offsets = 40 &&
	cp many.rec many-bad.rec &&
	for off in $(sed -n 1,30p many-offsets); do
		printf "\0\0\0\0" | dd of=many-bad.rec bs=1 seek=$((off + 12)) conv=notrunc 2>/dev/null || return 1
	done
'

test_expect_success 'info summarizes 30 damaged frames in one line, then the error; exit 1' '
	test_must_fail stackrec info many-bad.rec >out 2>err &&
	SQ=$(printf "\047") &&
	cat >expect <<-EOF &&
	stackrec: warning: ${SQ}many-bad.rec${SQ}: 30 frames with a bad CRC (first at offsets $(sed -n 1p many-offsets), $(sed -n 2p many-offsets), $(sed -n 3p many-offsets), ...)
	stackrec: error: ${SQ}many-bad.rec${SQ} is damaged: 30 of 41 frames unreadable, 0 frames ending in a broken block, $(($(sed -n 31p many-offsets) - $(sed -n 1p many-offsets))) bytes skipped; every intact block was read
	EOF
	test_cmp expect err &&
	grep "^  samples  *10$" out
'

test_expect_success 'info -v lists every damaged frame with its offset' '
	test_must_fail stackrec info -v many-bad.rec >out 2>err &&
	grep "^stackrec: warning: .many-bad.rec.: damaged data at offset [0-9]* (frame checksum mismatch)" err >each &&
	test_line_count each = 30 &&
	grep "offset $(sed -n 30p many-offsets) " each &&
	test_line_count err = 31
'

test_expect_success 'convert of 30 damaged frames: the output, one error line; -v lists every frame' '
	test_must_fail stackrec convert many-bad.rec >out 2>err &&
	echo "prog;main;outer;middle;leaf 10" >expect &&
	test_cmp expect out &&
	test_line_count err = 1 &&
	grep "^stackrec: error: .many-bad.rec. is damaged: 30 of 41 frames unreadable" err &&
	test_must_fail stackrec convert -v many-bad.rec >out 2>err &&
	test_cmp expect out &&
	grep -c "^stackrec: warning: .many-bad.rec.: damaged data at offset" err >count &&
	echo 30 >expect &&
	test_cmp expect count
'

test_expect_success 'a failed convert leaves no output file' '
	test_must_fail stackrec convert no-such.rec -o never 2>err &&
	test ! -e never && ! ls -A | grep "^\.never\." &&
	grep "^stackrec: error: cannot open .no-such.rec." err &&
	test_must_fail stackrec convert good.rec -f no-such-format -o never &&
	test ! -e never
'

test_expect_success 'C++ names are demangled unless --no-demangle' '
	cat >cxx.cc <<-\EOF &&
	namespace ns { __attribute__((noinline)) int work(int x, char c) { return x * 3 + c; } }
	int main(int argc, char **) { return ns::work(argc, 1); }
	EOF
	g++ -O2 -g -fno-omit-frame-pointer -o cxx cxx.cc &&
	sym=$(nm cxx | awk "/ _ZN2ns4workEic\$/ { print \$1 }") &&
	{
		text_mapping 400 cxx $(build_id cxx) 1 &&
		echo "sample 400 400 cxx 10 $(runtime $sym) -" &&
		echo end
	} >script.cxx &&
	write_rec cxx.rec <script.cxx >/dev/null &&
	stackrec convert cxx.rec >actual &&
	echo "cxx;ns::work(int, char) 1" >expect &&
	test_cmp expect actual &&
	stackrec convert cxx.rec --no-demangle >actual &&
	echo "cxx;_ZN2ns4workEic 1" >expect &&
	test_cmp expect actual
'

test_expect_success 'bad usage exits 2 with a message' '
	test_expect_code() { "$@"; test $? -eq 2; } &&
	test_expect_code stackrec convert 2>err &&
	grep "^stackrec: error: convert needs a recording file" err &&
	test_expect_code stackrec convert good.rec --bogus 2>err &&
	stackrec convert --help >help &&
	grep -q "folded" help
'

# On- and off-CPU samples of one thread and one stack (tests/data/on-off-cpu.script): two stacks, never summed
# but where --kind wall asks for a thread's whole time.
test_expect_success 'on- and off-CPU samples of the same stack do not merge; --kind picks what folded counts' '
	cp "$TESTS/data/on-off-cpu.kallsyms" . &&
	write_rec on-off.rec <"$TESTS/data/on-off-cpu.script" &&
	cat >expect <<-\EOF &&
	app;do_syscall_64_[k];read_zero_[k] 3
	other;read_zero_[k] 6
	worker;do_syscall_64_[k];read_zero_[k] 2
	EOF
	stackrec convert on-off.rec >actual &&
	test_cmp expect actual &&
	stackrec convert on-off.rec --kind on >actual &&
	test_cmp expect actual
'

test_expect_success 'folded --kind off: off-CPU time in microseconds, as offcputime -f' '
	cat >expect <<-\EOF &&
	app;do_syscall_64_[k];read_zero_[k] 5000
	app;do_syscall_64_[k];schedule_[k] 2500
	EOF
	stackrec convert on-off.rec --kind off >actual &&
	test_cmp expect actual
'

test_expect_success 'folded --kind wall: each thread'"'"'s on-CPU periods plus its off-CPU time, microseconds' '
	cat >expect <<-\EOF &&
	app-100/100;do_syscall_64_[k];read_zero_[k] 8000
	app-100/100;do_syscall_64_[k];schedule_[k] 2500
	other-200/200;read_zero_[k] 6000
	worker-100/101;do_syscall_64_[k];read_zero_[k] 2000
	EOF
	stackrec convert on-off.rec --kind wall --tid >actual &&
	test_cmp expect actual &&
	test "$(awk "/^app-100\/100;/ { t += \$NF } END { print t }" actual)" = 10500
'

test_expect_success 'a recording without on-CPU samples shows off-CPU time by default; a bad --kind exits 2' '
	grep -v "^repeat" "$TESTS/data/on-off-cpu.script" >off-only.script &&
	write_rec off-only.rec <off-only.script &&
	stackrec convert off-only.rec >actual &&
	stackrec convert off-only.rec --kind off >expect &&
	test_cmp expect actual &&
	test_line_count actual = 2 &&
	exits_2() { "$@"; test $? -eq 2; } &&
	exits_2 stackrec convert on-off.rec --kind bogus 2>err &&
	grep "^stackrec: error: .bogus. is not a kind: on, off or wall" err
'

# --explain on addresses no mapping covers: "the process started before recording" only where that can be
# true (a process running at start, or one the recording has no mapping of); a garbage return address above a
# frame of a known module, in a process recorded from its start (or forked from one), blames that module's
# missing frame pointers; an unmapped leaf of such a process says what else can have happened.
test_expect_success '--explain says why an address has no mapping: frame pointers, process history' '
	cat >unmapped.script <<-\EOF &&
	host hostname=test
	mapping 100 400000 401000 0 /nonexistent/libnofp.so - 1
	mapping 100 500000 501000 0 /nonexistent/app - 1
	repeat 4 sample 100 100 app 10 400010,dead0001,dead0002 -
	repeat 2 sample 100 100 app 10 500010,400020 -
	sample 100 100 app 10 beef0000,500020 -
	existing 200 5
	mapping 200 400000 401000 0 /nonexistent/libnofp.so - 5
	repeat 3 sample 200 200 old 10 beef0000 -
	repeat 5 sample 300 300 gone 10 cafe0000,400010 -
	fork 400 100 5
	repeat 6 sample 400 400 child 10 400010,dead0003 -
	end
	EOF
	write_rec unmapped.rec <unmapped.script &&
	stackrec convert unmapped.rec --explain >unmapped.folded 2>actual &&
	cat >expect <<-\EOF &&
	explain: unnamed frames by module and reason (share of samples they appear in):
	   57.1%  libnofp.so  no file at the recorded path: the file is gone and was recorded without a build ID: keep the file, or record with a kernel or binaries that give build IDs
	   47.6%  (no module)  no mapping for the address: no frame pointers in libnofp.so (the frame below it); record with --call-graph dwarf
	   38.1%  (no module)  no mapping for the address: the recording has no mapping for it (the process started before recording or mapped it quickly): record with -p or the command under stackrec
	   14.3%  app  no file at the recorded path: the file is gone and was recorded without a build ID: keep the file, or record with a kernel or binaries that give build IDs
	    4.8%  (no module)  no mapping for the address: the process was recorded from its start, yet none of its recorded mappings covers it: code run before its exec into the recorded command, or its mmap records were lost (while recording: stackrec info shows lost side-band; or in a damaged part of the file)
	explain: user frames found by (share of frames in samples): frame_pointer 51.2% pc 48.8%
	EOF
	test_cmp expect actual
'

# A child forked without exec has no name of its own in the recording (the kernel's fork record carries none):
# it was nameless, so --thread-names and the report fell back to a thread's name or "?". It is named as its
# parent was when it forked, not as the parent exec'd later (sh -c '"'"'(spin) & exec python app.py'"'"').
test_expect_success 'a forked child that never exec'"'"'d is named as its parent' '
	cat >forked.script <<-\EOF &&
	host hostname=test
	exec 100 1 app
	fork 400 100 5
	fork 500 400 6
	exec 100 7 python
	repeat 2 sample 400 401 worker 10 - ffffffff81000110
	sample 500 501 helper 11 - ffffffff81000110
	end
	EOF
	write_rec forked.rec <forked.script &&
	stackrec convert forked.rec --thread-names --no-cache >forked.folded &&
	cat forked.folded &&
	grep -E "^app;worker;.* 2$" forked.folded &&
	grep -E "^app;helper;.* 1$" forked.folded &&
	stackrec convert forked.rec --thread-names >again.folded &&
	stackrec convert forked.rec --thread-names >again.folded &&
	test_cmp forked.folded again.folded
'

# A thread name the kernel cut at 15 bytes in the middle of a character ("Работни" and half of "к"): flamegraph.pl
# reads its input as UTF-8 and died on it, and profile.proto'"'"'s strings must be UTF-8 (Python'"'"'s protobuf refused
# the whole file). folded writes '"'"'?'"'"' for a byte that begins no sequence, pprof U+FFFD, as the JSON formats do.
test_expect_success 'a name cut in the middle of a UTF-8 character: ? in folded, U+FFFD in pprof' '
	printf "%s\n" "host hostname=test" "sample 100 100 $(printf "\320\240\320\260\320\261\320\276\321\202\320\275\320\270\320") 10 - ffffffff81000110" end >cut-utf8.script &&
	write_rec cut-utf8.rec <cut-utf8.script &&
	stackrec convert cut-utf8.rec -o cut-utf8.folded &&
	printf "\320\240\320\260\320\261\320\276\321\202\320\275\320\270?;[kernel.kallsyms]_[k] 1\n" >expect &&
	test_cmp expect cut-utf8.folded &&
	stackrec convert cut-utf8.rec -f pprof -o cut-utf8.pb.gz &&
	gzip -dc cut-utf8.pb.gz >cut-utf8.pb &&
	grep -c "$(printf "\320\270\357\277\275")" cut-utf8.pb &&
	! grep -q "$(printf "\320\270\320")" cut-utf8.pb
'

# Stack errors come from the file: any int, INT_MIN included, is a marker and a count, never undefined
# behaviour (negating INT_MIN was, under UBSan) nor a huge unsigned number.
test_expect_success 'a hostile stack error (INT_MIN, an unknown errno) is named as a number' '
	cat >errs.script <<-\EOF &&
	sample 100 100 app 10 - - -2147483648/-14
	sample 100 100 app 11 - - -9999
	end
	EOF
	write_rec errs.rec <errs.script &&
	stackrec convert errs.rec >errs.folded &&
	cat errs.folded &&
	grep -F "[user stack error -2147483648]" errs.folded &&
	grep -F "[kernel stack error -EFAULT]_[k]" errs.folded &&
	grep -F "[user stack error -9999]" errs.folded &&
	stackrec info errs.rec >errs.info &&
	grep -E "failed stacks +1 user -\?" errs.info
'

# libdwfl takes the unit before code no unit describes for its unit, and libdw that unit's last line row:
# _start, the root of every stack, was given a line of main's unit (fixtures/cold_split.c).
test_expect_success 'a frame in code no unit describes (_start) has no line of the unit before it' '
	cc -O2 -g -o split "$FIXTURES/cold_split.c" &&
	{
		text_mapping 100 split $(build_id split) 1 &&
		echo "sample 100 100 split 10 $(runtime $(printf "%x" $((0x$(vaddr _start split) + 4)))) -" &&
		echo end
	} >split.script &&
	write_rec split.rec <split.script &&
	stackrec convert split.rec -f trace --no-cache -o split.trace &&
	grep -F "\"function\":\"_start\"" split.trace &&
	grep -F "\"function\":\"_start\",\"system_name\":\"_start\",\"file\":null,\"line\":null" split.trace
'

# A PLT entry is covered by no symbol: it was [prog], "no symbol covers the address". Named as perf names it, for
# the function its GOT slot's relocation names; a stub is a frame of its own (the call went through it).
test_expect_success 'a frame in a PLT entry is NAME@plt, named by its slot'"'"'s relocation' '
	printf "%s\n" "#include <string.h>" "#include <stdlib.h>" \
		"int main(int argc, char **argv) { return (int)strlen(argv[argc - 1]) + abs(argc); }" >plt.c &&
	cc -O2 -g -fno-builtin -o plt plt.c &&
	strlen_plt=$(objdump -d plt | sed -n "s/^0*\([0-9a-f]*\) <strlen@plt>:$/\1/p") &&
	test -n "$strlen_plt" &&
	{
		text_mapping 100 plt $(build_id plt) 1 &&
		echo "sample 100 100 plt 10 $(runtime $strlen_plt),$(runtime $(ret_after_call main strlen@plt plt)) -" &&
		echo end
	} >plt.script &&
	write_rec plt.rec <plt.script &&
	stackrec convert plt.rec --no-cache --explain -o plt.folded 2>explain &&
	echo "plt;main;strlen@plt 1" >expect &&
	test_cmp expect plt.folded &&
	grep "every frame was named" explain &&
	stackrec symbolize -e plt -f "$strlen_plt" >symbolized &&
	head -n 1 symbolized >actual && echo "??" >expect && test_cmp expect actual
'

# A thread name and a mapped file's path are another user's to choose: info must not hand a terminal their
# escape sequences (retitle the window, clear the screen) nor let a newline forge a line.
test_expect_success 'info shows control characters of names and paths escaped' '
	esc=$(printf "\033") &&
	{
		echo "mapping 100 400000 401000 0 /tmp/lib${esc}[31mRED${esc}[0m.so - 1" &&
		echo "sample 100 100 ${esc}]0;PWNED$(printf "\007")x 10 400010 -" &&
		echo end
	} >escape.script &&
	write_rec escape.rec <escape.script &&
	stackrec info --mappings escape.rec >escape.info &&
	! grep -q "$esc" escape.info &&
	! grep -q "$(printf "\007")" escape.info &&
	grep -F "/tmp/lib\\x1b[31mRED\\x1b[0m.so" escape.info &&
	grep -F "\\x1b]0;PWNED\\x07x" escape.info
'

test_expect_success '--kind of a kind the recording has none of: one warning, the empty output, exit 0' '
	{
		echo "mapping 100 400000 401000 0 /bin/prog - 1" &&
		echo "sample 100 100 prog 10 400010 - kind=off weight=5000000" &&
		echo end
	} | write_rec off-only.rec &&
	stackrec convert off-only.rec --kind on -o on.folded 2>err &&
	cat err &&
	test_line_count err = 1 &&
	grep -x "stackrec: warning: .off-only.rec. has no on-CPU samples (it has 1 off-CPU ones): --kind on shows nothing; --kind off or wall shows them" err &&
	test ! -s on.folded &&
	stackrec convert off-only.rec --kind off -o off.folded 2>err &&
	test ! -s err && test -s off.folded &&
	stackrec convert off-only.rec --kind on -f pprof -o on.pb.gz 2>err &&
	test ! -s err &&
	{
		echo "mapping 100 400000 401000 0 /bin/prog - 1" &&
		echo "sample 100 100 prog 10 400010 -" &&
		echo end
	} | write_rec on-only.rec &&
	stackrec convert on-only.rec --kind off -f d3 -o off.d3 2>err &&
	grep -x "stackrec: warning: .on-only.rec. has no off-CPU samples (it has 1 on-CPU ones; record --off-cpu for them): --kind off shows nothing" err
'

test_expect_success '--explain of a recording without samples says so; info names a child that never exec'"'"'d as its parent' '
	{
		echo "mapping 100 400000 401000 0 /bin/prog - 1" &&
		echo "sample 100 100 parent-name 10 400010 -" &&
		echo "fork 101 100 20" &&
		echo end
	} | write_rec forked.rec &&
	stackrec info forked.rec >forked.info &&
	grep -E "^  101 +parent-name +0 samples" forked.info &&
	echo end | write_rec no-samples.rec &&
	stackrec convert no-samples.rec --explain -o /dev/null 2>err &&
	cat err &&
	grep -x "explain: no samples, so no frames to name" err
'

# convert --explain and its messages (-v, warnings) go to stderr, most often a terminal, and name the same paths.
test_expect_success 'convert --explain and -v show control characters of recorded paths escaped' '
	esc=$(printf "\033") &&
	{ echo "host call_graph=fp${esc}]0;PWNED$(printf "\007")" && cat escape.script; } | write_rec escape-host.rec &&
	stackrec convert escape-host.rec --explain -v -o /dev/null 2>escape.err &&
	cat escape.err &&
	! grep -q "$esc" escape.err &&
	! grep -q "$(printf "\007")" escape.err &&
	grep "^stackrec: ./tmp/lib\\\\x1b\[31mRED\\\\x1b\[0m\.so.: no file at the recorded path$" escape.err &&
	grep -F "100.0%  lib\\x1b[31mRED\\x1b[0m.so  no file" escape.err &&
	grep -F "(recorded with --call-graph fp\\x1b]0;PWNED\\x07)" escape.err
'

test_done
