import { Controller, Get, HttpCode, ServiceUnavailableException } from '@nestjs/common';
import { type ReadinessReport, ReadinessService } from './readiness.service';

@Controller('health')
export class HealthController {
  constructor(private readonly readiness: ReadinessService) {}

  @Get('live')
  @HttpCode(200)
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  @Get('ready')
  async ready(): Promise<ReadinessReport> {
    const report = await this.readiness.check();
    if (report.status !== 'ok') throw new ServiceUnavailableException(report);
    return report;
  }
}
