// The registry mirror this project is built against lacks most platform-specific optional binaries
// (rollup, esbuild, msgpackr-extract builds for other systems), so `npm install` leaves them out of
// package-lock.json and `npm ci` then refuses the lock as out of sync. This records each missing one
// as an optional entry restricted to its platform, which `npm ci` accepts and skips elsewhere.
// Run after any `npm install`: node scripts/complete-lockfile.mjs
import { readFileSync, writeFileSync } from 'node:fs';

const OS = ['darwin', 'win32', 'linux', 'android', 'freebsd', 'openbsd', 'netbsd', 'sunos', 'aix', 'openharmony'];
const CPU = ['arm64', 'x64', 'ia32', 'arm', 'ppc64', 's390x', 'riscv64', 'loong64', 'mips64el', 'ppc', 'mips', 'wasm32'];
const aliases = { windows: 'win32', win: 'win32', macos: 'darwin', x86_64: 'x64', aarch64: 'arm64', x86: 'ia32', riscv: 'riscv64', loongarch64: 'loong64', ohos: 'openharmony' };

function platformOf(name) {
  const parts = name.split('/').pop().split(/[-_]/).map((part) => aliases[part] ?? part);
  const entry = {};
  const os = parts.find((part) => OS.includes(part));
  const cpu = parts.find((part) => CPU.includes(part)) ?? (parts.includes('eabi') || parts.includes('gnueabihf') ? 'arm' : undefined);
  if (cpu) entry.cpu = [cpu];
  if (os) entry.os = [os];
  if (parts.includes('musl') || parts.includes('musleabihf')) entry.libc = ['musl'];
  else if (os === 'linux' && (parts.includes('gnu') || parts.includes('gnueabihf'))) entry.libc = ['glibc'];
  return entry;
}

const path = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(path, 'utf8'));
let added = 0;
for (const [location, pkg] of Object.entries(lock.packages)) {
  for (const [name, range] of Object.entries(pkg.optionalDependencies ?? {})) {
    const base = location === '' ? '' : `${location}/`;
    if (lock.packages[`${base}node_modules/${name}`] || lock.packages[`node_modules/${name}`]) continue;
    const version = String(range).replace(/^[\^~=]/, '');
    lock.packages[`node_modules/${name}`] = { version, dev: pkg.dev || undefined, optional: true, ...platformOf(name) };
    added += 1;
  }
}
lock.packages = Object.fromEntries(Object.entries(lock.packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))));
writeFileSync(path, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`recorded ${added} missing optional platform packages`);
