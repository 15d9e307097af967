import { Inject, Injectable, Logger } from '@nestjs/common';
import type Redis from 'ioredis';
import type { DeliveryOptions, DeliveryOptionsChange } from '@app/payloads';
import { announceStoredSettingsChange, REDIS, RedisKeys } from '@app/runtime';
import { deliveryOptionsOf, PrimaryDestination } from './primary-destination.service';

/**
 * Stores a checked change of the push URL's delivery options (see checkDeliveryOptions) for the Open
 * API, the admin API and the account portal alike, and tells the workers, as every settings change does.
 */
@Injectable()
export class DeliveryOptionsService {
  private readonly logger = new Logger(DeliveryOptionsService.name);

  constructor(
    private readonly primary: PrimaryDestination,
    @Inject(REDIS) private readonly redis: Redis,
    private readonly keys: RedisKeys,
  ) {}

  /** Applies the options sent in one statement; answers null when the account does not exist. */
  async change(accountId: number, changes: DeliveryOptionsChange): Promise<DeliveryOptions | null> {
    if (changes.ordering === undefined && changes.max_per_second === undefined) throw new Error('a delivery options change must carry at least one option');
    const settings = await this.primary.setOptions(accountId, changes);
    if (!settings) return null;
    await announceStoredSettingsChange(this.redis, this.keys, accountId, this.logger);
    return deliveryOptionsOf(settings);
  }
}
