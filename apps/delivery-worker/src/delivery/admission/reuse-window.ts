/**
 * How long a lease may serve further calls of this process without asking Redis: the bound on how late
 * another worker's news of the endpoint (its breaker opened, an operator closed it) reaches this one.
 */
export const REUSE_WINDOW_MS = 1_000;
