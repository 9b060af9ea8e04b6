// SPDX-License-Identifier: GPL-2.0
/* placeholder: the record helper writes this */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
char LICENSE[] SEC("license") = "GPL";
