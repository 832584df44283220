# Shared by the command-line test scripts (tb/cli/run_cli_tests.sh, tb/rtl/crosscheck_cli_test.sh):
# the pass/fail counters and check (a command's exit code). Source it after setting $work (a
# scratch directory); end the script with `[ "$failed" -eq 0 ]`.
# shellcheck shell=bash disable=SC2154  # $work is set by the script that sources this one
: "${work:?set work (a scratch directory) before sourcing check_lib.sh}"
passed=0
failed=0

check() {  # check NAME EXPECTED_EXIT COMMAND... ; output in $work/out, $work/err
  local name="$1" expected="$2"
  shift 2
  "$@" >"$work/out" 2>"$work/err"
  local code=$?
  if [ "$code" -eq "$expected" ]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "FAIL $name: exit $code, expected $expected"
    # GoogleTest's progress lines ("[ RUN ]", "[ OK ]") say nothing about the failure.
    grep -v '^\[' "$work/out" | head -20 | sed 's/^/  stdout: /'
    head -20 "$work/err" | sed 's/^/  stderr: /'
  fi
}
