import path from 'node:path';
import { z } from 'zod';

/**
 * The only reader of process.env. Every documented variable (docs/configuration.md) is parsed
 * here, and every problem is reported at once.
 */

const bool = z
  .enum(['true', 'false', '1', '0', 'yes', 'no', ''])
  .optional()
  .transform((v) => v === 'true' || v === '1' || v === 'yes');

const url = (protocols: string[]) =>
  z
    .string()
    .url()
    // A value that is no URL at all is already reported by .url(); the refinement still runs on it.
    .refine((v) => URL.canParse(v) && protocols.includes(new URL(v).protocol), {
      message: `must use ${protocols.map((p) => p.replace(':', '://')).join(' or ')}`,
    });

const optional = <T extends z.ZodTypeAny>(schema: T) => z.preprocess((v) => (v === '' ? undefined : v), schema.optional());

export const SUBGRAPH_NAMES = ['control-plane', 'promptlib', 'engine', 'links', 'feedback', 'infra'] as const;
export type SubgraphName = (typeof SUBGRAPH_NAMES)[number];

const envSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(4000),
  HOST: z.string().default('0.0.0.0'),
  DATABASE_URL: optional(url(['postgres:', 'postgresql:'])),
  DATA_DIR: z.string().default('./data'),
  FILES_DIR: optional(z.string()),
  REDIS_URL: optional(url(['redis:', 'rediss:'])),
  BOOTSTRAP_API_KEY: optional(
    z.string().regex(/^cp_(live|test)_sk_[A-Za-z0-9_-]{16,}$/, 'must be a control-plane key: cp_live_sk_… or cp_test_sk_… followed by at least 16 characters'),
  ),
  LLM_BASE_URL: optional(url(['http:', 'https:'])),
  LLM_API_KEY: optional(z.string()),
  LLM_MODELS: z
    .string()
    .default('default')
    .transform((v) =>
      v
        .split(',')
        .map((m) => m.trim())
        .filter(Boolean),
    )
    .refine((v) => v.length > 0, 'must name at least one model'),
  WEBHOOK_ALLOW_HTTP: bool,
  OUTBOUND_ALLOW_PRIVATE_NETWORKS: bool,
  INFRA_ADMIN_EMAIL: optional(z.string().email()),
  INFRA_ADMIN_PASSWORD: optional(z.string().min(8)),
  CLUSTER_DRIVER: z.enum(['local', 'kubernetes']).default('local'),
  LOCAL_ROLLOUT_STEP_MS: z.coerce.number().int().min(10).max(60_000).default(1000),
  INFRA_WATCH_INTERVAL_MS: z.coerce.number().int().min(10).max(60_000).default(1000),
  INFRA_ALERT_THRESHOLD_PERCENT: z.coerce.number().min(0).max(100).default(90),
  METRICS_SAMPLE_INTERVAL_MS: z.coerce.number().int().min(100).max(3_600_000).default(60_000),
  METRICS_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(30),
  AUDIT_RETENTION_DAYS: z.coerce.number().int().min(1).max(36500).default(365),
  KUBECONFIG: optional(z.string()),
  JWT_SECRET: optional(z.string().min(16)),
  GITHUB_CLIENT_ID: optional(z.string()),
  GITHUB_CLIENT_SECRET: optional(z.string()),
  GITHUB_OAUTH_URL: url(['http:', 'https:']).default('https://github.com'),
  GITHUB_API_URL: url(['http:', 'https:']).default('https://api.github.com'),
  GOOGLE_CLIENT_ID: optional(z.string()),
  GOOGLE_CLIENT_SECRET: optional(z.string()),
  GOOGLE_TOKEN_URL: url(['http:', 'https:']).default('https://oauth2.googleapis.com/token'),
  GOOGLE_USERINFO_URL: url(['http:', 'https:']).default('https://openidconnect.googleapis.com/v1/userinfo'),
  FEEDBACK_FRONTEND_URL: optional(url(['http:', 'https:'])),
  FEEDBACK_LOCAL_SIGNIN: z.enum(['true', 'false', '1', '0', 'yes', 'no', '']).optional(),
  TRUST_PROXY: bool,
  PUBLIC_URL: optional(url(['http:', 'https:'])),
  TRACES_UI_URL: optional(url(['http:', 'https:']).refine((v) => v.includes('{traceId}'), { message: 'must contain {traceId}, where the trace id goes' })),
  NODE_ENV: z.string().optional(),
  GRAPHQL_INTROSPECTION: z.enum(['true', 'false', '1', '0', 'yes', 'no', '']).optional(),
  ANONYMOUS_RATE_LIMIT: z.coerce.number().int().min(1).max(1_000_000).default(120),
  // Split deployment (docs/deployment.md): where the gateway finds remote subgraphs, and the
  // secret that signs the principal handed to them.
  SUBGRAPH_URLS: z
    .string()
    .default('')
    .transform((v, ctx) => {
      const out: Partial<Record<SubgraphName, string>> = {};
      for (const pair of v
        .split(',')
        .map((p) => p.trim())
        .filter(Boolean)) {
        const [name, target] = pair.split('=');
        if (!SUBGRAPH_NAMES.includes(name as SubgraphName) || !target || !/^https?:\/\//.test(target)) {
          ctx.addIssue({ code: z.ZodIssueCode.custom, message: `"${pair}" is not <subgraph>=<http url>; subgraphs: ${SUBGRAPH_NAMES.join(', ')}` });
          continue;
        }
        out[name as SubgraphName] = target;
      }
      return out;
    }),
  INTERNAL_SECRET: optional(z.string().min(32)),
  CREDENTIALS_KEY: optional(z.string().min(32)),
  CREDENTIALS_KEY_PREVIOUS: z
    .string()
    .default('')
    .transform((v) =>
      v
        .split(',')
        .map((k) => k.trim())
        .filter(Boolean),
    )
    .refine((v) => v.every((k) => k.length >= 32), 'every key must be at least 32 characters'),
  WORKER_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(8),
  WORKER_STALE_AFTER_MS: z.coerce.number().int().min(1000).max(3_600_000).default(30_000),
  WORKER_POLL_MS: z.coerce.number().int().min(10).max(3_600_000).default(250),
  DB_POOL_SIZE: z.coerce.number().int().min(2).max(200).default(20),
  LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error', 'silent']).default('info'),
  // Workflow engine: pruning of finished executions (subgraphs/engine).
  ENGINE_EXECUTION_MAX_AGE_DAYS: z.coerce.number().int().min(1).max(36_500).default(14),
  ENGINE_EXECUTION_MAX_COUNT: z.coerce.number().int().min(1).max(100_000_000).default(10_000),
  // Workflow engine: what one execution may use (subgraphs/engine/nodes/budgets.ts).
  ENGINE_EXECUTION_MAX_ITEMS_PER_OUTPUT: z.coerce.number().int().min(1).max(100_000_000).default(100_000),
  ENGINE_EXECUTION_MAX_RUN_DATA_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(1024 ** 4)
    .default(64 * 1024 ** 2),
  ENGINE_EXECUTION_MAX_LOOP_TURNS: z.coerce.number().int().min(1).max(100_000_000).default(100_000),
  ENGINE_EXECUTION_MAX_DURATION_MS: z.coerce.number().int().min(1000).max(86_400_000).default(3_600_000),
  SANDBOX_PROCESSES: z.coerce.number().int().min(1).max(64).default(2),
  // Workflow engine: where the bytes of n8n binary data go when run data is stored (subgraphs/engine/executions/binary.store.ts).
  BINARY_DATA_MODE: z.enum(['database', 'filesystem', 's3']).default('database'),
  BINARY_DATA_DIR: z.string().optional(),
  BINARY_DATA_S3_ENDPOINT: z.string().url().optional(),
  BINARY_DATA_S3_BUCKET: z.string().min(1).optional(),
  BINARY_DATA_S3_REGION: z.string().min(1).default('us-east-1'),
  BINARY_DATA_S3_ACCESS_KEY_ID: z.string().min(1).optional(),
  BINARY_DATA_S3_SECRET_ACCESS_KEY: z.string().min(1).optional(),
  BINARY_DATA_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1)
    .max(1024 ** 4)
    .default(16 * 1024 ** 2),
  BINARY_DATA_MAX_EXECUTION_BYTES: z.coerce
    .number()
    .int()
    .min(1)
    .max(1024 ** 4)
    .default(64 * 1024 ** 2),
});

export interface Config {
  port: number;
  host: string;
  databaseUrl?: string;
  dataDir: string;
  /** The one folder n8n's Read/Write Files from Disk node may read and write (FILES_DIR, default DATA_DIR/files). */
  filesDir: string;
  redisUrl?: string;
  bootstrapApiKey?: string;
  llm: { baseUrl?: string; apiKey?: string; models: string[] };
  webhookAllowHttp: boolean;
  outboundAllowPrivateNetworks: boolean;
  infraAdmin: { email?: string; password?: string };
  /**
   * The infrastructure service's cluster: the driver, the local driver's simulated rollout step,
   * how often rollouts are followed (and cluster alerts checked, every 15 of those), and the
   * utilisation that raises an alert.
   */
  cluster: { driver: 'local' | 'kubernetes'; kubeconfig?: string; localStepMs: number; watchIntervalMs: number; alertThresholdPercent: number };
  jwtSecret?: string;
  github: { clientId?: string; clientSecret?: string; oauthUrl: string; apiUrl: string };
  google: { clientId?: string; clientSecret?: string; tokenUrl: string; userinfoUrl: string };
  feedbackFrontendUrl: string;
  /**
   * Feature-request sign-in without GitHub or Google: the platform admin key mints a person's
   * session. FEEDBACK_LOCAL_SIGNIN; default on only with the embedded database (a local try-out).
   */
  feedbackLocalSignIn: boolean;
  trustProxy: boolean;
  /** Base of the absolute URLs in answers and webhooks; unset: each request's own scheme and host. */
  publicUrl?: string;
  /** A trace viewer's page of one trace, `{traceId}` standing for its id (TRACES_UI_URL): the dashboard links tasks, executions and orchestrations to it. */
  tracesUiUrl?: string;
  graphql: {
    /** Introspection and "Did you mean" suggestions: GRAPHQL_INTROSPECTION, default on unless NODE_ENV=production. */
    introspection: boolean;
  };
  /** Requests without a credential per client address and minute. */
  anonymousRateLimit: number;
  subgraphUrls: Partial<Record<SubgraphName, string>>;
  internalSecret?: string;
  /** The key n8n credentials are encrypted under (else DATA_DIR/secrets/credentials-key), and the keys they may still be under. */
  credentials: { key?: string; previousKeys: string[] };
  workerConcurrency: number;
  /** A worker silent this long is presumed dead and its running jobs are reclaimed (it heartbeats at a sixth of it, at most every 5 s). */
  workerStaleAfterMs: number;
  /** How often idle workers look for due jobs; a job queued in a committed transaction wakes them at once anyway. */
  workerPollMs: number;
  dbPoolSize: number;
  logLevel: 'debug' | 'info' | 'warn' | 'error' | 'silent';
  /** The resource sampler: every intervalMs a row, kept retentionDays. */
  metrics: { sampleIntervalMs: number; retentionDays: number };
  /** The audit trail (kernel/audit): entries older than retentionDays are deleted by the worker role, never earlier. */
  audit: { retentionDays: number };
  /**
   * Finished workflow executions older than maxAgeDays are deleted; at most maxCount are kept per
   * workflow. `budgets`: what one execution may use — items per node output, bytes of run data,
   * runs of one node (loop turns), milliseconds of running (waits not counted).
   */
  engine: {
    executionMaxAgeDays: number;
    executionMaxCount: number;
    sandboxProcesses: number;
    budgets: {
      /** Items one run of a node may output (all its outputs together). */
      maxItemsPerOutput: number;
      /** Bytes of run data (node outputs and contexts, as JSON) one execution may keep. */
      maxRunDataBytes: number;
      /** Times any one node may run in one execution (a node in a loop runs once per turn). */
      maxLoopTurns: number;
      /** Milliseconds an execution may run, waits not counted. */
      maxDurationMs: number;
      /** Bytes of one item's binary (one file) kept with the run data. */
      maxBinaryBytes: number;
      /** Bytes of all the binary data one execution keeps. */
      maxExecutionBinaryBytes: number;
    };
    /** Where binary data's bytes are kept: database (a table), filesystem (`dir`) or s3 (a bucket several machines share). */
    binary: BinaryDataConfig;
  };
}

export interface BinaryDataConfig {
  mode: 'database' | 'filesystem' | 's3';
  dir: string;
  s3?: { endpoint: string; bucket: string; region: string; accessKeyId: string; secretAccessKey: string };
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((i) => `${i.path.join('.') || 'environment'}: ${i.message}`));
  }
  const e = parsed.data;
  if (e.INFRA_ADMIN_EMAIL && !e.INFRA_ADMIN_PASSWORD) {
    throw new ConfigError(['INFRA_ADMIN_PASSWORD: required when INFRA_ADMIN_EMAIL is set']);
  }
  const s3 = [e.BINARY_DATA_S3_ENDPOINT, e.BINARY_DATA_S3_BUCKET, e.BINARY_DATA_S3_ACCESS_KEY_ID, e.BINARY_DATA_S3_SECRET_ACCESS_KEY] as const;
  if (e.BINARY_DATA_MODE === 's3' && s3.some((v) => !v)) {
    throw new ConfigError([
      'BINARY_DATA_MODE: s3 needs BINARY_DATA_S3_ENDPOINT, BINARY_DATA_S3_BUCKET, BINARY_DATA_S3_ACCESS_KEY_ID and BINARY_DATA_S3_SECRET_ACCESS_KEY',
    ]);
  }
  return {
    port: e.PORT,
    host: e.HOST,
    databaseUrl: e.DATABASE_URL,
    dataDir: path.resolve(e.DATA_DIR),
    filesDir: path.resolve(e.FILES_DIR ?? path.join(e.DATA_DIR, 'files')),
    redisUrl: e.REDIS_URL,
    bootstrapApiKey: e.BOOTSTRAP_API_KEY,
    llm: { baseUrl: e.LLM_BASE_URL?.replace(/\/+$/, ''), apiKey: e.LLM_API_KEY, models: e.LLM_MODELS },
    webhookAllowHttp: e.WEBHOOK_ALLOW_HTTP,
    outboundAllowPrivateNetworks: e.OUTBOUND_ALLOW_PRIVATE_NETWORKS,
    infraAdmin: { email: e.INFRA_ADMIN_EMAIL, password: e.INFRA_ADMIN_PASSWORD },
    cluster: {
      driver: e.CLUSTER_DRIVER,
      kubeconfig: e.KUBECONFIG,
      localStepMs: e.LOCAL_ROLLOUT_STEP_MS,
      watchIntervalMs: e.INFRA_WATCH_INTERVAL_MS,
      alertThresholdPercent: e.INFRA_ALERT_THRESHOLD_PERCENT,
    },
    jwtSecret: e.JWT_SECRET,
    github: { clientId: e.GITHUB_CLIENT_ID, clientSecret: e.GITHUB_CLIENT_SECRET, oauthUrl: e.GITHUB_OAUTH_URL, apiUrl: e.GITHUB_API_URL },
    google: { clientId: e.GOOGLE_CLIENT_ID, clientSecret: e.GOOGLE_CLIENT_SECRET, tokenUrl: e.GOOGLE_TOKEN_URL, userinfoUrl: e.GOOGLE_USERINFO_URL },
    feedbackFrontendUrl: (e.FEEDBACK_FRONTEND_URL ?? `http://localhost:${e.PORT}/feedback`).replace(/\/+$/, ''),
    feedbackLocalSignIn:
      e.FEEDBACK_LOCAL_SIGNIN === undefined || e.FEEDBACK_LOCAL_SIGNIN === ''
        ? e.DATABASE_URL === undefined
        : ['true', '1', 'yes'].includes(e.FEEDBACK_LOCAL_SIGNIN),
    trustProxy: e.TRUST_PROXY,
    publicUrl: e.PUBLIC_URL?.replace(/\/+$/, ''),
    tracesUiUrl: e.TRACES_UI_URL,
    graphql: {
      introspection:
        e.GRAPHQL_INTROSPECTION === undefined || e.GRAPHQL_INTROSPECTION === ''
          ? e.NODE_ENV !== 'production'
          : ['true', '1', 'yes'].includes(e.GRAPHQL_INTROSPECTION),
    },
    anonymousRateLimit: e.ANONYMOUS_RATE_LIMIT,
    subgraphUrls: e.SUBGRAPH_URLS,
    internalSecret: e.INTERNAL_SECRET,
    credentials: { key: e.CREDENTIALS_KEY, previousKeys: e.CREDENTIALS_KEY_PREVIOUS },
    metrics: { sampleIntervalMs: e.METRICS_SAMPLE_INTERVAL_MS, retentionDays: e.METRICS_RETENTION_DAYS },
    audit: { retentionDays: e.AUDIT_RETENTION_DAYS },
    workerConcurrency: e.WORKER_CONCURRENCY,
    workerStaleAfterMs: e.WORKER_STALE_AFTER_MS,
    workerPollMs: e.WORKER_POLL_MS,
    dbPoolSize: e.DB_POOL_SIZE,
    logLevel: e.LOG_LEVEL,
    engine: {
      executionMaxAgeDays: e.ENGINE_EXECUTION_MAX_AGE_DAYS,
      executionMaxCount: e.ENGINE_EXECUTION_MAX_COUNT,
      sandboxProcesses: e.SANDBOX_PROCESSES,
      budgets: {
        maxItemsPerOutput: e.ENGINE_EXECUTION_MAX_ITEMS_PER_OUTPUT,
        maxRunDataBytes: e.ENGINE_EXECUTION_MAX_RUN_DATA_BYTES,
        maxLoopTurns: e.ENGINE_EXECUTION_MAX_LOOP_TURNS,
        maxDurationMs: e.ENGINE_EXECUTION_MAX_DURATION_MS,
        maxBinaryBytes: e.BINARY_DATA_MAX_BYTES,
        maxExecutionBinaryBytes: e.BINARY_DATA_MAX_EXECUTION_BYTES,
      },
      binary: {
        mode: e.BINARY_DATA_MODE,
        dir: path.resolve(e.BINARY_DATA_DIR ?? path.join(e.DATA_DIR, 'binary-data')),
        ...(s3[0] && s3[1] && s3[2] && s3[3]
          ? { s3: { endpoint: s3[0].replace(/\/+$/, ''), bucket: s3[1], region: e.BINARY_DATA_S3_REGION, accessKeyId: s3[2], secretAccessKey: s3[3] } }
          : {}),
      },
    },
  };
}
