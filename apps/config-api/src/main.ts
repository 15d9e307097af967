import 'reflect-metadata';
import { bootstrapHttpApp } from '@app/runtime';
import { ConfigApiModule } from './config-api.module';

void bootstrapHttpApp('config-api', ConfigApiModule, (environment) => environment.ports.configApi);
