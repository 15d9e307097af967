import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type Redis from 'ioredis';
import { DataSource } from 'typeorm';
import type { EndpointItem } from '@app/payloads';
import { PRIMARY_DESTINATION_ID } from '@app/persistence';
import { accountIdOfEndpoint, endpointKeyOf, listOpenEndpoints, readEndpointState, REDIS, RedisKeys } from '@app/runtime';
import type { ListEndpointsQueryDto } from './endpoints.dto';

export const MAX_ENDPOINT_ITEMS = 500;

interface SettingsRow {
  account_id: number;
  email: string;
  push_url: string;
  disabled_at: Date | null;
  disabled_reason: string | null;
}

/** The push URL is the primary destination's target as the account set it (target_shown; the sealed copy is never opened here). */
const SETTINGS_COLUMNS = `s.account_id, a.email, s.target_shown AS push_url, s.disabled_at, s.disabled_reason
  FROM destinations s JOIN accounts a ON a.id = s.account_id AND s.id = '${PRIMARY_DESTINATION_ID}' AND s.deleted_at IS NULL`;

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
    @InjectDataSource() private readonly dataSource: DataSource,
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
      const candidates = await this.dataSource.query<SettingsRow[]>(
        `SELECT ${SETTINGS_COLUMNS} WHERE s.account_id = ANY($1::bigint[]) AND s.target_shown IS NOT NULL`,
        [accountIds],
      );
      for (const row of candidates) if (breakers.has(keyOf(row) ?? '')) rows.set(row.account_id, row);
    }
    if (filter !== 'open') {
      const disabled = await this.dataSource.query<SettingsRow[]>(
        `SELECT ${SETTINGS_COLUMNS} WHERE s.disabled_at IS NOT NULL AND s.target_shown IS NOT NULL ORDER BY s.disabled_at DESC LIMIT $1`,
        [MAX_ENDPOINT_ITEMS],
      );
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
