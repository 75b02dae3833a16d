import { Arg, Authorized, ID, Mutation, Query, Resolver } from 'type-graphql';
import {
  UpdateWorkflowVariableInput,
  type VariableService,
  type VariableView,
  WorkflowVariable,
  WorkflowVariableDeletion,
  WorkflowVariableInput,
} from '../variables';

export function toVariable(v: VariableView): WorkflowVariable {
  return { variableId: v.id, key: v.key, value: v.value, createdAt: v.createdAt, updatedAt: v.updatedAt };
}

/** Variables: read by whoever reads workflows, changed with `variable:write`. */
@Resolver(() => WorkflowVariable)
export class VariableResolver {
  constructor(private readonly variables: VariableService) {}

  @Authorized('workflow:read')
  @Query(() => [WorkflowVariable], { description: 'Every variable, by key.' })
  async workflowVariables(): Promise<WorkflowVariable[]> {
    return (await this.variables.list()).map(toVariable);
  }

  @Authorized('workflow:read')
  @Query(() => WorkflowVariable)
  async workflowVariable(@Arg('variableId', () => ID) variableId: string): Promise<WorkflowVariable> {
    return toVariable(await this.variables.get(variableId));
  }

  @Authorized('variable:write')
  @Mutation(() => WorkflowVariable, {
    description: 'validation_error for a bad key or value; resource_already_exists (409) when the key is taken. Executions started from now on see it.',
  })
  async createWorkflowVariable(@Arg('input', () => WorkflowVariableInput) input: WorkflowVariableInput): Promise<WorkflowVariable> {
    return toVariable(await this.variables.create(input));
  }

  @Authorized('variable:write')
  @Mutation(() => WorkflowVariable)
  async updateWorkflowVariable(
    @Arg('variableId', () => ID) variableId: string,
    @Arg('input', () => UpdateWorkflowVariableInput) input: UpdateWorkflowVariableInput,
  ): Promise<WorkflowVariable> {
    return toVariable(await this.variables.update(variableId, input));
  }

  @Authorized('variable:write')
  @Mutation(() => WorkflowVariableDeletion)
  deleteWorkflowVariable(@Arg('variableId', () => ID) variableId: string): Promise<WorkflowVariableDeletion> {
    return this.variables.delete(variableId);
  }
}
