import { Module } from '@nestjs/common';

/** Operators' view of events: list, detail with attempts, redelivery, stats (placeholder module: filled in by its feature work). */
@Module({})
export class AdminEventsModule {}
