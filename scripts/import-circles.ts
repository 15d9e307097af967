import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import * as ts from 'typescript';

const SOURCE = /\.tsx?$/;
// `generated`: what a generator writes (clients/typescript/src/generated) keeps the generator's own layout.
const SKIPPED_FOLDERS = new Set(['node_modules', 'dist', 'coverage', '.git', 'generated']);

function sourceFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return SKIPPED_FOLDERS.has(entry.name) || entry.name.startsWith('.') ? [] : sourceFiles(path);
    return SOURCE.test(entry.name) && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

function compilerOptions(root: string): ts.CompilerOptions {
  const configPath = join(root, 'tsconfig.json');
  const { config } = ts.readConfigFile(configPath, ts.sys.readFile) as { config: unknown };
  return ts.parseJsonConfigFileContent(config ?? {}, ts.sys, root).options;
}

/** Each file's imports (type-only ones and re-exports included) that resolve to another source file under root. */
export function importGraph(root: string): Map<string, string[]> {
  const options = compilerOptions(root);
  const files = sourceFiles(root);
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const imported = ts.preProcessFile(readFileSync(file, 'utf8'), true, true).importedFiles;
    const targets = imported
      .map(({ fileName }) => ts.resolveModuleName(fileName, file, options, ts.sys).resolvedModule?.resolvedFileName)
      .filter((target): target is string => target !== undefined && known.has(resolve(target)))
      .map((target) => resolve(target));
    graph.set(file, [...new Set(targets)]);
  }
  return graph;
}

/** The strongly connected groups of more than one file (or a file importing itself), by Tarjan's algorithm. */
export function importCircles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  const visit = (file: string): void => {
    index.set(file, index.size);
    low.set(file, index.get(file)!);
    stack.push(file);
    onStack.add(file);
    for (const target of graph.get(file) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(file, Math.min(low.get(file)!, low.get(target)!));
      } else if (onStack.has(target)) {
        low.set(file, Math.min(low.get(file)!, index.get(target)!));
      }
    }
    if (low.get(file) !== index.get(file)) return;
    const group: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      group.push(member);
    } while (member !== file);
    if (group.length > 1 || (graph.get(file) ?? []).includes(file)) circles.push(group.sort());
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return circles;
}

/**
 * The two sibling folders a file import crosses between, or null when it stays in one folder or goes
 * into a folder's own sub-folder or parent (a folder may use what it contains, and the reverse).
 */
function siblingsCrossed(fromFile: string, toFile: string): [string, string] | null {
  const from = dirname(fromFile).split(sep);
  const to = dirname(toFile).split(sep);
  let common = 0;
  while (common < from.length && common < to.length && from[common] === to[common]) common += 1;
  if (common === from.length || common === to.length) return null;
  return [from.slice(0, common + 1).join(sep), to.slice(0, common + 1).join(sep)];
}

/** The folders whose sub-folders must not loop: each app and each lib (`apps/<name>`, `libs/<name>`). */
function unitOf(root: string, folder: string): string | null {
  const [top, name] = relative(root, folder).split(sep);
  return (top === 'apps' || top === 'libs') && name ? join(root, top, name) : null;
}

/**
 * Folder → sibling folders it imports from, inside each app and lib: `apps/x/src/a/one.ts` importing
 * `apps/x/src/b/c/two.ts` is `apps/x/src/a` → `apps/x/src/b`. A loop in this graph (a imports b, which
 * imports a back, through any files) means neither folder can be read, moved or tested without the
 * other, even when no file circle exists.
 */
export function folderGraph(graph: Map<string, string[]>, root: string): Map<string, string[]> {
  const folders = new Map<string, Set<string>>();
  for (const [file, targets] of graph) {
    for (const target of targets) {
      const crossed = siblingsCrossed(file, target);
      if (!crossed) continue;
      const [from, to] = crossed;
      const unit = unitOf(root, from);
      if (unit === null || unit !== unitOf(root, to) || from === unit || to === unit) continue;
      folders.set(from, (folders.get(from) ?? new Set()).add(to));
      if (!folders.has(to)) folders.set(to, new Set());
    }
  }
  return new Map([...folders].map(([folder, targets]) => [folder, [...targets]]));
}

/** The groups of sibling folders in one app or lib that import each other (directly or round a loop of siblings). */
export function folderCircles(graph: Map<string, string[]>, root: string): string[][] {
  return importCircles(folderGraph(graph, root));
}

/** `npx ts-node scripts/import-circles.ts`: lists every file and folder import circle in the repository, exit code 1 when there is one. */
if (require.main === module) {
  const root = resolve(__dirname, '..');
  const graph = importGraph(root);
  const circles = [...importCircles(graph), ...folderCircles(graph, root)];
  for (const circle of circles) console.log(circle.map((path) => relative(root, path)).join('\n  <-> '));
  process.exitCode = circles.length > 0 ? 1 : 0;
}
