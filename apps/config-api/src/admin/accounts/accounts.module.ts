import { Module } from '@nestjs/common';
import { AccountsController } from './accounts.controller';
import { AccountsService } from './accounts.service';
import { AccountCredentialsService } from './account-credentials.service';

@Module({ controllers: [AccountsController], providers: [AccountsService, AccountCredentialsService], exports: [AccountsService] })
export class AccountsModule {}
