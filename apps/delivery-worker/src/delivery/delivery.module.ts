import { Module } from '@nestjs/common';

/** The delivery processor, retries, breaker and reconciler (placeholder module: filled in by its feature work). */
@Module({})
export class DeliveryModule {}
