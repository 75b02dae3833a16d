import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../kernel/config';
import { startPlatform, type PlatformOptions, type RunningPlatform } from '../../main';
import type { Platform } from './answers';
import { createTestDatabase, type TestDatabase } from './database';

/**
 * A JSON answer as the tests read it: the status and the parsed body, typed as the shape the test
 * expects (`T`, e.g. `V1<Task>` from ./answers; its assertions check that shape).
 */
export interface JsonAnswer<T = unknown> {
  status: number;
  body: T;
}

export interface Answer<T = unknown> extends JsonAnswer<T> {
  headers: Headers;
}

export interface TestPlatform {
  url: string;
  port: number;
  /** The platform admin key (`*`), ensured through BOOTSTRAP_API_KEY. */
  adminKey: string;
  platform: RunningPlatform;
  db: TestDatabase;
  rest<T = unknown>(
    method: string,
    path: string,
    opts?: { key?: string | null; body?: unknown; raw?: string; headers?: Record<string, string> },
  ): Promise<Answer<T>>;
  graphql<T = unknown>(query: string, variables?: Record<string, unknown>, key?: string | null): Promise<Answer<T>>;
  /** Creates a key through the public API and returns the key itself. */
  createKey(fields?: Record<string, unknown>): Promise<{ id: string; key: string }>;
  /** `keepDatabase`: leave the database for a later platform (`startTestPlatform(env, { database })`). */
  stop(opts?: { keepDatabase?: boolean }): Promise<void>;
}

export interface TestPlatformOptions extends PlatformOptions {
  /** Run on this database (e.g. the one of a stopped platform) instead of a fresh one; the caller drops it. */
  database?: TestDatabase;
}

/**
 * The whole platform in this process with an admin key (`*`, through BOOTSTRAP_API_KEY), on
 * 127.0.0.1 with an ephemeral port and a scratch DATA_DIR, configured from process.env and `env`
 * (DATABASE_URL among them): how the tests and the benchmarks start one. `stop()` removes the
 * DATA_DIR; the database is the caller's.
 */
export async function startLocalPlatform(
  env: NodeJS.ProcessEnv,
  opts: PlatformOptions & { label?: string } = {},
): Promise<{ platform: RunningPlatform; adminKey: string; stop(): Promise<void> }> {
  const { label = 'platform', ...platformOpts } = opts;
  const dataDir = mkdtempSync(path.join(tmpdir(), `${label}-`));
  const adminKey = `cp_live_sk_${randomBytes(24).toString('base64url')}`;
  try {
    const config = loadConfig({
      ...process.env,
      DATA_DIR: dataDir,
      PORT: '0',
      HOST: '127.0.0.1',
      BOOTSTRAP_API_KEY: adminKey,
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'error',
      ...env,
    });
    const platform = await startPlatform(config, platformOpts);
    return {
      platform,
      adminKey,
      async stop() {
        await platform.stop();
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
}

/** A JSON request with `key`; the parsed answer, or an error naming the status when it is not 2xx. */
export async function callJson<T = unknown>(url: string, method: string, p: string, key: string, body?: unknown): Promise<T> {
  const res = await fetch(url + p, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${p}: ${res.status} ${text.slice(0, 300)}`);
  return (text ? JSON.parse(text) : undefined) as T;
}

/** The whole platform in this process, on a fresh database of the real PostgreSQL server. */
export async function startTestPlatform(env: Record<string, string> = {}, testOpts: TestPlatformOptions = {}): Promise<TestPlatform> {
  const { database, ...opts } = testOpts;
  const db = database ?? (await createTestDatabase());
  const local = await startLocalPlatform({ DATABASE_URL: db.url, ...env }, { label: 'platform-test', ...opts });
  const { platform, adminKey } = local;
  const url = platform.url;

  const rest: TestPlatform['rest'] = async <T>(method: string, p: string, o: Parameters<TestPlatform['rest']>[2] = {}) => {
    const key = o.key === undefined ? adminKey : o.key;
    const headers: Record<string, string> = { ...(key ? { authorization: `Bearer ${key}` } : {}), ...o.headers };
    let body: string | undefined = o.raw;
    if (o.body !== undefined) {
      body = JSON.stringify(o.body);
      headers['content-type'] = 'application/json';
    }
    if (o.raw !== undefined) headers['content-type'] ??= 'application/json';
    const res = await fetch(url + p, { method, headers, body });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: (text ? JSON.parse(text) : undefined) as T };
  };

  return {
    url,
    port: platform.port,
    adminKey,
    platform,
    db,
    rest,
    graphql: async <T>(query: string, variables?: Record<string, unknown>, key?: string | null) => {
      const k = key === undefined ? adminKey : key;
      const res = await fetch(`${url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(k ? { authorization: `Bearer ${k}` } : {}) },
        body: JSON.stringify({ query, variables }),
      });
      return { status: res.status, headers: res.headers, body: (await res.json()) as T };
    },
    createKey: async (fields = {}) => {
      const res = await rest<Platform<{ api_key_id: string; api_key: string }>>('POST', '/control-plane/api/v1/auth/api-keys', {
        body: { name: 'test key', ...fields },
      });
      if (res.status !== 201) throw new Error(`could not create a key: ${JSON.stringify(res.body)}`);
      return { id: res.body.data.api_key_id, key: res.body.data.api_key };
    },
    async stop(o = {}) {
      await local.stop();
      if (!database && !o.keepDatabase) await db.drop();
    },
  };
}
