import { Module } from '@nestjs/common';
import { AccountsModule } from '../accounts/accounts.module';
import { AccountDataController } from './account-data.controller';
import { AccountDeletionRunner } from './account-deletion-runner.service';
import { AccountDeletionService } from './account-deletion.service';
import { ErasureRunner } from './erasure-runner.service';
import { ErasuresController } from './erasures.controller';
import { ErasuresService } from './erasures.service';
import { RedactionPass } from './redaction-pass.service';
import { RedactionService } from './redaction.service';

/** CONTRACT §12: erasure by subject, redaction at rest, offboarding. */
@Module({
  imports: [AccountsModule],
  controllers: [ErasuresController, AccountDataController],
  providers: [ErasuresService, ErasureRunner, AccountDeletionService, AccountDeletionRunner, RedactionService, RedactionPass],
})
export class DataProtectionModule {}
