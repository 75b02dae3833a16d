import { inspectJson, violationError } from '../kernel/input-policy';
import type { Server } from 'node:http';
import {
  GraphQLError,
  Kind,
  OperationTypeNode,
  getOperationAST,
  print,
  validate,
  type ExecutionArgs,
  type DocumentNode,
  type ExecutionResult,
  type FieldNode,
  type OperationDefinitionNode,
} from 'graphql';
import { getArgumentValues } from 'graphql/execution/values';
import { useServer } from 'graphql-ws/use/ws';
import { WebSocketServer } from 'ws';
import type { EventBus } from '../kernel/events';
import type { Logger } from '../kernel/logger';
import type { RequestContext, SubscriptionRoute } from '../kernel/subgraph';
import { Edge, EdgeRejection } from '../kernel/edge';
import type { PlatformGateway } from './gateway';
import { limitRules, parseWithLimits } from './limits';

/**
 * GraphQL subscriptions over graphql-ws, served by the gateway itself (@apollo/gateway executes
 * none). A subscription field names an event topic (SubscriptionRoute); every matching event is
 * resolved into the subscriber's whole selection by running the twin query field through the
 * gateway, so the selection may span subgraphs and the same authorization applies.
 */
export function attachSubscriptions(opts: {
  server: Server;
  path: string;
  gateway: PlatformGateway;
  edge: Edge;
  events: EventBus;
  routes: SubscriptionRoute[];
  logger: Logger;
}): { close(): Promise<void> } {
  const routes = new Map(opts.routes.map((r) => [r.field, r]));
  const wss = new WebSocketServer({ server: opts.server, path: opts.path, maxPayload: 1024 * 1024 });
  const prepared = new WeakMap<object, { query: string; route: SubscriptionRoute; args: Record<string, unknown> }>();

  const disposable = useServer<Record<string, unknown> | undefined, { context?: RequestContext }>(
    {
      onConnect: async (ctx) => {
        const params = ctx.connectionParams ?? {};
        const authorization = (params.authorization ?? params.Authorization) as string | undefined;
        try {
          const admission = await opts.edge.admit({ authorization, ip: ctx.extra.request.socket.remoteAddress });
          ctx.extra.context = admission.context;
          return true;
        } catch (err) {
          if (!(err instanceof EdgeRejection)) throw err;
          // 4401/4429: the client learns why (code in the close reason) and does not retry blindly.
          ctx.extra.socket.close(err.error.status === 429 ? 4429 : 4401, `${err.error.code}: ${err.error.message}`.slice(0, 120));
          return false;
        }
      },
      onSubscribe: async (ctx, _id, payload) => {
        const context = ctx.extra.context!;
        const violation = inspectJson(payload.variables ?? {});
        if (violation) return [violationError(violation, 'variables').toGraphQLError()];
        let document;
        try {
          document = parseWithLimits(payload.query, opts.gateway.limits);
        } catch (err) {
          return [err instanceof GraphQLError ? err : new GraphQLError(String(err))];
        }
        const schema = opts.gateway.schema;
        const problems = validate(schema, document, limitRules(opts.gateway.limits));
        if (problems.length) return problems;
        const operation = getOperationAST(document, payload.operationName);
        if (!operation || operation.operation !== 'subscription') {
          return [new GraphQLError('Only subscriptions are served over this WebSocket; send queries and mutations over HTTP')];
        }
        const field = operation.selectionSet.selections[0] as FieldNode;
        const route = routes.get(field.name.value);
        if (!route || operation.selectionSet.selections.length !== 1) {
          return [new GraphQLError('A subscription selects exactly one subscription field')];
        }
        const fieldDef = schema.getSubscriptionType()!.getFields()[field.name.value]!;
        const variables = payload.variables ?? {};
        let args;
        try {
          args = getArgumentValues(fieldDef, field, variables);
        } catch (err) {
          return [err instanceof GraphQLError ? err : new GraphQLError(String(err))];
        }
        const query = print(twinQuery(document, operation, field, route));
        // Authorize (and check existence) now, with the query the events will run.
        const first = await opts.gateway.execute({ query, variables, operationName: operation.name?.value }, context);
        if (first.errors?.length) return first.errors.map((e) => new GraphQLError(e.message, { extensions: e.extensions }));
        const execArgs: ExecutionArgs = { schema, document, variableValues: variables, contextValue: context };
        prepared.set(execArgs, { query, route, args });
        return execArgs;
      },
      subscribe: (execArgs) => {
        const plan = prepared.get(execArgs)!;
        return listen(opts, plan, execArgs);
      },
    },
    wss,
  );

  return {
    async close() {
      await disposable.dispose();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}

/** subscription { alias: fieldUpdated(args) { … } } -> query { alias: field(args) { … } } */
function twinQuery(document: DocumentNode, operation: OperationDefinitionNode, field: FieldNode, route: SubscriptionRoute) {
  const renamed: FieldNode = {
    ...field,
    alias: field.alias ?? { kind: Kind.NAME, value: field.name.value },
    name: { kind: Kind.NAME, value: route.query },
  };
  const op: OperationDefinitionNode = {
    ...operation,
    operation: OperationTypeNode.QUERY,
    selectionSet: { ...operation.selectionSet, selections: [renamed] },
  };
  return {
    kind: Kind.DOCUMENT,
    definitions: [op, ...document.definitions.filter((d) => d.kind === Kind.FRAGMENT_DEFINITION)],
  } as const;
}

/**
 * An async iterator over the route's events, each resolved through the gateway in arrival order.
 * Hand-written rather than a generator so that `return()` (client gone) unsubscribes at once
 * even while waiting for the next event.
 */
function listen(
  opts: { gateway: PlatformGateway; events: EventBus; logger: Logger },
  plan: { query: string; route: SubscriptionRoute; args: Record<string, unknown> },
  execArgs: ExecutionArgs,
): AsyncIterableIterator<ExecutionResult> {
  const pending: unknown[] = [];
  let wake: (() => void) | undefined;
  let done = false;
  const unsubscribe = opts.events.subscribe(plan.route.topic, (payload) => {
    if (done || !plan.route.filter(payload, plan.args)) return;
    pending.push(payload);
    wake?.();
  });
  const finish = async (): Promise<IteratorResult<ExecutionResult>> => {
    done = true;
    unsubscribe();
    wake?.();
    return { done: true, value: undefined };
  };
  return {
    [Symbol.asyncIterator]() {
      return this;
    },
    async next() {
      while (!pending.length && !done) await new Promise<void>((resolve) => (wake = resolve));
      if (done) return { done: true, value: undefined };
      pending.shift();
      const result = await opts.gateway.execute({ query: plan.query, variables: execArgs.variableValues ?? {} }, execArgs.contextValue as RequestContext);
      const value = {
        data: result.data ?? null,
        ...(result.errors?.length && {
          errors: result.errors.map((e) => new GraphQLError(e.message, { extensions: e.extensions, path: e.path })),
        }),
      } as ExecutionResult;
      return { done: false, value };
    },
    return: finish,
    throw: finish,
  };
}
