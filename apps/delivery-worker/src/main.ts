import 'reflect-metadata';
import { bootstrapHttpApp } from '@app/runtime';
import { DELIVERY_WORKER_DOCS } from './delivery-worker.docs';
import { DeliveryWorkerModule } from './delivery-worker.module';

void bootstrapHttpApp('delivery-worker', DeliveryWorkerModule, (environment) => environment.ports.worker, DELIVERY_WORKER_DOCS);
