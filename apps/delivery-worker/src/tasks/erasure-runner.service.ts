import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager, type QueryRunner } from 'typeorm';
import { Sql } from '@app/persistence';
import { checkErasureStamp, ENVIRONMENT, type Environment, isTaskId, REDIS, type RedisClient, stampErasureStep } from '@app/runtime';
import { SteppedTaskRunner, waitASlice } from './leased-task-runner';
import {
  CLEAR_ATTEMPT_BODIES,
  END_ERASED_DELIVERIES,
  ERASE_EVENTS,
  ERASED_EVENTS_BELOW,
  type ErasureTaskRow,
  READ_ERASURE_TASK,
  SUBJECT_EVENT_SEQS,
} from './erasure.statements';

/** Events per first-pass step: each step's locks are held for a few milliseconds. */
export const ERASURE_CHUNK = 200;
/** Events whose attempts one second-pass step clears again (their seqs known), or looks at (walking them). */
const SECOND_PASS_CHUNK = 1000;
const SECOND_PASS_WALK = 5000;
/** Beyond the delivery timeout, for a call that ended to be recorded (the worker batches its records). */
export const RECORD_MARGIN_MS = 2_000;

/** What this process knows of a task between steps; lost with the process, and rebuilt from the rows then. */
interface TaskMemory {
  /** The seqs the first pass erased, when this process ran all of it; null otherwise (the second pass walks the erased events). */
  seqs: string[] | null;
  /** Where the second pass goes on: an index into `seqs`, or the seq the walk continues below. */
  next: number;
  below: string | null;
  /** The first pass is over: the steps erase nothing new and need no stamp. */
  secondPass: boolean;
  /** How long to wait before the next step (the second pass not due yet). */
  waitMs: number;
  /** What the step in its transaction did to this memory, applied once it committed. */
  staged: ((memory: TaskMemory) => void) | null;
}

/**
 * Clears a subject's stored events (CONTRACT §12), in two passes.
 *
 * The first pass goes a chunk per transaction: the events are found through events_subject_idx and
 * locked, every pending delivery of theirs (any destination) ends `failed` / `erased` (which makes its
 * jobs stale; a worker also re-reads the event right before a call), their attempts' bodies are emptied
 * and their messages become the JSON null, which takes them out of the index: each step finds only
 * what is left, and a resumed task needs no cursor. `upper_seq` keeps events accepted after the erasure
 * started out of it. Every such step commits under the erasure stamp (erasure-stamp.ts), which tells the
 * workers when that re-read is needed.
 *
 * A call already on the wire when a step committed may still record its attempt, response body and
 * all, after the step cleared the attempts. So the second pass clears the attempts of the same events
 * again once DELIVERY_TIMEOUT_MS and a margin have passed since the first pass ended (kept in
 * finished_at), when every such call has ended and been recorded; only then is the erasure `done`.
 * The worker that ran the whole first pass knows its events; one that resumed the task walks the
 * erased events of its scope instead.
 */
@Injectable()
export class ErasureRunner extends SteppedTaskRunner<string> {
  private readonly prefix: string;
  /** How long after the first pass the second one is due. */
  readonly settleMs: number;
  private readonly memory = new Map<string, TaskMemory>();

  constructor(
    @InjectDataSource() dataSource: DataSource,
    private readonly sql: Sql,
    @Inject(REDIS) private readonly redis: RedisClient,
    @Inject(ENVIRONMENT) environment: Environment,
  ) {
    super(dataSource, 'erasure_tasks', 'erasure');
    this.prefix = environment.redis.prefix;
    this.settleMs = environment.delivery.timeoutMs + RECORD_MARGIN_MS;
  }

  protected idOf(text: string): string | null {
    return isTaskId(text) ? text : null;
  }

  /**
   * Waits a slice while the second pass is not due yet. Otherwise, unless the first pass is known to be
   * over, stamps: without the stamp no first-pass step commits, as a worker could call an event erased
   * under its eyes.
   */
  protected override async beforeStep(id: string): Promise<void> {
    const memory = this.memory.get(id);
    if (memory) memory.staged = null;
    if (memory && memory.waitMs > 0) {
      await waitASlice(memory.waitMs);
      return;
    }
    if (!memory?.secondPass) await stampErasureStep(this.redis, this.prefix);
  }

  protected override afterCommit(id: string): void {
    const memory = this.memory.get(id);
    memory?.staged?.(memory);
    if (memory) memory.staged = null;
  }

  protected async step(manager: EntityManager, id: string): Promise<boolean> {
    const runner = manager.queryRunner as QueryRunner;
    const task = await this.sql.first(READ_ERASURE_TASK, { id, settleMs: this.settleMs }, runner);
    if (!task) return false;
    const memory = this.memoryOf(id, task);
    memory.waitMs = 0;
    memory.secondPass = task.subject === null;
    return task.subject === null ? this.secondPassStep(manager, runner, id, task, memory) : this.firstPassStep(runner, id, { ...task, subject: task.subject }, memory);
  }

  private memoryOf(id: string, task: ErasureTaskRow): TaskMemory {
    let memory = this.memory.get(id);
    if (!memory) {
      // Nothing erased yet: this process will see every event of the first pass.
      memory = { seqs: task.subject !== null && task.events_erased === 0 ? [] : null, next: 0, below: null, secondPass: false, waitMs: 0, staged: null };
      this.memory.set(id, memory);
    }
    return memory;
  }

  private async firstPassStep(runner: QueryRunner, id: string, task: ErasureTaskRow & { subject: string }, memory: TaskMemory): Promise<boolean> {
    const rows = await this.sql.rows(
      SUBJECT_EVENT_SEQS,
      { subject: task.subject, upperSeq: task.upper_seq, accountId: task.account_id, limit: ERASURE_CHUNK },
      runner,
    );
    const seqs = rows.map((row) => row.seq);
    if (seqs.length > 0) {
      // Deliveries before attempts: a call recorded meanwhile is then either cleared here or not recorded at all.
      await this.sql.rows(END_ERASED_DELIVERIES, { seqs }, runner);
      await this.sql.rows(CLEAR_ATTEMPT_BODIES, { seqs }, runner);
      await this.sql.rows(ERASE_EVENTS, { seqs }, runner);
      await runner.query(`UPDATE erasure_tasks SET events_erased = events_erased + $2 WHERE id = $1`, [id, seqs.length]);
    }
    const last = seqs.length < ERASURE_CHUNK;
    if (last) {
      // The subject is kept only while it is needed: the log of erasures holds no identifier. finished_at
      // marks the first pass's end until the second pass is done.
      await runner.query(`UPDATE erasure_tasks SET subject = NULL, finished_at = now() WHERE id = $1`, [id]);
    }
    memory.staged = (kept) => {
      kept.seqs?.push(...seqs);
      if (!last) return;
      kept.secondPass = true;
      kept.waitMs = this.settleMs;
    };
    // Last, as near the commit as can be: the stamp must outlive it (else the step rolls back and is taken again).
    if (seqs.length > 0) await checkErasureStamp(this.redis, this.prefix);
    return true;
  }

  private async secondPassStep(manager: EntityManager, runner: QueryRunner, id: string, task: ErasureTaskRow, memory: TaskMemory): Promise<boolean> {
    if (task.second_pass_in_ms !== null && task.second_pass_in_ms > 0) {
      memory.staged = (kept) => (kept.waitMs = task.second_pass_in_ms ?? 0);
      return true;
    }
    let done: boolean;
    if (memory.seqs !== null) {
      const batch = memory.seqs.slice(memory.next, memory.next + SECOND_PASS_CHUNK);
      if (batch.length > 0) await this.sql.rows(CLEAR_ATTEMPT_BODIES, { seqs: batch }, runner);
      memory.staged = (kept) => (kept.next += batch.length);
      done = memory.next + batch.length >= memory.seqs.length;
    } else {
      const below = memory.below ?? (BigInt(task.upper_seq) + 1n).toString();
      const looked = await this.sql.rows(ERASED_EVENTS_BELOW, { below, accountId: task.account_id, limit: SECOND_PASS_WALK }, runner);
      const erased = looked.filter((row) => row.erased).map((row) => row.seq);
      if (erased.length > 0) await this.sql.rows(CLEAR_ATTEMPT_BODIES, { seqs: erased }, runner);
      const lowest = looked.at(-1)?.seq ?? below;
      memory.staged = (kept) => (kept.below = lowest);
      done = looked.length < SECOND_PASS_WALK;
    }
    if (!done) return true;
    await this.finish(manager, id);
    memory.staged = () => this.memory.delete(id);
    return false;
  }
}
