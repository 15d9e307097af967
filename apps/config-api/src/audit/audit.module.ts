import { Global, Module } from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import { AuditInterceptor } from './audit.interceptor';
import { AuditRecorder } from './audit-recorder.service';

/** The audit log's writing side, for every part of config-api (global: the admin guard, the sign-in and the interceptor use it). */
@Global()
@Module({
  providers: [AuditRecorder, { provide: APP_INTERCEPTOR, useClass: AuditInterceptor }],
  exports: [AuditRecorder],
})
export class AuditModule {}
