import { del, get, post, put, type QueryValues, request } from './client';
import { accepted, destinationOf, destinationsOf, type DestinationsClient } from './destinations';
import type { ErasureStarted, ErasureView } from '@app/payloads/data-protection.types';
import type { ConsoleIdentity } from './session';
import type {
  AccountView,
  AuditEntryView,
  BotCallView,
  BotWebhookView,
  CreatedAccount,
  DeliveryOptionsChange,
  EndpointItem,
  EventDetail,
  EventPage,
  EventRedelivered,
  EventStats,
  Page,
  QueueState,
  RedeliveryStarted,
  RedeliveryTaskView,
  RotatedSecret,
  RotatedToken,
  SeriesBucket,
  StatsSeries,
} from '@app/payloads/admin-api.types';

/** Every admin API call the console makes, in one place. Ids go into paths encoded. */
const id = (value: string | number): string => encodeURIComponent(String(value));

/** Checks a token before keeping it, and says whose it is and its role. */
export const checkToken = (token: string): Promise<ConsoleIdentity> => request('GET', '/admin/v1/session', { token });
/** Who the tab is signed in as: its token's, or else the single sign-on cookie's (401 when neither). */
export const currentSession = (): Promise<ConsoleIdentity> => request('GET', '/admin/v1/session', { keepSignedIn: true });
/** Whether the server offers single sign-on (asked before anyone is signed in). */
export const signInOptions = (): Promise<{ sso: boolean }> => request('GET', '/admin/sign-in-options', { keepSignedIn: true });
/** Ends the single sign-on session on the server (its cookie is HttpOnly: only the server can clear it). */
export const endSsoSession = (): Promise<unknown> => request('POST', '/admin/logout', { keepSignedIn: true });
export const listAudit = (query: QueryValues): Promise<Page<AuditEntryView>> => get('/admin/v1/audit', query);

export const listEvents = (query: QueryValues): Promise<EventPage> => get('/admin/v1/events', query);
export const eventDetail = (eventId: string): Promise<EventDetail> => get(`/admin/v1/events/${id(eventId)}`);
export const redeliverEvent = (eventId: string, destinationId?: string): Promise<EventRedelivered> =>
  post(`/admin/v1/events/${id(eventId)}/redeliver`, destinationId === undefined ? {} : { destination_id: destinationId });
/** The event list's filters as a JSON body: the account id is a number there, not a query string. */
export const redeliverMatching = (filter: Record<string, string>): Promise<RedeliveryStarted> =>
  post('/admin/v1/events/redeliver', { ...filter, ...(filter.account_id ? { account_id: Number(filter.account_id) } : {}) });

export const listAccounts = (query: QueryValues): Promise<Page<AccountView>> => get('/admin/v1/accounts', query);
export const accountDetail = (accountId: number): Promise<AccountView> => get(`/admin/v1/accounts/${id(accountId)}`);
export const createAccount = (fields: { email: string; name?: string; id?: number }): Promise<CreatedAccount> =>
  post('/admin/v1/accounts', fields);
export const enableEndpoint = (accountId: number): Promise<AccountView> => post(`/admin/v1/accounts/${id(accountId)}/endpoint/enable`);
export const setDeliveryOptions = (accountId: number, change: DeliveryOptionsChange): Promise<AccountView> =>
  put(`/admin/v1/accounts/${id(accountId)}/delivery-options`, change);
export const redeliverAccount = (accountId: number, filter: { status: 'failed'; since?: string; until?: string }): Promise<RedeliveryStarted> =>
  post(`/admin/v1/accounts/${id(accountId)}/redeliver`, filter);
export const rotateSecret = (accountId: number): Promise<RotatedSecret> => post(`/admin/v1/accounts/${id(accountId)}/rotate-secret`);
export const revokePreviousSecret = (accountId: number): Promise<AccountView> => post(`/admin/v1/accounts/${id(accountId)}/revoke-previous-secret`);
export const rotateToken = (accountId: number): Promise<RotatedToken> => post(`/admin/v1/accounts/${id(accountId)}/rotate-token`);
/** A one-time link to the account's own portal (what its user sees). */
export const portalLink = (accountId: number): Promise<{ url: string; expires_at: string }> => post(`/admin/v1/accounts/${id(accountId)}/portal-link`, {});
export const botWebhooks = (accountId: number): Promise<{ items: BotWebhookView[] }> => get(`/admin/v1/accounts/${id(accountId)}/bot-webhooks`);

/** CONTRACT §12: erasure by subject, redaction at rest, offboarding. */
export const startErasure = (body: { subject: string; account_id?: number }): Promise<ErasureStarted> => post('/admin/v1/erasures', body);
export const erasure = (erasureId: string): Promise<ErasureView> => get(`/admin/v1/erasures/${id(erasureId)}`);
export const setRedaction = (accountId: number, fields: string[]): Promise<AccountView> => put(`/admin/v1/accounts/${id(accountId)}/redaction`, { fields });
export const deleteAccount = (accountId: number): Promise<{ id: number; status: 'deleting' }> => del(`/admin/v1/accounts/${id(accountId)}`);

export const redeliveryTask = (taskId: string): Promise<RedeliveryTaskView> => get(`/admin/v1/redeliveries/${id(taskId)}`);

export const stats = (query: QueryValues): Promise<EventStats> => get('/admin/v1/stats', query);
export const series = (query: { since: string; until: string; bucket: SeriesBucket; account_id?: string }): Promise<StatsSeries> =>
  get('/admin/v1/stats/series', query);
export const queueState = (): Promise<QueueState> => get('/admin/v1/queue');
export const troubledEndpoints = (): Promise<{ items: EndpointItem[] }> => get('/admin/v1/endpoints');

export const listBotCalls = (query: QueryValues): Promise<Page<BotCallView>> => get('/admin/v1/bot-calls', query);

/** CONTRACT §11: an account's destinations, through the admin routes. */
export const accountDestinations = (accountId: number): DestinationsClient => {
  const base = `/admin/v1/accounts/${id(accountId)}/destinations`;
  return {
    list: () => get(base).then(destinationsOf),
    create: (change) => post(base, change).then(destinationOf),
    update: (destinationId, change) => put(`${base}/${id(destinationId)}`, change).then(destinationOf),
    remove: (destinationId) => del(`${base}/${id(destinationId)}`).then(accepted),
    pause: (destinationId) => post(`${base}/${id(destinationId)}/pause`).then(destinationOf),
    resume: (destinationId) => post(`${base}/${id(destinationId)}/resume`).then(destinationOf),
  };
};
