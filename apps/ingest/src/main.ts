import 'reflect-metadata';
import { bootstrapHttpApp } from '@app/runtime';
import { IngestModule } from './ingest.module';

void bootstrapHttpApp('ingest', IngestModule, (environment) => environment.ports.ingest);
