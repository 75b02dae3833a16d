/** The six stages and their entry and exit gates: the criteria, their validation and its GraphQL face. */

// Its GraphQL classes' decorators need the polyfill, also where no server has loaded it (unit tests).
import 'reflect-metadata';
import './codes';

export { STAGES, gateCriteria, hasValue, isStage, stageIndex, validateGate, type GateValidationResult, type StageName } from './gate.catalog';
export { GateResolver } from './gate.resolver';
// The GraphQL object of a validation; the plain name is the catalogue's result above.
export { GateValidationResult as GateValidationResultType } from './gate.types';
