import type { FastifyInstance } from 'fastify';
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import { authorize } from '../../../kernel/auth/principal';
import type { Kernel } from '../../../kernel/platform';
import type { ServiceHttpDeps } from '../../../kernel/subgraph';
import { envelopes } from '../../../kernel/envelopes';
import { sendError } from '../../../kernel/http';
import { taskStore } from '../tasks';

/**
 * `GET /metrics`: the Prometheus text format (prom-client) for a key holding `metrics:read`:
 * HTTP answers of this process by outcome, agent tasks by status, workflow executions, job queue
 * depth, and the Node.js process metrics. Figures are read at scrape time.
 */
export function registerPrometheus(app: FastifyInstance, kernel: Kernel, { admit }: ServiceHttpDeps): void {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'platform_' });
  const stats = kernel.requests;
  new Counter({
    name: 'platform_http_responses_total',
    help: 'HTTP answers of this process, by outcome (success: below 400; client_error: 4xx; server_error: 5xx).',
    labelNames: ['outcome'],
    registers: [registry],
    collect() {
      this.reset();
      this.inc({ outcome: 'success' }, stats.successful);
      this.inc({ outcome: 'client_error' }, stats.clientErrors);
      this.inc({ outcome: 'server_error' }, stats.serverErrors);
    },
  });
  new Gauge({
    name: 'platform_agent_tasks',
    help: 'Agent tasks by status.',
    labelNames: ['status'],
    registers: [registry],
    async collect() {
      const rows = await taskStore.countsByStatus(kernel.db);
      this.reset();
      for (const s of ['queued', 'running', 'completed', 'failed', 'cancelled']) this.set({ status: s }, rows.find((r) => r.status === s)?.n ?? 0);
    },
  });
  new Gauge({
    name: 'platform_workflow_executions',
    help: 'Workflow executions kept, by state (running, waiting, failed, total).',
    labelNames: ['state'],
    registers: [registry],
    async collect() {
      const { engineHealth: e } = await kernel.operations.execute<{ engineHealth: Record<string, number> }>(
        `query EngineHealth { engineHealth { activeExecutions waitingExecutions totalExecutions failedExecutions } }`,
      );
      this.set({ state: 'running' }, e.activeExecutions!);
      this.set({ state: 'waiting' }, e.waitingExecutions!);
      this.set({ state: 'failed' }, e.failedExecutions!);
      this.set({ state: 'total' }, e.totalExecutions!);
    },
  });
  new Gauge({
    name: 'platform_queue_jobs',
    help: 'Jobs of the durable queue: due and waiting, running, scheduled for later.',
    labelNames: ['state'],
    registers: [registry],
    async collect() {
      const d = await kernel.queue.depth();
      this.set({ state: 'queued' }, d.queued);
      this.set({ state: 'running' }, d.running);
      this.set({ state: 'scheduled' }, d.scheduled);
    },
  });

  app.get('/metrics', async (req, reply) => {
    try {
      const { context, headers } = await admit(req);
      reply.headers(headers);
      authorize(context.principal, 'control-plane', 'metrics:read');
      return reply.header('content-type', registry.contentType).send(await registry.metrics());
    } catch (err) {
      return sendError(reply, err, envelopes.v1, kernel.logger);
    }
  });
}
