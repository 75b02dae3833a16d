/**
 * The Content-Security-Policy of every HTML page the platform serves (landing page, explorer,
 * dashboard, docs, a link's gate page): every script, style and font from this host, no inline
 * script, graphql-ws to this host, no framing. Pages name only the directives they need differently.
 * In kernel/ because a service's own pages (the link gate) need it as much as the gateway's.
 */
const BASE: Record<string, string> = {
  'default-src': "'self'",
  'script-src': "'self'",
  // React, CodeMirror and Redoc set inline styles
  'style-src': "'self' 'unsafe-inline'",
  'img-src': "'self' data:",
  // graphiql.min.css and Mantine embed fonts as data: URIs
  'font-src': "'self' data:",
  // ws:/wss: for subscriptions over graphql-ws, which some browsers do not count as 'self'
  'connect-src': "'self' ws: wss:",
  'object-src': "'none'",
  'base-uri': "'none'",
  'form-action': "'none'",
  'frame-ancestors': "'none'",
};

export function pageCsp(overrides: Record<string, string> = {}): string {
  return Object.entries({ ...BASE, ...overrides })
    .map(([k, v]) => `${k} ${v}`)
    .join('; ');
}
