import type { FastifyInstance } from 'fastify';
import { authorize } from '../../../kernel/auth/principal';
import { newRequestId } from '../../../kernel/edge';
import { envelopeOf } from '../../../kernel/envelopes';
import { attachment, sendError } from '../../../kernel/http';
import { assertAcceptableParams } from '../../../kernel/input-policy';
import type { Logger } from '../../../kernel/logger';
import type { ServiceHttpDeps } from '../../../kernel/subgraph';
import type { ExecutionService } from './service';

/** The engine's two layouts: the download answers in each one's envelope, with its credentials. */
const LAYOUTS = [
  { prefix: '/v1/engine', envelope: 'v1', engineKeyHeader: false },
  { prefix: '/engine/api/v1', envelope: 'platform', engineKeyHeader: true },
];

/**
 * `GET …/executions/:executionId/binary/:binaryId`: one file of an execution's binary data, its
 * bytes streamed from where they are kept (database chunks, the folder, the bucket) as the client
 * reads them, so a download never holds the whole file in memory. Served here because a stream is
 * not a GraphQL answer; authorised as reading the execution (`workflow:read`), as the
 * `executionBinary` query is.
 */
export function registerBinaryDownloads(app: FastifyInstance, executions: ExecutionService, logger: Logger, deps: ServiceHttpDeps): void {
  for (const layout of LAYOUTS) {
    const envelope = envelopeOf(layout.envelope);
    app.get(`${layout.prefix}/executions/:executionId/binary/:binaryId`, async (req, reply) => {
      req.requestId = newRequestId();
      try {
        const { context, headers } = await deps.admit(req, { engineKeyHeader: layout.engineKeyHeader });
        reply.headers(headers);
        authorize(context.principal, 'engine', 'workflow:read');
        const params = req.params as { executionId: string; binaryId: string };
        assertAcceptableParams(params);
        const file = await executions.openBinary(params.executionId, params.binaryId);
        // A client gone mid-download stops the reads from the store.
        reply.raw.on('close', () => file.body.destroy());
        return reply
          .code(200)
          .header('content-type', file.mimeType)
          .header('content-disposition', attachment(file.fileName))
          .header('content-length', String(file.bytes))
          .header('x-content-type-options', 'nosniff')
          .send(file.body);
      } catch (err) {
        return sendError(reply, err, envelope, logger);
      }
    });
  }
}
