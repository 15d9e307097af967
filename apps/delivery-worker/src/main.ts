import 'reflect-metadata';
import { bootstrapHttpApp } from '@app/runtime';
import { DeliveryWorkerModule } from './delivery-worker.module';

void bootstrapHttpApp('delivery-worker', DeliveryWorkerModule, (environment) => environment.ports.worker);
