import 'reflect-metadata';
import { bootstrapHttpApp } from '@app/runtime';
import { CONFIG_API_DOCS } from './config-api.docs';
import { ConfigApiModule } from './config-api.module';

void bootstrapHttpApp('config-api', ConfigApiModule, (environment) => environment.ports.configApi, CONFIG_API_DOCS);
