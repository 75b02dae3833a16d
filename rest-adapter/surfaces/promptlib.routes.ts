import { omitNulls } from '../output';
import { bodyField, boolParam, defineRoute, intParam, strParam, type RestRequest } from '../route';
import { PAGINATION, type Pagination } from './selections';

/** The prompt library's main layout, `{base_url}/v1/promptlib` (spec 2). */

const PERF = `totalTests averageTokens averageLatency successRate`;
const PROMPT = /* GraphQL */ `
  promptId name description template variables version latestVersion versions status metadata
  performance { ${PERF} byVersion { version ${PERF} } }
  environments { environment version promotedAt }
  createdAt updatedAt`;
const FRAGMENT = /* GraphQL */ `fragmentId name type content description version latestVersion metadata usage { promptCount chainCount } createdAt updatedAt`;
const CHAIN = /* GraphQL */ `
  chainId name description version latestVersion stepsCount metadata createdAt updatedAt
  steps { order promptId version inputMapping outputKey agentId parallel }
  performance { totalExecutions averageTokens averageLatency successRate }`;
const EXECUTION = /* GraphQL */ `
  executionId chainId chainVersion status currentStep totalSteps model temperature
  completedSteps { step promptId version outputKey output tokensUsed latency completedAt }
  result
  error { step promptId code message details }
  totalTokens totalLatency duration startedAt completedAt failedAt`;
interface ChainExecution {
  executionId: string;
  chainId: string;
  chainVersion: number;
  status: string;
  currentStep: number;
  totalSteps: number;
  model: string;
  temperature: number;
  /** Each step's fields as selected. */
  completedSteps: Record<string, unknown>[];
  result: Record<string, unknown> | null;
  error: { step: number; promptId: string | null; code: string; message: string; details: Record<string, unknown> | null } | null;
  totalTokens: number;
  totalLatency: number;
  duration: number;
  startedAt: string;
  completedAt: string | null;
  failedAt: string | null;
}
const RUN = `testCase success output tokensUsed latency error { code message }`;
const ARM_RESULT = `averageTokens averageLatency successfulTests failedTests successRate runs { ${RUN} }`;
const AB_TEST = /* GraphQL */ `
  testId testCases model temperature maxTokens createdAt
  promptA { promptId version template }
  promptB { promptId version template }
  results { promptA { ${ARM_RESULT} } promptB { ${ARM_RESULT} } recommendation reason }`;

const body = (req: RestRequest) => req.body ?? {};

/** A page of a list that shows no offset (the chains' and the fragments'). */
const withoutOffset = ({ total, limit, hasMore }: Pagination) => ({ total, limit, hasMore });

const steps = (list: Record<string, unknown>[]) => list.map((s) => omitNulls(s));

function execution(e: ChainExecution) {
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
    operation: /* GraphQL */ `
      mutation CreatePrompt($input: CreatePromptInput!) {
        createPrompt(input: $input) {
          promptId
          version
          status
          createdAt
        }
      }
    `,
    variables: (req) => ({ input: body(req) }),
    status: 201,
  }),
  defineRoute({
    method: 'GET',
    path: '/promptlib/prompts',
    operation: /* GraphQL */ `
      query ListPrompts($domain: String, $agentId: String, $status: String, $tag: String, $limit: Int, $offset: Int) {
        prompts(domain: $domain, agentId: $agentId, status: $status, tag: $tag, limit: $limit, offset: $offset) {
          prompts {
            promptId
            name
            description
            domain
            agentId
            tags
            version
            status
            testsRun
            successRate
            createdAt
            updatedAt
          }
          ${PAGINATION}
        }
      }
    `,
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
    operation: /* GraphQL */ `
      mutation RunPromptAbTest($input: PromptAbTestInput!) {
        runPromptAbTest(input: $input) {
          ${AB_TEST}
        }
      }
    `,
    variables: (req) => ({ input: body(req) }),
  }),
  defineRoute({
    method: 'GET',
    path: '/promptlib/prompts/ab-test/:testId',
    operation: /* GraphQL */ `
      query PromptAbTest($testId: ID!) {
        promptAbTest(testId: $testId) {
          ${AB_TEST}
        }
      }
    `,
    variables: ({ params }) => ({ testId: params.testId }),
  }),
  defineRoute({
    method: 'GET',
    path: '/promptlib/prompts/:promptId',
    operation: /* GraphQL */ `
      query GetPrompt($promptId: ID!, $version: Int, $environment: String) {
        prompt(promptId: $promptId, version: $version, environment: $environment) {
          ${PROMPT}
        }
      }
    `,
    variables: ({ params, query }) => ({ promptId: params.promptId, version: intParam(query.version), environment: strParam(query.environment) }),
  }),
  defineRoute({
    method: 'PUT',
    path: '/promptlib/prompts/:promptId',
    operation: /* GraphQL */ `
      mutation UpdatePrompt($promptId: ID!, $input: UpdatePromptInput!) {
        updatePrompt(promptId: $promptId, input: $input) {
          promptId
          version
          status
          updatedAt
        }
      }
    `,
    variables: (req) => ({ promptId: req.params.promptId, input: body(req) }),
  }),
  defineRoute({
    method: 'DELETE',
    path: '/promptlib/prompts/:promptId',
    operation: /* GraphQL */ `
      mutation DeletePrompt($promptId: ID!, $version: Int) {
        deletePrompt(promptId: $promptId, version: $version) {
          promptId
          versionsDeleted
          deletedAt
        }
      }
    `,
    variables: ({ params, query }) => ({ promptId: params.promptId, version: intParam(query.version) }),
  }),
  defineRoute<{
    testPrompt: { testId: string; promptId: string; version: number; output: string; metadata: Record<string, unknown>; createdAt: string };
  }>({
    method: 'POST',
    path: '/promptlib/prompts/:promptId/test',
    operation: /* GraphQL */ `
      mutation TestPrompt($promptId: ID!, $input: TestPromptInput!) {
        testPrompt(promptId: $promptId, input: $input) {
          testId
          promptId
          version
          output
          metadata {
            model
            tokensUsed
            latency
            temperature
          }
          createdAt
        }
      }
    `,
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
    operation: /* GraphQL */ `
      query RenderPrompt($promptId: ID!, $variables: JSONObject, $version: Int, $environment: String) {
        renderPrompt(promptId: $promptId, variables: $variables, version: $version, environment: $environment) {
          promptId
          version
          status
          rendered
          variables
          fragments {
            fragmentId
            version
          }
        }
      }
    `,
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
    operation: /* GraphQL */ `
      mutation CreateChain($input: CreateChainInput!) {
        createChain(input: $input) {
          chainId
          version
          stepsCount
          createdAt
        }
      }
    `,
    variables: (req) => ({ input: body(req) }),
    status: 201,
  }),
  defineRoute<{ chains: { chains: unknown[]; pagination: Pagination } }>({
    method: 'GET',
    path: '/promptlib/chains',
    operation: /* GraphQL */ `
      query ListChains($domain: String, $limit: Int, $offset: Int) {
        chains(domain: $domain, limit: $limit, offset: $offset) {
          chains {
            chainId
            name
            description
            domain
            version
            stepsCount
            executions
            successRate
            createdAt
          }
          ${PAGINATION}
        }
      }
    `,
    variables: ({ query }) => ({ domain: strParam(query.domain), limit: intParam(query.limit), offset: intParam(query.offset) }),
    pick: ({ chains: { chains, pagination } }) => ({ chains, pagination: withoutOffset(pagination) }),
  }),
  defineRoute<{ chainExecution: ChainExecution }>({
    method: 'GET',
    path: '/promptlib/chains/executions/:executionId',
    operation: /* GraphQL */ `
      query ChainExecution($executionId: ID!) {
        chainExecution(executionId: $executionId) {
          ${EXECUTION}
        }
      }
    `,
    variables: ({ params }) => ({ executionId: params.executionId }),
    pick: ({ chainExecution }) => execution(chainExecution),
  }),
  defineRoute<{ chain: Record<string, unknown> & { steps: Record<string, unknown>[] } }>({
    method: 'GET',
    path: '/promptlib/chains/:chainId',
    operation: /* GraphQL */ `
      query GetChain($chainId: ID!, $version: Int) {
        chain(chainId: $chainId, version: $version) {
          ${CHAIN}
        }
      }
    `,
    variables: ({ params, query }) => ({ chainId: params.chainId, version: intParam(query.version) }),
    pick: ({ chain }) => ({ ...chain, steps: steps(chain.steps) }),
  }),
  defineRoute({
    method: 'PUT',
    path: '/promptlib/chains/:chainId',
    operation: /* GraphQL */ `
      mutation UpdateChain($chainId: ID!, $input: UpdateChainInput!) {
        updateChain(chainId: $chainId, input: $input) {
          chainId
          version
          stepsCount
          updatedAt
        }
      }
    `,
    variables: (req) => ({ chainId: req.params.chainId, input: body(req) }),
  }),
  defineRoute({
    method: 'DELETE',
    path: '/promptlib/chains/:chainId',
    operation: /* GraphQL */ `
      mutation DeleteChain($chainId: ID!) {
        deleteChain(chainId: $chainId) {
          chainId
          deletedAt
        }
      }
    `,
    variables: ({ params }) => ({ chainId: params.chainId }),
  }),
  defineRoute({
    method: 'POST',
    path: '/promptlib/chains/:chainId/execute',
    operation: /* GraphQL */ `
      mutation ExecuteChain($chainId: ID!, $input: ExecuteChainInput!) {
        executeChain(chainId: $chainId, input: $input) {
          executionId
          chainId
          status
          currentStep
          totalSteps
          startedAt
        }
      }
    `,
    variables: (req) => ({ chainId: req.params.chainId, input: body(req) }),
    status: 202,
  }),
];

export const fragmentRoutes = [
  defineRoute({
    method: 'POST',
    path: '/promptlib/fragments',
    operation: /* GraphQL */ `
      mutation CreateFragment($input: CreateFragmentInput!) {
        createFragment(input: $input) {
          fragmentId
          type
          version
          createdAt
        }
      }
    `,
    variables: (req) => ({ input: body(req) }),
    status: 201,
  }),
  defineRoute<{ fragments: { fragments: unknown[]; pagination: Pagination } }>({
    method: 'GET',
    path: '/promptlib/fragments',
    operation: /* GraphQL */ `
      query ListFragments($type: String, $domain: String, $tag: String, $limit: Int, $offset: Int) {
        fragments(type: $type, domain: $domain, tag: $tag, limit: $limit, offset: $offset) {
          fragments {
            fragmentId
            name
            type
            domain
            tags
            version
            usedInPrompts
            createdAt
          }
          ${PAGINATION}
        }
      }
    `,
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
    operation: /* GraphQL */ `
      query GetFragment($fragmentId: ID!, $version: Int) {
        fragment(fragmentId: $fragmentId, version: $version) {
          ${FRAGMENT}
        }
      }
    `,
    variables: ({ params, query }) => ({ fragmentId: params.fragmentId, version: intParam(query.version) }),
  }),
  defineRoute({
    method: 'PUT',
    path: '/promptlib/fragments/:fragmentId',
    operation: /* GraphQL */ `
      mutation UpdateFragment($fragmentId: ID!, $input: UpdateFragmentInput!) {
        updateFragment(fragmentId: $fragmentId, input: $input) {
          fragmentId
          version
          updatedAt
        }
      }
    `,
    variables: (req) => ({ fragmentId: req.params.fragmentId, input: body(req) }),
  }),
  defineRoute({
    method: 'DELETE',
    path: '/promptlib/fragments/:fragmentId',
    operation: /* GraphQL */ `
      mutation DeleteFragment($fragmentId: ID!, $force: Boolean) {
        deleteFragment(fragmentId: $fragmentId, force: $force) {
          fragmentId
          deletedAt
        }
      }
    `,
    variables: ({ params, query }) => ({ fragmentId: params.fragmentId, force: boolParam(query.force) }),
  }),
];

export const promptlibRoutes = [...promptRoutes, ...chainRoutes, ...fragmentRoutes];
