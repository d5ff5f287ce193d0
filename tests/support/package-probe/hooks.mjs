// A module resolution hook (node:module register): each bare specifier resolved, once per
// thread, as a line `package-probe: <package>` on stderr.
const seen = new Set();

/** @type {import('node:module').ResolveHook} */
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  if (!specifier.startsWith('.') && !specifier.startsWith('/') && !specifier.includes(':')) {
    const name = specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0];
    if (!seen.has(name)) {
      seen.add(name);
      process.stderr.write(`package-probe: ${name}\n`);
    }
  }
  return resolved;
}
