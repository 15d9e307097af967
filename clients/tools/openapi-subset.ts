/**
 * The client libraries' input: the Open API part of config-api's OpenAPI document (paths under
 * `/open_api_v1/`), without the five signed query parameters every operation carries (the clients'
 * hand-written signing adds them to every call), and only the schemas those operations reach.
 */

export const OPEN_API_PREFIX = '/open_api_v1/';

/** CONTRACT §2's signature, added by the clients' signing module instead of each operation's parameters. */
export const SIGNED_QUERY_PARAMETERS = ['email', 'timestamp', 'nonce', 'sign_version', 'sign'] as const;

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;
const SCHEMA_REF = /"#\/components\/schemas\/([^"]+)"/g;

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

export interface ApiDocument {
  openapi: string;
  info: { title: string; version: string; description?: string };
  paths: Record<string, Record<string, unknown>>;
  components?: { schemas?: Record<string, unknown> };
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function sortedKeys<T>(record: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.keys(record).sort().map((key) => [key, record[key]]));
}

/** The schema names `value` refers to, directly. */
function refsIn(value: unknown): string[] {
  return [...JSON.stringify(value).matchAll(SCHEMA_REF)].map((match) => match[1]);
}

export const CLIENT_DOCUMENT_DESCRIPTION =
  "The signed Open API of config-api (`/open_api_v1/*`), as the client libraries see it: every call also carries the query parameters `email`, `timestamp`, `nonce`, `sign_version=v2` and `sign` (CONTRACT §2), which the clients' signing adds, so the operations here do not list them. Derived from config-api's `/docs/openapi.json` by `npm run clients`.";

export function openApiClientDocument(document: ApiDocument): ApiDocument {
  const signed = new Set<string>(SIGNED_QUERY_PARAMETERS);
  const paths: Record<string, Record<string, unknown>> = {};
  for (const path of Object.keys(document.paths).filter((candidate) => candidate.startsWith(OPEN_API_PREFIX)).sort()) {
    const item: Record<string, unknown> = {};
    for (const method of METHODS) {
      const operation = document.paths[path][method];
      if (!isObject(operation)) continue;
      const copy = structuredClone(operation);
      const parameters = Array.isArray(copy.parameters) ? copy.parameters : [];
      const kept = parameters.filter((parameter) => !(isObject(parameter) && parameter.in === 'query' && typeof parameter.name === 'string' && signed.has(parameter.name)));
      if (kept.length > 0) copy.parameters = kept;
      else delete copy.parameters;
      item[method] = copy;
    }
    paths[path] = item;
  }
  const all = document.components?.schemas ?? {};
  const reached = new Set<string>();
  const pending = refsIn(paths);
  while (pending.length > 0) {
    const name = pending.pop() as string;
    if (reached.has(name)) continue;
    if (!(name in all)) throw new Error(`the document refers to #/components/schemas/${name}, which it does not define`);
    reached.add(name);
    pending.push(...refsIn(all[name]));
  }
  const schemas = Object.fromEntries([...reached].sort().map((name) => [name, all[name]]));
  return {
    openapi: document.openapi,
    info: { title: 'Event callbacks: Open API', version: document.info.version, description: CLIENT_DOCUMENT_DESCRIPTION },
    paths: sortedKeys(paths),
    components: { schemas },
  };
}

/** How the checked-in document is written: two-space JSON and a final newline. */
export function documentText(document: ApiDocument): string {
  return `${JSON.stringify(document, null, 2)}\n`;
}
