import 'reflect-metadata';
import { bootstrapHttpApp } from '@app/runtime';
import { INGEST_DOCS } from './ingest.docs';
import { IngestModule } from './ingest.module';

void bootstrapHttpApp('ingest', IngestModule, (environment) => environment.ports.ingest, INGEST_DOCS);
