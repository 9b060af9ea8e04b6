#!/usr/bin/env bash
# run-tests.sh — runs every tests/t*.sh script and ends with the line "N passed, N failed, N skipped".
# `make check` calls it; run one script directly with `bash tests/t0001-recording-format.sh`.
set -u
cd "$(dirname "$0")" || exit 1
passed=0 failed=0 skipped=0 bad_scripts=
for script in t[0-9]*.sh; do
	echo "*** $script"
	out=$(bash "./$script" 2>&1)
	rc=$?
	printf '%s\n' "$out"
	p=$(grep -c '^ok [0-9]* - ' <<<"$out")
	s=$(grep -c '^ok [0-9]* # skip' <<<"$out")
	f=$(grep -c '^not ok ' <<<"$out")
	passed=$((passed + p)) skipped=$((skipped + s)) failed=$((failed + f))
	if [ $rc -ne 0 ] && [ "$f" -eq 0 ]; then
		failed=$((failed + 1))
		bad_scripts="$bad_scripts $script"
		echo "*** $script exited $rc without a failed test"
	fi
done
[ -n "$bad_scripts" ] && echo "scripts that broke:$bad_scripts"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
