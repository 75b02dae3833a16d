import { omitNulls } from '../output';
import { boolParam, defineRoute, intParam, strParam, type RestRequest } from '../route';

/** The prompt library's main layout, `{base_url}/v1/promptlib` (spec 2). */

const PERF = `totalTests averageTokens averageLatency successRate`;
const PROMPT_FIELDS = /* GraphQL */ `
  fragment PromptFields on Prompt {
    promptId name description template variables version latestVersion versions status metadata
    performance { ${PERF} byVersion { version ${PERF} } }
    environments { environment version promotedAt }
    createdAt updatedAt
  }`;
const FRAGMENT_FIELDS = /* GraphQL */ `
  fragment FragmentFields on Fragment {
    fragmentId
    name
    type
    content
    description
    version
    latestVersion
    metadata
    usage {
      promptCount
      chainCount
    }
    createdAt
    updatedAt
  }
`;
const CHAIN_FIELDS = /* GraphQL */ `
  fragment ChainFields on Chain {
    chainId
    name
    description
    version
    latestVersion
    stepsCount
    metadata
    createdAt
    updatedAt
    steps {
      order
      promptId
      version
      inputMapping
      outputKey
      agentId
      parallel
    }
    performance {
      totalExecutions
      averageTokens
      averageLatency
      successRate
    }
  }
`;
const EXECUTION_FIELDS = /* GraphQL */ `
  fragment ExecutionFields on ChainExecution {
    executionId
    chainId
    chainVersion
    status
    currentStep
    totalSteps
    model
    temperature
    completedSteps {
      step
      promptId
      version
      outputKey
      output
      tokensUsed
      latency
      completedAt
    }
    result
    error {
      step
      promptId
      code
      message
      details
    }
    totalTokens
    totalLatency
    duration
    startedAt
    completedAt
    failedAt
  }
`;
const RUN = `testCase success output tokensUsed latency error { code message }`;
const ARM_RESULT = `averageTokens averageLatency successfulTests failedTests successRate runs { ${RUN} }`;
const AB_FIELDS = /* GraphQL */ `
  fragment AbFields on PromptAbTest {
    testId testCases model temperature maxTokens createdAt
    promptA { promptId version template }
    promptB { promptId version template }
    results { promptA { ${ARM_RESULT} } promptB { ${ARM_RESULT} } recommendation reason }
  }`;

const body = (req: RestRequest) => req.body ?? {};

const steps = (list: any[]) => list.map((s) => omitNulls(s));

function execution(e: any) {
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
  if (e.status === 'failed') return { ...base, error: omitNulls(e.error), failedAt: e.failedAt };
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
          pagination {
            total
            limit
            offset
            hasMore
          }
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
          ...AbFields
        }
      }
      ${AB_FIELDS}
    `,
    variables: (req) => ({ input: body(req) }),
  }),
  defineRoute({
    method: 'GET',
    path: '/promptlib/prompts/ab-test/:testId',
    operation: /* GraphQL */ `
      query PromptAbTest($testId: ID!) {
        promptAbTest(testId: $testId) {
          ...AbFields
        }
      }
      ${AB_FIELDS}
    `,
    variables: ({ params }) => ({ testId: params.testId }),
  }),
  defineRoute({
    method: 'GET',
    path: '/promptlib/prompts/:promptId',
    operation: /* GraphQL */ `
      query GetPrompt($promptId: ID!, $version: Int, $environment: String) {
        prompt(promptId: $promptId, version: $version, environment: $environment) {
          ...PromptFields
        }
      }
      ${PROMPT_FIELDS}
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
  defineRoute({
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
      const { variables, version, environment } = body(req);
      return { promptId: req.params.promptId, variables: variables ?? {}, version, environment };
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
  defineRoute({
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
          pagination {
            total
            limit
            offset
            hasMore
          }
        }
      }
    `,
    variables: ({ query }) => ({ domain: strParam(query.domain), limit: intParam(query.limit), offset: intParam(query.offset) }),
    pick: ({ chains: { chains, pagination } }) => ({ chains, pagination: { total: pagination.total, limit: pagination.limit, hasMore: pagination.hasMore } }),
  }),
  defineRoute({
    method: 'GET',
    path: '/promptlib/chains/executions/:executionId',
    operation: /* GraphQL */ `
      query ChainExecution($executionId: ID!) {
        chainExecution(executionId: $executionId) {
          ...ExecutionFields
        }
      }
      ${EXECUTION_FIELDS}
    `,
    variables: ({ params }) => ({ executionId: params.executionId }),
    pick: ({ chainExecution }) => execution(chainExecution),
  }),
  defineRoute({
    method: 'GET',
    path: '/promptlib/chains/:chainId',
    operation: /* GraphQL */ `
      query GetChain($chainId: ID!, $version: Int) {
        chain(chainId: $chainId, version: $version) {
          ...ChainFields
        }
      }
      ${CHAIN_FIELDS}
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
  defineRoute({
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
          pagination {
            total
            limit
            offset
            hasMore
          }
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
      pagination: { total: pagination.total, limit: pagination.limit, hasMore: pagination.hasMore },
    }),
  }),
  defineRoute({
    method: 'GET',
    path: '/promptlib/fragments/:fragmentId',
    operation: /* GraphQL */ `
      query GetFragment($fragmentId: ID!, $version: Int) {
        fragment(fragmentId: $fragmentId, version: $version) {
          ...FragmentFields
        }
      }
      ${FRAGMENT_FIELDS}
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
