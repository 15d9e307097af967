import type { Client } from 'pg';
import { completePermissions } from '@app/payloads';
import { LATENCY_BOUNDS_MS, LATENCY_BUCKETS, seqAt } from '@app/persistence/testing';
import type { DeliveryStateColumns } from './worker-process';

/**
 * An installation as the service wrote it before the one delivery model (migration 1765400000000): the
 * primary's settings in callback_settings and its secrets on the account, every event carrying its
 * primary delivery's state, attempts of the primary with no destination, and deliveries to the extra
 * destinations in destination_deliveries. Everything is written with fixed values (times from the days
 * given), so a test can state each row the migration must make of it.
 */

export interface OldSettings {
  push_url: string | null;
  push_content_type: 'JSON' | 'application/x-www-form-urlencoded';
  delivery_ordering: 'none' | 'subject';
  max_per_second: number | null;
  paused: boolean;
  failing_since: Date | null;
  disabled_at: Date | null;
  disabled_reason: string | null;
  version: number;
  updated_at: Date;
  permissions: Record<string, boolean>;
  redaction_fields: string[];
}

export interface OldAccount {
  key: 'json' | 'formPaused' | 'disabled' | 'noUrl' | 'noSettings';
  email: string;
  created_at: Date;
  signing_secret: string;
  previous_signing_secret: string | null;
  previous_secret_expires_at: Date | null;
  /** null: the account never had a callback_settings row. */
  settings: OldSettings | null;
}

export interface OldDestination {
  id: string;
  account: OldAccount['key'];
  target: string;
  content_type: string;
  actions: string[] | null;
  ordering: 'none' | 'subject';
  paused: boolean;
  signing_secret: string;
  version: number;
}

export type OldStatus = 'queued' | 'retrying' | 'delivered' | 'failed' | 'filtered' | 'no_endpoint';

/** The state of one delivery as the old rows held it (the event's own columns for the primary). */
export interface OldDeliveryState extends DeliveryStateColumns {
  status: OldStatus;
  updated_at: Date;
}

export interface OldEvent extends OldDeliveryState {
  key: string;
  account: OldAccount['key'];
  /** Epoch ms of acceptance: its created_at, and its seq's time (so it lands in that day's partition). */
  at: number;
  action: string;
  message: Record<string, unknown>;
}

export interface OldExtraDelivery extends OldDeliveryState {
  event: string;
  destination: string;
}

export interface OldAttempt {
  event: string;
  /** null: the primary, as attempts named it then. */
  destination: string | null;
  series: number;
  attempt: number;
  response_status: number | null;
  error: string | null;
}

export interface OldModel {
  accounts: OldAccount[];
  destinations: OldDestination[];
  events: OldEvent[];
  extraDeliveries: OldExtraDelivery[];
  attempts: OldAttempt[];
}

/** The seeded rows' keys, once written. */
export interface WrittenOldModel extends OldModel {
  accountId: Record<OldAccount['key'], number>;
  seq: Record<string, string>;
}

const HOUR = 3_600_000;

/**
 * The old rows: `today`, `yesterday` and `beforeDestinations` are the starts of three UTC days (the last
 * one a day whose partitions were made before destinations existed, so it has no destination_deliveries
 * partition of its own).
 */
export function oldModel(today: number, yesterday: number, beforeDestinations: number): OldModel {
  const t0 = today + 60_000;
  const t1 = yesterday + 10 * HOUR;
  const t2 = beforeDestinations + 5 * HOUR;
  const at = (ms: number) => new Date(ms);
  const everything = Object.fromEntries(Object.keys(completePermissions(null)).map((key) => [key, true]));
  const settings = (fields: Partial<OldSettings>): OldSettings => ({
    push_url: null,
    push_content_type: 'application/x-www-form-urlencoded',
    delivery_ordering: 'none',
    max_per_second: null,
    paused: false,
    failing_since: null,
    disabled_at: null,
    disabled_reason: null,
    version: 1,
    updated_at: at(t2 - 40 * HOUR),
    permissions: everything,
    redaction_fields: [],
    ...fields,
  });
  const account = (key: OldAccount['key'], fields: Partial<OldAccount>): OldAccount => ({
    key,
    email: `${key}@migration.example.com`,
    created_at: at(t2 - 50 * HOUR),
    signing_secret: `whsec_${key}_current_0123456789abcdef`,
    previous_signing_secret: null,
    previous_secret_expires_at: null,
    settings: null,
    ...fields,
  });
  const pending = (fields: Partial<OldDeliveryState>): OldDeliveryState => ({
    status: 'queued',
    attempts: 0,
    series: 0,
    series_attempts: 0,
    next_attempt_at: null,
    delivered_at: null,
    last_error: null,
    updated_at: at(t2),
    ...fields,
  });
  const accounts: OldAccount[] = [
    account('json', {
      previous_signing_secret: 'whsec_json_previous_fedcba9876543210',
      previous_secret_expires_at: at(today + 20 * HOUR),
      settings: settings({
        push_url: 'https://hooks.example.com/json?token=s3cret',
        push_content_type: 'JSON',
        delivery_ordering: 'subject',
        max_per_second: 25,
        version: 7,
        updated_at: at(t2 - 30 * HOUR),
        redaction_fields: ['phone', 'email'],
      }),
    }),
    account('formPaused', { settings: settings({ push_url: 'https://hooks.example.com/form', paused: true, version: 3 }) }),
    account('disabled', {
      settings: settings({
        push_url: 'https://hooks.example.com/gone',
        push_content_type: 'JSON',
        failing_since: at(t1 - 30 * HOUR),
        disabled_at: at(t1 - 2 * HOUR),
        disabled_reason: 'the endpoint answered 410 Gone',
        version: 5,
      }),
    }),
    account('noUrl', { settings: settings({ permissions: { customer_create: true } }) }),
    account('noSettings', {}),
  ];
  const destinations: OldDestination[] = [
    {
      id: 'dst_json_crm',
      account: 'json',
      target: 'https://crm.example.com/in',
      content_type: 'JSON',
      actions: ['Customer_create', 'Customer_update'],
      ordering: 'none',
      paused: false,
      signing_secret: 'whsec_dst_json_crm_0123456789',
      version: 2,
    },
    {
      id: 'dst_form_paused',
      account: 'formPaused',
      target: 'https://archive.example.com/in',
      content_type: 'application/x-www-form-urlencoded',
      actions: null,
      ordering: 'none',
      paused: true,
      signing_secret: 'whsec_dst_form_paused_0123456789',
      version: 4,
    },
  ];
  const event = (key: string, account: OldAccount['key'], ms: number, action: string, message: Record<string, unknown>, state: Partial<OldDeliveryState>): OldEvent => ({
    key,
    account,
    at: ms,
    action,
    message,
    ...pending({ updated_at: at(ms), ...state }),
  });
  const events: OldEvent[] = [
    // The JSON account orders by subject: its pending first-series deliveries get their subject.
    event('json-queued', 'json', t0, 'Customer_create', { id: 101 }, { next_attempt_at: at(t0) }),
    event('json-retrying', 'json', t1, 'Customer_update', { id: 102 }, {
      status: 'retrying',
      attempts: 2,
      series_attempts: 2,
      next_attempt_at: at(t1 + 2 * HOUR),
      last_error: 'HTTP 503 from the receiver',
      updated_at: at(t1 + 90_000),
    }),
    event('json-delivered', 'json', t1 + 1, 'Customer_create', { id: 103 }, { status: 'delivered', attempts: 1, series_attempts: 1, delivered_at: at(t1 + 1201) }),
    event('json-failed', 'json', t1 + 2, 'Organization_create', { id: 7 }, {
      status: 'failed',
      attempts: 3,
      series_attempts: 3,
      last_error: 'HTTP 500 from the receiver',
      updated_at: at(t1 + 3 * HOUR),
    }),
    event('json-filtered', 'json', t1 + 3, 'ImSurveyVote_create', { sub_session_id: 9 }, { status: 'filtered', last_error: 'permission im_survey_vote_create is off' }),
    // Redelivered (a second series), on a day from before destinations: no subject, its delivery in the default partition.
    event('json-redelivered', 'json', t2, 'Customer_create', { id: 104 }, { attempts: 3, series: 1, next_attempt_at: at(t2 + 4 * HOUR) }),
    event('json-old-delivered', 'json', t2 + 1, 'Customer_update', { id: 105 }, { status: 'delivered', attempts: 1, series_attempts: 1, delivered_at: at(t2 + 900) }),
    // The paused account: a delivery held by the pause has no due time; a retry already scheduled keeps its own.
    event('form-paused', 'formPaused', t0 + 1, 'Customer_create', { id: 201 }, {}),
    event('form-paused-retrying', 'formPaused', t0 + 2, 'Customer_update', { id: 202 }, {
      status: 'retrying',
      attempts: 1,
      series_attempts: 1,
      next_attempt_at: at(t0 + HOUR),
      last_error: 'connect ECONNREFUSED',
    }),
    event('disabled-failed', 'disabled', t1 + 4, 'Customer_create', { id: 301 }, { status: 'failed', attempts: 1, series_attempts: 1, last_error: 'endpoint disabled' }),
    event('no-url', 'noUrl', t1 + 5, 'Customer_create', { id: 401 }, { status: 'no_endpoint', last_error: 'no push_url is set' }),
    event('no-settings', 'noSettings', t0 + 3, 'Customer_create', { id: 501 }, { status: 'no_endpoint', last_error: 'no push_url is set' }),
  ];
  const extra = (eventKey: string, destination: string, state: Partial<OldDeliveryState>): OldExtraDelivery => {
    const owner = events.find((candidate) => candidate.key === eventKey);
    if (!owner) throw new Error(`no event ${eventKey}`);
    return { event: eventKey, destination, ...pending({ updated_at: at(owner.at), ...state }) };
  };
  const extraDeliveries: OldExtraDelivery[] = [
    extra('json-queued', 'dst_json_crm', { next_attempt_at: at(t0) }),
    extra('json-retrying', 'dst_json_crm', {
      status: 'retrying',
      attempts: 1,
      series_attempts: 1,
      next_attempt_at: at(t1 + HOUR),
      last_error: 'HTTP 502 from the receiver',
      updated_at: at(t1 + 30_000),
    }),
    extra('json-delivered', 'dst_json_crm', { status: 'delivered', attempts: 1, series_attempts: 1, delivered_at: at(t1 + 800) }),
    // Paused destination: pending without a due time.
    extra('form-paused', 'dst_form_paused', {}),
    extra('form-paused-retrying', 'dst_form_paused', { status: 'failed', attempts: 2, series_attempts: 2, last_error: 'HTTP 404 from the receiver' }),
  ];
  const attemptsOf = (eventKey: string, destination: string | null, count: number, lastStatus: number | null, series = 0): OldAttempt[] =>
    Array.from({ length: count }, (_, index) => ({
      event: eventKey,
      destination,
      series,
      attempt: index + 1,
      response_status: index === count - 1 ? lastStatus : 500,
      error: index === count - 1 && lastStatus === null ? 'connect ECONNREFUSED' : null,
    }));
  const attempts: OldAttempt[] = [
    ...attemptsOf('json-retrying', null, 2, 503),
    ...attemptsOf('json-delivered', null, 1, 200),
    ...attemptsOf('json-failed', null, 3, 500),
    ...attemptsOf('json-redelivered', null, 3, null),
    ...attemptsOf('json-old-delivered', null, 1, 200),
    ...attemptsOf('form-paused-retrying', null, 1, null),
    ...attemptsOf('disabled-failed', null, 1, 410),
    ...attemptsOf('json-retrying', 'dst_json_crm', 1, 502),
    ...attemptsOf('json-delivered', 'dst_json_crm', 1, 200),
    ...attemptsOf('form-paused-retrying', 'dst_form_paused', 2, 404),
  ];
  return { accounts, destinations, events, extraDeliveries, attempts };
}

/** The seq an old event gets: its acceptance time's, as next_event_seq() drew it. */
export function oldSeq(event: OldEvent): string {
  return seqAt(event.at).toString();
}

/** Writes the old model the way the service did then: plain INSERTs, the key-claim and tally triggers on events doing their part. */
export async function writeOldModel(db: Client, model: OldModel): Promise<WrittenOldModel> {
  const accountId = {} as Record<OldAccount['key'], number>;
  for (const account of model.accounts) {
    const { rows } = await db.query<{ id: number }>(
      `INSERT INTO accounts (email, open_api_token, signing_secret, previous_signing_secret, previous_secret_expires_at, created_at)
       VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`,
      [account.email, `token-${account.key}`, account.signing_secret, account.previous_signing_secret, account.previous_secret_expires_at, account.created_at],
    );
    accountId[account.key] = rows[0].id;
    const settings = account.settings;
    if (!settings) continue;
    await db.query(
      `INSERT INTO callback_settings (account_id, push_url, push_content_type, permissions, version, updated_at, failing_since, disabled_at,
                                      disabled_reason, delivery_ordering, max_per_second, redaction_fields, paused)
       VALUES ($1, $2, $3, $4::jsonb, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
      [
        accountId[account.key],
        settings.push_url,
        settings.push_content_type,
        JSON.stringify(settings.permissions),
        settings.version,
        settings.updated_at,
        settings.failing_since,
        settings.disabled_at,
        settings.disabled_reason,
        settings.delivery_ordering,
        settings.max_per_second,
        settings.redaction_fields,
        settings.paused,
      ],
    );
  }
  for (const destination of model.destinations) {
    await db.query(
      `INSERT INTO destinations (id, account_id, type, target, target_shown, actions, content_type, ordering, paused, signing_secret, version, created_at, updated_at)
       VALUES ($1, $2, 'webhook', $3, $3, $4, $5, $6, $7, $8, $9, $10, $10)`,
      [
        destination.id,
        accountId[destination.account],
        destination.target,
        destination.actions,
        destination.content_type,
        destination.ordering,
        destination.paused,
        destination.signing_secret,
        destination.version,
        model.accounts[0].created_at,
      ],
    );
  }
  const seq: Record<string, string> = {};
  for (const event of model.events) {
    seq[event.key] = oldSeq(event);
    await db.query(
      `INSERT INTO events (seq, event_id, account_id, action, message, status, attempts, series, series_attempts, next_attempt_at,
                           created_at, updated_at, delivered_at, last_error)
       VALUES ($1, $2, $3, $4, $5::json, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
      [
        seq[event.key],
        event.key,
        accountId[event.account],
        event.action,
        JSON.stringify(event.message),
        event.status,
        event.attempts,
        event.series,
        event.series_attempts,
        event.next_attempt_at,
        new Date(event.at),
        event.updated_at,
        event.delivered_at,
        event.last_error,
      ],
    );
  }
  for (const delivery of model.extraDeliveries) {
    const event = model.events.find((candidate) => candidate.key === delivery.event)!;
    // Ingest stored them in the event's own statement: created_at is the event's.
    await db.query(
      `INSERT INTO destination_deliveries (event_seq, destination_id, account_id, status, attempts, series, series_attempts, next_attempt_at,
                                           delivered_at, last_error, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
      [
        seq[delivery.event],
        delivery.destination,
        accountId[event.account],
        delivery.status,
        delivery.attempts,
        delivery.series,
        delivery.series_attempts,
        delivery.next_attempt_at,
        delivery.delivered_at,
        delivery.last_error,
        new Date(event.at),
        delivery.updated_at,
      ],
    );
  }
  for (const attempt of model.attempts) {
    const event = model.events.find((candidate) => candidate.key === attempt.event)!;
    await db.query(
      `INSERT INTO delivery_attempts (event_seq, destination_id, series, attempt, started_at, duration_ms, url, request_headers, request_body,
                                      response_status, response_headers, response_body, error)
       VALUES ($1, $2, $3, $4, $5, 42, $6, $7::json, $8, $9, $10::json, $11, $12)`,
      [
        seq[attempt.event],
        attempt.destination,
        attempt.series,
        attempt.attempt,
        new Date(event.at + attempt.attempt * 1000),
        attempt.destination === null ? `https://hooks.example.com/${event.account}` : `https://crm.example.com/${attempt.destination}`,
        JSON.stringify({ 'webhook-id': event.key, 'content-type': 'application/json' }),
        JSON.stringify({ action: event.action, message: event.message }),
        attempt.response_status,
        attempt.response_status === null ? null : JSON.stringify({ 'content-length': '2' }),
        attempt.response_status === null ? null : 'no',
        attempt.error,
      ],
    );
  }
  return { ...model, accountId, seq };
}

/**
 * The old books, read the old way in one snapshot: event_tallies (summed over their stripes) against a
 * count of the events by their own status and latency bucket, minute and hour, as the old triggers kept them.
 */
export async function expectOldTalliesToMatchEvents(db: Client): Promise<void> {
  const histogram = `ARRAY[${Array.from({ length: LATENCY_BUCKETS }, (_, index) => `count(*) FILTER (WHERE latency = ${index})`).join(', ')}]::int[]`;
  await db.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
  try {
    const { rows: tallied } = await db.query(
      `SELECT granularity, bucket_start::text AS bucket, status, sum(events)::int AS events, sum_latency_counts(latency_counts)::int[] AS latency_counts
         FROM event_tallies GROUP BY granularity, bucket_start, status
       HAVING sum(events) <> 0 OR NOT COALESCE(0 = ALL (sum_latency_counts(latency_counts)), true)
        ORDER BY 1, 2, 3`,
    );
    const { rows: counted } = await db.query(
      `SELECT g.granularity, date_trunc(g.granularity, e.created_at, 'UTC')::text AS bucket, e.status, count(*)::int AS events,
              CASE WHEN e.status = 'delivered' THEN ${histogram} END AS latency_counts
         FROM (SELECT created_at, status::text AS status,
                      CASE WHEN status = 'delivered' AND delivered_at IS NOT NULL
                           THEN width_bucket(GREATEST(EXTRACT(EPOCH FROM (delivered_at - created_at)) * 1000, 0), ARRAY[${LATENCY_BOUNDS_MS.join(',')}]::float8[])
                      END AS latency
                 FROM events) AS e
        CROSS JOIN (VALUES ('hour'), ('minute')) AS g(granularity)
        GROUP BY 1, 2, 3
        ORDER BY 1, 2, 3`,
    );
    expect(tallied).toEqual(counted);
    expect(counted.length).toBeGreaterThan(0);
  } finally {
    await db.query('COMMIT');
  }
}
