import { Body, Controller, Get, HttpCode, Param, Post, UseGuards } from '@nestjs/common';
import type { ErasureStarted, ErasureView } from '@app/payloads';
import { AdminAccessGuard } from '../identity/admin-access.guard';
import { Permission } from '../identity/permission.decorator';
import { ApiAdminController } from '../admin.docs';
import { StartErasureDto } from './data-protection.dto';
import { ApiErasure, ApiStartErasure, DATA_PROTECTION_TAG } from './data-protection.docs';
import { ErasuresService } from './erasures.service';
import { Audit } from '../../audit/audit.decorator';

@ApiAdminController(DATA_PROTECTION_TAG)
@Controller('admin/v1/erasures')
@UseGuards(AdminAccessGuard)
export class ErasuresController {
  constructor(private readonly erasures: ErasuresService) {}

  @ApiStartErasure()
  @Permission('administer')
  @Audit('erasure.create')
  @Post()
  @HttpCode(202)
  start(@Body() body: StartErasureDto): Promise<ErasureStarted> {
    return this.erasures.start(body);
  }

  @ApiErasure()
  @Permission('read')
  @Get(':id')
  get(@Param('id') id: string): Promise<ErasureView> {
    return this.erasures.get(id);
  }
}
