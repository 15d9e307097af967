import { Module } from '@nestjs/common';
import { BacklogMetrics } from './backlog.metrics';

/** The backlog gauges the worker's autoscaler and alerts read (GET /metrics). */
@Module({ providers: [BacklogMetrics] })
export class BacklogModule {}
