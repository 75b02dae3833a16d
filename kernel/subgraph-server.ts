import Fastify, { type FastifyInstance } from 'fastify';
import { CONTEXT_HEADER, SIGNATURE_HEADER, verifyContext } from './auth/handoff';
import type { Logger } from './logger';
import { anonymousContext, createExecutor, type BuiltSubgraph } from './subgraph';

/**
 * One subgraph served alone (split mode): POST /graphql for the gateway. The caller's identity
 * is taken only from a valid, fresh signature; anything else runs as anonymous, so a subgraph
 * reached directly enforces the same permissions as through the gateway.
 */
export function buildSubgraphServer(built: BuiltSubgraph, secret: string, logger: Logger): FastifyInstance {
  const app = Fastify({ logger: false, bodyLimit: 8 * 1024 * 1024 });
  const execute = createExecutor(built.schema, logger);
  app.get('/health', async () => ({ status: 'ok', subgraph: built.name }));
  app.post('/graphql', async (req, reply) => {
    const body = req.body as { query?: string; variables?: Record<string, unknown>; operationName?: string } | undefined;
    if (!body || typeof body.query !== 'string') {
      return reply.code(400).send({ errors: [{ message: 'POST a JSON body with a "query"', extensions: { code: 'validation_error' } }] });
    }
    const context =
      verifyContext(req.headers[CONTEXT_HEADER] as string | undefined, req.headers[SIGNATURE_HEADER] as string | undefined, secret) ??
      anonymousContext(`direct_${Date.now().toString(36)}`);
    return reply.send(await execute(body.query, body.variables, context, body.operationName));
  });
  return app;
}
