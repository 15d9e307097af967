import { parse } from 'qs';

/** What a bracket form parser reads back for a message: every scalar as a string, null as '', empty containers gone. */
export function asFormParsed(value: unknown): unknown {
  if (value === null) return '';
  if (Array.isArray(value)) {
    const items = value.map(asFormParsed).filter((item) => item !== undefined);
    return items.length > 0 ? items : undefined;
  }
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .map(([key, child]) => [key, asFormParsed(child)] as const)
      .filter(([, child]) => child !== undefined);
    return entries.length > 0 ? Object.fromEntries(entries) : undefined;
  }
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** Deep enough and with arrays long enough for any message; qs's defaults (depth 5, arrayLimit 20) are for browsers. */
export function parseFormBody(body: string): Record<string, unknown> {
  return parse(body, { depth: 50, arrayLimit: 10_000, parameterLimit: 100_000 });
}
