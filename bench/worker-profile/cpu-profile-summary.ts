import { readFileSync } from 'node:fs';

/**
 * `node dist/bench/worker-profile/cpu-profile-summary.js <file.cpuprofile> [top]`: self and total time
 * per function (name, file:line) of a V8 CPU profile written by `node --cpu-prof`, heaviest first, plus
 * the self time per package/area, so where the worker's CPU goes can be read without a flame graph viewer.
 */
interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const [file, topText] = process.argv.slice(2);
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const top = Number(topText ?? 40);
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const parent = new Map<number, number>();
for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);

const selfUs = new Map<number, number>();
profile.samples.forEach((id, index) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[index] ?? 0)));
const totalTime = [...selfUs.values()].reduce((a, b) => a + b, 0);

function label(node: ProfileNode): string {
  const url = node.callFrame.url.replace(/^file:\/\//, '').replace(/.*node_modules\//, 'nm:').replace(/.*\/dist\//, '');
  return `${node.callFrame.functionName || '(anonymous)'} ${url}:${node.callFrame.lineNumber + 1}`;
}

function area(node: ProfileNode): string {
  const url = node.callFrame.url;
  const name = node.callFrame.functionName;
  if (!url) return name.startsWith('(') ? name : `native ${name}`;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1];
  if (url.startsWith('node:')) return url;
  const app = /dist\/((?:apps|libs)\/[^/]+\/src\/[^/]+)/.exec(url);
  return app ? app[1] : url;
}

const self = new Map<string, number>();
const total = new Map<string, number>();
const areas = new Map<string, number>();
for (const [id, us] of selfUs) {
  const node = byId.get(id);
  if (!node) continue;
  self.set(label(node), (self.get(label(node)) ?? 0) + us);
  areas.set(area(node), (areas.get(area(node)) ?? 0) + us);
  const seen = new Set<string>();
  for (let current: number | undefined = id; current !== undefined; current = parent.get(current)) {
    const name = label(byId.get(current) as ProfileNode);
    if (seen.has(name)) continue;
    seen.add(name);
    total.set(name, (total.get(name) ?? 0) + us);
  }
}

const pct = (us: number): string => `${((100 * us) / totalTime).toFixed(1).padStart(5)}%`;
const print = (title: string, rows: Map<string, number>): void => {
  process.stdout.write(`\n${title}\n`);
  for (const [name, us] of [...rows].sort((a, b) => b[1] - a[1]).slice(0, top)) process.stdout.write(`${pct(us)} ${(us / 1000).toFixed(0).padStart(7)} ms  ${name}\n`);
};
process.stdout.write(`profile: ${(totalTime / 1000).toFixed(0)} ms sampled\n`);
print('self time by area', areas);
print('self time by function', self);
print('total (inclusive) time by function', total);
