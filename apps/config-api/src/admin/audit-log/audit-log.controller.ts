import { Controller, Get, Query, UseGuards } from '@nestjs/common';
import type { AuditEntryView, Page } from '@app/payloads';
import { ApiAdminController } from '../admin.docs';
import { AdminAccessGuard } from '../identity/admin-access.guard';
import { Permission } from '../identity/permission.decorator';
import { ListAuditQueryDto } from './audit-list.dto';
import { ApiListAudit } from './audit-log.docs';
import { AuditLogService } from './audit-log.service';

@ApiAdminController('Admin: identity and audit')
@Controller('admin/v1/audit')
@UseGuards(AdminAccessGuard)
export class AuditLogController {
  constructor(private readonly audit: AuditLogService) {}

  @ApiListAudit()
  @Permission('administer')
  @Get()
  list(@Query() query: ListAuditQueryDto): Promise<Page<AuditEntryView>> {
    return this.audit.list(query);
  }
}
