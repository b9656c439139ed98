// Lets @modelcontextprotocol/conformance 0.1.16 load on Node 20. Its bundle
// imports `globSync` from `fs` (Node >= 22) at the top, for its `tier-check`
// command only; the `server` command the conformance test runs never calls
// it. On a Node without fs.globSync this resolve/load hook hands the
// conformance bundle (and nothing else) an `fs` that adds a globSync which
// throws. On Node >= 22 it does nothing.
//   node --import DIR/conformance-node20.mjs DIR/node_modules/@modelcontextprotocol/conformance/dist/index.js ...
import { register } from 'node:module';
import fs from 'node:fs';

const shim = 'cordon-shim:fs';
if (typeof fs.globSync !== 'function') register(import.meta.url, import.meta.url);

export async function resolve(specifier, context, next) {
	if ((specifier === 'fs' || specifier === 'node:fs') && context.parentURL?.includes('/@modelcontextprotocol/conformance/'))
		return { url: shim, shortCircuit: true };
	return next(specifier, context);
}

export async function load(url, context, next) {
	if (url !== shim) return next(url, context);
	const source =
		"import fs from 'node:fs'; export * from 'node:fs'; export default fs;\n" +
		"export function globSync() { throw new Error('fs.globSync needs Node 22 or later'); }\n";
	return { format: 'module', source, shortCircuit: true };
}
