# stack-stats.awk — completeness of folded stacks (from `stackrec convert -f folded` or fold-perf.awk) for
# one command name. Usage: awk -v comm=NAME -v root=FRAME -f stack-stats.awk FOLDED
# Prints one line: SAMPLES ROOT_PCT MEAN_DEPTH UNKNOWN_PCT where, over the samples whose first field is NAME,
#   ROOT_PCT     share of samples with a frame named FRAME (e.g. __libc_start_call_main, main): the user
#                stack was walked back to it;
#   MEAN_DEPTH   mean number of user frames (kernel frames, *_[k], and stackrec's
#                `[user stack error ...]` markers not counted);
#   UNKNOWN_PCT  share of samples with a user frame `[unknown]`: an address in no mapping, such as the 0
#                or garbage return address a frame-pointer walk reads where there is no frame pointer.

{
	n = $NF
	line = $0
	sub(/ [0-9]+$/, "", line)
	k = split(line, f, ";")
	if (f[1] != comm)
		next
	depth = 0
	hit = 0
	unknown = 0
	for (i = 2; i <= k; i++) {
		if (f[i] ~ /_\[k\]$/ || f[i] ~ /^\[(user|kernel) stack error/)
			continue
		depth++
		if (f[i] == root)
			hit = 1
		if (f[i] == "[unknown]")
			unknown = 1
	}
	samples += n
	depths += n * depth
	hits += n * hit
	unknowns += n * unknown
}

END {
	if (samples == 0)
		print 0, "-", "-", "-"
	else
		printf "%d %.1f %.1f %.1f\n", samples, 100 * hits / samples, depths / samples, 100 * unknowns / samples
}
