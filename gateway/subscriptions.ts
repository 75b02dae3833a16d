import { inspectJson, violationError } from '../kernel/input-policy';
import type { Server } from 'node:http';
import {
  GraphQLError,
  Kind,
  OperationTypeNode,
  getOperationAST,
  parseType,
  print,
  validate,
  visit,
  type ExecutionArgs,
  type DocumentNode,
  type ExecutionResult,
  type FieldNode,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionNode,
  type VariableDefinitionNode,
} from 'graphql';
import { getArgumentValues } from 'graphql/execution/values';
import { useServer } from 'graphql-ws/use/ws';
import { WebSocketServer } from 'ws';
import { isRefusal, type CredentialWatch, type Watch } from '../kernel/credential-watch';
import { Edge, EdgeRejection } from '../kernel/edge';
import { errors, fromGraphQLError, type AppError } from '../kernel/errors';
import type { EventBus } from '../kernel/events';
import type { Logger } from '../kernel/logger';
import { FIRST_STATE, type RequestContext, type SubscriptionRoute } from '../kernel/subgraph';
import { inOperationSpan, type PlatformGateway } from './gateway';
import { limitRules, parseWithLimits } from './limits';

/**
 * GraphQL subscriptions over graphql-ws, served by the gateway itself (@apollo/gateway executes none).
 * Each event is resolved by running the route's twin query through the gateway, so a selection may
 * span subgraphs and the same authorization applies.
 *
 * An entity subscription listens to its topic before reading its first answer, so no change falls in
 * between; the entity's version drops stale or repeated answers. A list subscription does the same
 * for each of the list's newest members (its first state: read as events, oldest first, before the
 * events that came meanwhile). A deleted entity already sent is sent again as last sent, with
 * `deleted` true; an entity subscription then completes. A subscription ends with an `error`
 * when what admitted it no longer holds (credential ended: socket closes 4401; authorizing query refused).
 */
export function attachSubscriptions(opts: {
  server: Server;
  path: string;
  gateway: PlatformGateway;
  edge: Edge;
  watch: CredentialWatch;
  events: EventBus;
  routes: SubscriptionRoute[];
  logger: Logger;
}): { close(): Promise<void> } {
  const routes = new Map(opts.routes.map((r) => [r.field, r]));
  const wss = new WebSocketServer({ server: opts.server, path: opts.path, maxPayload: 1024 * 1024 });
  const prepared = new WeakMap<object, { plan: Plan; connection: Connection; checks: number; feed: Feed; snapshot?: OperationResultLike; members: string[] }>();

  const disposable = useServer<Record<string, unknown> | undefined, { connection?: Connection }>(
    {
      onConnect: async (ctx) => {
        const params = ctx.connectionParams ?? {};
        const authorization = (params.authorization ?? params.Authorization) as string | undefined;
        const presented = { authorization, ip: ctx.extra.request.socket.remoteAddress, userAgent: ctx.extra.request.headers['user-agent'] };
        try {
          const admission = await opts.edge.admit(presented);
          const connection: Connection = {
            live: new Set(),
            checks: 0,
            watch: undefined as unknown as Watch,
            closeIfEnded: () => {
              if (connection.ended && !connection.live.size) closeEnded(ctx.extra.socket, connection.ended);
            },
          };
          connection.watch = opts.watch.watch(presented, admission.context, {
            changed: async (context) => {
              connection.checks++;
              await Promise.all([...connection.live].map((sub) => sub.recheck(context)));
            },
            ended: (error) => {
              connection.ended = error;
              for (const sub of connection.live) sub.fail(error);
              connection.closeIfEnded();
            },
          });
          ctx.extra.connection = connection;
          return true;
        } catch (err) {
          if (!(err instanceof EdgeRejection)) throw err;
          // 4401/4429: the client learns why (code in the close reason) and does not retry blindly.
          ctx.extra.socket.close(err.error.status === 429 ? 4429 : 4401, `${err.error.code}: ${err.error.message}`.slice(0, 120));
          return false;
        }
      },
      onSubscribe: async (ctx, _id, payload) => {
        const connection = ctx.extra.connection!;
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
        if (route.entity && !route.check) return [new GraphQLError(`${route.field} has no authorizing query`)];
        const limit = args.limit;
        if (route.members && (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > FIRST_STATE.max)) {
          return [errors.field('limit', `must be an integer from 1 to ${FIRST_STATE.max}`).toGraphQLError()];
        }
        const plan = planOf(schema, document, operation, field, route, variables, args);
        // Authorize (and check existence) now, with the query the events will run (a list's
        // check), on the credential as last checked (a check under way, such as the first one,
        // is waited for). The topic is followed first: a change committed while the snapshot is
        // read arrives as an event after it.
        await connection.watch.checking;
        const checks = connection.checks;
        const feed = follow(opts.events, plan);
        // The subscribe is traced as its operation (`subscription TaskUpdated`), with the query that authorizes it under it.
        const first = await inOperationSpan(operation, () => opts.gateway.execute(plan.check, connection.watch.context));
        const ended = endedRefusal(connection);
        const refusal = ended ?? (first.errors?.length ? first.errors.map((e) => new GraphQLError(e.message, { extensions: e.extensions })) : undefined);
        if (refusal) {
          feed.stop();
          return refusal;
        }
        const execArgs: ExecutionArgs = { schema, document, variableValues: variables, contextValue: connection.watch.context };
        // A list's first state: its members as the list shows them (newest first), sent oldest first.
        const members = route.entity && route.members ? route.members(first.data ?? {}, args).reverse() : [];
        prepared.set(execArgs, { plan, connection, checks, feed, snapshot: route.entity ? undefined : first, members });
        return execArgs;
      },
      subscribe: (execArgs) => {
        const { plan, connection, checks, feed, snapshot, members } = prepared.get(execArgs)!;
        return listen(opts, plan, connection, checks, feed, snapshot, members);
      },
      // Called once a subscription's last message (its error, for one that ended) is sent: the
      // socket of an ended credential closes after the last of them.
      onComplete: (ctx) => {
        ctx.extra.connection?.closeIfEnded();
      },
      onClose: (ctx) => {
        ctx.extra.connection?.watch.stop();
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

/** The response key of the entity's version added to the twin query (removed before sending). */
const VERSION_KEY = 'subscriptionVersion__';
/** The variable naming a list subscription's entity in its twin query. */
const ENTITY_VARIABLE = 'subscriptionEntity__';

/**
 * subscription { alias: fieldUpdated(args) { … } } -> query { alias: field(args) { …, version } };
 * a list's: query($entity) { alias: field(arg: $entity) { … } }, keeping the variables it still uses.
 */
function twinQuery(schema: GraphQLSchema, document: DocumentNode, operation: OperationDefinitionNode, field: FieldNode, route: SubscriptionRoute) {
  const selections: SelectionNode[] = [...(field.selectionSet?.selections ?? [])];
  if (route.version) selections.push({ kind: Kind.FIELD, alias: { kind: Kind.NAME, value: VERSION_KEY }, name: { kind: Kind.NAME, value: route.version } });
  const renamed: FieldNode = {
    ...field,
    alias: field.alias ?? { kind: Kind.NAME, value: field.name.value },
    name: { kind: Kind.NAME, value: route.query },
    selectionSet: { kind: Kind.SELECTION_SET, selections },
    ...(route.entity && {
      arguments: [
        {
          kind: Kind.ARGUMENT,
          name: { kind: Kind.NAME, value: route.entity.arg },
          value: { kind: Kind.VARIABLE, name: { kind: Kind.NAME, value: ENTITY_VARIABLE } },
        },
      ],
    }),
  };
  const fragments = document.definitions.filter((d) => d.kind === Kind.FRAGMENT_DEFINITION);
  let variableDefinitions = operation.variableDefinitions;
  if (route.entity) {
    const used = new Set<string>();
    for (const node of [renamed, ...fragments]) visit(node, { Variable: (v) => void used.add(v.name.value) });
    const argType = schema
      .getQueryType()!
      .getFields()
      [route.query]!.args.find((a) => a.name === route.entity!.arg)!.type;
    const entity: VariableDefinitionNode = {
      kind: Kind.VARIABLE_DEFINITION,
      variable: { kind: Kind.VARIABLE, name: { kind: Kind.NAME, value: ENTITY_VARIABLE } },
      type: parseType(String(argType)),
    };
    variableDefinitions = [...(operation.variableDefinitions ?? []).filter((d) => used.has(d.variable.name.value)), entity];
  }
  const op: OperationDefinitionNode = {
    ...operation,
    operation: OperationTypeNode.QUERY,
    variableDefinitions,
    selectionSet: { ...operation.selectionSet, selections: [renamed] },
  };
  return { kind: Kind.DOCUMENT, definitions: [op, ...fragments] } as const;
}

function planOf(
  schema: GraphQLSchema,
  document: DocumentNode,
  operation: OperationDefinitionNode,
  field: FieldNode,
  route: SubscriptionRoute,
  variables: Record<string, unknown>,
  args: Record<string, unknown>,
): Plan {
  const query = print(twinQuery(schema, document, operation, field, route));
  const operationName = operation.name?.value;
  const key = (field.alias ?? field.name).value;
  const own = route.entity && route.check!(args);
  const check = !own ? { query, variables, operationName } : typeof own === 'string' ? { query: own, variables: args } : own;
  return {
    query,
    variables,
    operationName,
    route,
    args,
    key,
    check,
    deletedKeys: responseKeys(document, field, 'deleted'),
    versionKeys: responseKeys(document, field, route.version),
  };
}

/** The response keys of `name` in the selection of `field` (through fragments): where an answer carries it. */
function responseKeys(document: DocumentNode, field: FieldNode, name: string | undefined): string[] {
  const fragments = new Map(document.definitions.flatMap((d) => (d.kind === Kind.FRAGMENT_DEFINITION ? [[d.name.value, d] as const] : [])));
  const keys: string[] = [];
  const walk = (selections: readonly SelectionNode[], seen: Set<string>) => {
    for (const s of selections) {
      if (s.kind === Kind.FIELD) {
        if (s.name.value === name) keys.push((s.alias ?? s.name).value);
      } else if (s.kind === Kind.INLINE_FRAGMENT) walk(s.selectionSet.selections, seen);
      else if (!seen.has(s.name.value) && fragments.has(s.name.value))
        walk(fragments.get(s.name.value)!.selectionSet.selections, new Set([...seen, s.name.value]));
    }
  };
  if (name) walk(field.selectionSet?.selections ?? [], new Set());
  return keys;
}

/** What a subscription runs on every event: the twin query of its selection, with its variables. */
interface Plan {
  query: string;
  variables: Record<string, unknown>;
  operationName?: string;
  route: SubscriptionRoute;
  args: Record<string, unknown>;
  /** The response key of the entity in an answer. */
  key: string;
  /** The query that authorizes the subscription (run again when the caller's rights change). */
  check: { query: string; variables: Record<string, unknown>; operationName?: string };
  /** The response keys of `deleted` and of the version in the subscriber's selection (set on a deletion). */
  deletedKeys: string[];
  versionKeys: string[];
}

type OperationResultLike = Awaited<ReturnType<PlatformGateway['execute']>>;

/** The route's events for a subscription, kept from before its first answer is read. */
interface Feed {
  pending: { version?: unknown; deleted?: unknown }[];
  wake?: () => void;
  stop(): void;
}

function follow(events: EventBus, plan: Plan): Feed {
  const feed: Feed = {
    pending: [],
    stop: events.subscribe(plan.route.topic, (payload) => {
      if (!plan.route.filter(payload, plan.args)) return;
      feed.pending.push(payload as Feed['pending'][number]);
      feed.wake?.();
    }),
  };
  return feed;
}

/** One graphql-ws connection: its credential's watch and the subscriptions running on it. */
interface Connection {
  watch: Watch;
  live: Set<Live>;
  /** Once the credential ended: every subscription ends with this, a new one is refused with it. */
  ended?: AppError;
  /** Checks of the subscriptions' reads so far: one authorized while a check ran is checked again. */
  checks: number;
  /** Closes the socket once the credential ended and no subscription is left to tell. */
  closeIfEnded(): void;
}

/** A running subscription, as its connection reaches it. */
interface Live {
  /** Runs the authorizing query again with `context`: a refusal ends the subscription with it. */
  recheck(context: RequestContext): Promise<void>;
  /** Ends the subscription with `error` (the client's `error` message). */
  fail(error: AppError): void;
}

/** What a subscription on a connection whose credential ended is refused with (nothing while it holds). */
function endedRefusal(connection: Connection): GraphQLError[] | undefined {
  return connection.ended && [connection.ended.toGraphQLError()];
}

/** A 44xx close, so graphql-ws clients report it and do not reconnect with the same credential. */
function closeEnded(socket: { close(code: number, reason: string): void }, error: AppError): void {
  socket.close(4401, `${error.code}: ${error.message}`.slice(0, 120));
}

/**
 * The refusal of a subscription's query as a whole (401, 403 or 404 of the operation or of its
 * root field; a nested field's error leaves the rest of the answer standing), if any.
 */
function refusalOf(result: { errors?: readonly { message: string; path?: readonly (string | number)[]; extensions?: Record<string, unknown> }[] }) {
  for (const e of result.errors ?? []) {
    if ((e.path?.length ?? 0) > 1) continue;
    const err = fromGraphQLError(e);
    if (isRefusal(err)) return err;
  }
  return undefined;
}

/**
 * An async iterator over the route's events, each resolved through the gateway in arrival order
 * (after the snapshot, for one entity). Hand-written rather than a generator so that `return()`
 * (client gone) unsubscribes at once even while waiting for the next event, and so that a refusal
 * ends it at once, even while an event is being resolved (whose answer is then dropped): it
 * rejects `next()` with the refusal, which graphql-ws sends as the subscription's `error` message.
 */
function listen(
  opts: { gateway: PlatformGateway; events: EventBus; logger: Logger },
  plan: Plan,
  connection: Connection,
  checks: number,
  feed: Feed,
  snapshot: OperationResultLike | undefined,
  members: string[],
): AsyncIterableIterator<ExecutionResult> {
  const { pending } = feed;
  const entity = plan.route.entity;
  let done = false;
  /** An entity subscription whose entity was deleted: it completes once that is sent. */
  let over = false;
  let failure: GraphQLError | undefined;
  let refuse: (error: GraphQLError) => void = () => undefined;
  const refused = new Promise<never>((_, reject) => (refuse = reject));
  refused.catch(() => undefined);
  /** Per entity (one, '', unless a list): the version and the answer last sent, and whether that was its deletion. */
  const sent = new Map<string, { version: number; json: string; deleted?: true }>();
  const live: Live = {
    recheck: async (context) => {
      const error = refusalOf(await opts.gateway.execute(plan.check, context));
      if (error) live.fail(error);
    },
    fail: (error) => {
      if (done || failure) return;
      failure = error.toGraphQLError();
      refuse(failure);
      feed.wake?.();
    },
  };
  const stop = () => {
    done = true;
    feed.stop();
    connection.live.delete(live);
  };
  const end = (): never => {
    stop();
    throw failure!;
  };
  connection.live.add(live);
  // Ended, or its rights checked, while it was being authorized: it missed that.
  if (connection.ended) live.fail(connection.ended);
  else if (checks !== connection.checks)
    live.recheck(connection.watch.context).catch((err: unknown) => opts.logger.warn('a subscription could not be checked again', { err }));
  const finish = async (): Promise<IteratorResult<ExecutionResult>> => {
    stop();
    feed.wake?.();
    connection.closeIfEnded();
    return { done: true, value: undefined };
  };
  /** The answer as the client sees it, or nothing when it is older than, or the same as, the last one sent. */
  const deliver = (id: string, result: OperationResultLike): ExecutionResult | undefined => {
    let data = result.data ?? null;
    const node = data?.[plan.key] as Record<string, unknown> | null | undefined;
    if (plan.route.version && node && typeof node === 'object') {
      const { [VERSION_KEY]: version, ...rest } = node;
      data = { ...data, [plan.key]: rest };
      const json = JSON.stringify(rest);
      const last = sent.get(id);
      if (typeof version === 'number') {
        if (last && (version < last.version || (version === last.version && json === last.json))) return undefined;
        sent.set(id, { version, json });
      }
    }
    return {
      data,
      ...(result.errors?.length && {
        errors: result.errors.map((e) => new GraphQLError(e.message, { extensions: e.extensions, path: e.path })),
      }),
    } as ExecutionResult;
  };
  /** The entity as last sent to this subscriber, with `deleted` true and a newer version; nothing when none was sent. */
  const deletion = (id: string, version: unknown): ExecutionResult | undefined => {
    const last = sent.get(id);
    if (!last || last.deleted) return undefined;
    const next = typeof version === 'number' && version > last.version ? version : last.version + 1;
    const node = JSON.parse(last.json) as Record<string, unknown>;
    for (const k of plan.deletedKeys) node[k] = true;
    for (const k of plan.versionKeys) node[k] = next;
    const json = JSON.stringify(node);
    sent.set(id, { version: next, json, deleted: true });
    return { data: { [plan.key]: node } };
  };
  return {
    [Symbol.asyncIterator]() {
      return this;
    },
    async next() {
      if (over) return finish();
      if (snapshot) {
        const value = deliver('', snapshot);
        snapshot = undefined;
        if (value) return { done: false, value };
      }
      for (;;) {
        if (!members.length) while (!pending.length && !done && !failure) await new Promise<void>((resolve) => (feed.wake = resolve));
        if (failure) return end();
        if (done) return { done: true, value: undefined };
        // The first state's members, then the events (those that came meanwhile included).
        const payload: Feed['pending'][number] = members.length ? {} : pending.shift()!;
        const id = members.length ? members.shift()! : entity ? entity.id(payload) : '';
        // An event of a change older than the answer already sent needs no reading.
        const last = sent.get(id);
        if (last && typeof payload.version === 'number' && payload.version < last.version) continue;
        if (payload.deleted === true) {
          const value = deletion(id, payload.version);
          if (!value) continue;
          over = !entity;
          return { done: false, value };
        }
        // The credential is being checked again (it changed): this event waits for the outcome.
        if (connection.watch.checking) await connection.watch.checking;
        if (failure) return end();
        const request = entity ? { ...plan, variables: { ...plan.variables, [ENTITY_VARIABLE]: id } } : plan;
        let result;
        try {
          result = await Promise.race([opts.gateway.execute(request, connection.watch.context), refused]);
        } catch (err) {
          if (failure) return end();
          stop(); // graphql-ws sends the error and calls nothing more on this iterator
          throw err;
        }
        const error = refusalOf(result);
        // A list's entity the subscriber may not read (or gone) is skipped; its credential is watched as every one's.
        if (error && entity && error.status !== 401) continue;
        if (error) {
          live.fail(error);
          return end();
        }
        const value = deliver(id, result);
        if (value) return { done: false, value };
      }
    },
    return: finish,
    throw: finish,
  };
}
