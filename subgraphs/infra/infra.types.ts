import { Field, Float, ID, InputType, Int, ObjectType } from 'type-graphql';
import { GraphQLJSONObject } from 'graphql-scalars';

// ---- pagination ({page, limit, total, totalPages}) ------------------------------------------

@ObjectType({ description: 'Where a page sits in a list of the infrastructure service.' })
export class InfraPagination {
  @Field(() => Int) page: number;
  @Field(() => Int) limit: number;
  @Field(() => Int) total: number;
  @Field(() => Int) totalPages: number;
}

export function infraPage(total: number, page: number, limit: number): InfraPagination {
  return { page, limit, total, totalPages: Math.ceil(total / limit) };
}

// ---- auth and users ---------------------------------------------------------------------------

@ObjectType()
export class InfraOrganization {
  @Field(() => ID) id: string;
  @Field() name: string;
}

@ObjectType({ description: 'A person who manages infrastructure. Roles: admin, maintainer, developer.' })
export class InfraUser {
  @Field(() => ID) id: string;
  @Field() email: string;
  @Field() name: string;
  @Field(() => [String]) roles: string[];
  @Field(() => InfraOrganization) organization: InfraOrganization;
  @Field() createdAt: Date;
  @Field() updatedAt: Date;
  @Field(() => Date, { nullable: true }) lastLoginAt: Date | null;
}

@ObjectType()
export class InfraUserPage {
  @Field(() => [InfraUser]) data: InfraUser[];
  @Field(() => InfraPagination) pagination: InfraPagination;
}

@ObjectType({ description: 'A session token: send it as Authorization: Bearer.' })
export class InfraToken {
  @Field() token: string;
  @Field(() => Int, { description: 'Seconds the token is valid (3600).' }) expiresIn: number;
}

@ObjectType()
export class InfraDeletion {
  @Field() success: boolean;
  @Field() message: string;
}

@InputType()
export class CreateInfraUserInput {
  @Field() email: string;
  @Field() name: string;
  @Field({ description: '8 to 128 characters.' }) password: string;
  @Field(() => [String], { nullable: true, description: 'Default [developer].' }) roles?: string[];
}

@InputType()
export class UpdateInfraUserInput {
  @Field({ nullable: true }) name?: string;
  @Field(() => [String], { nullable: true, description: 'Admins only.' }) roles?: string[];
  @Field({ nullable: true, description: "Your own, or any user's as an admin; 8 to 128 characters." }) password?: string;
}

// ---- projects ---------------------------------------------------------------------------------

@ObjectType()
export class InfraPerson {
  @Field(() => ID) id: string;
  @Field() name: string;
  @Field() email: string;
}

@ObjectType()
export class InfraProjectMember {
  @Field(() => ID) id: string;
  @Field() name: string;
  @Field({ description: 'owner or contributor' }) role: string;
}

@ObjectType()
export class InfraRepository {
  @Field(() => String, { nullable: true }) url: string | null;
  @Field() branch: string;
}

@ObjectType()
export class InfraCi {
  @Field() enabled: boolean;
  @Field(() => String, { nullable: true }) provider: string | null;
}

@ObjectType({ description: 'A project: its members, repository and CI settings; services belong to one.' })
export class InfraProject {
  @Field(() => ID) id: string;
  @Field() name: string;
  @Field({ description: 'The Kubernetes namespace of its services.' }) slug: string;
  @Field() description: string;
  @Field({ description: 'active or archived' }) status: string;
  @Field({ description: 'private (members only), internal (every user) or public' }) visibility: string;
  @Field(() => InfraPerson, { nullable: true, description: 'Null when an API key created it.' }) owner: InfraPerson | null;
  @Field(() => Int) memberCount: number;
  @Field(() => [InfraProjectMember]) members: InfraProjectMember[];
  @Field(() => InfraRepository) repository: InfraRepository;
  @Field(() => InfraCi) ci: InfraCi;
  @Field() createdAt: Date;
  @Field() updatedAt: Date;
}

@ObjectType()
export class InfraProjectPage {
  @Field(() => [InfraProject]) data: InfraProject[];
  @Field(() => InfraPagination) pagination: InfraPagination;
}

@InputType()
export class RepositoryInput {
  @Field({ nullable: true }) url?: string;
  @Field({ nullable: true }) branch?: string;
}

@InputType()
export class CiInput {
  @Field({ nullable: true }) enabled?: boolean;
  @Field({ nullable: true }) provider?: string;
}

@InputType()
export class CreateInfraProjectInput {
  @Field() name: string;
  @Field({ nullable: true }) description?: string;
  @Field({ nullable: true }) visibility?: string;
  @Field(() => RepositoryInput, { nullable: true }) repository?: RepositoryInput;
  @Field(() => CiInput, { nullable: true }) ci?: CiInput;
}

@InputType()
export class UpdateInfraProjectInput {
  @Field({ nullable: true }) name?: string;
  @Field({ nullable: true }) description?: string;
  @Field({ nullable: true }) visibility?: string;
  @Field({ nullable: true }) status?: string;
  @Field(() => RepositoryInput, { nullable: true }) repository?: RepositoryInput;
  @Field(() => CiInput, { nullable: true }) ci?: CiInput;
}

// ---- services and deployments -----------------------------------------------------------------

@ObjectType()
export class InfraReplicas {
  @Field(() => Int) desired: number;
  @Field(() => Int) ready: number;
  @Field(() => Int) available: number;
}

@ObjectType()
export class InfraHealth {
  @Field({ description: 'healthy, degraded, unhealthy or unknown' }) status: string;
  @Field(() => Date, { nullable: true }) lastCheck: Date | null;
}

@ObjectType({ description: 'A deployable service of a project (a Kubernetes Deployment in the project namespace).' })
export class InfraService {
  @Field(() => ID) id: string;
  @Field(() => ID) projectId: string;
  @Field() name: string;
  @Field({ description: 'backend, frontend, worker, database or cache' }) type: string;
  @Field({ description: 'deploying, running, stopped or failed' }) status: string;
  @Field() image: string;
  @Field() strategy: string;
  @Field(() => InfraReplicas) replicas: InfraReplicas;
  @Field(() => [String]) endpoints: string[];
  @Field(() => InfraHealth) health: InfraHealth;
  @Field() createdAt: Date;
}

@ObjectType()
export class InfraServicePage {
  @Field(() => [InfraService]) data: InfraService[];
  @Field(() => InfraPagination) pagination: InfraPagination;
}

@InputType()
export class CreateInfraServiceInput {
  @Field(() => ID, { description: 'The project id.' }) project: string;
  @Field({ description: 'A DNS label: lowercase letters, digits and -, at most 63.' }) name: string;
  @Field({ nullable: true, description: 'Default backend.' }) type?: string;
  @Field() image: string;
  @Field(() => Int, { nullable: true, description: '0 to 100, default 1.' }) replicas?: number;
  @Field({ nullable: true, description: 'rolling-update (default) or recreate' }) strategy?: string;
}

@InputType()
export class DeployInput {
  @Field() image: string;
  @Field(() => Int, { nullable: true, description: "Default: the service's current count." }) replicas?: number;
  @Field({ nullable: true, description: 'rolling-update (default) or recreate' }) strategy?: string;
}

@ObjectType()
export class DeploymentProgress {
  @Field(() => Int) updated: number;
  @Field(() => Int) ready: number;
  @Field(() => Int) available: number;
  @Field(() => Int) desired: number;
}

@ObjectType({
  description:
    'One rollout of a service: a create, deploy or rollback. Statuses: in-progress, success, failed, superseded (a newer deploy or rollback replaced it while it ran).',
})
export class InfraDeployment {
  @Field(() => ID) deploymentId: string;
  @Field(() => ID) serviceId: string;
  @Field() kind: string;
  @Field() status: string;
  @Field() strategy: string;
  @Field(() => DeploymentProgress) progress: DeploymentProgress;
  @Field() targetImage: string;
  @Field(() => String, { nullable: true }) previousImage: string | null;
  @Field(() => String, { nullable: true, description: 'The workload revision (kubectl rollout history).' }) revision: string | null;
  @Field(() => String, { nullable: true, description: "kubectl rollout status's sentence." }) message: string | null;
  @Field() createdAt: Date;
  @Field(() => Date, { nullable: true }) finishedAt: Date | null;
  @Field(() => Int, { description: 'Raised by every change of the deployment: of two states, the higher version is the newer.' }) version: number;
}

@ObjectType()
export class InfraDeploymentPage {
  @Field(() => [InfraDeployment]) data: InfraDeployment[];
  @Field(() => InfraPagination) pagination: InfraPagination;
}

@ObjectType()
export class InfraLogLine {
  @Field() timestamp: string;
  @Field() level: string;
  @Field() message: string;
  @Field() pod: string;
}

@ObjectType()
export class InfraLogs {
  @Field(() => [InfraLogLine]) logs: InfraLogLine[];
}

// ---- cluster ----------------------------------------------------------------------------------

@ObjectType()
export class ClusterNodeCounts {
  @Field(() => Int) total: number;
  @Field(() => Int) ready: number;
  @Field(() => Int) notReady: number;
}

@ObjectType()
export class ClusterCompute {
  @Field() cpuAllocatable: string;
  @Field() memoryAllocatable: string;
  @Field() cpuUsed: string;
  @Field() memoryUsed: string;
}

@ObjectType()
export class ClusterStorage {
  @Field(() => Int) persistentVolumes: number;
  @Field(() => Int) persistentVolumeClaims: number;
  @Field() totalCapacity: string;
}

@ObjectType()
export class ClusterNetworking {
  @Field(() => Int) networkPolicies: number;
  @Field(() => Int) serviceCount: number;
  @Field(() => Int) ingressCount: number;
}

@ObjectType()
export class ClusterSecurity {
  @Field() podsecuritystandards: string;
  @Field() rbacEnabled: boolean;
  @Field() networkPoliciesEnabled: boolean;
  @Field() encryptionAtRest: boolean;
}

@ObjectType()
export class InfraCluster {
  @Field() name: string;
  @Field() version: string;
  @Field() status: string;
  @Field(() => ClusterNodeCounts) nodes: ClusterNodeCounts;
  @Field(() => ClusterCompute) compute: ClusterCompute;
  @Field(() => ClusterStorage) storage: ClusterStorage;
  @Field(() => ClusterNetworking) networking: ClusterNetworking;
  @Field(() => ClusterSecurity) security: ClusterSecurity;
  @Field() lastHealthCheck: Date;
}

@ObjectType()
export class NodeResources {
  @Field() cpu: string;
  @Field() memory: string;
}

@ObjectType()
export class InfraNode {
  @Field() name: string;
  @Field() status: string;
  @Field() type: string;
  @Field() instanceType: string;
  @Field() kubeletVersion: string;
  @Field() containerRuntimeVersion: string;
  @Field() osImage: string;
  @Field() kernelVersion: string;
  @Field(() => NodeResources) capacity: NodeResources;
  @Field(() => NodeResources) allocatable: NodeResources;
  @Field(() => Int) podCount: number;
  @Field() createdAt: Date;
}

@ObjectType()
export class InfraNodeList {
  @Field(() => [InfraNode]) data: InfraNode[];
}

@ObjectType()
export class UsageFigureType {
  @Field(() => Float) used: number;
  @Field(() => Float) allocatable: number;
  @Field(() => Float) utilizationPercent: number;
}

@ObjectType()
export class ClusterUsage {
  @Field(() => UsageFigureType, { description: 'cores' }) cpu: UsageFigureType;
  @Field(() => UsageFigureType, { description: 'bytes' }) memory: UsageFigureType;
  @Field(() => UsageFigureType, { description: 'bytes' }) disk: UsageFigureType;
}

@ObjectType()
export class NetworkUsage {
  @Field(() => Float) ingressBytesPerSecond: number;
  @Field(() => Float) egressBytesPerSecond: number;
  @Field(() => Int) connectionCount: number;
}

@ObjectType()
export class InfraMetrics {
  @Field() timestamp: Date;
  @Field(() => ClusterUsage) cluster: ClusterUsage;
  @Field(() => NetworkUsage) network: NetworkUsage;
}

// ---- webhooks and alerts ----------------------------------------------------------------------

@ObjectType({ description: 'A webhook registration; `secret` is returned only when it is created.' })
export class InfraWebhook {
  @Field(() => ID) id: string;
  @Field() url: string;
  @Field(() => [String]) events: string[];
  @Field() active: boolean;
  @Field(() => String, { nullable: true }) secret: string | null;
  @Field() createdAt: Date;
}

@InputType()
export class CreateInfraWebhookInput {
  @Field() url: string;
  @Field(() => [String], { description: 'deployment.created, deployment.completed, deployment.superseded, alert.triggered' }) events: string[];
  @Field({ nullable: true, description: 'Default true.' }) active?: boolean;
}

@ObjectType()
export class InfraWebhookAttempt {
  @Field(() => Int) attempt: number;
  @Field(() => Int, { nullable: true }) status: number | null;
  @Field(() => String, { nullable: true }) error: string | null;
  @Field(() => Float) durationMs: number;
  @Field() at: Date;
}

@ObjectType()
export class InfraWebhookDelivery {
  @Field(() => ID) id: string;
  @Field() event: string;
  @Field() state: string;
  @Field(() => [InfraWebhookAttempt]) attempts: InfraWebhookAttempt[];
  @Field() createdAt: Date;
  @Field(() => Date, { nullable: true }) deliveredAt: Date | null;
}

@ObjectType({ description: 'An alert raised by a documented rule; resolved when the condition clears.' })
export class InfraAlert {
  @Field(() => ID) id: string;
  @Field() rule: string;
  @Field() subject: string;
  @Field() severity: string;
  @Field() message: string;
  @Field(() => GraphQLJSONObject) data: Record<string, unknown>;
  @Field() createdAt: Date;
  @Field(() => Date, { nullable: true }) resolvedAt: Date | null;
}
