import { Arg, Authorized, Query, Resolver } from 'type-graphql';
import { STAGES, gateCriteria, validateGate, type GateType } from './gate.catalog';
import { GateStageCatalog, GateValidationResult, ValidateGateInput } from './gate.types';

@Resolver()
export class GateResolver {
  @Authorized('orchestration:read')
  @Query(() => GateValidationResult, {
    description: 'Validates the entry or exit gate of a stage against a map of outputs (the gate catalogue is in the README).',
  })
  validateGate(@Arg('input') input: ValidateGateInput): GateValidationResult {
    return validateGate(input.stage, input.gateType as GateType, input.outputs);
  }

  @Authorized('orchestration:read')
  @Query(() => [GateStageCatalog], { description: 'The gate catalogue: the entry and exit criteria of each of the six stages, in delivery order.' })
  gateCatalog(): GateStageCatalog[] {
    const list = (stage: (typeof STAGES)[number], type: GateType) => gateCriteria(stage, type).map((k) => ({ ...k, evidence: [...k.evidence] }));
    return STAGES.map((stage) => ({ stage, entry: list(stage, 'entry'), exit: list(stage, 'exit') }));
  }
}
