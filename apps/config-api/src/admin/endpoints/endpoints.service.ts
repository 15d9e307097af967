import { Inject, Injectable } from '@nestjs/common';
import type Redis from 'ioredis';
import type { EndpointItem } from '@app/payloads';
import { Sql } from '@app/persistence';
import { accountIdOfEndpoint, endpointKeyOf, listOpenEndpoints, readEndpointState, REDIS, RedisKeys } from '@app/runtime';
import type { ListEndpointsQueryDto } from './endpoints.dto';
import { DISABLED_PUSH_URLS, PUSH_URLS_OF, type SettingsRow } from './endpoints.statements';

export const MAX_ENDPOINT_ITEMS = 500;

function keyOf(row: SettingsRow): string | null {
  try {
    return endpointKeyOf(row.account_id, row.push_url);
  } catch {
    return null;
  }
}

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}

/**
 * `GET /admin/v1/endpoints`: the accounts whose endpoint is in trouble. Open breakers come from the
 * workers' index in Redis (listOpenEndpoints), disabled endpoints from PostgreSQL's partial index;
 * an account shows once with both sides filled in, most recent trouble first.
 */
@Injectable()
export class EndpointsService {
  constructor(
    private readonly sql: Sql,
    @Inject(REDIS) private readonly redis: Redis,
    private readonly keys: RedisKeys,
  ) {}

  async list(query: ListEndpointsQueryDto): Promise<{ items: EndpointItem[] }> {
    const filter = query.state ?? 'all';
    const open = filter === 'disabled' ? [] : await listOpenEndpoints(this.redis, this.keys, MAX_ENDPOINT_ITEMS);
    const breakers = new Map(open.map((item) => [item.endpoint, item.breaker]));
    const rows = new Map<number, SettingsRow>();
    if (open.length > 0) {
      // An endpoint key names its account; the row counts only while its push_url is still the URL the breaker is about.
      const accountIds = open.map((item) => accountIdOfEndpoint(item.endpoint)).filter((id): id is number => id !== null);
      const candidates = await this.sql.rows(PUSH_URLS_OF, { accountIds });
      for (const row of candidates) if (breakers.has(keyOf(row) ?? '')) rows.set(row.account_id, row);
    }
    if (filter !== 'open') {
      const disabled = await this.sql.rows(DISABLED_PUSH_URLS, { limit: MAX_ENDPOINT_ITEMS });
      for (const row of disabled) rows.set(row.account_id, row);
    }
    const items = await Promise.all(
      [...rows.values()].map(async (row): Promise<EndpointItem> => {
        const breaker = breakers.get(keyOf(row) ?? '') ?? (await readEndpointState(this.redis, this.keys, row.account_id, row.push_url));
        return {
          account_id: row.account_id,
          email: row.email,
          push_url: row.push_url,
          endpoint: originOf(row.push_url),
          breaker: breaker.state,
          consecutive_failures: breaker.consecutive_failures,
          retry_at: breaker.retry_at,
          last_error: breaker.last_error,
          disabled_at: row.disabled_at ? row.disabled_at.toISOString() : null,
          disabled_reason: row.disabled_reason,
        };
      }),
    );
    const openedAt = new Map([...rows.values()].map((row) => [row.account_id, breakers.get(keyOf(row) ?? '')?.opened_at ?? '']));
    const troubleAt = (item: EndpointItem): string => [item.disabled_at ?? '', openedAt.get(item.account_id) ?? ''].sort().at(-1) ?? '';
    items.sort((a, b) => troubleAt(b).localeCompare(troubleAt(a)) || a.account_id - b.account_id);
    return { items: items.slice(0, MAX_ENDPOINT_ITEMS) };
  }
}
