import { PlatformSchema1763769600000 } from './1763769600000-platform-schema';
import { Jobs1763769600100 } from './1763769600100-jobs';
import { WebhookDeliveries1763769600200 } from './1763769600200-webhook-deliveries';
import { RunClock1763769601150 } from './1763769601150-run-clock';
import { AddJob1763769601700 } from './1763769601700-add-job';
import { FinishJob1763769601720 } from './1763769601720-finish-job';
import { RunClockEarlyExit1763769601790 } from './1763769601790-run-clock-early-exit';
import { JobsEndedInStatement1763769601800 } from './1763769601800-jobs-ended-in-statement';
import { JobTraceParent1763769601900 } from './1763769601900-job-trace-parent';
import { AuditLog1764500000000 } from './1764500000000-audit-log';

/** The kernel's migrations, in order. Each service lists its own in subgraphs/<service>/migrations. */
export const kernelMigrations: Function[] = [
  PlatformSchema1763769600000,
  Jobs1763769600100,
  WebhookDeliveries1763769600200,
  RunClock1763769601150,
  AddJob1763769601700,
  FinishJob1763769601720,
  RunClockEarlyExit1763769601790,
  JobsEndedInStatement1763769601800,
  JobTraceParent1763769601900,
  AuditLog1764500000000,
];
