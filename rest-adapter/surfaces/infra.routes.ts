import { bodyField, defineRoute, intParam, strParam } from '../route';
import {
  AddInfraProjectMemberDocument,
  CreateInfraProjectDocument,
  CreateInfraServiceDocument,
  CreateInfraUserDocument,
  CreateInfraWebhookDocument,
  DeleteInfraProjectDocument,
  DeleteInfraServiceDocument,
  DeleteInfraUserDocument,
  DeleteInfraWebhookDocument,
  DeployInfraServiceDocument,
  InfraAlertsDocument,
  InfraClusterDocument,
  InfraDeploymentDocument,
  InfraDeploymentsDocument,
  InfraLoginDocument,
  InfraMeDocument,
  InfraMetricsDocument,
  InfraNodesDocument,
  InfraProjectDocument,
  InfraProjectsDocument,
  InfraRefreshTokenDocument,
  InfraServiceDocument,
  InfraServicesDocument,
  InfraUserDocument,
  InfraUsersDocument,
  InfraWebhookDeliveriesDocument,
  InfraWebhooksDocument,
  RemoveInfraProjectMemberDocument,
  RollbackInfraServiceDocument,
  UpdateInfraProjectDocument,
  UpdateInfraUserDocument,
} from './generated';

/**
 * The infrastructure service, `{base_url}/api/v1` on the `/infra` surface:
 * camelCase, the resource itself or `{data, pagination}`. `GET /services/:id/logs` (also
 * followed, as a stream) is served by the service itself (subgraphs/infra/index.ts). Operations:
 * infra.graphql.
 */

const paging = (query: Record<string, unknown>) => ({ page: intParam(query.page) ?? 1, limit: intParam(query.limit) ?? 20 });

export const infraRoutes = [
  // ---- sessions
  defineRoute({
    method: 'POST',
    path: '/auth/login',
    operation: InfraLoginDocument,
    variables: ({ body }) => ({ email: bodyField(body, 'email'), password: bodyField(body, 'password') }),
  }),
  defineRoute({
    method: 'POST',
    path: '/auth/refresh',
    operation: InfraRefreshTokenDocument,
  }),
  // ---- users
  defineRoute({
    method: 'GET',
    path: '/users',
    operation: InfraUsersDocument,
    variables: ({ query }) => ({ ...paging(query), role: strParam(query.role) }),
  }),
  defineRoute({
    method: 'GET',
    path: '/users/me',
    operation: InfraMeDocument,
  }),
  defineRoute({
    method: 'GET',
    path: '/users/:id',
    operation: InfraUserDocument,
    variables: ({ params }) => ({ id: params.id }),
  }),
  defineRoute({
    method: 'POST',
    path: '/users',
    operation: CreateInfraUserDocument,
    refusals: [{ code: 'conflict', when: 'a user with this e-mail already exists' }],
    variables: ({ body }) => ({ input: body ?? {} }),
    status: 201,
  }),
  defineRoute({
    method: 'PATCH',
    path: '/users/:id',
    operation: UpdateInfraUserDocument,
    refusals: [{ code: 'conflict', when: 'taking the admin role away would leave the organisation without an admin' }],
    variables: ({ params, body }) => ({ id: params.id, input: body ?? {} }),
  }),
  defineRoute({
    method: 'DELETE',
    path: '/users/:id',
    operation: DeleteInfraUserDocument,
    refusals: [{ code: 'conflict', when: 'the caller would delete themselves, the user still owns projects, or is the last admin' }],
    variables: ({ params }) => ({ id: params.id }),
  }),
  // ---- projects
  defineRoute({
    method: 'GET',
    path: '/projects',
    operation: InfraProjectsDocument,
    variables: ({ query }) => ({ ...paging(query), status: strParam(query.status) }),
  }),
  defineRoute({
    method: 'GET',
    path: '/projects/:id',
    operation: InfraProjectDocument,
    variables: ({ params }) => ({ id: params.id }),
  }),
  defineRoute({
    method: 'POST',
    path: '/projects',
    operation: CreateInfraProjectDocument,
    refusals: [{ code: 'conflict', when: 'a project with this name (or its slug) already exists' }],
    variables: ({ body }) => ({ input: body ?? {} }),
    status: 201,
  }),
  defineRoute({
    method: 'PATCH',
    path: '/projects/:id',
    operation: UpdateInfraProjectDocument,
    variables: ({ params, body }) => ({ id: params.id, input: body ?? {} }),
  }),
  defineRoute({
    method: 'DELETE',
    path: '/projects/:id',
    operation: DeleteInfraProjectDocument,
    refusals: [{ code: 'conflict', when: 'the project still has services' }],
    variables: ({ params }) => ({ id: params.id }),
  }),
  defineRoute({
    method: 'POST',
    path: '/projects/:id/members',
    operation: AddInfraProjectMemberDocument,
    variables: ({ params, body }) => ({ id: params.id, userId: bodyField(body, 'userId'), role: bodyField(body, 'role') }),
    status: 201,
  }),
  defineRoute({
    method: 'DELETE',
    path: '/projects/:id/members/:userId',
    operation: RemoveInfraProjectMemberDocument,
    refusals: [{ code: 'conflict', when: "the member is the project's last owner" }],
    variables: ({ params }) => ({ id: params.id, userId: params.userId }),
  }),
  // ---- services and deployments
  defineRoute({
    method: 'GET',
    path: '/services',
    operation: InfraServicesDocument,
    variables: ({ query }) => ({ project: strParam(query.project), status: strParam(query.status), ...paging(query) }),
  }),
  defineRoute({
    method: 'POST',
    path: '/services',
    operation: CreateInfraServiceDocument,
    refusals: [{ code: 'conflict', when: 'the project already has a service of this name' }],
    variables: ({ body }) => ({ input: body ?? {} }),
    status: 201,
  }),
  defineRoute({
    method: 'GET',
    path: '/services/:id',
    operation: InfraServiceDocument,
    variables: ({ params }) => ({ id: params.id }),
  }),
  defineRoute({
    method: 'DELETE',
    path: '/services/:id',
    operation: DeleteInfraServiceDocument,
    variables: ({ params }) => ({ id: params.id }),
  }),
  defineRoute({
    method: 'POST',
    path: '/services/:id/deploy',
    operation: DeployInfraServiceDocument,
    // A rollout in progress does not refuse a deploy: the deploy supersedes it.
    variables: ({ params, body }) => ({ id: params.id, input: body ?? {} }),
    status: 202,
  }),
  defineRoute({
    method: 'POST',
    path: '/services/:id/rollback',
    operation: RollbackInfraServiceDocument,
    refusals: [{ code: 'conflict', when: 'the revision asked is already the current one' }],
    variables: ({ params, body }) => {
      const revision = bodyField(body, 'revision');
      return { id: params.id, revision: revision === undefined || revision === null ? undefined : String(revision) };
    },
    status: 202,
  }),
  defineRoute({
    method: 'GET',
    path: '/services/:id/deployments',
    operation: InfraDeploymentsDocument,
    variables: ({ params, query }) => ({ serviceId: params.id, ...paging(query) }),
  }),
  defineRoute({
    method: 'GET',
    path: '/deployments/:id',
    operation: InfraDeploymentDocument,
    variables: ({ params }) => ({ id: params.id }),
  }),
  // ---- cluster
  defineRoute({
    method: 'GET',
    path: '/infrastructure/cluster',
    operation: InfraClusterDocument,
  }),
  defineRoute({
    method: 'GET',
    path: '/infrastructure/nodes',
    operation: InfraNodesDocument,
  }),
  defineRoute({
    method: 'GET',
    path: '/infrastructure/metrics',
    operation: InfraMetricsDocument,
  }),
  defineRoute({
    method: 'GET',
    path: '/infrastructure/alerts',
    operation: InfraAlertsDocument,
    variables: ({ query }) => ({ open: query.open === 'true' }),
    pick: ({ infraAlerts }) => ({ data: infraAlerts }),
  }),
  // ---- webhooks
  defineRoute({
    method: 'POST',
    path: '/webhooks',
    operation: CreateInfraWebhookDocument,
    variables: ({ body }) => ({ input: body ?? {} }),
    status: 201,
  }),
  defineRoute({
    method: 'GET',
    path: '/webhooks',
    operation: InfraWebhooksDocument,
    pick: ({ infraWebhooks }) => ({ data: infraWebhooks }),
  }),
  defineRoute({
    method: 'DELETE',
    path: '/webhooks/:id',
    operation: DeleteInfraWebhookDocument,
    variables: ({ params }) => ({ id: params.id }),
  }),
  defineRoute({
    method: 'GET',
    path: '/webhooks/:id/deliveries',
    operation: InfraWebhookDeliveriesDocument,
    variables: ({ params }) => ({ id: params.id }),
    pick: ({ infraWebhookDeliveries }) => ({ data: infraWebhookDeliveries }),
  }),
];
