import { randomBytes } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type Redis from 'ioredis';
import { DataSource, type EntityManager } from 'typeorm';
import { MAX_DESTINATIONS_PER_ACCOUNT, PRIMARY_DESTINATION_ID, type DestinationAuthInput, type DestinationView } from '@app/payloads';
import { announceStoredSettingsChange, ENVIRONMENT, type Environment, type ErrorDetail, REDIS, RedisKeys, SecretBox } from '@app/runtime';
import { DESTINATION_DELETED_ERROR, openDeliveries, Sql } from '@app/persistence';
import { generateSigningSecret } from '@app/signing';
import { checkDestinationBody, type DestinationSettings, PRIMARY_FIELDS, type StoredDestinationSettings } from './destination-body.validation';
import { shownTarget } from './destination-target.validation';
import { type DestinationRow, destinationViewOf, VIEW_COLUMNS } from './destination-views';
import { destinationBreakerState } from './destination-breaker';
import { OperationalEventsPublisher } from './operational-events.publisher';

/** A body the service refused; each door words it (Open API 2000, portal 400, admin 422). */
export class DestinationProblemError extends Error {
  constructor(readonly problems: ErrorDetail[]) {
    super(problems.map(({ path, problem }) => `${path}: ${problem}`).join('; '));
  }
}

/** No such destination for this account (another account's id reads the same). */
export class DestinationNotFoundError extends Error {
  constructor(readonly id: string) {
    super(`destination ${id.slice(0, 64)} does not exist`);
  }
}

export const TOO_MANY_PROBLEM = `an account has at most ${MAX_DESTINATIONS_PER_ACCOUNT} destinations besides the primary`;

/** Serializes creations per account so two concurrent calls cannot both be the 20th. */
const CREATE_LOCK_CLASS = 1_765_100_000;

function newDestinationId(): string {
  return `dst_${randomBytes(12).toString('hex')}`;
}

/** Any other text cannot name a destination; refusing it early keeps odd path text (NUL, megabytes) out of SQL. */
const DESTINATION_ID = /^dst_[0-9a-z]{1,40}$/;

function knownShapeOrNotFound(id: string): string {
  if (id !== PRIMARY_DESTINATION_ID && !DESTINATION_ID.test(id)) throw new DestinationNotFoundError(id);
  return id;
}

/**
 * Destinations of an account (CONTRACT §11), one service for the Open API, the portal and the admin API.
 * Credentials (target, auth, signing secret) are sealed before they reach the database and never come
 * back in a view; each change is announced like any settings change, so ingest and the workers drop
 * their cached copy of the account.
 */
@Injectable()
export class DestinationsService {
  private readonly logger = new Logger(DestinationsService.name);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(ENVIRONMENT) private readonly environment: Environment,
    private readonly keys: RedisKeys,
    private readonly secrets: SecretBox,
    private readonly sql: Sql,
    private readonly operational: OperationalEventsPublisher,
  ) {}

  private get allowPrivateTargets(): boolean {
    return this.environment.delivery.allowPrivateTargets;
  }

  /** The primary first, then the others in the order they were created. */
  async list(accountId: number): Promise<DestinationView[]> {
    const rows = await this.dataSource.query<DestinationRow[]>(
      `SELECT ${VIEW_COLUMNS} FROM destinations WHERE account_id = $1 AND deleted_at IS NULL
        ORDER BY id = '${PRIMARY_DESTINATION_ID}' DESC, created_at, id`,
      [accountId],
    );
    return Promise.all(rows.map((row) => this.viewOf(row)));
  }

  async create(accountId: number, body: unknown): Promise<DestinationView> {
    const check = await checkDestinationBody(body, null, this.allowPrivateTargets);
    if (check.changes === null) throw new DestinationProblemError(check.problems);
    const settings = check.changes as DestinationSettings;
    const signingSecret = generateSigningSecret();
    const row = await this.dataSource.transaction(async (manager) => {
      await manager.query('SELECT pg_advisory_xact_lock($1, $2)', [CREATE_LOCK_CLASS, accountId]);
      const [{ count }] = await manager.query<{ count: number }[]>(
        `SELECT count(*)::int AS count FROM destinations WHERE account_id = $1 AND deleted_at IS NULL AND id <> '${PRIMARY_DESTINATION_ID}'`,
        [accountId],
      );
      if (count >= MAX_DESTINATIONS_PER_ACCOUNT) throw new DestinationProblemError([{ path: 'destinations', problem: TOO_MANY_PROBLEM }]);
      const [inserted] = await manager.query<DestinationRow[]>(
        `INSERT INTO destinations (id, account_id, type, target, target_shown, actions, filter, content_type, format, auth, auth_type,
                                   ordering, max_per_second, signing_secret, retry_schedule_ms, stop_on, disable_on, expire_after_ms)
         VALUES ($1, $2, $3, $4, $5, $6::text[], $7::jsonb, $8, $9, $10, $11, $12, $13, $14, $15::int[], $16::int[], $17::int[], $18::bigint)
         RETURNING ${VIEW_COLUMNS}`,
        [
          newDestinationId(),
          accountId,
          settings.type,
          this.secrets.seal(settings.target),
          shownTarget(settings.type, settings.target),
          settings.actions ?? null,
          settings.filter === undefined || settings.filter === null ? null : JSON.stringify(settings.filter),
          settings.content_type ?? 'JSON',
          settings.format ?? 'udesk',
          this.sealAuth(settings.auth ?? null),
          settings.auth?.type ?? null,
          settings.ordering ?? 'none',
          settings.max_per_second ?? null,
          this.secrets.seal(signingSecret),
          settings.retry?.scheduleMs ?? null,
          settings.retry?.stopOn ?? [],
          settings.retry?.disableOn ?? [],
          settings.expire_after_ms ?? null,
        ],
      );
      return inserted;
    });
    await this.announce(accountId);
    return { ...(await this.viewOf(row)), signing_secret: signingSecret };
  }

  /**
   * Fields not sent keep their value; a new target is a fresh start (enabled, failure clock restarted).
   * The primary takes only its retry policy, deadline and delivery options here (CONTRACT §13).
   */
  async update(accountId: number, id: string, body: unknown): Promise<DestinationView> {
    knownShapeOrNotFound(id);
    let enabled = false;
    const row = await this.dataSource.transaction(async (manager) => {
      const { settings: current, disabled } = await this.lockedSettings(manager, accountId, id);
      const check = await checkDestinationBody(body, current, this.allowPrivateTargets, id === PRIMARY_DESTINATION_ID ? PRIMARY_FIELDS : undefined);
      if (check.changes === null) throw new DestinationProblemError(check.problems);
      const { changes } = check;
      const assignments: string[] = [];
      const parameters: unknown[] = [id, accountId];
      const set = (column: string, value: unknown, cast = ''): void => {
        parameters.push(value);
        assignments.push(`${column} = $${parameters.length}${cast}`);
      };
      if (changes.type !== undefined) set('type', changes.type);
      if (changes.target !== undefined) {
        const type = changes.type ?? current.type;
        set('target', this.secrets.seal(changes.target));
        set('target_shown', shownTarget(type, changes.target));
        assignments.push('failing_since = NULL', 'disabled_at = NULL', 'disabled_reason = NULL');
        enabled = disabled;
      }
      if (changes.actions !== undefined) set('actions', changes.actions, '::text[]');
      if (changes.filter !== undefined) set('filter', changes.filter === null ? null : JSON.stringify(changes.filter), '::jsonb');
      if (changes.content_type !== undefined) set('content_type', changes.content_type);
      if (changes.format !== undefined) set('format', changes.format);
      if (changes.auth !== undefined) {
        set('auth', this.sealAuth(changes.auth));
        set('auth_type', changes.auth?.type ?? null);
      }
      if (changes.ordering !== undefined) set('ordering', changes.ordering);
      if (changes.max_per_second !== undefined) set('max_per_second', changes.max_per_second, '::integer');
      if (changes.retry !== undefined) {
        set('retry_schedule_ms', changes.retry.scheduleMs, '::int[]');
        set('stop_on', changes.retry.stopOn, '::int[]');
        set('disable_on', changes.retry.disableOn, '::int[]');
      }
      if (changes.expire_after_ms !== undefined) set('expire_after_ms', changes.expire_after_ms, '::bigint');
      const [updated] = await manager.query<[DestinationRow[], number]>(
        `UPDATE destinations SET ${[...assignments, 'version = version + 1', 'updated_at = now()'].join(', ')}
          WHERE id = $1 AND account_id = $2 AND deleted_at IS NULL
          RETURNING ${VIEW_COLUMNS}`,
        parameters,
      );
      return updated[0];
    });
    // A new target enables a disabled destination (CONTRACT §14): the account hears it before the workers do.
    if (enabled) await this.operational.enabledAgain(accountId, id, row.target_shown, 'a new target');
    await this.announce(accountId);
    return this.viewOf(row);
  }

  /**
   * Soft delete: the id stays on its deliveries and attempts (listed until retention); what was still
   * pending ends failed; its credentials (sealed target and auth, signing secrets, and the shown target,
   * whose path may itself be a secret) are deleted in the same commit (CONTRACT §11).
   */
  async remove(accountId: number, id: string): Promise<void> {
    knownShapeOrNotFound(id);
    if (id === PRIMARY_DESTINATION_ID) throw new DestinationProblemError([{ path: 'id', problem: 'the primary destination cannot be deleted (pause it, or change it with set_url)' }]);
    const found = await this.dataSource.transaction(async (manager) => {
      const [rows] = await manager.query<[{ id: string }[], number]>(
        `UPDATE destinations
            SET deleted_at = now(), version = version + 1, updated_at = now(),
                target = NULL, target_shown = NULL, auth = NULL, signing_secret = NULL, previous_signing_secret = NULL, previous_secret_expires_at = NULL
          WHERE id = $1 AND account_id = $2 AND deleted_at IS NULL RETURNING id`,
        [id, accountId],
      );
      if (rows.length === 0) return false;
      await this.sql.rows(openDeliveries.END_DESTINATION_DELIVERIES, { accountId, destinationId: id, why: DESTINATION_DELETED_ERROR }, manager.queryRunner);
      return true;
    });
    if (!found) throw new DestinationNotFoundError(id);
    await this.announce(accountId);
  }

  /** Deliveries to it wait, spending no attempt, until resume. */
  async pause(accountId: number, id: string): Promise<DestinationView> {
    return this.setPaused(accountId, id, true);
  }

  /**
   * Everything that waited goes again, in the order ingest accepted it: stored and announced, the held
   * deliveries go back to the queue as the workers' feeder finds the destination no longer paused,
   * bounded by what the queue holds for the account (REQUEUE_MAX_WAITING, CONTRACT §10).
   */
  async resume(accountId: number, id: string): Promise<DestinationView> {
    return this.setPaused(accountId, id, false);
  }

  private async setPaused(accountId: number, id: string, paused: boolean): Promise<DestinationView> {
    knownShapeOrNotFound(id);
    const [rows] = await this.dataSource.query<[DestinationRow[], number]>(
      `UPDATE destinations SET paused = $3, version = version + 1, updated_at = now()
        WHERE id = $1 AND account_id = $2 AND deleted_at IS NULL RETURNING ${VIEW_COLUMNS}`,
      [id, accountId, paused],
    );
    if (rows.length === 0) throw new DestinationNotFoundError(id);
    await this.announce(accountId);
    return this.viewOf(rows[0]);
  }

  private async lockedSettings(manager: EntityManager, accountId: number, id: string): Promise<{ settings: StoredDestinationSettings; disabled: boolean }> {
    const [row] = await manager.query<(DestinationRow & { target: string })[]>(
      `SELECT ${VIEW_COLUMNS}, target FROM destinations WHERE id = $1 AND account_id = $2 AND deleted_at IS NULL FOR UPDATE`,
      [id, accountId],
    );
    if (!row) throw new DestinationNotFoundError(id);
    const settings: StoredDestinationSettings = {
      type: row.type,
      target: row.target === null ? '' : this.secrets.open(row.target),
      actions: row.actions as StoredDestinationSettings['actions'],
      filter: row.filter,
      content_type: row.content_type as StoredDestinationSettings['content_type'],
      format: row.format,
      authType: row.auth_type,
      ordering: row.ordering as StoredDestinationSettings['ordering'],
      max_per_second: row.max_per_second,
      retry: { scheduleMs: row.retry_schedule_ms, stopOn: row.stop_on, disableOn: row.disable_on },
      expire_after_ms: row.expire_after_ms === null ? null : Number(row.expire_after_ms),
    };
    return { settings, disabled: row.disabled_at !== null };
  }

  private sealAuth(auth: DestinationAuthInput | null): string | null {
    return auth === null ? null : this.secrets.seal(JSON.stringify(auth));
  }

  private async viewOf(row: Omit<DestinationRow, 'target'>): Promise<DestinationView> {
    const [breaker, held] = await Promise.all([
      row.target_shown === null ? 'closed' : destinationBreakerState(this.redis, this.keys, row.account_id, row.id, row.target_shown),
      this.sql.rows(openDeliveries.COUNT_HELD, { accountId: row.account_id, destinationId: row.id }),
    ]);
    return destinationViewOf(row, { breaker, held: held.reduce((sum, reason) => sum + reason.count, 0), defaultScheduleMs: this.environment.delivery.retryScheduleMs });
  }

  private async announce(accountId: number): Promise<void> {
    await announceStoredSettingsChange(this.redis, this.keys, accountId, this.logger);
  }
}
