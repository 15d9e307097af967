import { Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { stopTracing } from './tracing';

/** Exports the spans still buffered when the app closes (a no-op when tracing is off). */
@Injectable()
export class TracingShutdown implements OnApplicationShutdown {
  async onApplicationShutdown(): Promise<void> {
    await stopTracing();
  }
}
