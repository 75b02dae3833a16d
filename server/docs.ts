import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import type { GraphQLSchema } from 'graphql';
import { pageCsp } from '../kernel/csp';
import { buildOpenApi } from '../rest-adapter/openapi';
import type { Surface } from '../rest-adapter/surface';

/**
 * GET /openapi.json (generated from the route tables) and GET /docs, Redoc's standalone viewer
 * served from the installed package: no other host is contacted, and the page has no inline script.
 * Also GET /, the landing page a browser opening the platform's address sees.
 */

// Redoc renders its search in a web worker started from a blob: URL.
const CSP = pageCsp({ 'worker-src': "'self' blob:", 'connect-src': "'self'" });

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Automation platform — REST API</title>
</head>
<body>
<div id="redoc">Loading the API documentation…</div>
<script src="/docs/redoc.standalone.js"></script>
<script src="/docs/docs.js"></script>
</body>
</html>
`;

const BOOT = `'use strict';
Redoc.init('/openapi.json', { hideDownloadButton: false, expandResponses: '200,201,202', pathInMiddlePanel: true }, document.getElementById('redoc'));
`;

/** The OpenAPI document of the surfaces, with the package's version. */
export function openApiDocument(surfaces: Surface[], schema: GraphQLSchema): Record<string, unknown> {
  const version = (JSON.parse(readFileSync(require.resolve('../../package.json'), 'utf8')) as { version: string }).version;
  return buildOpenApi(surfaces, schema, version).document;
}

export function registerDocs(app: FastifyInstance, surfaces: Surface[], schema: GraphQLSchema): void {
  // Built at the first request, not at start: a few hundred milliseconds every start would pay for a page few open.
  let body: string | undefined;
  let redoc: Buffer | undefined;
  app.get('/openapi.json', async (_req, reply) =>
    reply
      .type('application/json; charset=utf-8')
      .header('cache-control', 'no-cache')
      .send((body ??= JSON.stringify(openApiDocument(surfaces, schema)))),
  );
  app.get('/docs', async (_req, reply) => reply.type('text/html; charset=utf-8').header('content-security-policy', CSP).send(PAGE));
  app.get('/docs/redoc.standalone.js', async (_req, reply) =>
    reply
      .type('text/javascript; charset=utf-8')
      .header('cache-control', 'public, max-age=3600')
      .send((redoc ??= readFileSync(require.resolve('redoc/bundles/redoc.standalone.js')))),
  );
  app.get('/docs/docs.js', async (_req, reply) => reply.type('text/javascript; charset=utf-8').send(BOOT));
}

const LANDING_CSP = pageCsp();

const LANDING = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Automation platform</title>
</head>
<body>
<h1>Automation platform</h1>
<ul>
<li><a href="/dashboard">Operations dashboard</a></li>
<li><a href="/docs">REST API documentation</a> (<a href="/openapi.json">OpenAPI document</a>)</li>
<li><a href="/graphql">GraphQL explorer</a></li>
</ul>
</body>
</html>
`;

/** GET /: links to the dashboard, the API documentation and the GraphQL explorer. */
export function registerLanding(app: FastifyInstance): void {
  app.get('/', async (_req, reply) =>
    reply
      .type('text/html; charset=utf-8')
      .header('content-security-policy', LANDING_CSP)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .send(LANDING),
  );
}
