#!/usr/bin/env bash
# jcs-node-differential.sh CORDON_JCS: RFC 8785 defines canonical JSON by
# ECMAScript's JSON.stringify and Number::toString, so V8 (node) is the
# reference. node generates random JSON values, writes each in a "messy"
# form (random whitespace, \u escapes, surrogate-pair escapes, non-shortest
# number lexemes, random key order) and the canonical form computed with V8
# (keys sorted by Array.prototype.sort, which compares UTF-16 code units);
# cordon-jcs must produce exactly the same bytes. Seeded, so reproducible.
set -euo pipefail
jcs=$1
if ! command -v node >/dev/null; then
	if [[ ${CORDON_TEST_MUST_RUN:-0} == 1 ]]; then
		echo "node not found and CORDON_TEST_MUST_RUN=1" >&2
		exit 1
	fi
	echo "SKIP: node not found" >&2
	exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cat >"$tmp/gen.js" <<'JS'
'use strict';
const fs = require('fs');
const [seed, mode, inPath, wantPath] = process.argv.slice(2);
let s = Number(seed) >>> 0;
function rnd() { /* mulberry32 */
	s = (s + 0x6d2b79f5) >>> 0;
	let t = s;
	t = Math.imul(t ^ (t >>> 15), t | 1);
	t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
	return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const ri = (n) => Math.floor(rnd() * n);
const dv = new DataView(new ArrayBuffer(8));
const inBand = (x) => Math.abs(x) > 9007199254740991 && Math.abs(x) < 1e21;
function randomDouble() {
	for (;;) {
		let x;
		switch (ri(4)) {
		case 0: dv.setUint32(0, ri(2 ** 32)); dv.setUint32(4, ri(2 ** 32)); x = dv.getFloat64(0); break;
		case 1: x = (ri(2000001) - 1000000) / (1 + ri(1000)); break;
		case 2: x = (1 + ri(9)) * Math.pow(10, ri(60) - 30); break;
		default: x = ri(2 ** 53) * (ri(2) ? 1 : -1);
		}
		if (Number.isFinite(x) && !inBand(x)) return x;
	}
}
const specials = [0x22, 0x5c, 0x2f, 8, 12, 10, 13, 9, 1, 0x1f, 0x7f, 0x80, 0xe9, 0x2028, 0xfeff, 0xfb33,
	0xffff, 0x1f600, 0x10ffff, 0xe000, 0xd7ff, 0x10000];
function randomString() {
	let out = '';
	for (let n = ri(8); n > 0; n--) {
		let cp;
		switch (ri(5)) {
		case 0: cp = specials[ri(specials.length)]; break;
		case 1: cp = 1 + ri(0x7f); break;
		case 2: cp = ri(0x10000); break;
		case 3: cp = 0x10000 + ri(0x100000); break;
		default: cp = 0x61 + ri(4);
		}
		if (cp === 0 || (cp >= 0xd800 && cp <= 0xdfff)) cp = 0x78;
		out += String.fromCodePoint(cp);
	}
	return out;
}
function randomValue(depth) {
	switch (ri(depth >= 5 ? 6 : 8)) {
	case 0: return null;
	case 1: return ri(2) === 1;
	case 2: return ri(201) - 100;
	case 3: return randomDouble();
	case 4: case 5: return randomString();
	case 6: { const a = []; for (let n = ri(6); n > 0; n--) a.push(randomValue(depth + 1)); return a; }
	default: {
		const o = {};
		for (let n = ri(6); n > 0; n--) o[randomString()] = randomValue(depth + 1);
		return o;
	}
	}
}
/* The reference: RFC 8785 in a few lines of ECMAScript. */
function canon(v) {
	if (v === null || typeof v !== 'object') return JSON.stringify(v);
	if (Array.isArray(v)) return '[' + v.map(canon).join(',') + ']';
	return '{' + Object.keys(v).sort().map((k) => JSON.stringify(k) + ':' + canon(v[k])).join(',') + '}';
}
/* A different but equivalent text for the same value. */
const ws = () => [' ', '', '\n', '\t', '  ', '\r\n'][ri(6)];
function messyString(str) {
	let out = '"';
	for (const ch of str) {
		const cp = ch.codePointAt(0);
		if (ri(4) === 0 || cp < 0x20 || ch === '"' || ch === '\\') {
			if (ch === '/' && ri(2)) { out += '\\/'; continue; }
			const units = cp >= 0x10000 ? [0xd800 + ((cp - 0x10000) >> 10), 0xdc00 + ((cp - 0x10000) & 0x3ff)] : [cp];
			for (const u of units) {
				const h = u.toString(16).padStart(4, '0');
				out += '\\u' + (ri(2) ? h : h.toUpperCase());
			}
		} else out += ch;
	}
	return out + '"';
}
function messyNumber(x) {
	if (Object.is(x, -0)) return ['-0', '-0.0', '0', '-0e5'][ri(4)];
	switch (ri(4)) {
	case 0: return String(x);
	case 1: return x.toExponential().replace('e+', ri(2) ? 'E+' : 'e');
	case 2: { const t = x.toPrecision(17); return t; }
	default: return JSON.stringify(x);
	}
}
function messy(v) {
	if (v === null) return 'null';
	if (typeof v === 'boolean') return String(v);
	if (typeof v === 'number') return messyNumber(v);
	if (typeof v === 'string') return messyString(v);
	if (Array.isArray(v)) return '[' + ws() + v.map((e) => messy(e)).join(ws() + ',' + ws()) + ws() + ']';
	const keys = Object.keys(v);
	for (let i = keys.length - 1; i > 0; i--) { const j = ri(i + 1); [keys[i], keys[j]] = [keys[j], keys[i]]; }
	return '{' + ws() + keys.map((k) => messyString(k) + ws() + ':' + ws() + messy(v[k])).join(',' + ws()) + ws() + '}';
}
const values = [];
if (mode === 'numbers') {
	for (let i = 0; i < 20000; i++) values.push(randomDouble());
	/* Powers of two, where the round-trip interval is asymmetric, and
	 * powers of ten, where digit carries happen; with their neighbours. */
	for (let e = -1074; e <= 1023; e++) {
		for (const x of [Math.pow(2, e), -Math.pow(2, e)]) {
			dv.setFloat64(0, x);
			const lo = dv.getBigUint64(0);
			for (const d of [-1n, 0n, 1n]) {
				dv.setBigUint64(0, lo + d);
				const y = dv.getFloat64(0);
				if (Number.isFinite(y) && !inBand(y)) values.push(y);
			}
		}
	}
	for (let e = -323; e <= 308; e++) {
		const x = Number('1e' + e);
		dv.setFloat64(0, x);
		const lo = dv.getBigUint64(0);
		for (const d of [-1n, 0n, 1n]) {
			dv.setBigUint64(0, lo + d);
			const y = dv.getFloat64(0);
			if (Number.isFinite(y) && !inBand(y) && y !== 0) values.push(y);
		}
	}
}
else for (let i = 0; i < 1500; i++) values.push(randomValue(0));
/* One document: an array of the values (canonical array = joined items). */
fs.writeFileSync(inPath, ws() + '[' + values.map(messy).join(',' + ws()) + ']' + ws());
fs.writeFileSync(wantPath, '[' + values.map(canon).join(',') + ']');
JS

fails=0
for seed in 1 2 3 4 5; do
	for mode in values numbers; do
		node "$tmp/gen.js" "$seed" "$mode" "$tmp/in.json" "$tmp/want.json"
		if ! "$jcs" --max-bytes 4M <"$tmp/in.json" >"$tmp/out.json"; then
			echo "FAIL: seed $seed $mode: cordon-jcs refused the input" >&2
			fails=$((fails + 1))
			continue
		fi
		if ! cmp -s "$tmp/out.json" "$tmp/want.json"; then
			echo "FAIL: seed $seed $mode: output differs from V8 at byte $(cmp "$tmp/out.json" "$tmp/want.json" | awk '{print $5}')" >&2
			cmp "$tmp/out.json" "$tmp/want.json" | head -1 >&2 || true
			fails=$((fails + 1))
		fi
	done
done
[[ $fails -eq 0 ]] || exit 1
echo "jcs-node-differential: cordon-jcs matches V8 on all batches"
