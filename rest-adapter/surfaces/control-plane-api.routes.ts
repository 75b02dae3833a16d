import { defineRoute } from '../route';

/** The control plane's alternate layout, `{control_plane_url}/api/v1` (snake_case bodies). */

const KEY_FIELDS = /* GraphQL */ `
  fragment KeyFields on ApiKey {
    id name service environment tier permissions keyPrefix status createdAt expiresAt lastUsedAt revokedAt
  }`;

const keyOut = (k: any) => ({
  id: k.id,
  name: k.name,
  permissions: k.permissions,
  service: k.service,
  environment: k.environment,
  tier: k.tier,
  key_prefix: k.keyPrefix,
  status: k.status,
  created_at: k.createdAt,
  expires_at: k.expiresAt,
  last_used_at: k.lastUsedAt,
  revoked_at: k.revokedAt,
});

export const apiKeyRoutes = [
  defineRoute({
    method: 'POST',
    path: '/auth/api-keys',
    operation: /* GraphQL */ `
      mutation CreateApiKey($input: CreateApiKeyInput!) { createApiKey(input: $input) { apiKey key { ...KeyFields } } }
      ${KEY_FIELDS}`,
    variables: ({ body }) => ({ input: body ?? {} }),
    status: 201,
    pick: ({ createApiKey: { apiKey, key } }) => {
      const { id, ...rest } = keyOut(key);
      return { api_key_id: id, api_key: apiKey, ...rest };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/auth/api-keys',
    operation: /* GraphQL */ `query ListApiKeys { apiKeys { ...KeyFields } } ${KEY_FIELDS}`,
    pick: ({ apiKeys }) => ({ api_keys: apiKeys.map(keyOut) }),
  }),
  defineRoute({
    method: 'GET',
    path: '/auth/api-keys/:key_id',
    operation: /* GraphQL */ `query GetApiKey($id: ID!) { apiKey(id: $id) { ...KeyFields } } ${KEY_FIELDS}`,
    variables: ({ params }) => ({ id: params.key_id }),
    pick: ({ apiKey }) => keyOut(apiKey),
  }),
  defineRoute({
    method: 'PATCH',
    path: '/auth/api-keys/:key_id',
    operation: /* GraphQL */ `
      mutation UpdateApiKey($id: ID!, $input: UpdateApiKeyInput!) { updateApiKey(id: $id, input: $input) { ...KeyFields } }
      ${KEY_FIELDS}`,
    variables: ({ params, body }) => ({ id: params.key_id, input: body ?? {} }),
    pick: ({ updateApiKey }) => keyOut(updateApiKey),
  }),
  defineRoute({
    method: 'DELETE',
    path: '/auth/api-keys/:key_id',
    operation: /* GraphQL */ `mutation RevokeApiKey($id: ID!) { revokeApiKey(id: $id) { ...KeyFields } } ${KEY_FIELDS}`,
    variables: ({ params }) => ({ id: params.key_id }),
    pick: ({ revokeApiKey }) => ({ ...keyOut(revokeApiKey), revoked: true }),
  }),
  defineRoute({
    method: 'GET',
    path: '/auth/api-keys/:key_id/usage',
    operation: /* GraphQL */ `
      query ApiKeyUsage($id: ID!) {
        apiKeyUsage(id: $id) { keyId requestsToday requestsThisMonth totalRequests lastUsedAt lastUsedIp }
      }`,
    variables: ({ params }) => ({ id: params.key_id }),
    pick: ({ apiKeyUsage: u }) => ({
      key_id: u.keyId,
      usage: {
        requests_today: u.requestsToday,
        requests_this_month: u.requestsThisMonth,
        total_requests: u.totalRequests,
        last_used_at: u.lastUsedAt,
        last_used_ip: u.lastUsedIp,
      },
    }),
  }),
];
