import { existsSync } from 'node:fs';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import { pageCsp } from '../kernel/csp';

/**
 * The operations dashboard at /dashboard: the single-page app built by `npm install` (Vite,
 * dashboard/) into dist-dashboard/, served from this process with a strict Content-Security-Policy
 * (nothing from another host; graphql-ws over ws:/wss: to this one).
 */

export const DASHBOARD_DIR = path.join(__dirname, '..', '..', 'dist-dashboard');

const CSP = pageCsp();

export interface DashboardOptions {
  /** A trace viewer's page of one trace, `{traceId}` standing for its id (TRACES_UI_URL); unset: no trace links. */
  tracesUiUrl?: string;
  dir?: string;
}

/** What the app reads at start (`GET /dashboard/config.json`): settings of this platform that change what it shows. */
export interface DashboardConfig {
  tracesUiUrl: string | null;
}

export function registerDashboard(app: FastifyInstance, options: DashboardOptions = {}): void {
  const dir = options.dir ?? DASHBOARD_DIR;
  const config: DashboardConfig = { tracesUiUrl: options.tracesUiUrl ?? null };
  app.get('/dashboard/config.json', async (_req, reply) => reply.header('cache-control', 'no-cache').send(config));
  if (!existsSync(path.join(dir, 'index.html'))) {
    app.get('/dashboard', async (_req, reply) =>
      reply.code(503).type('text/plain; charset=utf-8').send('The dashboard is not built: run `npm run build:dashboard` (npm install does it).'),
    );
    return;
  }
  app.register(async (scope) => {
    // A path the file server refuses (`..%2f` out of the directory 403, a NUL byte 400) names no
    // file of the dashboard: 404 like any file it does not have, never a 500.
    scope.setErrorHandler((err: FastifyError, _req, reply) => {
      if (typeof err.statusCode === 'number' && err.statusCode < 500) return reply.callNotFound();
      throw err;
    });
    scope.addHook('onSend', async (_req, reply, payload) => {
      reply.header('content-security-policy', CSP).header('x-content-type-options', 'nosniff').header('referrer-policy', 'no-referrer');
      return payload;
    });
    // Every built file gets its own route (the build is there before the server starts). The app's
    // own pages are `<section>/<id>…` (a few segments), answered with index.html; anything else (a file
    // it does not have, deeper or overlong paths) is 404.
    await scope.register(fastifyStatic, { root: dir, prefix: '/dashboard/', index: false, wildcard: false, cacheControl: false });
    const app = async (_req: unknown, reply: FastifyReply) => reply.header('cache-control', 'no-cache').sendFile('index.html');
    scope.get('/dashboard', app);
    scope.get('/dashboard/*', async (req, reply) => {
      const rest = (req.params as { '*': string })['*'];
      if (!isPagePath(rest)) return reply.callNotFound();
      return app(req, reply);
    });
  });
}

const MAX_PAGE_PATH = 200;
const MAX_PAGE_SEGMENTS = 4;

const PAGE_SEGMENT = /^[\w:@~-]+$/;

/** Whether a path under /dashboard/ can be one of the app's pages: a few segments of names and ids, no file. */
function isPagePath(rest: string): boolean {
  const segments = rest.split('/').filter(Boolean);
  return rest.length <= MAX_PAGE_PATH && segments.length <= MAX_PAGE_SEGMENTS && segments.every((s) => PAGE_SEGMENT.test(s));
}
