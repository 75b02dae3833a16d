import { bodyField, defineRoute, intParam, strParam } from '../route';

/**
 * The feature-request service, `{base_url}/api/v1` on the `/feedback` surface (spec 3, section B),
 * snake_case, `{success, message, data}`. Sign-in (`GET /auth/{github,google}` and their
 * callbacks) redirects, so the service serves it itself (subgraphs/feedback/index.ts).
 */

const PROJECT = `id name description slug ownerId settings { isPublic allowAnonymous requireApproval } stats { totalRequests totalVotes totalComments } createdAt`;
const REQUEST = `id projectId authorId title description status category tags priority votesCount commentsCount createdAt updatedAt`;
const VOTES = `totalVotes upVotes downVotes userVote userVoteId`;
const COMMENT = `id requestId authorId body createdAt updatedAt`;

export const feedbackRoutes = [
  defineRoute({
    method: 'GET',
    path: '/auth/me',
    operation: /* GraphQL */ `
      query FeedbackMe {
        feedbackMe {
          id
          email
          username
          name
          avatar
          subscription {
            tier
            status
          }
          createdAt
        }
      }
    `,
    snakeCase: true,
  }),
  defineRoute<{ feedbackProjects: { projects: unknown[] } }>({
    method: 'GET',
    path: '/projects',
    operation: /* GraphQL */ `query FeedbackProjects($limit: Int, $offset: Int) { feedbackProjects(limit: $limit, offset: $offset) { projects { ${PROJECT} } } }`,
    variables: ({ query }) => ({ limit: intParam(query.limit) ?? 20, offset: intParam(query.offset) ?? 0 }),
    pick: ({ feedbackProjects }) => feedbackProjects.projects,
    snakeCase: true,
  }),
  defineRoute({
    method: 'POST',
    path: '/projects',
    operation: /* GraphQL */ `mutation CreateFeedbackProject($input: CreateProjectInput!) { createFeedbackProject(input: $input) { ${PROJECT} } }`,
    variables: ({ body }) => ({ input: body ?? {} }),
    status: 201,
    snakeCase: true,
  }),
  defineRoute({
    method: 'GET',
    path: '/projects/my',
    operation: /* GraphQL */ `query MyFeedbackProjects { myFeedbackProjects { ${PROJECT} } }`,
    snakeCase: true,
  }),
  defineRoute({
    method: 'GET',
    path: '/projects/:id',
    operation: /* GraphQL */ `query FeedbackProject($id: ID!) { feedbackProject(id: $id) { ${PROJECT} moderators } }`,
    variables: ({ params }) => ({ id: params.id }),
    snakeCase: true,
  }),
  defineRoute({
    method: 'PUT',
    path: '/projects/:id',
    operation: /* GraphQL */ `mutation UpdateFeedbackProject($id: ID!, $input: UpdateProjectInput!) { updateFeedbackProject(id: $id, input: $input) { ${PROJECT} } }`,
    variables: ({ params, body }) => ({ id: params.id, input: body ?? {} }),
    snakeCase: true,
  }),
  defineRoute({
    method: 'DELETE',
    path: '/projects/:id',
    operation: /* GraphQL */ `
      mutation DeleteFeedbackProject($id: ID!) {
        deleteFeedbackProject(id: $id) {
          id
        }
      }
    `,
    variables: ({ params }) => ({ id: params.id }),
  }),
  defineRoute({
    method: 'POST',
    path: '/projects/:id/moderators',
    operation: /* GraphQL */ `mutation AddProjectModerator($id: ID!, $userId: ID!) { addProjectModerator(projectId: $id, userId: $userId) { ${PROJECT} moderators } }`,
    variables: ({ params, body }) => ({ id: params.id, userId: bodyField(body, 'userId') }),
    status: 201,
    snakeCase: true,
  }),
  defineRoute({
    method: 'GET',
    path: '/projects/:id/requests',
    operation: /* GraphQL */ `
      query FeatureRequests($id: ID!, $limit: Int, $offset: Int, $status: String, $category: String, $sort: String, $order: String) {
        featureRequests(projectId: $id, limit: $limit, offset: $offset, status: $status, category: $category, sort: $sort, order: $order) {
          requests { ${REQUEST} } total limit offset
        }
      }`,
    variables: ({ params, query }) => ({
      id: params.id,
      limit: intParam(query.limit) ?? 20,
      offset: intParam(query.offset) ?? 0,
      status: strParam(query.status),
      category: strParam(query.category),
      sort: strParam(query.sort),
      order: strParam(query.order),
    }),
    snakeCase: true,
  }),
  defineRoute({
    method: 'POST',
    path: '/projects/:id/requests',
    operation: /* GraphQL */ `mutation SubmitFeatureRequest($id: ID!, $input: FeatureRequestInput!) { submitFeatureRequest(projectId: $id, input: $input) { ${REQUEST} } }`,
    variables: ({ params, body }) => ({ id: params.id, input: body ?? {} }),
    status: 201,
    snakeCase: true,
  }),
  defineRoute({
    method: 'GET',
    path: '/requests/:id',
    operation: /* GraphQL */ `query FeatureRequest($id: ID!) { featureRequest(requestId: $id) { ${REQUEST} } }`,
    variables: ({ params }) => ({ id: params.id }),
    snakeCase: true,
  }),
  defineRoute({
    method: 'PUT',
    path: '/requests/:id',
    operation: /* GraphQL */ `mutation UpdateFeatureRequest($id: ID!, $input: FeatureRequestInput!) { updateFeatureRequest(requestId: $id, input: $input) { ${REQUEST} } }`,
    variables: ({ params, body }) => ({ id: params.id, input: body ?? {} }),
    snakeCase: true,
  }),
  defineRoute({
    method: 'DELETE',
    path: '/requests/:id',
    operation: /* GraphQL */ `
      mutation DeleteFeatureRequest($id: ID!) {
        deleteFeatureRequest(requestId: $id) {
          id
        }
      }
    `,
    variables: ({ params }) => ({ id: params.id }),
  }),
  defineRoute({
    method: 'PATCH',
    path: '/requests/:id/status',
    operation: /* GraphQL */ `mutation SetFeatureRequestStatus($id: ID!, $status: String!) { setFeatureRequestStatus(requestId: $id, status: $status) { ${REQUEST} } }`,
    variables: ({ params, body }) => ({ id: params.id, status: bodyField(body, 'status') }),
    snakeCase: true,
  }),
  defineRoute({
    method: 'POST',
    path: '/requests/:id/vote',
    operation: /* GraphQL */ `mutation VoteFeatureRequest($id: ID!, $type: String!) { voteFeatureRequest(requestId: $id, type: $type) { ${VOTES} } }`,
    variables: ({ params, body }) => ({ id: params.id, type: bodyField(body, 'type') }),
    snakeCase: true,
  }),
  defineRoute({
    method: 'DELETE',
    path: '/requests/:id/vote',
    operation: /* GraphQL */ `mutation UnvoteFeatureRequest($id: ID!) { unvoteFeatureRequest(requestId: $id) { ${VOTES} } }`,
    variables: ({ params }) => ({ id: params.id }),
    snakeCase: true,
  }),
  defineRoute({
    method: 'GET',
    path: '/requests/:id/votes',
    operation: /* GraphQL */ `query FeatureRequestVotes($id: ID!) { featureRequestVotes(requestId: $id) { ${VOTES} } }`,
    variables: ({ params }) => ({ id: params.id }),
    snakeCase: true,
  }),
  defineRoute({
    method: 'GET',
    path: '/requests/:id/comments',
    operation: /* GraphQL */ `query FeatureRequestComments($id: ID!) { featureRequestComments(requestId: $id) { ${COMMENT} } }`,
    variables: ({ params }) => ({ id: params.id }),
    snakeCase: true,
  }),
  defineRoute({
    method: 'POST',
    path: '/requests/:id/comments',
    operation: /* GraphQL */ `mutation AddFeatureRequestComment($id: ID!, $body: String!) { addFeatureRequestComment(requestId: $id, body: $body) { ${COMMENT} } }`,
    variables: ({ params, body }) => ({ id: params.id, body: bodyField(body, 'body') }),
    status: 201,
    snakeCase: true,
  }),
  defineRoute({
    method: 'PUT',
    path: '/comments/:id',
    operation: /* GraphQL */ `mutation UpdateFeatureRequestComment($id: ID!, $body: String!) { updateFeatureRequestComment(commentId: $id, body: $body) { ${COMMENT} } }`,
    variables: ({ params, body }) => ({ id: params.id, body: bodyField(body, 'body') }),
    snakeCase: true,
  }),
  defineRoute({
    method: 'DELETE',
    path: '/comments/:id',
    operation: /* GraphQL */ `
      mutation DeleteFeatureRequestComment($id: ID!) {
        deleteFeatureRequestComment(commentId: $id) {
          id
        }
      }
    `,
    variables: ({ params }) => ({ id: params.id }),
  }),
];
