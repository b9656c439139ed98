#!/usr/bin/env bash
# jcs-cli.sh CORDON_JCS: checks cordon-jcs's exit codes, exact output bytes
# and error messages.
set -uo pipefail
jcs=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0

fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }

# expect_out INPUT EXPECTED [ARGS...]: exit 0 and stdout byte-identical.
expect_out() {
	local in=$1 want=$2 rc
	shift 2
	printf '%s' "$in" | "$jcs" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	printf '%s' "$want" >"$tmp/want"
	if [[ $rc -ne 0 ]] || ! cmp -s "$tmp/out" "$tmp/want"; then
		fail "input '$in' args '$*': rc=$rc out='$(cat "$tmp/out")' err='$(cat "$tmp/err")' want '$want'"
	fi
}

# expect_err INPUT RC SUBSTRING [ARGS...]: exit RC, nothing on stdout, the
# substring on stderr.
expect_err() {
	local in=$1 want_rc=$2 sub=$3 rc
	shift 3
	printf '%s' "$in" | "$jcs" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [[ $rc -ne $want_rc ]] || [[ -s $tmp/out ]] || ! grep -qF -- "$sub" "$tmp/err"; then
		fail "input '$in' args '$*': rc=$rc (want $want_rc) out='$(cat "$tmp/out")' err='$(cat "$tmp/err")' want '$sub'"
	fi
}

# RFC 8785 §3.2.2 sample; output has no trailing newline.
expect_out '{
  "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
  "string": "\u20ac$\u000F\u000aA'"'"'\u0042\u0022\u005c\\\"\/",
  "literals": [null, true, false]
}' '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'"'"'B\"\\\\\"/"}'
expect_out '{"b":1,"a":{"d":[3,2,1],"c":-0}}' '{"a":{"c":0,"d":[3,2,1]},"b":1}'
expect_out '  "x"  ' '"x"'
expect_out '9007199254740991' '9007199254740991'

# Admission errors: exit 1, the message on stderr.
expect_err '{"a":1,"a":2}' 1 'duplicate member name'
expect_err '"\ud800"' 1 'lone high surrogate \ud800'
expect_err $'"\xff"' 1 'invalid UTF-8 byte 0xff at line 1, column 2 (byte 1)'
expect_err '9007199254740992' 1 'integer 9007199254740992 is outside'
expect_err '"\u0000"' 1 '\u0000 (NUL)'
expect_err "$(printf '%.0s[' {1..65})" 1 'nesting deeper than 64 levels'
expect_err '[1,]' 1 'not JSON'
expect_err '' 1 'not JSON: empty input'

# Size limit: default 1 MiB, --max-bytes N (K/M/G suffixes).
expect_err '[1,2]' 1 'input exceeds the limit of 4 bytes' --max-bytes 4
expect_out '[1,2]' '[1,2]' --max-bytes 5
head -c 1048577 /dev/zero | tr '\0' ' ' >"$tmp/big"
"$jcs" <"$tmp/big" >/dev/null 2>"$tmp/err"; rc=$?
[[ $rc -eq 1 ]] && grep -qF 'exceeds the limit of 1048576 bytes' "$tmp/err" || fail "1 MiB + 1 accepted (rc=$rc)"
{ printf '"'; head -c 1048000 /dev/zero | tr '\0' 'a'; printf '"'; } >"$tmp/ok"
"$jcs" <"$tmp/ok" >"$tmp/out" 2>"$tmp/err" && cmp -s "$tmp/ok" "$tmp/out" || fail "large string not passed through"
expect_out '[1,2]' '[1,2]' --max-bytes 1K

# Usage errors: exit 2.
expect_err '1' 2 'expected a size' --max-bytes 0
expect_err '1' 2 'expected a size' --max-bytes x
expect_err '1' 2 'Usage' --bogus
expect_err '1' 2 'Usage' extra-arg
"$jcs" --help | grep -q 'Usage' || fail "--help"

# --fingerprint: a tool object (no instructions) or the wrapper form.
tool='{"name":"read","description":"Read a file","inputSchema":{"type":"object"}}'
nl=$'\n'
expect_out "$tool" "88c9fee5c85226dedd6c0a56b5ab49e6f23bf01fa0d01a9234621e3b0ab55e80$nl" --fingerprint
expect_out '{"inputSchema":{"type":"object"},"description":"Read a file","name":"read"}' \
	"88c9fee5c85226dedd6c0a56b5ab49e6f23bf01fa0d01a9234621e3b0ab55e80$nl" --fingerprint
expect_out "{\"tool\":$tool}" "88c9fee5c85226dedd6c0a56b5ab49e6f23bf01fa0d01a9234621e3b0ab55e80$nl" --fingerprint
expect_out "{\"instructions\":\"Use with care \\u00e9\",\"tool\":$tool}" \
	"41aaf62d17b303dfcfec7a2604fb76119a92763b6b5d9b0c328fa195f3a4923b$nl" --fingerprint
expect_out "{\"tool\":$tool,\"instructions\":\"\"}" \
	"79cf1dcdbfefd1b8a17c8c56b9ec11e42a46fc2722de81e349feff556b31e80c$nl" --fingerprint
expect_err "{\"tool\":$tool,\"extra\":1}" 1 'unknown member "extra"' --fingerprint
expect_err "{\"tool\":$tool,\"instructions\":5}" 1 '"instructions" must be a string' --fingerprint
expect_err '{"tool":[1]}' 1 '"tool" must be an object' --fingerprint
expect_err '[1]' 1 'must be a JSON object' --fingerprint
expect_err '{"name":"x","n":1,"n":2}' 1 'duplicate member name' --fingerprint

if [[ $fails -ne 0 ]]; then
	echo "$fails failure(s)" >&2
	exit 1
fi
echo "jcs-cli: all checks passed"
