import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type Redis from 'ioredis';
import { DataSource, QueryFailedError } from 'typeorm';
import type { BotCallView, BotWebhookView, Page } from '@app/payloads';
import { BotCall, BotWebhook, Sql, timeRange } from '@app/persistence';
import { checkingQuery, checkTargetUrl, DomainError, ENVIRONMENT, type Environment, loggableErrorText, REDIS, RedisKeys, SecretBox, stampBotWebhooksChanged, validationFailed } from '@app/runtime';
import { requireAccount } from '../require-account';
import { BOT_CALLS_DEFAULT_LIMIT, BOT_TIMEOUT_DEFAULT_MS, type CreateBotWebhookDto, type ListBotCallsQueryDto } from './bot-webhook.dto';

function toView(webhook: BotWebhook): BotWebhookView {
  return {
    id: webhook.id,
    account_id: webhook.accountId,
    name: webhook.name,
    type: webhook.type,
    url: webhook.url,
    timeout_ms: webhook.timeoutMs,
    created_at: webhook.createdAt.toISOString(),
  };
}

function toCallView(call: BotCall): BotCallView {
  return {
    id: call.id,
    account_id: call.accountId,
    bot_webhook_id: call.botWebhookId,
    type: call.type,
    integration_name: call.integrationName,
    url: call.url,
    request_body: call.requestBody,
    response_status: call.responseStatus,
    response_body: call.responseBody,
    answer: call.answer ?? null,
    outcome: call.outcome,
    error: call.error,
    duration_ms: call.durationMs,
    created_at: call.createdAt.toISOString(),
  };
}

function pgCode(error: unknown): string | undefined {
  return error instanceof QueryFailedError ? (error.driverError as { code?: string }).code : undefined;
}

@Injectable()
export class AdminBotWebhooksService {
  private readonly logger = new Logger(AdminBotWebhooksService.name);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly sql: Sql,
    @Inject(ENVIRONMENT) private readonly environment: Environment,
    @Inject(REDIS) private readonly redis: Redis,
    private readonly keys: RedisKeys,
    private readonly secrets: SecretBox,
  ) {}

  /**
   * Every ingest call that starts after this resolves sees the change (its cached lookups of the
   * account no longer match the stamp). The change is stored already: if Redis cannot take the stamp,
   * the caller still gets its answer, and ingest processes that can read Redis may use their cached
   * lookup until it expires (BOT_WEBHOOK_CACHE_TTL_MS); those that cannot read it ask PostgreSQL.
   */
  private async announce(accountId: number): Promise<void> {
    try {
      await stampBotWebhooksChanged(this.redis, this.keys, accountId);
    } catch (error) {
      this.logger.warn(`could not stamp the bot webhook change of account ${accountId}: ${loggableErrorText(error)}`);
    }
  }

  async create(accountId: number, input: CreateBotWebhookDto): Promise<BotWebhookView> {
    await requireAccount(this.sql, accountId);
    const urlProblem = await checkTargetUrl(input.url, this.environment.delivery.allowPrivateTargets);
    if (urlProblem) throw validationFailed([{ path: 'url', problem: `url ${urlProblem}` }]);
    const repository = this.dataSource.getRepository(BotWebhook);
    try {
      const saved = await repository.save(
        repository.create({
          accountId,
          name: input.name,
          type: input.type,
          url: input.url,
          key: this.secrets.seal(input.key),
          timeoutMs: input.timeout_ms ?? BOT_TIMEOUT_DEFAULT_MS,
        }),
      );
      // A lookup that found nothing may be cached as "no such webhook".
      await this.announce(accountId);
      return toView(saved);
    } catch (error) {
      const code = pgCode(error);
      if (code === '23505') {
        throw new DomainError('conflict', `account ${accountId} already has a ${input.type} bot webhook named "${input.name}"`);
      }
      // The account was deleted between the check and the insert.
      if (code === '23503') throw new DomainError('not_found', `account ${accountId} does not exist`);
      throw error;
    }
  }

  async list(accountId: number): Promise<{ items: BotWebhookView[] }> {
    await requireAccount(this.sql, accountId);
    const webhooks = await this.dataSource.getRepository(BotWebhook).find({ where: { accountId }, order: { id: 'ASC' } });
    return { items: webhooks.map(toView) };
  }

  async remove(accountId: number, botId: number): Promise<void> {
    await requireAccount(this.sql, accountId);
    const result = await this.dataSource.getRepository(BotWebhook).delete({ id: botId, accountId });
    if (!result.affected) throw new DomainError('not_found', `account ${accountId} has no bot webhook ${botId}`);
    await this.announce(accountId);
  }

  /** Newest first; the cursor is the id of the last call of the previous page, so pages never shift as calls arrive. */
  async listCalls(query: ListBotCallsQueryDto): Promise<Page<BotCallView>> {
    const limit = query.limit ?? BOT_CALLS_DEFAULT_LIMIT;
    const builder = this.dataSource.getRepository(BotCall).createQueryBuilder('call').orderBy('call.id', 'DESC').limit(limit + 1);
    if (query.account_id !== undefined) builder.andWhere('call.accountId = :accountId', { accountId: query.account_id });
    if (query.type !== undefined) builder.andWhere('call.type = :type', { type: query.type });
    if (query.integration_name !== undefined) builder.andWhere('call.integrationName = :name', { name: query.integration_name });
    if (query.outcome !== undefined) builder.andWhere('call.outcome = :outcome', { outcome: query.outcome });
    const { since, until } = checkingQuery(() => timeRange(query.since, query.until));
    if (since) builder.andWhere('call.createdAt >= :since', { since });
    if (until) builder.andWhere('call.createdAt < :until', { until });
    if (query.cursor !== undefined) builder.andWhere('call.id < :cursor', { cursor: query.cursor });
    const rows = await builder.getMany();
    const page = rows.slice(0, limit);
    return { items: page.map(toCallView), next_cursor: rows.length > limit ? page[page.length - 1].id : null };
  }
}
