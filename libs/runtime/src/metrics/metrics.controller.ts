import { Controller, Get, Header } from '@nestjs/common';
import { register } from 'prom-client';
import { startDefaultMetrics } from './metrics';

@Controller('metrics')
export class MetricsController {
  constructor() {
    startDefaultMetrics();
  }

  @Get()
  @Header('Content-Type', register.contentType)
  async metrics(): Promise<string> {
    return register.metrics();
  }
}
