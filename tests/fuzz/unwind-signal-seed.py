#!/usr/bin/env python3
"""unwind-signal-seed.py — a seed for fuzz-unwind.c whose walk goes through a signal frame.

    unwind-signal-seed.py SEED OUT

Takes a seed written by unwind-seeds (tests/fuzz/unwind-corpus/unwind-1.bin) and writes one in which that
sample was interrupted by a signal: the pc is libc's __restore_rt (the signal trampoline; its CFI is
hand-written: a CFA expression with DW_OP_deref, every register by DW_CFA_expression, and the "S" augmentation
of a signal frame), and below the original stack lies the kernel's signal frame, holding the original
registers where that CFI says (offsets into struct ucontext_t from the stack pointer). The address is that of
libc build 93ac61ec5a8eb1396f9fbd350e3169a558528a40 loaded where fixtures/unwind.rec had it; with another libc
the seed still runs, through other rules.
"""
import struct
import sys

LIBC_BASE = 0x7FBD7162D000  # fixtures/unwind.rec: libc's text mapped at 0x7fbd71653000, offset 0x26000
RESTORE_RT = 0x3C050  # __restore_rt in that libc (its FDE covers 0x3c04f..0x3c059)
FRAME = 256  # bytes of signal frame below the original stack pointer
# DWARF register -> offset from the signal frame's stack pointer (glibc sysdeps/unix/sysv/linux/x86_64/libc_sigaction.c)
SAVED = {8: 40, 9: 48, 10: 56, 11: 64, 12: 72, 13: 80, 14: 88, 15: 96, 5: 104, 4: 112, 6: 120, 3: 128,
         1: 136, 0: 144, 2: 152, 7: 160, 16: 168}

data = open(sys.argv[1], "rb").read()
machine, reg_count, stack_size, mask, flags, wanted = struct.unpack_from("<HHIQII", data)
numbers = [n for n in range(64) if mask >> n & 1]
values = struct.unpack_from("<%dQ" % reg_count, data, 24)
stack = data[24 + 8 * reg_count:][:stack_size]
regs = dict(zip(numbers, values))

frame = bytearray(FRAME)
for reg, off in SAVED.items():
    struct.pack_into("<Q", frame, off, regs.get(reg, 0))
new_regs = dict(regs)
new_regs[7] = regs[7] - FRAME
new_regs[16] = LIBC_BASE + RESTORE_RT
stack = bytes(frame) + stack
out = struct.pack("<HHIQII", machine, reg_count, len(stack), mask, flags, wanted + FRAME)
out += struct.pack("<%dQ" % reg_count, *(new_regs[n] for n in numbers)) + stack
open(sys.argv[2], "wb").write(out)
