#!/usr/bin/env node
// Completes package-lock.json with rollup's native bindings for other platforms.
//
// The registry mirror these machines use serves only the Linux glibc builds of rollup's bindings,
// so `npm install` cannot write lock entries for the others, and npm 11's `npm ci` refuses a lock
// that lacks any package named in an optionalDependencies map (npm/cli#4828). An entry naming the
// platform it is for is all `npm ci` needs to skip it on every other one. Run after changing
// dependencies: `npm install && node .ci/lock-platforms.mjs`.
import { readFileSync, writeFileSync } from 'node:fs';

const file = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(file, 'utf8'));
const CPU = { 'arm-eabi': 'arm', arm: 'arm', arm64: 'arm64', x64: 'x64', ia32: 'ia32', loong64: 'loong64', ppc64: 'ppc64', riscv64: 'riscv64', s390x: 's390x' };

function platformOf(name) {
  const m = /^@rollup\/rollup-(android|darwin|freebsd|linux|openbsd|openharmony|win32)-(arm-eabi|[a-z0-9]+)(?:-([a-z]+))?$/.exec(name);
  if (!m) return null;
  const [, os, cpu, abi] = m;
  if (!CPU[cpu]) return null;
  const entry = { os: [os], cpu: [CPU[cpu]] };
  if (os === 'linux') entry.libc = [abi && abi.startsWith('musl') ? 'musl' : 'glibc'];
  return entry;
}

let added = 0;
for (const [path, pkg] of Object.entries(lock.packages)) {
  for (const [name, version] of Object.entries(pkg.optionalDependencies ?? {})) {
    const nested = `${path}/node_modules/${name}`;
    const top = `node_modules/${name}`;
    if (lock.packages[nested] || lock.packages[top]) continue;
    const platform = platformOf(name);
    if (!platform) throw new Error(`${path} has an optional dependency ${name} missing from the lock, and no platform is known for it`);
    lock.packages[top] = { version, ...platform, dev: pkg.dev || undefined, license: 'MIT', optional: true };
    added++;
  }
}
writeFileSync(file, JSON.stringify(lock, null, 2) + '\n');
console.log(`lock-platforms: ${added} platform entries added`);
