// Runs jest while other processes keep CPU cores busy, so a test that depends on the machine's speed
// (a fixed sleep sized to a timer, a timed assertion) fails here instead of on a slow CI day.
//   npm run test:busy -- test/tenancy/account-backlog.e2e-spec.ts      (arguments go to jest unchanged)
//   BUSY_CORES=2 npm run test:busy -- --selectProjects e2e      (how many cores to keep busy; default 1)
// The load is Debian's `stress-ng --cpu N` when installed, else N node busy-loop children. It runs in
// its own process group, stopped when jest ends, fails, or this script is interrupted.
import { spawn, spawnSync } from 'node:child_process';
import { loadavg } from 'node:os';

const cores = Number(process.env.BUSY_CORES ?? '1');
if (!Number.isInteger(cores) || cores < 1 || cores > 64) {
  console.error(`BUSY_CORES must be a whole number from 1 to 64, got ${JSON.stringify(process.env.BUSY_CORES)}`);
  process.exit(2);
}

const hasStressNg = spawnSync('sh', ['-c', 'command -v stress-ng'], { stdio: 'ignore' }).status === 0;
const loads = hasStressNg
  ? [spawn('stress-ng', ['--cpu', String(cores), '--quiet'], { detached: true, stdio: 'ignore' })]
  : Array.from({ length: cores }, () => spawn(process.execPath, ['-e', 'for (;;) {}'], { detached: true, stdio: 'ignore' }));

let stopped = false;
function stopLoad() {
  if (stopped) return;
  stopped = true;
  for (const load of loads) {
    try {
      // The whole group: stress-ng's workers are its children.
      process.kill(-load.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}
process.on('exit', stopLoad);

const loadAverage = () => loadavg().map((value) => value.toFixed(2)).join(', ');
console.log(`test:busy: ${cores} core(s) kept busy by ${hasStressNg ? 'stress-ng --cpu' : 'node busy loops'}; load average ${loadAverage()}`);

const jest = spawn(process.execPath, [new URL('../node_modules/jest/bin/jest.js', import.meta.url).pathname, ...process.argv.slice(2)], {
  stdio: 'inherit',
});
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    stopLoad();
    jest.kill(signal);
  });
}
jest.on('error', (error) => {
  console.error(`test:busy: could not start jest: ${error.message}`);
  stopLoad();
  process.exit(1);
});
jest.on('exit', (code, signal) => {
  console.log(`test:busy: jest ended (${signal ?? `exit ${code}`}); load average ${loadAverage()}`);
  stopLoad();
  process.exit(code ?? 1);
});
