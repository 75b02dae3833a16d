/** n8n credentials: stored encrypted, never shown back, resolved when a workflow is saved, used by the nodes at run time. */

// Its GraphQL classes' decorators need the polyfill, also where no server has loaded it (unit tests).
import 'reflect-metadata';

export { CREDENTIAL_KINDS, CREDENTIAL_TYPES } from './kinds';
export { CredentialKeyRing, keyIdOf } from './keys';
export { CREDENTIAL_CODES, CredentialService, type CredentialView } from './service';
export {
  CreateCredentialInput,
  Credential,
  CredentialAuthorization,
  CredentialConsentInput,
  CredentialDeletion,
  CredentialListArgs,
  CredentialPage,
} from './types';
