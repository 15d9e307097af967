import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type Redis from 'ioredis';
import { DataSource, IsNull, QueryFailedError } from 'typeorm';
import { type AccountView, completePermissions, type CreatedAccount, DEFAULT_PUSH_CONTENT_TYPE, type Page } from '@app/payloads';
import { Account, CallbackSettings, PRIMARY_DESTINATION_ID } from '@app/persistence';
import { DeliveryQueues, DomainError, endpointKeyOf, publishSettingsChanged, readEndpointPace, readEndpointState, REDIS, RedisKeys, SecretBox } from '@app/runtime';
import { generateSigningSecret, generateToken } from '@app/signing';
import type { CreateAccountDto } from './account.dto';
import type { ListAccountsQueryDto } from './account-list.dto';
import { pageAccountIds } from './account-list';
import { DestinationsService } from '../../destinations/destinations.service';
import { deliveryOptionsOf, PrimaryDestination } from '../../destinations/primary-destination.service';
import { OperationalEventsPublisher } from '../../destinations/operational-events.publisher';

function isUniqueViolation(error: unknown): error is QueryFailedError & { driverError: { constraint?: string } } {
  return error instanceof QueryFailedError && (error.driverError as { code?: string }).code === '23505';
}

@Injectable()
export class AccountsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(REDIS) private readonly redis: Redis,
    private readonly keys: RedisKeys,
    private readonly secrets: SecretBox,
    private readonly destinations: DestinationsService,
    private readonly primary: PrimaryDestination,
    private readonly queues: DeliveryQueues,
    private readonly operational: OperationalEventsPublisher,
  ) {}

  async create(input: CreateAccountDto): Promise<CreatedAccount> {
    const openApiToken = generateToken(24);
    const signingSecret = generateSigningSecret();
    try {
      const accountId = await this.dataSource.transaction(async (manager) => {
        // insert, not save: save() with an explicit id would UPDATE an existing account of that id.
        const inserted = await manager.insert(Account, {
          ...(input.id !== undefined ? { id: input.id } : {}),
          email: input.email,
          name: input.name ?? null,
          openApiToken: this.secrets.seal(openApiToken),
        });
        const id = (inserted.identifiers[0] as { id: number }).id;
        if (input.id !== undefined) {
          // An explicit id does not advance the identity sequence; move it past the highest id in use.
          await manager.query(
            `SELECT setval(pg_get_serial_sequence('accounts', 'id'), GREATEST((SELECT max(id) FROM accounts), 1))`,
          );
        }
        await manager.insert(CallbackSettings, { accountId: id, permissions: completePermissions(null) });
        // A transaction's manager always runs on its own query runner.
        await this.primary.create(manager.queryRunner!, id, signingSecret);
        return id;
      });
      return { id: accountId, email: input.email, name: input.name ?? null, open_api_token: openApiToken, signing_secret: signingSecret };
    } catch (error) {
      if (isUniqueViolation(error)) {
        const constraint = error.driverError.constraint ?? '';
        const field = constraint.includes('email') ? 'email' : 'id';
        throw new DomainError('conflict', `an account with this ${field} already exists`);
      }
      throw error;
    }
  }

  async view(accountId: number): Promise<AccountView> {
    const account = await this.dataSource.getRepository(Account).findOneBy({ id: accountId, deletedAt: IsNull() });
    if (!account) throw new DomainError('not_found', `account ${accountId} does not exist`);
    const [settings, primary] = await Promise.all([this.dataSource.getRepository(CallbackSettings).findOneBy({ accountId }), this.primary.read(accountId)]);
    const pushUrl = primary?.pushUrl ?? null;
    return {
      id: account.id,
      email: account.email,
      name: account.name,
      created_at: account.createdAt.toISOString(),
      push_url: pushUrl,
      push_content_type: primary?.contentType ?? DEFAULT_PUSH_CONTENT_TYPE,
      permissions: completePermissions(settings?.permissions),
      ...deliveryOptionsOf(primary),
      redaction_fields: settings?.redactionFields ?? [],
      previous_secret_expires_at: primary?.previousSecretExpiresAt?.toISOString() ?? null,
      disabled_at: primary?.disabledAt?.toISOString() ?? null,
      disabled_reason: primary?.disabledReason ?? null,
      endpoint: pushUrl ? await readEndpointState(this.redis, this.keys, account.id, pushUrl) : null,
      lane: await this.lane(account.id, pushUrl, primary?.maxPerSecond ?? null),
      destinations: await this.destinations.list(account.id),
    };
  }

  /** The account's deliveries in the queue, not taken yet or being worked on (its fair-turn counter), and the pace the workers now keep to. */
  private async lane(accountId: number, pushUrl: string | null, maxPerSecond: number | null): Promise<AccountView['lane']> {
    let waiting = 0;
    let pace: number | null = maxPerSecond;
    try {
      waiting = await this.queues.accountJobs(accountId);
      if (pushUrl) pace = await readEndpointPace(this.redis, this.keys, endpointKeyOf(accountId, pushUrl), maxPerSecond);
    } catch {
      // Redis away, or not a URL: the view still answers with what the database says.
    }
    return { waiting, pace_per_second: pace };
  }

  /**
   * `GET /admin/v1/accounts`: one indexed query picks the page, then each item is the same view as
   * `GET /admin/v1/accounts/:id` (built concurrently), so the two can never disagree.
   */
  async list(query: ListAccountsQueryDto): Promise<Page<AccountView>> {
    const page = await pageAccountIds(this.dataSource, query);
    const items = await Promise.all(
      page.ids.map(async (id) => {
        try {
          return await this.view(id);
        } catch (error) {
          if (error instanceof DomainError && error.code === 'not_found') return null;
          throw error;
        }
      }),
    );
    // An account deleted between the two reads simply drops out of the page.
    return { items: items.filter((item): item is AccountView => item !== null), next_cursor: page.nextCursor };
  }

  /**
   * Calls the account's endpoint again after it was disabled (a no-op when it was not), with a fresh
   * failure clock; the workers are told at once. Events that ended `failed` meanwhile stay failed
   * until redelivered.
   */
  async enableEndpoint(accountId: number): Promise<AccountView> {
    const [rows] = await this.dataSource.query<[{ was_disabled: boolean; target_shown: string | null }[], number]>(
      // \`before\` is joined, not read in RETURNING: read there it runs after the update, and FOR UPDATE
      // skips a row this very statement changed, so it would never say the endpoint was disabled.
      `WITH before AS (
         SELECT id, disabled_at FROM destinations WHERE account_id = $1 AND id = '${PRIMARY_DESTINATION_ID}' FOR UPDATE
       )
       UPDATE destinations d SET disabled_at = NULL, disabled_reason = NULL, failing_since = NULL, version = d.version + 1, updated_at = now()
         FROM before b
        WHERE d.account_id = $1 AND d.id = b.id AND (d.disabled_at IS NOT NULL OR d.failing_since IS NOT NULL)
        RETURNING b.disabled_at IS NOT NULL AS was_disabled, d.target_shown`,
      [accountId],
    );
    // The account hears the cause first: told after the workers, a call they make at once could close the
    // breaker and take the 10 minutes' one Destination_recovered for "a call succeeded".
    if (rows[0]?.was_disabled) await this.operational.enabledAgain(accountId, PRIMARY_DESTINATION_ID, rows[0].target_shown, 'enable');
    // Stored already; while Redis cannot take the notice the workers' caches are not serving either.
    if (rows.length > 0) await publishSettingsChanged(this.redis, this.keys, accountId).catch(() => undefined);
    return this.view(accountId);
  }
}
