#!/usr/bin/env bash
# cordon-launch --check: "ok <id>" on stdout per good profile, every error of
# a bad one on stderr as "<file>:<line>:<column>: <key>: <message>", exit 0
# when all are good, 1 when any is bad, 2 without arguments.
set -euo pipefail
launch=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

cat >"$dir/good.yaml" <<'YAML'
version: 1
connector:
  command: [/bin/true]
sandbox:
  filesystem:
    system: []
tools:
  risk: {}
YAML
cat >"$dir/bad.yaml" <<'YAML'
version: 1
connector:
  command: [true]
sandbox:
  filesystem:
    system: []
    roots: [{path: ../x, access: read}]
  network: {mode: unrestricted}
tools:
  risk: {}
YAML
printf 'version: 1\n\tconnector: x\n' >"$dir/tabs.yaml"
cp "$dir/good.yaml" "$dir/Bad_Name.yaml"

# all good
out=$("$launch" --check "$dir/good.yaml") || fail "good profile refused"
[[ $out == "ok good" ]] || fail "unexpected stdout: $out"

# a bad one among good ones: every error, in file order, exit 1
set +e
"$launch" --check "$dir/good.yaml" "$dir/bad.yaml" "$dir/tabs.yaml" "$dir/Bad_Name.yaml" \
	>"$dir/stdout" 2>"$dir/stderr"
rc=$?
set -e
[[ $rc == 1 ]] || fail "exit status $rc, want 1"
expected_out="ok good"
expected_err="$dir/bad.yaml:3:13: connector.command[0]: must be an absolute canonical path (got \"true\")
$dir/bad.yaml:7:20: sandbox.filesystem.roots[0].path: must be an absolute canonical path (got \"../x\")
$dir/bad.yaml:8:19: sandbox.network.mode: \"unrestricted\" does not exist: use none, or allowlist with the destinations the connector needs
$dir/tabs.yaml:2:1: tab character in indentation (YAML indents with spaces only)
$dir/Bad_Name.yaml: file name must be <id>.yaml where <id> matches [a-z0-9][a-z0-9-]{0,31} (got \"Bad_Name.yaml\")"
[[ $(cat "$dir/stdout") == "$expected_out" ]] || fail "stdout: $(cat "$dir/stdout")"
if [[ $(cat "$dir/stderr") != "$expected_err" ]]; then
	diff <(echo "$expected_err") "$dir/stderr" >&2 || true
	fail "stderr differs"
fi

# usage
set +e
"$launch" --check 2>/dev/null
rc=$?
set -e
[[ $rc == 2 ]] || fail "no arguments: exit $rc, want 2"
echo "check-cli: ok"
