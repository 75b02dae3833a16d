import { omitNulls } from '../output';
import { bodyField, boolParam, defineRoute, intParam, strParam, type RestRequest } from '../route';
import {
  ChainExecutionDocument,
  CreateChainDocument,
  CreateFragmentDocument,
  CreatePromptDocument,
  DeleteChainDocument,
  DeleteFragmentDocument,
  DeletePromptDocument,
  ExecuteChainDocument,
  GetChainDocument,
  GetFragmentDocument,
  GetPromptDocument,
  ListChainsDocument,
  ListFragmentsDocument,
  ListPromptsDocument,
  PromptAbTestDocument,
  RenderPromptDocument,
  RunPromptAbTestDocument,
  TestPromptDocument,
  UpdateChainDocument,
  UpdateFragmentDocument,
  UpdatePromptDocument,
  type ChainExecutionQuery,
  type PaginationFragment,
} from './generated';

/** The prompt library's main layout, `{base_url}/v1/promptlib`. Operations: promptlib.graphql. */

const body = (req: RestRequest) => req.body ?? {};

/** A page of a list that shows no offset (the chains' and the fragments'). */
const withoutOffset = ({ total, limit, hasMore }: PaginationFragment) => ({ total, limit, hasMore });

const steps = (list: Record<string, unknown>[]) => list.map((s) => omitNulls(s));

function execution(e: ChainExecutionQuery['chainExecution']) {
  const base = {
    executionId: e.executionId,
    chainId: e.chainId,
    chainVersion: e.chainVersion,
    status: e.status,
    currentStep: e.currentStep,
    totalSteps: e.totalSteps,
    completedSteps: e.completedSteps,
    totalTokens: e.totalTokens,
    totalLatency: e.totalLatency,
    duration: e.duration,
    model: e.model,
    temperature: e.temperature,
    startedAt: e.startedAt,
  };
  if (e.status === 'completed') return { ...base, result: e.result, completedAt: e.completedAt };
  if (e.status === 'failed') return { ...base, error: e.error && omitNulls(e.error), failedAt: e.failedAt };
  return base;
}

export const promptRoutes = [
  defineRoute({
    method: 'POST',
    path: '/promptlib/prompts',
    operation: CreatePromptDocument,
    refusals: [{ code: 'resource_already_exists', when: 'a prompt has this name' }],
    variables: (req) => ({ input: body(req) }),
    status: 201,
  }),
  defineRoute({
    method: 'GET',
    path: '/promptlib/prompts',
    operation: ListPromptsDocument,
    variables: ({ query }) => ({
      domain: strParam(query.domain),
      agentId: strParam(query.agentId),
      status: strParam(query.status),
      tag: strParam(query.tag),
      limit: intParam(query.limit),
      offset: intParam(query.offset),
    }),
  }),
  defineRoute({
    method: 'POST',
    path: '/promptlib/prompts/ab-test',
    operation: RunPromptAbTestDocument,
    variables: (req) => ({ input: body(req) }),
  }),
  defineRoute({
    method: 'GET',
    path: '/promptlib/prompts/ab-test/:testId',
    operation: PromptAbTestDocument,
    variables: ({ params }) => ({ testId: params.testId }),
  }),
  defineRoute({
    method: 'GET',
    path: '/promptlib/prompts/:promptId',
    operation: GetPromptDocument,
    refusals: [{ code: 'PROMPT_NOT_FOUND', when: 'no prompt has this id, or not the version or environment asked' }],
    variables: ({ params, query }) => ({ promptId: params.promptId, version: intParam(query.version), environment: strParam(query.environment) }),
  }),
  defineRoute({
    method: 'PUT',
    path: '/promptlib/prompts/:promptId',
    operation: UpdatePromptDocument,
    variables: (req) => ({ promptId: req.params.promptId, input: body(req) }),
  }),
  defineRoute({
    method: 'DELETE',
    path: '/promptlib/prompts/:promptId',
    operation: DeletePromptDocument,
    variables: ({ params, query }) => ({ promptId: params.promptId, version: intParam(query.version) }),
  }),
  defineRoute({
    method: 'POST',
    path: '/promptlib/prompts/:promptId/test',
    operation: TestPromptDocument,
    refusals: [{ code: 'PROMPT_NOT_FOUND', when: 'no prompt has this id, or not the version or environment asked' }],
    variables: (req) => ({ promptId: req.params.promptId, input: body(req) }),
    pick: ({ testPrompt: t }) => ({
      output: t.output,
      metadata: t.metadata,
      testId: t.testId,
      promptId: t.promptId,
      version: t.version,
      createdAt: t.createdAt,
    }),
  }),
  defineRoute({
    method: 'POST',
    path: '/promptlib/prompts/:promptId/render',
    operation: RenderPromptDocument,
    refusals: [{ code: 'PROMPT_NOT_FOUND', when: 'no prompt has this id, or not the version or environment asked' }],
    variables: (req) => {
      const field = (key: string) => bodyField(body(req), key);
      return { promptId: req.params.promptId, variables: field('variables') ?? {}, version: field('version'), environment: field('environment') };
    },
  }),
];

export const chainRoutes = [
  defineRoute({
    method: 'POST',
    path: '/promptlib/chains',
    operation: CreateChainDocument,
    refusals: [{ code: 'resource_already_exists', when: 'a chain has this name' }],
    variables: (req) => ({ input: body(req) }),
    status: 201,
  }),
  defineRoute({
    method: 'GET',
    path: '/promptlib/chains',
    operation: ListChainsDocument,
    variables: ({ query }) => ({ domain: strParam(query.domain), limit: intParam(query.limit), offset: intParam(query.offset) }),
    pick: ({ chains: { chains, pagination } }) => ({ chains, pagination: withoutOffset(pagination) }),
  }),
  defineRoute({
    method: 'GET',
    path: '/promptlib/chains/executions/:executionId',
    operation: ChainExecutionDocument,
    variables: ({ params }) => ({ executionId: params.executionId }),
    pick: ({ chainExecution }) => execution(chainExecution),
    shapes: ['running', 'completed', 'failed'].map((status) => ({ 'chainExecution.status': status })),
  }),
  defineRoute({
    method: 'GET',
    path: '/promptlib/chains/:chainId',
    operation: GetChainDocument,
    variables: ({ params, query }) => ({ chainId: params.chainId, version: intParam(query.version) }),
    pick: ({ chain }) => ({ ...chain, steps: steps(chain.steps) }),
  }),
  defineRoute({
    method: 'PUT',
    path: '/promptlib/chains/:chainId',
    operation: UpdateChainDocument,
    variables: (req) => ({ chainId: req.params.chainId, input: body(req) }),
  }),
  defineRoute({
    method: 'DELETE',
    path: '/promptlib/chains/:chainId',
    operation: DeleteChainDocument,
    variables: ({ params }) => ({ chainId: params.chainId }),
  }),
  defineRoute({
    method: 'POST',
    path: '/promptlib/chains/:chainId/execute',
    operation: ExecuteChainDocument,
    variables: (req) => ({ chainId: req.params.chainId, input: body(req) }),
    status: 202,
  }),
];

export const fragmentRoutes = [
  defineRoute({
    method: 'POST',
    path: '/promptlib/fragments',
    operation: CreateFragmentDocument,
    refusals: [{ code: 'resource_already_exists', when: 'a fragment has this name' }],
    variables: (req) => ({ input: body(req) }),
    status: 201,
  }),
  defineRoute({
    method: 'GET',
    path: '/promptlib/fragments',
    operation: ListFragmentsDocument,
    variables: ({ query }) => ({
      type: strParam(query.type),
      domain: strParam(query.domain),
      tag: strParam(query.tag),
      limit: intParam(query.limit),
      offset: intParam(query.offset),
    }),
    pick: ({ fragments: { fragments, pagination } }) => ({
      fragments,
      pagination: withoutOffset(pagination),
    }),
  }),
  defineRoute({
    method: 'GET',
    path: '/promptlib/fragments/:fragmentId',
    operation: GetFragmentDocument,
    variables: ({ params, query }) => ({ fragmentId: params.fragmentId, version: intParam(query.version) }),
  }),
  defineRoute({
    method: 'PUT',
    path: '/promptlib/fragments/:fragmentId',
    operation: UpdateFragmentDocument,
    variables: (req) => ({ fragmentId: req.params.fragmentId, input: body(req) }),
  }),
  defineRoute({
    method: 'DELETE',
    path: '/promptlib/fragments/:fragmentId',
    operation: DeleteFragmentDocument,
    refusals: [{ code: 'conflict', when: 'active prompts use the fragment and force is not set' }],
    variables: ({ params, query }) => ({ fragmentId: params.fragmentId, force: boolParam(query.force) }),
  }),
];

export const promptlibRoutes = [...promptRoutes, ...chainRoutes, ...fragmentRoutes];
