import { Module } from '@nestjs/common';
import { AccountsModule } from '../accounts/accounts.module';
import { ErasureRunner } from './erasure-runner.service';
import { ErasuresController } from './erasures.controller';
import { ErasuresService } from './erasures.service';

/** CONTRACT §12: erasure by subject, redaction at rest, offboarding. */
@Module({
  imports: [AccountsModule],
  controllers: [ErasuresController],
  providers: [ErasuresService, ErasureRunner],
})
export class DataProtectionModule {}
