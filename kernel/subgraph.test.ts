import 'reflect-metadata';
import assert from 'node:assert/strict';
import { Authorized, Query, Resolver } from 'type-graphql';
import { PUBLIC, alsoOn, authorize } from './auth/principal';
import { AppError } from './errors';
import { buildSubgraph } from './subgraph';

@Resolver()
class ForgetfulResolver {
  @Authorized('thing:read')
  @Query(() => String)
  guarded(): string {
    return 'ok';
  }

  @Query(() => String)
  forgotten(): string {
    return 'oops';
  }
}

@Resolver()
class CarefulResolver {
  @Authorized(PUBLIC)
  @Query(() => String, { description: 'Public on purpose.' })
  ping(): string {
    return 'pong';
  }
}

test('a subgraph with an operation that names no permission is refused at build time', async () => {
  await assert.rejects(
    buildSubgraph({ name: 'infra', surface: 'infra', resolvers: [ForgetfulResolver], instances: [new ForgetfulResolver()] }),
    /ForgetfulResolver\.forgotten must declare @Authorized/,
  );
});

test('PUBLIC is an explicit, accepted choice', async () => {
  const built = await buildSubgraph({ name: 'links', surface: 'links', resolvers: [CarefulResolver], instances: [new CarefulResolver()] });
  assert.match(built.sdl, /ping: String!/);
});

test('an operation may accept the keys of another named surface', () => {
  const cpKey = {
    kind: 'apiKey' as const,
    keyId: 'k',
    name: 'k',
    service: 'control-plane' as const,
    environment: 'live' as const,
    tier: 'free' as const,
    permissions: ['workflow:read'],
  };
  assert.throws(
    () => authorize(cpKey, 'engine', 'workflow:read'),
    (e) => e instanceof AppError && e.code === 'insufficient_permissions',
  );
  authorize(cpKey, ['engine', 'control-plane'], 'workflow:read');
  assert.equal(alsoOn('control-plane'), 'surface:control-plane');
});
