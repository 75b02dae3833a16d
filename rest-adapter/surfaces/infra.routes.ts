import { bodyField, defineRoute, intParam, strParam } from '../route';

/**
 * The infrastructure service, `{base_url}/api/v1` on the `/infra` surface (spec 3, section C):
 * camelCase, the resource itself or `{data, pagination}`. `GET /services/:id/logs` (also
 * followed, as a stream) is served by the service itself (subgraphs/infra/index.ts).
 */

const USER = `id email name roles organization { id name } createdAt updatedAt lastLoginAt`;
const PAGE = `pagination { page limit total totalPages }`;
const PROJECT_HEAD = `id name slug description status visibility owner { id name email }`;
const PROJECT_TAIL = `repository { url branch } ci { enabled provider } createdAt updatedAt`;
const PROJECT = `${PROJECT_HEAD} members { id name role } ${PROJECT_TAIL}`;
/** Lists show a project's member count under `members` (last); the project itself its members. */
const LISTED_PROJECT = `${PROJECT_HEAD} ${PROJECT_TAIL} members: memberCount`;
const SERVICE = `id projectId name type status image strategy replicas { desired ready available } endpoints health { status lastCheck } createdAt`;
const DEPLOYMENT = `deploymentId serviceId kind status strategy progress { updated ready available desired } targetImage previousImage revision message createdAt finishedAt`;
const WEBHOOK = `id url events active secret createdAt`;
const paging = (query: Record<string, unknown>) => ({ page: intParam(query.page) ?? 1, limit: intParam(query.limit) ?? 20 });

export const infraRoutes = [
  // ---- sessions
  defineRoute({
    method: 'POST',
    path: '/auth/login',
    operation: /* GraphQL */ `
      mutation InfraLogin($email: String!, $password: String!) {
        infraLogin(email: $email, password: $password) {
          token
          expiresIn
        }
      }
    `,
    variables: ({ body }) => ({ email: bodyField(body, 'email'), password: bodyField(body, 'password') }),
  }),
  defineRoute({
    method: 'POST',
    path: '/auth/refresh',
    operation: /* GraphQL */ `
      mutation InfraRefreshToken {
        infraRefreshToken {
          token
          expiresIn
        }
      }
    `,
  }),
  // ---- users
  defineRoute({
    method: 'GET',
    path: '/users',
    operation: /* GraphQL */ `query InfraUsers($page: Int, $limit: Int, $role: String) { infraUsers(page: $page, limit: $limit, role: $role) { data { ${USER} } ${PAGE} } }`,
    variables: ({ query }) => ({ ...paging(query), role: strParam(query.role) }),
  }),
  defineRoute({
    method: 'GET',
    path: '/users/me',
    operation: /* GraphQL */ `query InfraMe { infraMe { ${USER} } }`,
  }),
  defineRoute({
    method: 'GET',
    path: '/users/:id',
    operation: /* GraphQL */ `query InfraUser($id: ID!) { infraUser(id: $id) { ${USER} } }`,
    variables: ({ params }) => ({ id: params.id }),
  }),
  defineRoute({
    method: 'POST',
    path: '/users',
    operation: /* GraphQL */ `mutation CreateInfraUser($input: CreateInfraUserInput!) { createInfraUser(input: $input) { ${USER} } }`,
    variables: ({ body }) => ({ input: body ?? {} }),
    status: 201,
  }),
  defineRoute({
    method: 'PATCH',
    path: '/users/:id',
    operation: /* GraphQL */ `mutation UpdateInfraUser($id: ID!, $input: UpdateInfraUserInput!) { updateInfraUser(id: $id, input: $input) { ${USER} } }`,
    variables: ({ params, body }) => ({ id: params.id, input: body ?? {} }),
  }),
  defineRoute({
    method: 'DELETE',
    path: '/users/:id',
    operation: /* GraphQL */ `
      mutation DeleteInfraUser($id: ID!) {
        deleteInfraUser(id: $id) {
          success
          message
        }
      }
    `,
    variables: ({ params }) => ({ id: params.id }),
  }),
  // ---- projects
  defineRoute({
    method: 'GET',
    path: '/projects',
    operation: /* GraphQL */ `query InfraProjects($page: Int, $limit: Int, $status: String) { infraProjects(page: $page, limit: $limit, status: $status) { data { ${LISTED_PROJECT} } ${PAGE} } }`,
    variables: ({ query }) => ({ ...paging(query), status: strParam(query.status) }),
  }),
  defineRoute({
    method: 'GET',
    path: '/projects/:id',
    operation: /* GraphQL */ `query InfraProject($id: ID!) { infraProject(id: $id) { ${PROJECT} } }`,
    variables: ({ params }) => ({ id: params.id }),
  }),
  defineRoute({
    method: 'POST',
    path: '/projects',
    operation: /* GraphQL */ `mutation CreateInfraProject($input: CreateInfraProjectInput!) { createInfraProject(input: $input) { ${PROJECT} } }`,
    variables: ({ body }) => ({ input: body ?? {} }),
    status: 201,
  }),
  defineRoute({
    method: 'PATCH',
    path: '/projects/:id',
    operation: /* GraphQL */ `mutation UpdateInfraProject($id: ID!, $input: UpdateInfraProjectInput!) { updateInfraProject(id: $id, input: $input) { ${PROJECT} } }`,
    variables: ({ params, body }) => ({ id: params.id, input: body ?? {} }),
  }),
  defineRoute({
    method: 'DELETE',
    path: '/projects/:id',
    operation: /* GraphQL */ `
      mutation DeleteInfraProject($id: ID!) {
        deleteInfraProject(id: $id) {
          success
          message
        }
      }
    `,
    variables: ({ params }) => ({ id: params.id }),
  }),
  defineRoute({
    method: 'POST',
    path: '/projects/:id/members',
    operation: /* GraphQL */ `mutation AddInfraProjectMember($id: ID!, $userId: ID!, $role: String) { addInfraProjectMember(id: $id, userId: $userId, role: $role) { ${PROJECT} } }`,
    variables: ({ params, body }) => ({ id: params.id, userId: bodyField(body, 'userId'), role: bodyField(body, 'role') }),
    status: 201,
  }),
  defineRoute({
    method: 'DELETE',
    path: '/projects/:id/members/:userId',
    operation: /* GraphQL */ `mutation RemoveInfraProjectMember($id: ID!, $userId: ID!) { removeInfraProjectMember(id: $id, userId: $userId) { ${PROJECT} } }`,
    variables: ({ params }) => ({ id: params.id, userId: params.userId }),
  }),
  // ---- services and deployments
  defineRoute({
    method: 'GET',
    path: '/services',
    operation: /* GraphQL */ `query InfraServices($project: ID, $status: String, $page: Int, $limit: Int) { infraServices(project: $project, status: $status, page: $page, limit: $limit) { data { ${SERVICE} } ${PAGE} } }`,
    variables: ({ query }) => ({ project: strParam(query.project), status: strParam(query.status), ...paging(query) }),
  }),
  defineRoute({
    method: 'POST',
    path: '/services',
    operation: /* GraphQL */ `mutation CreateInfraService($input: CreateInfraServiceInput!) { createInfraService(input: $input) { ${SERVICE} } }`,
    variables: ({ body }) => ({ input: body ?? {} }),
    status: 201,
  }),
  defineRoute({
    method: 'GET',
    path: '/services/:id',
    operation: /* GraphQL */ `query InfraService($id: ID!) { infraService(id: $id) { ${SERVICE} } }`,
    variables: ({ params }) => ({ id: params.id }),
  }),
  defineRoute({
    method: 'DELETE',
    path: '/services/:id',
    operation: /* GraphQL */ `
      mutation DeleteInfraService($id: ID!) {
        deleteInfraService(id: $id) {
          success
          message
        }
      }
    `,
    variables: ({ params }) => ({ id: params.id }),
  }),
  defineRoute({
    method: 'POST',
    path: '/services/:id/deploy',
    operation: /* GraphQL */ `mutation DeployInfraService($id: ID!, $input: DeployInput!) { deployInfraService(id: $id, input: $input) { ${DEPLOYMENT} } }`,
    variables: ({ params, body }) => ({ id: params.id, input: body ?? {} }),
    status: 202,
  }),
  defineRoute({
    method: 'POST',
    path: '/services/:id/rollback',
    operation: /* GraphQL */ `mutation RollbackInfraService($id: ID!, $revision: String) { rollbackInfraService(id: $id, revision: $revision) { ${DEPLOYMENT} } }`,
    variables: ({ params, body }) => {
      const revision = bodyField(body, 'revision');
      return { id: params.id, revision: revision === undefined || revision === null ? undefined : String(revision) };
    },
    status: 202,
  }),
  defineRoute({
    method: 'GET',
    path: '/services/:id/deployments',
    operation: /* GraphQL */ `query InfraDeployments($serviceId: ID!, $page: Int, $limit: Int) { infraDeployments(serviceId: $serviceId, page: $page, limit: $limit) { data { ${DEPLOYMENT} } ${PAGE} } }`,
    variables: ({ params, query }) => ({ serviceId: params.id, ...paging(query) }),
  }),
  defineRoute({
    method: 'GET',
    path: '/deployments/:id',
    operation: /* GraphQL */ `query InfraDeployment($id: ID!) { infraDeployment(deploymentId: $id) { ${DEPLOYMENT} } }`,
    variables: ({ params }) => ({ id: params.id }),
  }),
  // ---- cluster
  defineRoute({
    method: 'GET',
    path: '/infrastructure/cluster',
    operation: /* GraphQL */ `
      query InfraCluster {
        infraCluster {
          name
          version
          status
          nodes {
            total
            ready
            notReady
          }
          compute {
            cpuAllocatable
            memoryAllocatable
            cpuUsed
            memoryUsed
          }
          storage {
            persistentVolumes
            persistentVolumeClaims
            totalCapacity
          }
          networking {
            networkPolicies
            serviceCount
            ingressCount
          }
          security {
            podsecuritystandards
            rbacEnabled
            networkPoliciesEnabled
            encryptionAtRest
          }
          lastHealthCheck
        }
      }
    `,
  }),
  defineRoute({
    method: 'GET',
    path: '/infrastructure/nodes',
    operation: /* GraphQL */ `
      query InfraNodes {
        infraNodes {
          data {
            name
            status
            type
            instanceType
            kubeletVersion
            containerRuntimeVersion
            osImage
            kernelVersion
            capacity {
              cpu
              memory
            }
            allocatable {
              cpu
              memory
            }
            podCount
            createdAt
          }
        }
      }
    `,
  }),
  defineRoute({
    method: 'GET',
    path: '/infrastructure/metrics',
    operation: /* GraphQL */ `
      query InfraMetrics {
        infraMetrics {
          timestamp
          cluster {
            cpu {
              used
              allocatable
              utilizationPercent
            }
            memory {
              used
              allocatable
              utilizationPercent
            }
            disk {
              used
              allocatable
              utilizationPercent
            }
          }
          network {
            ingressBytesPerSecond
            egressBytesPerSecond
            connectionCount
          }
        }
      }
    `,
  }),
  defineRoute({
    method: 'GET',
    path: '/infrastructure/alerts',
    operation: /* GraphQL */ `
      query InfraAlerts($open: Boolean) {
        infraAlerts(open: $open) {
          id
          rule
          subject
          severity
          message
          data
          createdAt
          resolvedAt
        }
      }
    `,
    variables: ({ query }) => ({ open: query.open === 'true' }),
    pick: ({ infraAlerts }) => ({ data: infraAlerts }),
  }),
  // ---- webhooks
  defineRoute({
    method: 'POST',
    path: '/webhooks',
    operation: /* GraphQL */ `mutation CreateInfraWebhook($input: CreateInfraWebhookInput!) { createInfraWebhook(input: $input) { ${WEBHOOK} } }`,
    variables: ({ body }) => ({ input: body ?? {} }),
    status: 201,
  }),
  defineRoute({
    method: 'GET',
    path: '/webhooks',
    operation: /* GraphQL */ `
      query InfraWebhooks {
        infraWebhooks {
          id
          url
          events
          active
          createdAt
        }
      }
    `,
    pick: ({ infraWebhooks }) => ({ data: infraWebhooks }),
  }),
  defineRoute({
    method: 'DELETE',
    path: '/webhooks/:id',
    operation: /* GraphQL */ `
      mutation DeleteInfraWebhook($id: ID!) {
        deleteInfraWebhook(id: $id) {
          success
          message
        }
      }
    `,
    variables: ({ params }) => ({ id: params.id }),
  }),
  defineRoute({
    method: 'GET',
    path: '/webhooks/:id/deliveries',
    operation: /* GraphQL */ `
      query InfraWebhookDeliveries($id: ID!) {
        infraWebhookDeliveries(id: $id) {
          id
          event
          state
          attempts {
            attempt
            status
            error
            durationMs
            at
          }
          createdAt
          deliveredAt
        }
      }
    `,
    variables: ({ params }) => ({ id: params.id }),
    pick: ({ infraWebhookDeliveries }) => ({ data: infraWebhookDeliveries }),
  }),
];
