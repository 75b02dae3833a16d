/** API keys' GraphQL face: the keys themselves, their rules and rate limits are the kernel's (kernel/auth). */

// Its GraphQL classes' decorators need the polyfill, also where no server has loaded it (unit tests).
import 'reflect-metadata';

export { ApiKeyResolver, toApiKey } from './api-key.resolver';
