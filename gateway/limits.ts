import {
  GraphQLError,
  Kind,
  Lexer,
  SchemaMetaFieldDef,
  Source,
  TokenKind,
  TypeMetaFieldDef,
  TypeNameMetaFieldDef,
  getNamedType,
  getNullableType,
  getOperationAST,
  isCompositeType,
  isInterfaceType,
  isListType,
  isObjectType,
  parse,
  typeFromAST,
  visit,
  type ASTNode,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLField,
  type GraphQLSchema,
  type NamedTypeNode,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValidationRule,
} from 'graphql';
import { ERROR_STATUS } from '../kernel/errors';

/**
 * Request limits for the GraphQL endpoint (user reference: docs/surfaces.md). Tokens are counted while
 * parsing, so a huge document is refused before an AST exists. `__Type.ofType` adds no depth: its
 * chains are bounded by type wrapping and are why standard introspection nests deeper than 6.
 * Validation sees no variable values (validated documents are cached across requests), so the cost rule
 * takes a variable size at its default, else 20; `checkCost` repeats the estimate with the real variables.
 */
export interface QueryLimits {
  maxDepth: number;
  maxAliases: number;
  maxTokens: number;
  maxCost: number;
}

export const DEFAULT_LIMITS: QueryLimits = { maxDepth: 12, maxAliases: 30, maxTokens: 5000, maxCost: 20000 };

/** The flat cost of `__schema` (and of `__type`): introspection is the largest answer a client can ask for. */
export const INTROSPECTION_COST = 5_000;
export const TYPE_INTROSPECTION_COST = 100;

/** The size assumed for a list field with no usable `first`/`last`/`limit` argument. */
export const DEFAULT_LIST_SIZE = 20;
const SIZE_ARGUMENTS = new Set(['first', 'last', 'limit']);

export type LimitName = 'depth' | 'aliases' | 'cost' | 'tokens';

function tooComplex(limit: LimitName, max: number, actual: number, message: string, nodes?: ASTNode | ASTNode[]): GraphQLError {
  return new GraphQLError(`${message}; the maximum is ${max} (${actual - max} over)`, {
    nodes,
    extensions: {
      code: 'query_too_complex',
      http: { status: ERROR_STATUS.query_too_complex },
      details: { limit, max, actual },
    },
  });
}

function operationLabel(op: OperationDefinitionNode): string {
  return op.name ? `Operation "${op.name.value}"` : 'The operation';
}

/** graphql-js validation rules enforcing depth, aliases and cost. */
export function limitRules(limits: QueryLimits): ValidationRule[] {
  const depthRule: ValidationRule = (context) => ({
    OperationDefinition(op) {
      const depth = operationDepth(context.getSchema(), op, (name) => context.getFragment(name));
      if (depth > limits.maxDepth) {
        context.reportError(tooComplex('depth', limits.maxDepth, depth, `${operationLabel(op)} nests fields ${depth} levels deep`, op));
      }
      return false;
    },
  });

  const aliasRule: ValidationRule = (context) => {
    let count = 0;
    let firstOver: FieldNode | undefined;
    return {
      Field(node) {
        if (!node.alias) return;
        count += 1;
        if (count === limits.maxAliases + 1) firstOver = node;
      },
      Document: {
        leave() {
          if (count > limits.maxAliases) {
            context.reportError(tooComplex('aliases', limits.maxAliases, count, `The document uses ${count} aliases`, firstOver));
          }
        },
      },
    };
  };

  const costRule: ValidationRule = (context) => ({
    OperationDefinition(op) {
      const cost = operationCost(context.getSchema(), op, (name) => context.getFragment(name), variableDefaults(op));
      if (cost > limits.maxCost) context.reportError(costError(op, cost, limits.maxCost));
      return false;
    },
  });

  return [depthRule, aliasRule, costRule];
}

function costError(op: OperationDefinitionNode, cost: number, max: number): GraphQLError {
  return tooComplex(
    'cost',
    max,
    cost,
    `${operationLabel(op)} has an estimated cost of ${cost} (lists without first/last/limit count as ${DEFAULT_LIST_SIZE} items)`,
    op,
  );
}

/**
 * The cost check again with the request's variable values, for a hook that runs after the
 * operation is resolved (Apollo's didResolveOperation): validation could only use defaults.
 */
export function checkCost(
  schema: GraphQLSchema,
  document: DocumentNode,
  limits: QueryLimits,
  operationName?: string | null,
  variables?: Readonly<Record<string, unknown>> | null,
): GraphQLError | undefined {
  const op = getOperationAST(document, operationName);
  if (!op) return undefined;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const def of document.definitions) {
    if (def.kind === Kind.FRAGMENT_DEFINITION) fragments.set(def.name.value, def);
  }
  const defaults = variableDefaults(op);
  const value = (name: string) => (variables && Object.hasOwn(variables, name) ? variables[name] : defaults(name));
  const cost = operationCost(schema, op, (name) => fragments.get(name), value);
  return cost > limits.maxCost ? costError(op, cost, limits.maxCost) : undefined;
}

/** Parse with graphql's maxTokens option; a too-long document becomes a query_too_complex error. */
export function parseWithLimits(source: string, limits: QueryLimits): DocumentNode {
  try {
    return parse(source, { maxTokens: limits.maxTokens });
  } catch (err) {
    if (!(err instanceof GraphQLError)) throw err;
    throw tokenLimitError(err, limits) ?? err;
  }
}

/**
 * The query_too_complex error for a syntax error that is the parser stopping at the token limit
 * (undefined for any other): also for a parse that was not parseWithLimits' (Apollo Server's).
 * Told by where the parser stopped in the error's source, not by its message.
 */
export function tokenLimitError(err: GraphQLError, limits: QueryLimits): GraphQLError | undefined {
  const source = err.source?.body;
  if (source === undefined) return undefined;
  const { before, total } = countTokens(source, err.positions?.[0] ?? source.length);
  if (before <= limits.maxTokens) return undefined;
  return tooComplex('tokens', limits.maxTokens, total, `The document has ${total} tokens`);
}

/** Tokens as graphql's parser counts them (no comments, no EOF); a lexing error ends the count. */
function countTokens(source: string, position: number): { before: number; total: number } {
  const lexer = new Lexer(new Source(source));
  let before = 0;
  let total = 0;
  try {
    for (let token = lexer.advance(); token.kind !== TokenKind.EOF; token = lexer.advance()) {
      total += 1;
      if (token.start <= position) before += 1;
    }
  } catch {
    // the parser reported this already, or the limit was hit before it
  }
  return { before, total };
}

// ---------------------------------------------------------------------------------------------
// Measuring an operation: one pass over its selections, each fragment measured once.

type FragmentLookup = (name: string) => FragmentDefinitionNode | null | undefined;
type FieldValue = (node: FieldNode, parent: GraphQLCompositeType | undefined, def: GraphQLField<unknown, unknown> | undefined, selection: number) => number;

function measure(
  schema: GraphQLSchema,
  op: OperationDefinitionNode,
  getFragment: FragmentLookup,
  combine: (a: number, b: number) => number,
  fieldValue: FieldValue,
): number {
  // A fragment's value depends only on its own type condition, so it is measured once per operation.
  const measured = new Map<string, number>();
  const inProgress = new Set<string>();

  const spread = (name: string): number => {
    const known = measured.get(name);
    if (known !== undefined) return known;
    const fragment = getFragment(name);
    // Unknown and cyclic fragments are reported by graphql's own rules.
    if (!fragment || inProgress.has(name)) return 0;
    inProgress.add(name);
    const value = selectionSet(fragment.selectionSet, compositeType(schema, fragment.typeCondition));
    inProgress.delete(name);
    measured.set(name, value);
    return value;
  };

  const selectionSet = (set: SelectionSetNode, parent: GraphQLCompositeType | undefined): number => {
    let total = 0;
    for (const selection of set.selections) {
      let value: number;
      switch (selection.kind) {
        case Kind.FIELD: {
          const def = parent && fieldDef(schema, parent, selection.name.value);
          const type = def && getNamedType(def.type);
          const inner = selection.selectionSet ? selectionSet(selection.selectionSet, isCompositeType(type) ? type : undefined) : 0;
          value = fieldValue(selection, parent, def, inner);
          break;
        }
        case Kind.INLINE_FRAGMENT:
          value = selectionSet(selection.selectionSet, selection.typeCondition ? compositeType(schema, selection.typeCondition) : parent);
          break;
        case Kind.FRAGMENT_SPREAD:
          value = spread(selection.name.value);
          break;
      }
      total = combine(total, value);
    }
    return total;
  };

  return selectionSet(op.selectionSet, schema.getRootType(op.operation) ?? undefined);
}

function operationDepth(schema: GraphQLSchema, op: OperationDefinitionNode, getFragment: FragmentLookup): number {
  return measure(schema, op, getFragment, Math.max, (node, parent, _def, inner) => (parent?.name === '__Type' && node.name.value === 'ofType' ? 0 : 1) + inner);
}

function operationCost(schema: GraphQLSchema, op: OperationDefinitionNode, getFragment: FragmentLookup, variable: (name: string) => unknown): number {
  // Capped so absurd size arguments stay finite (and JSON-serialisable) numbers.
  const cap = (n: number) => Math.min(n, Number.MAX_SAFE_INTEGER);
  return measure(
    schema,
    op,
    getFragment,
    (a, b) => cap(a + b),
    (node, _parent, def, inner) => {
      if (node.name.value === SchemaMetaFieldDef.name) return INTROSPECTION_COST;
      if (node.name.value === TypeMetaFieldDef.name) return TYPE_INTROSPECTION_COST;
      if (node.name.value.startsWith('__')) return 0;
      const isList = def !== undefined && isListType(getNullableType(def.type));
      return cap(1 + (isList ? listSize(node, variable) : 1) * inner);
    },
  );
}

/**
 * Whether `document`'s cost depends on its variables: a size argument (first/last/limit) given by
 * one. Otherwise validation, which prices variables at their defaults, priced it once for all.
 */
export function costVaries(document: DocumentNode): boolean {
  let varies = false;
  visit(document, {
    Argument(arg) {
      if (SIZE_ARGUMENTS.has(arg.name.value) && arg.value.kind === Kind.VARIABLE) varies = true;
    },
  });
  return varies;
}

function listSize(node: FieldNode, variable: (name: string) => unknown): number {
  let size: number | undefined;
  for (const arg of node.arguments ?? []) {
    if (!SIZE_ARGUMENTS.has(arg.name.value)) continue;
    const raw = arg.value.kind === Kind.INT ? Number(arg.value.value) : arg.value.kind === Kind.VARIABLE ? variable(arg.value.name.value) : undefined;
    if (typeof raw === 'number' && !Number.isNaN(raw)) size = Math.max(size ?? 0, raw, 0);
  }
  return Math.min(size ?? DEFAULT_LIST_SIZE, Number.MAX_SAFE_INTEGER);
}

/** Integer literal defaults of the operation's variables: all a validation rule can know of them. */
function variableDefaults(op: OperationDefinitionNode): (name: string) => unknown {
  const defaults = new Map<string, number>();
  for (const def of op.variableDefinitions ?? []) {
    if (def.defaultValue?.kind === Kind.INT) defaults.set(def.variable.name.value, Number(def.defaultValue.value));
  }
  return (name) => defaults.get(name);
}

function compositeType(schema: GraphQLSchema, node: NamedTypeNode): GraphQLCompositeType | undefined {
  const type = typeFromAST(schema, node);
  return isCompositeType(type) ? type : undefined;
}

function fieldDef(schema: GraphQLSchema, parent: GraphQLCompositeType, name: string): GraphQLField<unknown, unknown> | undefined {
  if (name === SchemaMetaFieldDef.name && parent === schema.getQueryType()) return SchemaMetaFieldDef;
  if (name === TypeMetaFieldDef.name && parent === schema.getQueryType()) return TypeMetaFieldDef;
  if (name === TypeNameMetaFieldDef.name) return TypeNameMetaFieldDef;
  return isObjectType(parent) || isInterfaceType(parent) ? parent.getFields()[name] : undefined;
}
