#!/usr/bin/env node
// The image check CI runs (`node scripts/check-image.mjs`): lays out in a temporary folder exactly what
// the Dockerfile's build stage copies (its COPY lines, less what .dockerignore leaves out), runs that
// stage's build steps there, then checks that what the runtime stage and docker-compose.yml start
// exists in the result and needs no development package. `npm ci` is replaced by a link to this
// checkout's node_modules (no network needed); the TypeScript and console builds run from the copied
// files only, so a source the Dockerfile forgets fails here as it would in `docker build`. When a
// Docker engine answers (`docker info`), the real image is built too.
//
// Options: --dockerfile PATH (another Dockerfile, same build context), --no-docker, --keep (leave the
// temporary folder and print where it is).
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, posix, relative, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';

const root = resolve(dirname(new URL(import.meta.url).pathname), '..');
const args = process.argv.slice(2);
const option = (name) => {
  const index = args.indexOf(name);
  return index >= 0 ? args[index + 1] : undefined;
};
const dockerfile = resolve(option('--dockerfile') ?? join(root, 'Dockerfile'));

class CheckError extends Error {}

/** Dockerfile instructions, continuation lines joined and comments dropped, grouped by stage. */
function parseDockerfile(text) {
  const lines = [];
  let current = '';
  for (const raw of text.split('\n')) {
    if (current === '' && /^\s*#/.test(raw)) continue;
    const line = raw.replace(/\s+$/, '');
    if (line.endsWith('\\')) {
      current += `${line.slice(0, -1)} `;
      continue;
    }
    current += line;
    if (current.trim() !== '') lines.push(current.trim());
    current = '';
  }
  const stages = [];
  for (const line of lines) {
    const [, keyword, rest] = /^(\w+)\s+(.*)$/.exec(line) ?? [];
    if (!keyword) throw new CheckError(`cannot read Dockerfile line: ${line}`);
    const instruction = keyword.toUpperCase();
    if (instruction === 'FROM') {
      const name = /\sAS\s+(\S+)/i.exec(rest)?.[1];
      stages.push({ name: name ?? String(stages.length), workdir: '/', steps: [] });
      continue;
    }
    const stage = stages.at(-1);
    if (!stage) throw new CheckError(`${instruction} before any FROM`);
    if (instruction === 'WORKDIR') stage.workdir = posix.resolve(stage.workdir, rest);
    else stage.steps.push({ instruction, rest, workdir: stage.workdir });
  }
  return stages;
}

/** Sources and destination of a COPY (shell or JSON form) and its --from stage, if any. */
function copyOperands(rest) {
  const flags = {};
  let text = rest;
  for (let match = /^--(\w+)=(\S+)\s+/.exec(text); match; match = /^--(\w+)=(\S+)\s+/.exec(text)) {
    flags[match[1]] = match[2];
    text = text.slice(match[0].length);
  }
  const words = text.startsWith('[') ? JSON.parse(text) : text.split(/\s+/);
  return { from: flags.from, sources: words.slice(0, -1), destination: words.at(-1) };
}

/** .dockerignore as a predicate over context-relative paths (Docker's rules: anchored, `**`, `!` exceptions, last match wins). */
function dockerIgnore(text) {
  const rules = text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const exception = line.startsWith('!');
      const pattern = posix.normalize((exception ? line.slice(1) : line).replace(/^\/+/, ''));
      const source = pattern
        .split('/')
        .map((part) => (part === '**' ? '.*' : part.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*').replace(/\?/g, '[^/]')))
        .join('/')
        .replace(/\.\*\//g, '(?:.*/)?');
      return { exception, regex: new RegExp(`^${source}(?:/.*)?$`) };
    });
  return (path) => rules.reduce((ignored, rule) => (rule.regex.test(path) ? !rule.exception : ignored), false);
}

/** Copies `source` (context-relative) to `target`, leaving out what .dockerignore excludes. */
function copyFromContext(context, source, target, ignored) {
  const from = join(context, source);
  if (!existsSync(from)) throw new CheckError(`COPY ${source}: not in the build context`);
  if (ignored(posix.normalize(source))) throw new CheckError(`COPY ${source}: excluded by .dockerignore`);
  cpSync(from, target, {
    recursive: true,
    filter: (path) => {
      const inContext = relative(context, path).split('\\').join('/');
      return inContext === '' || !ignored(inContext);
    },
  });
}

function run(command, cwd) {
  // The build stage sets no NODE_ENV; neither does this run, whatever the caller's environment says.
  const env = { ...process.env };
  delete env.NODE_ENV;
  const result = spawnSync('sh', ['-c', command], { cwd, encoding: 'utf8', env, maxBuffer: 64 * 2 ** 20 });
  if (result.status !== 0) throw new CheckError(`RUN ${command} failed (exit ${result.status ?? result.signal}):\n${`${result.stdout}${result.stderr}`.trim().split('\n').slice(-40).join('\n')}`);
}

/** Lays out the build stage's COPY lines under `folder` and runs its RUN lines there. */
function buildStage(stage, context, folder, ignored) {
  for (const step of stage.steps) {
    const here = join(folder, posix.relative(stage.workdir, step.workdir));
    mkdirSync(here, { recursive: true });
    if (step.instruction === 'COPY') {
      const { from, sources, destination } = copyOperands(step.rest);
      if (from) throw new CheckError(`the build stage copies from stage ${from}; this check lays out one build stage`);
      const target = posix.resolve(step.workdir, destination);
      const intoFolder = destination.endsWith('/') || sources.length > 1;
      for (const source of sources) {
        const copyTo = join(folder, posix.relative(stage.workdir, target), intoFolder && !statSync(join(context, source)).isDirectory() ? posix.basename(source) : '');
        copyFromContext(context, source, copyTo, ignored);
      }
    } else if (step.instruction === 'RUN') {
      // The only network step: the packages are the ones this checkout installed from the same lockfile.
      if (/^npm ci\b/.test(step.rest)) symlinkSync(join(context, 'node_modules'), join(here, 'node_modules'), 'dir');
      else run(step.rest, here);
    }
  }
}

/** Every `dist/….js` the runtime stage and docker-compose.yml start, which must exist in the build output. */
function entryPoints(runtime, compose) {
  const found = new Set();
  const collect = (text) => {
    for (const match of String(text).matchAll(/\bdist\/[\w./-]+\.js\b/g)) found.add(match[0]);
  };
  for (const step of runtime.steps) if (step.instruction === 'CMD' || step.instruction === 'ENTRYPOINT') collect(step.rest);
  for (const service of Object.values(compose.services ?? {})) {
    if (service.build !== undefined) collect(JSON.stringify(service.command ?? ''));
  }
  return [...found];
}

/** Bare package names the built server code requires that `npm ci --omit=dev` would not install. */
function devOnlyRequires(distFolder, packageJson) {
  const production = new Set(Object.keys(packageJson.dependencies ?? {}));
  const development = new Set(Object.keys(packageJson.devDependencies ?? {}));
  const problems = new Set();
  const walk = (folder) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.js')) {
        for (const match of readFileSync(path, 'utf8').matchAll(/require\("((?:@[^/"]+\/)?[^/".][^/"]*)[^"]*"\)/g)) {
          if (development.has(match[1]) && !production.has(match[1])) problems.add(`${relative(distFolder, path)} requires ${match[1]} (a devDependency)`);
        }
      }
    }
  };
  for (const part of ['apps', 'libs', 'scripts']) if (existsSync(join(distFolder, part))) walk(join(distFolder, part));
  return [...problems];
}

function dockerAnswers() {
  return spawnSync('docker', ['info'], { stdio: 'ignore' }).status === 0;
}

function main() {
  const context = root;
  const stages = parseDockerfile(readFileSync(dockerfile, 'utf8'));
  const runtime = stages.at(-1);
  const copiedFrom = runtime.steps.map((step) => step.instruction === 'COPY' && copyOperands(step.rest)).filter((copy) => copy && copy.from);
  const build = stages.find((stage) => copiedFrom.some((copy) => copy.from === stage.name));
  if (!build || build === runtime) throw new CheckError('the Dockerfile has no build stage the runtime stage copies from');
  const ignoreFile = join(context, '.dockerignore');
  const ignored = dockerIgnore(existsSync(ignoreFile) ? readFileSync(ignoreFile, 'utf8') : '');

  const folder = mkdtempSync(join(tmpdir(), 'image-check-'));
  try {
    process.stdout.write(`laying out stage "${build.name}" of ${relative(root, dockerfile) || dockerfile} in ${folder}\n`);
    buildStage(build, context, folder, ignored);
    for (const copy of copiedFrom) {
      for (const source of copy.sources) {
        if (!existsSync(join(folder, posix.relative(build.workdir, source)))) throw new CheckError(`the runtime stage copies ${source} from "${copy.from}", which the build did not make`);
      }
    }
    const compose = parseYaml(readFileSync(join(context, 'docker-compose.yml'), 'utf8'), { merge: true });
    const missing = entryPoints(runtime, compose).filter((entry) => !existsSync(join(folder, entry)));
    if (missing.length > 0) throw new CheckError(`the image would lack what it starts: ${missing.join(', ')}`);
    const devOnly = devOnlyRequires(join(folder, 'dist'), JSON.parse(readFileSync(join(context, 'package.json'), 'utf8')));
    if (devOnly.length > 0) throw new CheckError(`the runtime stage installs production packages only, but:\n${devOnly.join('\n')}`);
    process.stdout.write(`image layout: the build stage built from its copied files; ${entryPoints(runtime, compose).length} entry points present\n`);
  } finally {
    if (args.includes('--keep')) process.stdout.write(`kept ${folder}\n`);
    else rmSync(folder, { recursive: true, force: true });
  }

  if (args.includes('--no-docker')) return;
  if (!dockerAnswers()) {
    process.stdout.write('docker build: skipped (no Docker engine answers `docker info`)\n');
    return;
  }
  execFileSync('docker', ['build', '--file', dockerfile, '--tag', 'event-callbacks:check', context], { stdio: 'inherit' });
  process.stdout.write('docker build: event-callbacks:check built\n');
}

try {
  main();
} catch (error) {
  process.stderr.write(`image check failed: ${error instanceof CheckError ? error.message : (error?.stack ?? String(error))}\n`);
  process.exit(1);
}
