import { Module } from '@nestjs/common';

/** The signed Open API: set_url, set_push_content_type, set_permissions, push_settings (placeholder module: filled in by its feature work). */
@Module({})
export class OpenApiModule {}
