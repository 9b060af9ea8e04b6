#!/usr/bin/env python3
"""unwind-edge-seeds.py — seeds for fuzz-unwind.c whose saved registers lie at the edges of the copied stack.

    unwind-edge-seeds.py SEED PREFIX

Takes the seed written by unwind-seeds from fixtures/unwind.rec (tests/fuzz/unwind-corpus/unwind-1.bin) and
writes copies of it with the stack copy cut short where the first two CFI steps of its walk read. Both steps are
in fixtures/bin/unwind, under a rule of the common form that a step takes by its plan (cfi_rules.h: one bounds
check for all the words it reads): CFA = rbp + 16, rbp saved at CFA - 16, the return address at CFA - 8. The
first step (pc 0x5575d3ace363, rbp = rsp) reads bytes 0-15 of the copy, the second (0x5575d3ace309) bytes 16-31.
For each step, PREFIX-sN-end.bin ends the copy where its words end, -byte one byte before (the return address
is read past the copy by one byte), -word one word before (it lies wholly past the copy, the saved rbp ends
where the copy does); each once as a cut copy (SREC_USER_STACK_CUT, "stack copy too small") and once as a
whole one (-whole: the stack's top, a complete walk). PREFIX-below.bin has the whole stack and rbp one word
below rsp: the saved rbp lies below the copy, the popped-register case the plan leaves to the general way.
fuzz-unwind compares every walk by plans with the same walk the general way, and its buffers are exactly
sized, so that a plan's bounds check off by a byte is an ASan report or a different walk.
"""
import struct
import sys

STEPS = {1: 16, 2: 32}  # where the words of the walk's first and second CFI steps end (bytes of the copy)
CUT = 1  # SREC_USER_STACK_CUT
RBP, RSP = 6, 7

data = open(sys.argv[1], "rb").read()
prefix = sys.argv[2]
machine, reg_count, stack_size, mask, flags, wanted = struct.unpack_from("<HHIQII", data)
numbers = [n for n in range(64) if mask >> n & 1]
regs = dict(zip(numbers, struct.unpack_from("<%dQ" % reg_count, data, 24)))
stack = data[24 + 8 * reg_count:][:stack_size]
if regs[RBP] != regs[RSP] or len(stack) < max(STEPS.values()):
    sys.exit("unwind-edge-seeds: '%s' is not the seed of fixtures/unwind.rec this expects" % sys.argv[1])


def write(path, regs, stack, flags):
    out = struct.pack("<HHIQII", machine, reg_count, len(stack), mask, flags, wanted)
    out += struct.pack("<%dQ" % reg_count, *(regs[n] for n in numbers)) + stack
    open(path, "wb").write(out)


for step, end in STEPS.items():
    for name, size in (("end", end), ("byte", end - 1), ("word", end - 8)):
        write("%s-s%d-%s.bin" % (prefix, step, name), regs, stack[:size], flags | CUT)
        write("%s-s%d-%s-whole.bin" % (prefix, step, name), regs, stack[:size], flags & ~CUT)
write("%s-below.bin" % prefix, {**regs, RBP: regs[RSP] - 8}, stack, flags & ~CUT)
