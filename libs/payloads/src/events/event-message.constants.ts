/** Value sets from the seed's "States and transitions"; exported so producers and tests share one spelling. */
export const QUEUE_TYPES = ['agent', 'group', 'company'] as const;
export type QueueType = (typeof QUEUE_TYPES)[number];

/** With queue_type `company`, the seed puts this literal text in queue_name and queue_id. */
export const COMPANY_QUEUE = 'company';

export const CLOSE_METHODS = ['agent_close', 'redirect_close', 'sys_close', 'customer_close'] as const;
export type CloseMethod = (typeof CLOSE_METHODS)[number];

/** The seed notes send_status "may be empty": the empty string is accepted besides these. */
export const SEND_STATUSES = ['sending', 'arrive', 'fail', 'off_sending', 'off_arrive', 'rollback'] as const;
export type SendStatus = (typeof SEND_STATUSES)[number];

/** `0` resolved, `1` unresolved; strings on the wire. */
export const RESOLVED_STATES = ['0', '1'] as const;
export type ResolvedState = (typeof RESOLVED_STATES)[number];

/** `sender` of a chat log entry (im_log_infos); the close entry's own `sender` is a free string. */
export const CHAT_LOG_SENDERS = ['customer', 'agent'] as const;
export type ChatLogSender = (typeof CHAT_LOG_SENDERS)[number];
