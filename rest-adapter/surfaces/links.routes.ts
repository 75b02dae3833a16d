import { defineRoute, intParam } from '../route';

/**
 * The link service, `{base_url}/api/links` on the `/links` surface (spec 3, section A), snake_case.
 * `POST /api/links/{id}/verify` and the public short link `GET /links/{slug}` are served by the
 * link service itself (subgraphs/links/index.ts): they set the unlock cookie.
 */

const LINK = `id slug url userId isActive expiresAt protectionType protectionHint contentClassification visits createdAt updatedAt`;

export const linkRoutes = [
  defineRoute({
    method: 'POST',
    path: '/api/links',
    operation: /* GraphQL */ `mutation CreateLink($input: CreateLinkInput!) { createLink(input: $input) { ${LINK} } }`,
    variables: ({ body }) => ({ input: body ?? {} }),
    status: 201,
    snakeCase: true,
  }),
  defineRoute({
    method: 'GET',
    path: '/api/links',
    operation: /* GraphQL */ `
      query Links($limit: Int, $offset: Int) { links(limit: $limit, offset: $offset) { links { ${LINK} } pagination { total limit offset hasMore } } }`,
    variables: ({ query }) => ({ limit: intParam(query.limit) ?? 20, offset: intParam(query.offset) ?? 0 }),
    snakeCase: true,
  }),
  defineRoute({
    method: 'GET',
    path: '/api/links/slug/:slug',
    operation: /* GraphQL */ `
      query LinkBySlug($slug: String!) {
        linkBySlug(slug: $slug) {
          id
          slug
          destination
          userId
          isActive
          expiresAt
          protectionType
          protectionHint
          contentClassification
        }
      }
    `,
    variables: ({ params }) => ({ slug: params.slug }),
    snakeCase: true,
  }),
  defineRoute({
    method: 'GET',
    path: '/api/links/:id',
    operation: /* GraphQL */ `query Link($id: ID!) { link(id: $id) { ${LINK} } }`,
    variables: ({ params }) => ({ id: params.id }),
    snakeCase: true,
  }),
  defineRoute({
    method: 'PATCH',
    path: '/api/links/:id',
    operation: /* GraphQL */ `mutation UpdateLink($id: ID!, $input: UpdateLinkInput!) { updateLink(id: $id, input: $input) { ${LINK} } }`,
    variables: ({ params, body }) => ({ id: params.id, input: body ?? {} }),
    snakeCase: true,
  }),
  defineRoute({
    method: 'DELETE',
    path: '/api/links/:id',
    operation: /* GraphQL */ `
      mutation DeleteLink($id: ID!) {
        deleteLink(id: $id) {
          id
          deletedAt
        }
      }
    `,
    variables: ({ params }) => ({ id: params.id }),
    snakeCase: true,
  }),
  defineRoute({
    method: 'GET',
    path: '/api/links/:id/visits',
    operation: /* GraphQL */ `
      query LinkVisits($id: ID!, $limit: Int, $offset: Int) {
        linkVisits(id: $id, limit: $limit, offset: $offset) {
          linkId
          visits {
            at
            referrer
            userAgent
            country
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
    variables: ({ params, query }) => ({ id: params.id, limit: intParam(query.limit) ?? 50, offset: intParam(query.offset) ?? 0 }),
    snakeCase: true,
  }),
];
