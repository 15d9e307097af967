import type { Job } from 'bullmq';
import type { DeliveryJobData } from '@app/runtime';

/** What a delivery step needs of a BullMQ job (the primary's and a destination's alike); unit tests hand in a plain object. */
export type DeliveryJob = Pick<Job<DeliveryJobData>, 'data' | 'attemptsStarted' | 'moveToDelayed'>;
