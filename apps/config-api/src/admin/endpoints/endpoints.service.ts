import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type Redis from 'ioredis';
import { DataSource } from 'typeorm';
import type { EndpointItem } from '@app/payloads';
import { ENVIRONMENT, endpointKeyOf, type Environment, listOpenEndpoints, readEndpointState, REDIS } from '@app/runtime';
import type { ListEndpointsQueryDto } from './endpoints.dto';

export const MAX_ENDPOINT_ITEMS = 500;

interface SettingsRow {
  account_id: number;
  email: string;
  push_url: string;
  disabled_at: Date | null;
  disabled_reason: string | null;
}

const SETTINGS_COLUMNS = `s.account_id, a.email, s.push_url, s.disabled_at, s.disabled_reason
  FROM callback_settings s JOIN accounts a ON a.id = s.account_id`;

function originOf(url: string): string | null {
  try {
    return endpointKeyOf(url);
  } catch {
    return null;
  }
}

/** LIKE prefix of an origin (its characters taken literally). */
function prefixPattern(origin: string): string {
  return `${origin.replace(/[\\%_]/g, (char) => `\\${char}`)}%`;
}

/**
 * `GET /admin/v1/endpoints`: the accounts whose endpoint is in trouble. Open breakers come from the
 * workers' index in Redis (listOpenEndpoints), disabled endpoints from PostgreSQL's partial index;
 * an account shows once with both sides filled in, most recent trouble first.
 */
@Injectable()
export class EndpointsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(ENVIRONMENT) private readonly environment: Environment,
  ) {}

  async list(query: ListEndpointsQueryDto): Promise<{ items: EndpointItem[] }> {
    const filter = query.state ?? 'all';
    const prefix = this.environment.redis.prefix;
    const open = filter === 'disabled' ? [] : await listOpenEndpoints(this.redis, prefix, MAX_ENDPOINT_ITEMS);
    const breakers = new Map(open.map((item) => [item.endpoint, item.breaker]));
    const rows = new Map<number, SettingsRow>();
    if (open.length > 0) {
      // Prefix match in SQL narrows the rows; the exact origin check (default ports, letter case) is done here.
      const candidates = await this.dataSource.query<SettingsRow[]>(
        `SELECT ${SETTINGS_COLUMNS} WHERE s.push_url ILIKE ANY($1::text[]) LIMIT 5000`,
        [open.map((item) => prefixPattern(item.endpoint))],
      );
      for (const row of candidates) if (breakers.has(originOf(row.push_url) ?? '')) rows.set(row.account_id, row);
    }
    if (filter !== 'open') {
      const disabled = await this.dataSource.query<SettingsRow[]>(
        `SELECT ${SETTINGS_COLUMNS} WHERE s.disabled_at IS NOT NULL AND s.push_url IS NOT NULL ORDER BY s.disabled_at DESC LIMIT $1`,
        [MAX_ENDPOINT_ITEMS],
      );
      for (const row of disabled) rows.set(row.account_id, row);
    }
    const items = await Promise.all(
      [...rows.values()].map(async (row): Promise<EndpointItem> => {
        const origin = originOf(row.push_url) ?? row.push_url;
        const breaker = breakers.get(origin) ?? (await readEndpointState(this.redis, prefix, row.push_url));
        return {
          account_id: row.account_id,
          email: row.email,
          push_url: row.push_url,
          endpoint: origin,
          breaker: breaker.state,
          consecutive_failures: breaker.consecutive_failures,
          retry_at: breaker.retry_at,
          last_error: breaker.last_error,
          disabled_at: row.disabled_at ? row.disabled_at.toISOString() : null,
          disabled_reason: row.disabled_reason,
        };
      }),
    );
    const troubleAt = (item: EndpointItem): string =>
      [item.disabled_at ?? '', breakers.get(item.endpoint)?.opened_at ?? ''].sort().at(-1) ?? '';
    items.sort((a, b) => troubleAt(b).localeCompare(troubleAt(a)) || a.account_id - b.account_id);
    return { items: items.slice(0, MAX_ENDPOINT_ITEMS) };
  }
}
