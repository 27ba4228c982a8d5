# Shared by the host check scripts (sourced): one "PASS <prefix>: <what>"
# or "FAIL ..." line per check, the failing command's output under it.
# The sourcing script sets CHECK_PREFIX and reads $fails at the end.
fails=0

check() {	# check <what> <command...>: PASS or FAIL, the output on failure
	local what=$1 out
	shift
	if out=$("$@" 2>&1); then
		echo "PASS $CHECK_PREFIX: $what"
	else
		echo "FAIL $CHECK_PREFIX: $what"
		[ -z "$out" ] || echo "$out" | sed 's/^/# /' | head -n 20
		fails=$((fails + 1))
	fi
}
