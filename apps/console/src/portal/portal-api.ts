import { del, get, post, put, type QueryValues, request } from '../api/client';
import { accepted, destinationOf, destinationsOf, type DestinationsClient } from '../api/destinations';
import type { Permissions } from '@app/payloads/actions';
import type { DeliveryOptions, EventDetail, EventPage, EventRedelivered, RotatedSecret, SeriesBucket, StatsSeries } from '@app/payloads/admin-api.types';

/** Every /portal/v1 call the portal page makes. The session token goes as the bearer (api/client.ts). */
const id = (value: string): string => encodeURIComponent(value);

export interface PortalSettings extends DeliveryOptions {
  push_url: string | null;
  push_content_type: string;
  permissions: Permissions;
}

export interface EndpointState {
  push_url: string | null;
  disabled_at: string | null;
  disabled_reason: string | null;
  endpoint: { state: string; consecutive_failures: number; retry_at: string | null; last_error: string | null } | null;
}

export interface PortalTask {
  id: string;
  status: 'running' | 'done' | 'failed';
  total: number;
  done: number;
}

export interface PortalSession {
  token: string;
  account_id: number;
  expires_at: string;
}

export const openSession = (code: string): Promise<PortalSession> => request('POST', '/portal/v1/session', { body: { code }, token: '' });
export const settings = (): Promise<PortalSettings> => get('/portal/v1/settings');
export const saveSettings = (changes: Partial<PortalSettings>): Promise<PortalSettings> => request('PUT', '/portal/v1/settings', { body: changes });
export const enableEndpoint = (): Promise<EndpointState> => post('/portal/v1/endpoint/enable');
export const rotateSecret = (): Promise<RotatedSecret> => post('/portal/v1/rotate-secret');
export const sendTestEvent = (action: string): Promise<{ event_id: string }> => post('/portal/v1/test-event', { action });
export const listEvents = (query: QueryValues): Promise<EventPage> => get('/portal/v1/events', query);
export const eventDetail = (eventId: string): Promise<EventDetail> => get(`/portal/v1/events/${id(eventId)}`);
export const redeliverEvent = (eventId: string, destinationId?: string): Promise<EventRedelivered> =>
  post(`/portal/v1/events/${id(eventId)}/redeliver`, destinationId === undefined ? {} : { destination_id: destinationId });
export const redeliverMatching = (filter: Record<string, string>): Promise<{ task_id: string; count: number }> =>
  post('/portal/v1/redeliver', { status: 'failed', ...filter });
export const redeliveryTask = (taskId: string): Promise<PortalTask> => get(`/portal/v1/redeliver/${id(taskId)}`);
export const health = (query: { since: string; until: string; bucket: SeriesBucket }): Promise<StatsSeries & { state: EndpointState }> =>
  get('/portal/v1/health', query);

/** CONTRACT §11: the account's destinations (the primary listed first). */
export const destinations: DestinationsClient = {
  list: () => get('/portal/v1/destinations').then(destinationsOf),
  create: (change) => post('/portal/v1/destinations', change).then(destinationOf),
  update: (destinationId, change) => put(`/portal/v1/destinations/${id(destinationId)}`, change).then(destinationOf),
  remove: (destinationId) => del(`/portal/v1/destinations/${id(destinationId)}`).then(accepted),
  pause: (destinationId) => post(`/portal/v1/destinations/${id(destinationId)}/pause`).then(destinationOf),
  resume: (destinationId) => post(`/portal/v1/destinations/${id(destinationId)}/resume`).then(destinationOf),
};
