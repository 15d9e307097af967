import { Module } from '@nestjs/common';

/** POST /v1/events and /v1/events/batch (placeholder module: filled in by its feature work). */
@Module({})
export class EventsModule {}
