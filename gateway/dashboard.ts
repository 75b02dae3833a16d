import { existsSync } from 'node:fs';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyError, FastifyInstance } from 'fastify';
import { pageCsp } from '../kernel/csp';

/**
 * The operations dashboard at /dashboard: the single-page app built by `npm install` (Vite,
 * dashboard/) into dist-dashboard/, served from this process with a strict Content-Security-Policy
 * (nothing from another host; graphql-ws over ws:/wss: to this one).
 */

export const DASHBOARD_DIR = path.join(__dirname, '..', '..', 'dist-dashboard');

const CSP = pageCsp();

export function registerDashboard(app: FastifyInstance, dir = DASHBOARD_DIR): void {
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
    await scope.register(fastifyStatic, { root: dir, prefix: '/dashboard/', index: ['index.html'], wildcard: true, cacheControl: false });
    // The app's own routes (#/...) are in the fragment; /dashboard itself is the index.
    scope.get('/dashboard', async (_req, reply) => reply.header('cache-control', 'no-cache').sendFile('index.html'));
  });
}
