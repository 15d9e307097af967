import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type Redis from 'ioredis';
import { DataSource } from 'typeorm';
import type { DeliveryOptions, DeliveryOptionsChange, DeliveryOrdering } from '@app/payloads';
import type { CallbackSettings } from '@app/persistence';
import { announceStoredSettingsChange, REDIS, RedisKeys } from '@app/runtime';

/** What an account without a settings row (or with the defaults) delivers with (CONTRACT §9). */
export const DEFAULT_DELIVERY_OPTIONS: DeliveryOptions = { ordering: 'none', max_per_second: null };

/** The options as every API shows them. */
export function deliveryOptionsOf(settings: Pick<CallbackSettings, 'deliveryOrdering' | 'maxPerSecond'> | null): DeliveryOptions {
  if (!settings) return { ...DEFAULT_DELIVERY_OPTIONS };
  return { ordering: settings.deliveryOrdering, max_per_second: settings.maxPerSecond };
}

/** Columns an existing row takes from the proposed (EXCLUDED) row, for the options that were sent. */
const ASSIGNMENTS: Record<keyof DeliveryOptions, string> = {
  ordering: 'delivery_ordering = EXCLUDED.delivery_ordering',
  max_per_second: 'max_per_second = EXCLUDED.max_per_second',
};

interface OptionsRow {
  delivery_ordering: DeliveryOrdering;
  max_per_second: number | null;
}

/**
 * Stores a checked change (see checkDeliveryOptions) for the Open API, the admin API and the account
 * portal alike, and tells the workers, exactly as the other settings changes do.
 */
@Injectable()
export class DeliveryOptionsService {
  private readonly logger = new Logger(DeliveryOptionsService.name);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(REDIS) private readonly redis: Redis,
    private readonly keys: RedisKeys,
  ) {}

  /**
   * Applies the options sent and bumps `version` in one statement, so concurrent changes of different
   * options never undo each other. The settings row is created with the account; the upsert only covers
   * a row that went missing. Answers null when the account does not exist.
   */
  async change(accountId: number, changes: DeliveryOptionsChange): Promise<DeliveryOptions | null> {
    const sent = (Object.keys(ASSIGNMENTS) as (keyof DeliveryOptions)[]).filter((option) => changes[option] !== undefined);
    if (sent.length === 0) throw new Error('a delivery options change must carry at least one option');
    const rows: OptionsRow[] = await this.dataSource.query(
      `INSERT INTO callback_settings (account_id, permissions, delivery_ordering, max_per_second, version)
       SELECT id, '{}'::jsonb, $2, $3::integer, 1 FROM accounts WHERE id = $1 AND deleted_at IS NULL
       ON CONFLICT (account_id) DO UPDATE
          SET ${sent.map((option) => ASSIGNMENTS[option]).join(', ')}, version = callback_settings.version + 1, updated_at = now()
       RETURNING delivery_ordering, max_per_second`,
      [accountId, changes.ordering ?? DEFAULT_DELIVERY_OPTIONS.ordering, changes.max_per_second ?? null],
    );
    if (rows.length === 0) return null;
    await announceStoredSettingsChange(this.redis, this.keys, accountId, this.logger);
    return { ordering: rows[0].delivery_ordering, max_per_second: rows[0].max_per_second };
  }
}
