import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { pageCsp } from '../kernel/csp';

/**
 * GraphiQL for browsers at GET <path>, built only from installed packages: the page, its scripts
 * and styles all come from this server, so a strict Content-Security-Policy holds.
 */

export interface ExplorerOptions {
  /** The GraphQL endpoint, e.g. '/graphql'. */
  path: string;
  /** Answers GETs of <path> that are not asking for HTML (the GraphQL-over-HTTP GET handler). */
  fallback?: (req: FastifyRequest, reply: FastifyReply) => unknown;
}

export const EXPLORER_CSP = pageCsp();

interface Asset {
  body: Buffer;
  type: string;
}

const JS = 'text/javascript; charset=utf-8';
const CSS = 'text/css; charset=utf-8';

/** Files from packages whose exports maps hide them are found next to their package.json. */
function packageFile(pkg: string, file: string): Buffer {
  return readFileSync(join(dirname(require.resolve(`${pkg}/package.json`)), file));
}

/** Renders GraphiQL into #graphiql; settings come from data- attributes so the page has no inline script. */
const BOOTSTRAP = `'use strict';
(function () {
  var root = document.getElementById('graphiql');
  var endpoint = root.getAttribute('data-endpoint');
  var ws = (location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + endpoint;
  // The dashboard's session key (same origin, this tab), if the person signed in there.
  var key = null;
  try { key = sessionStorage.getItem('platform.apiKey'); } catch (e) {}
  var headers = key ? JSON.stringify({ Authorization: 'Bearer ' + key }, null, 2) : root.getAttribute('data-default-headers');
  var fetcher = GraphiQL.createFetcher({ url: endpoint, subscriptionUrl: ws, wsConnectionParams: key ? { authorization: 'Bearer ' + key } : undefined });
  ReactDOM.createRoot(root).render(
    React.createElement(GraphiQL, {
      fetcher: fetcher,
      defaultHeaders: headers,
      defaultEditorToolsVisibility: 'headers',
      shouldPersistHeaders: false,
    }),
  );
})();
`;

const PAGE_CSS = `html, body { height: 100%; margin: 0; }
#graphiql { height: 100vh; }
`;

function loadAssets(): Map<string, Asset> {
  return new Map<string, Asset>([
    ['react.production.min.js', { body: packageFile('react', 'umd/react.production.min.js'), type: JS }],
    ['react-dom.production.min.js', { body: packageFile('react-dom', 'umd/react-dom.production.min.js'), type: JS }],
    ['graphiql.min.js', { body: readFileSync(require.resolve('graphiql/graphiql.min.js')), type: JS }],
    ['graphiql.min.css', { body: readFileSync(require.resolve('graphiql/graphiql.min.css')), type: CSS }],
    ['explorer.js', { body: Buffer.from(BOOTSTRAP), type: JS }],
    ['explorer.css', { body: Buffer.from(PAGE_CSS), type: CSS }],
  ]);
}

function escapeAttribute(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function renderPage(path: string, assetUrl: (file: string) => string): string {
  const defaultHeaders = JSON.stringify({ Authorization: 'Bearer <your API key>' }, null, 2);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>GraphQL explorer</title>
<link rel="stylesheet" href="${assetUrl('graphiql.min.css')}">
<link rel="stylesheet" href="${assetUrl('explorer.css')}">
</head>
<body>
<div id="graphiql" data-endpoint="${escapeAttribute(path)}" data-default-headers="${escapeAttribute(defaultHeaders)}">Loading the GraphQL explorer…</div>
<script src="${assetUrl('react.production.min.js')}"></script>
<script src="${assetUrl('react-dom.production.min.js')}"></script>
<script src="${assetUrl('graphiql.min.js')}"></script>
<script src="${assetUrl('explorer.js')}"></script>
</body>
</html>
`;
}

/** True when a browser navigates to the endpoint (it asks for HTML); GraphQL clients do not. */
export function wantsExplorer(req: FastifyRequest): boolean {
  const accept = req.headers.accept;
  return typeof accept === 'string' && accept.toLowerCase().includes('text/html');
}

export function registerExplorer(app: FastifyInstance, opts: ExplorerOptions): void {
  const base = opts.path.replace(/\/+$/, '');
  const assets = loadAssets();
  // Asset names are not versioned, so a content hash in the URL keeps the long cache safe across upgrades.
  const versions = new Map([...assets].map(([file, asset]) => [file, createHash('sha256').update(asset.body).digest('hex').slice(0, 12)]));
  const assetUrl = (file: string) => `${base}/explorer/${file}?v=${versions.get(file)}`;
  const page = renderPage(opts.path, assetUrl);

  app.get(opts.path, async (req, reply) => {
    reply.header('vary', 'accept');
    if (!wantsExplorer(req)) return opts.fallback ? opts.fallback(req, reply) : reply.callNotFound();
    reply
      .header('content-security-policy', EXPLORER_CSP)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .header('cache-control', 'no-cache')
      .type('text/html; charset=utf-8');
    return page;
  });

  app.get<{ Params: { file: string } }>(`${base}/explorer/:file`, async (req, reply) => {
    const asset = assets.get(req.params.file);
    if (!asset) return reply.callNotFound();
    reply.header('cache-control', 'public, max-age=31536000, immutable').header('x-content-type-options', 'nosniff').type(asset.type);
    return asset.body;
  });
}
