import { Body, Controller, Get, HttpCode, Param, Post, UseGuards } from '@nestjs/common';
import type { ErasureStarted, ErasureView } from '@app/payloads';
import { AdminTokenGuard } from '@app/runtime';
import { ApiAdminController } from '../admin.docs';
import { StartErasureDto } from './data-protection.dto';
import { ApiErasure, ApiStartErasure, DATA_PROTECTION_TAG } from './data-protection.docs';
import { ErasuresService } from './erasures.service';

@ApiAdminController(DATA_PROTECTION_TAG)
@Controller('admin/v1/erasures')
@UseGuards(AdminTokenGuard)
export class ErasuresController {
  constructor(private readonly erasures: ErasuresService) {}

  @ApiStartErasure()
  @Post()
  @HttpCode(202)
  start(@Body() body: StartErasureDto): Promise<ErasureStarted> {
    return this.erasures.start(body);
  }

  @ApiErasure()
  @Get(':id')
  get(@Param('id') id: string): Promise<ErasureView> {
    return this.erasures.get(id);
  }
}
