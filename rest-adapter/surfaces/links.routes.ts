import { defineRoute, intParam } from '../route';
import { CreateLinkDocument, DeleteLinkDocument, LinkBySlugDocument, LinkDocument, LinksDocument, LinkVisitsDocument, UpdateLinkDocument } from './generated';

/**
 * The link service, `{base_url}/api/links` on the `/links` surface, snake_case.
 * `POST /api/links/{id}/verify` and the public short link `GET /links/{slug}` are served by the
 * link service itself (subgraphs/links/index.ts): they set the unlock cookie. Operations: links.graphql.
 */

export const linkRoutes = [
  defineRoute({
    method: 'POST',
    path: '/api/links',
    operation: CreateLinkDocument,
    refusals: [{ code: 'resource_already_exists', when: 'the custom slug is taken' }],
    variables: ({ body }) => ({ input: body ?? {} }),
    status: 201,
    snakeCase: true,
  }),
  defineRoute({
    method: 'GET',
    path: '/api/links',
    operation: LinksDocument,
    variables: ({ query }) => ({ limit: intParam(query.limit) ?? 20, offset: intParam(query.offset) ?? 0 }),
    snakeCase: true,
  }),
  defineRoute({
    method: 'GET',
    path: '/api/links/slug/:slug',
    operation: LinkBySlugDocument,
    variables: ({ params }) => ({ slug: params.slug }),
    snakeCase: true,
  }),
  defineRoute({
    method: 'GET',
    path: '/api/links/:id',
    operation: LinkDocument,
    variables: ({ params }) => ({ id: params.id }),
    snakeCase: true,
  }),
  defineRoute({
    method: 'PATCH',
    path: '/api/links/:id',
    operation: UpdateLinkDocument,
    variables: ({ params, body }) => ({ id: params.id, input: body ?? {} }),
    snakeCase: true,
  }),
  defineRoute({
    method: 'DELETE',
    path: '/api/links/:id',
    operation: DeleteLinkDocument,
    variables: ({ params }) => ({ id: params.id }),
    snakeCase: true,
  }),
  defineRoute({
    method: 'GET',
    path: '/api/links/:id/visits',
    operation: LinkVisitsDocument,
    variables: ({ params, query }) => ({ id: params.id, limit: intParam(query.limit) ?? 50, offset: intParam(query.offset) ?? 0 }),
    snakeCase: true,
  }),
];
