/** The eleven callback actions of the seed, exactly as sent in the `action` field. */
export const EVENT_ACTIONS = [
  'Customer_create',
  'Customer_update',
  'Customer_destroy',
  'Organization_create',
  'Organization_update',
  'Organization_destroy',
  'ImSubSession_create',
  'ImSubSession_close',
  'ShutQueue_create',
  'AgentNote_update',
  'ImSurveyVote_create',
] as const;
export type EventAction = (typeof EVENT_ACTIONS)[number];

/**
 * One permission key per action (CONTRACT §2). The first eight are the seed's; the last three are
 * this system's own, since the seed names no key for those events.
 */
export const PERMISSION_KEY_BY_ACTION: Readonly<Record<EventAction, string>> = {
  Customer_create: 'customer_create',
  Customer_update: 'customer_update',
  Customer_destroy: 'customer_destroy',
  Organization_create: 'organization_create',
  Organization_update: 'organization_update',
  Organization_destroy: 'organization_destroy',
  ImSubSession_close: 'im_sub_session_close',
  ShutQueue_create: 'shut_queue_create',
  ImSubSession_create: 'im_sub_session_create',
  AgentNote_update: 'agent_note_update',
  ImSurveyVote_create: 'im_survey_vote_create',
};

/** In the order CONTRACT §2 lists them; responses list the keys in this order. */
export const PERMISSION_KEYS = [
  'customer_create',
  'customer_update',
  'customer_destroy',
  'organization_create',
  'organization_update',
  'organization_destroy',
  'im_sub_session_close',
  'shut_queue_create',
  'im_sub_session_create',
  'agent_note_update',
  'im_survey_vote_create',
] as const;
export type PermissionKey = (typeof PERMISSION_KEYS)[number];
export type Permissions = Record<PermissionKey, boolean>;

/** Every key present and `false` until set. */
export function completePermissions(stored: Partial<Record<string, boolean>> | null | undefined): Permissions {
  const complete = {} as Permissions;
  for (const key of PERMISSION_KEYS) complete[key] = stored?.[key] === true;
  return complete;
}

/**
 * The service's own events about an account's destinations (CONTRACT §14): its breaker opened, it was
 * disabled, it recovered (its breaker closed after being open, or it was enabled again). Not subject to
 * permissions; delivered only to the account's other destinations whose `actions` list names them.
 */
export const OPERATIONAL_ACTIONS = ['Destination_failing', 'Destination_disabled', 'Destination_recovered'] as const;
export type OperationalAction = (typeof OPERATIONAL_ACTIONS)[number];

/** The message of an operational event: which destination, its target as views show it, why, and when. */
export interface OperationalMessage {
  destination_id: string;
  target: string | null;
  reason: string;
  at: string;
}

/** Every action an account's event log holds: the seed's events and the service's operational ones (filters accept them all). */
export const LOGGED_ACTIONS = [...EVENT_ACTIONS, ...OPERATIONAL_ACTIONS] as const;

export function isOperationalAction(value: unknown): value is OperationalAction {
  return typeof value === 'string' && (OPERATIONAL_ACTIONS as readonly string[]).includes(value);
}

export function isEventAction(value: unknown): value is EventAction {
  return typeof value === 'string' && (EVENT_ACTIONS as readonly string[]).includes(value);
}

/** The two callback content types of CONTRACT §2, stored exactly as written here. */
export const CONTENT_TYPE_JSON = 'JSON';
export const CONTENT_TYPE_FORM = 'application/x-www-form-urlencoded';
export type PushContentType = typeof CONTENT_TYPE_JSON | typeof CONTENT_TYPE_FORM;
export const DEFAULT_PUSH_CONTENT_TYPE: PushContentType = CONTENT_TYPE_FORM;
