#!/usr/bin/env bash
# The mutation check (issue 31): plants each mutation of .ci/mutations/ in
# the tree, one at a time, runs the tests its header names, puts the tree
# back, and fails if any mutation survives (its tests pass), no longer
# applies (the code moved: refresh the patch), or does not build (a
# mutation is caught by a test, not by the compiler).
#
# A mutation is one file, .ci/mutations/NN-name.patch: a header, then a
# `git diff` of the mutated code (git apply ignores the header):
#
#   Guarantee: the sentence of README or the hook's table it breaks
#   Package: ./policy
#   Run: TestProtectedWritesNeedAMaintainer$
#
#   diff --git a/policy/protect.go b/policy/protect.go
#   …
#
# Usage: .ci/mutations.sh [PATCH…]   (all of .ci/mutations/*.patch by default)
# docs/testing.md lists the mutations and the test that catches each.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

patches=("$@")
if [ ${#patches[@]} -eq 0 ]; then
	patches=(.ci/mutations/*.patch)
fi

planted=""
unplant() {
	if [ -n "$planted" ]; then
		if ! git apply -R "$planted"; then
			echo "mutations: could not take $planted back out of the tree; git diff shows it" >&2
			exit 3
		fi
		planted=""
	fi
}
trap unplant EXIT
trap 'unplant; exit 130' INT TERM

failed=()
start=$SECONDS
for p in "${patches[@]}"; do
	name=$(basename "$p" .patch)
	pkg=$(sed -n 's/^Package: *//p' "$p" | head -1)
	run=$(sed -n 's/^Run: *//p' "$p" | head -1)
	if [ -z "$pkg" ] || [ -z "$run" ]; then
		echo "BAD       $name: no Package: or Run: line in its header"
		failed+=("$name")
		continue
	fi
	if ! git apply --check "$p" 2>/dev/null; then
		echo "STALE     $name: the patch no longer applies to the tree (refresh it)"
		failed+=("$name")
		continue
	fi
	git apply "$p" && planted=$p
	t0=$SECONDS
	out=$(go test -count=1 -failfast -timeout 240s -run "$run" "$pkg" 2>&1)
	rc=$?
	unplant
	took=$((SECONDS - t0))
	if [ $rc -eq 0 ]; then
		echo "SURVIVED  $name (${took}s): go test -run '$run' $pkg passes with it"
		failed+=("$name")
	elif grep -q -e '\[build failed\]' -e '\[setup failed\]' <<<"$out"; then
		echo "BROKEN    $name (${took}s): the mutated code does not build"
		grep -v '^FAIL' <<<"$out" | head -5 | sed 's/^/          /'
		failed+=("$name")
	else
		caught=$(grep -o -e '--- FAIL: [^ ]*' -e '^panic: .*' <<<"$out" | head -3 | sed 's/--- FAIL: //' | paste -sd, -)
		echo "caught    $name (${took}s) by ${caught:-a failing run}"
	fi
done

echo "mutations: ${#patches[@]} planted in $((SECONDS - start))s"
if [ ${#failed[@]} -gt 0 ]; then
	echo "mutations: FAILED: ${failed[*]}" >&2
	exit 1
fi
echo "mutations: every mutation was caught"
