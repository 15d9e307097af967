import { Module } from '@nestjs/common';
import { TaskQueueModule } from '@app/runtime';
import { AccountsModule } from '../accounts/accounts.module';
import { AccountDataController } from './account-data.controller';
import { AccountDeletionService } from './account-deletion.service';
import { ErasuresController } from './erasures.controller';
import { ErasuresService } from './erasures.service';
import { RedactionService } from './redaction.service';

/** CONTRACT §12: erasure by subject, redaction at rest, offboarding; recorded here as tasks, run by the delivery workers. */
@Module({
  imports: [AccountsModule, TaskQueueModule.register('producer')],
  controllers: [ErasuresController, AccountDataController],
  providers: [ErasuresService, AccountDeletionService, RedactionService],
})
export class DataProtectionModule {}
