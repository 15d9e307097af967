/**
 * `npm run clients`: regenerates both client libraries from the OpenAPI document config-api serves.
 * `npm run clients:check` (CI): generates into a temporary folder and fails when anything checked in
 * differs. Both read the built app (`npm run build` first): config-api's module is created in Nest's
 * preview mode (no database, Redis or port) and its document built by the same function that serves
 * `/docs/openapi.json`; test/clients-document.e2e-spec.ts checks that the served one gives the same.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { type ApiDocument, documentText, openApiClientDocument } from './openapi-subset';
import { pythonClientFiles } from './python-client';

const ROOT = join(__dirname, '..', '..');
const CLIENTS = join(ROOT, 'clients');

/** What is generated, relative to clients/: the document, then each client's generated folder. */
export const GENERATED = {
  document: 'openapi.json',
  typescript: join('typescript', 'src', 'generated'),
  python: join('python', 'src', 'event_callbacks', '_generated'),
};

interface PreviewApp {
  close(): Promise<void>;
}

/** config-api's OpenAPI document, from the built app, without starting it. */
export async function configApiDocument(): Promise<ApiDocument> {
  const built = (path: string): string => join(ROOT, 'dist', path);
  const module = built('apps/config-api/src/config-api.module.js');
  if (!existsSync(module)) throw new Error(`${relative(ROOT, module)} is missing: run npm run build first`);
  /* eslint-disable @typescript-eslint/no-require-imports -- the built app, read at run time */
  require('reflect-metadata');
  const { NestFactory } = require('@nestjs/core') as typeof import('@nestjs/core');
  const { buildApiDocument } = require(built('libs/runtime/src/docs/index.js')) as typeof import('../../libs/runtime/src/docs');
  const { ConfigApiModule } = require(module) as { ConfigApiModule: new () => unknown };
  const { CONFIG_API_DOCS } = require(built('apps/config-api/src/config-api.docs.js')) as typeof import('../../apps/config-api/src/config-api.docs');
  /* eslint-enable @typescript-eslint/no-require-imports */
  const app = (await NestFactory.create(ConfigApiModule, { preview: true, logger: false, abortOnError: false })) as unknown as PreviewApp;
  try {
    return buildApiDocument(app as never, CONFIG_API_DOCS) as unknown as ApiDocument;
  } finally {
    await app.close();
  }
}

function write(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

/** Writes the document and both generated folders under `root` (clients/ or a temporary copy of its layout). */
export function generateInto(root: string, document: ApiDocument): void {
  const documentPath = join(root, GENERATED.document);
  write(documentPath, documentText(document));

  const typescript = join(root, GENERATED.typescript);
  rmSync(typescript, { recursive: true, force: true });
  const heyApi = join(dirname(require.resolve('@hey-api/openapi-ts/package.json', { paths: [ROOT] })), 'bin', 'run.js');
  const run = spawnSync(process.execPath, [heyApi, '--file', join(CLIENTS, 'typescript', 'openapi-ts.config.mjs'), '--silent', '--no-log-file'], {
    cwd: join(CLIENTS, 'typescript'),
    env: { ...process.env, CLIENTS_OPENAPI_DOCUMENT: documentPath, CLIENTS_TYPESCRIPT_OUTPUT: typescript },
    encoding: 'utf8',
  });
  if (run.status !== 0) throw new Error(`@hey-api/openapi-ts failed (exit ${run.status ?? run.signal}):\n${run.stdout}${run.stderr}`);

  const python = join(root, GENERATED.python);
  rmSync(python, { recursive: true, force: true });
  for (const [file, text] of Object.entries(pythonClientFiles(document))) write(join(python, file), text);
}

/** Every file under `folder`, relative to it, sorted. */
function filesUnder(folder: string): string[] {
  if (!existsSync(folder)) return [];
  if (statSync(folder).isFile()) return [''];
  return readdirSync(folder, { recursive: true, encoding: 'utf8' })
    .filter((file) => statSync(join(folder, file)).isFile())
    .sort();
}

/** The generated files that differ between clients/ and `fresh`, as `clients/...` paths. */
export function differences(fresh: string): string[] {
  const found: string[] = [];
  for (const part of Object.values(GENERATED)) {
    const here = join(CLIENTS, part);
    const there = join(fresh, part);
    for (const file of new Set([...filesUnder(here), ...filesUnder(there)])) {
      const a = join(here, file);
      const b = join(there, file);
      const same = existsSync(a) && existsSync(b) && readFileSync(a).equals(readFileSync(b));
      if (!same) found.push(relative(ROOT, a) || a);
    }
  }
  return found.sort();
}

async function main(): Promise<void> {
  const check = process.argv.includes('--check');
  const document = openApiClientDocument(await configApiDocument());
  if (!check) {
    generateInto(CLIENTS, document);
    console.log('clients: wrote clients/openapi.json, clients/typescript/src/generated and clients/python/src/event_callbacks/_generated');
    return;
  }
  const fresh = mkdtempSync(join(tmpdir(), 'clients-check-'));
  try {
    generateInto(fresh, document);
    const changed = differences(fresh);
    if (changed.length > 0) {
      console.error(`clients: the checked-in clients differ from what the generators make (run npm run clients and commit):\n  ${changed.join('\n  ')}`);
      process.exitCode = 1;
      return;
    }
    console.log('clients: the checked-in clients are what the generators make');
  } finally {
    rmSync(fresh, { recursive: true, force: true });
  }
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
