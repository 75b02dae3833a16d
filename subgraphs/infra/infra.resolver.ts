import { Arg, Authorized, Ctx, ID, Int, Mutation, Query, Resolver, Root, Subscription } from 'type-graphql';
import { FirstStateLimit } from '../../kernel/graphql-types';
import { PUBLIC } from '../../kernel/auth/principal';
import type { RequestContext } from '../../kernel/subgraph';
import type { AccountService } from './account.service';
import type { ClusterService } from './cluster.service';
import type { DeployService } from './deploy.service';
import {
  CreateInfraProjectInput,
  CreateInfraServiceInput,
  CreateInfraUserInput,
  CreateInfraWebhookInput,
  DeployInput,
  InfraAlert,
  InfraCluster,
  InfraDeletion,
  InfraDeployment,
  InfraDeploymentPage,
  InfraLogs,
  InfraMetrics,
  InfraNodeList,
  InfraProject,
  InfraProjectPage,
  InfraService,
  InfraServicePage,
  InfraToken,
  InfraUser,
  InfraUserPage,
  InfraWebhook,
  InfraWebhookDelivery,
  UpdateInfraProjectInput,
  UpdateInfraUserInput,
} from './infra.types';
import type { NotifyService } from './notify.service';
import type { ProjectService } from './project.service';
import { TOPIC } from '../../kernel/topics';

export interface InfraServices {
  accounts: AccountService;
  projects: ProjectService;
  deploys: DeployService;
  cluster: ClusterService;
  notify: NotifyService;
}

/** The infrastructure service's operations; permissions per access.ts (the services check them again). */
@Resolver()
export class InfraResolver {
  constructor(private readonly s: InfraServices) {}

  // ---- sessions -----------------------------------------------------------------------------

  /** PUBLIC: signing in is how a person gets a credential. */
  @Authorized(PUBLIC)
  @Mutation(() => InfraToken, { description: 'POST /auth/login: a token valid expiresIn (3600) seconds. Locked for 15 minutes after 5 failures in a row.' })
  infraLogin(@Arg('email') email: string, @Arg('password') password: string): Promise<InfraToken> {
    return this.s.accounts.login(email, password);
  }

  @Authorized()
  @Mutation(() => InfraToken, { description: 'POST /auth/refresh: a new token for the bearer of a valid one.' })
  infraRefreshToken(@Ctx() ctx: RequestContext): Promise<InfraToken> {
    return this.s.accounts.refresh(ctx.principal);
  }

  // ---- users --------------------------------------------------------------------------------

  @Authorized()
  @Query(() => InfraUser, { description: 'The signed-in user.' })
  infraMe(@Ctx() ctx: RequestContext): Promise<InfraUser> {
    return this.s.accounts.me(ctx.principal);
  }

  @Authorized('user:read')
  @Query(() => InfraUserPage)
  infraUsers(
    @Arg('page', () => Int, { defaultValue: 1 }) page: number,
    @Arg('limit', () => Int, { defaultValue: 20 }) limit: number,
    @Arg('role', () => String, { nullable: true }) role: string | null,
    @Ctx() ctx: RequestContext,
  ): Promise<InfraUserPage> {
    return this.s.accounts.list(ctx.principal, page, limit, role);
  }

  @Authorized()
  @Query(() => InfraUser, { description: 'Yourself, or anyone with user:read.' })
  infraUser(@Arg('id', () => ID) id: string, @Ctx() ctx: RequestContext): Promise<InfraUser> {
    return this.s.accounts.get(ctx.principal, id);
  }

  @Authorized('user:write')
  @Mutation(() => InfraUser)
  createInfraUser(@Arg('input', () => CreateInfraUserInput, { validate: false }) input: CreateInfraUserInput, @Ctx() ctx: RequestContext): Promise<InfraUser> {
    return this.s.accounts.create(ctx.principal, input);
  }

  @Authorized()
  @Mutation(() => InfraUser, { description: 'Your own name and password, or anything with user:write.' })
  updateInfraUser(
    @Arg('id', () => ID) id: string,
    @Arg('input', () => UpdateInfraUserInput, { validate: false }) input: UpdateInfraUserInput,
    @Ctx() ctx: RequestContext,
  ): Promise<InfraUser> {
    return this.s.accounts.update(ctx.principal, id, input);
  }

  @Authorized('user:write')
  @Mutation(() => InfraDeletion)
  deleteInfraUser(@Arg('id', () => ID) id: string, @Ctx() ctx: RequestContext): Promise<InfraDeletion> {
    return this.s.accounts.remove(ctx.principal, id);
  }

  // ---- projects -----------------------------------------------------------------------------

  @Authorized('project:read')
  @Query(() => InfraProjectPage)
  infraProjects(
    @Arg('page', () => Int, { defaultValue: 1 }) page: number,
    @Arg('limit', () => Int, { defaultValue: 20 }) limit: number,
    @Arg('status', () => String, { nullable: true }) status: string | null,
    @Ctx() ctx: RequestContext,
  ): Promise<InfraProjectPage> {
    return this.s.projects.list(ctx.principal, { page, limit, status });
  }

  @Authorized('project:read')
  @Query(() => InfraProject)
  infraProject(@Arg('id', () => ID) id: string, @Ctx() ctx: RequestContext): Promise<InfraProject> {
    return this.s.projects.get(ctx.principal, id);
  }

  @Authorized('project:write')
  @Mutation(() => InfraProject)
  createInfraProject(
    @Arg('input', () => CreateInfraProjectInput, { validate: false }) input: CreateInfraProjectInput,
    @Ctx() ctx: RequestContext,
  ): Promise<InfraProject> {
    return this.s.projects.create(ctx.principal, input);
  }

  @Authorized('project:write')
  @Mutation(() => InfraProject, { description: 'Members and admins.' })
  updateInfraProject(
    @Arg('id', () => ID) id: string,
    @Arg('input', () => UpdateInfraProjectInput, { validate: false }) input: UpdateInfraProjectInput,
    @Ctx() ctx: RequestContext,
  ): Promise<InfraProject> {
    return this.s.projects.update(ctx.principal, id, input);
  }

  @Authorized('project:write')
  @Mutation(() => InfraDeletion, { description: 'Owners and admins; a project with services is kept (409).' })
  deleteInfraProject(@Arg('id', () => ID) id: string, @Ctx() ctx: RequestContext): Promise<InfraDeletion> {
    return this.s.projects.remove(ctx.principal, id);
  }

  @Authorized('project:write')
  @Mutation(() => InfraProject, { description: "Owners and admins add a member or change a member's role (owner or contributor)." })
  addInfraProjectMember(
    @Arg('id', () => ID) id: string,
    @Arg('userId', () => ID) userId: string,
    @Arg('role', { defaultValue: 'contributor' }) role: string,
    @Ctx() ctx: RequestContext,
  ): Promise<InfraProject> {
    return this.s.projects.addMember(ctx.principal, id, userId, role);
  }

  @Authorized('project:write')
  @Mutation(() => InfraProject)
  removeInfraProjectMember(@Arg('id', () => ID) id: string, @Arg('userId', () => ID) userId: string, @Ctx() ctx: RequestContext): Promise<InfraProject> {
    return this.s.projects.removeMember(ctx.principal, id, userId);
  }

  // ---- services and deployments -------------------------------------------------------------

  @Authorized('service:read')
  @Query(() => InfraServicePage)
  infraServices(
    @Arg('project', () => ID, { nullable: true }) project: string | null,
    @Arg('status', () => String, { nullable: true }) status: string | null,
    @Arg('page', () => Int, { defaultValue: 1 }) page: number,
    @Arg('limit', () => Int, { defaultValue: 20 }) limit: number,
    @Ctx() ctx: RequestContext,
  ): Promise<InfraServicePage> {
    return this.s.deploys.listServices(ctx.principal, { project, status, page, limit });
  }

  @Authorized('service:read')
  @Query(() => InfraService)
  infraService(@Arg('id', () => ID) id: string, @Ctx() ctx: RequestContext): Promise<InfraService> {
    return this.s.deploys.getService(ctx.principal, id);
  }

  @Authorized('service:write')
  @Mutation(() => InfraService, { description: 'Creates the service and starts its first rollout.' })
  createInfraService(
    @Arg('input', () => CreateInfraServiceInput, { validate: false }) input: CreateInfraServiceInput,
    @Ctx() ctx: RequestContext,
  ): Promise<InfraService> {
    return this.s.deploys.createService(ctx.principal, input);
  }

  @Authorized('service:write')
  @Mutation(() => InfraDeletion)
  deleteInfraService(@Arg('id', () => ID) id: string, @Ctx() ctx: RequestContext): Promise<InfraDeletion> {
    return this.s.deploys.deleteService(ctx.principal, id);
  }

  @Authorized('service:deploy')
  @Mutation(() => InfraDeployment, { description: 'Starts a rollout of a new image (409 while another is in progress).' })
  deployInfraService(
    @Arg('id', () => ID) id: string,
    @Arg('input', () => DeployInput, { validate: false }) input: DeployInput,
    @Ctx() ctx: RequestContext,
  ): Promise<InfraDeployment> {
    return this.s.deploys.deploy(ctx.principal, id, input);
  }

  @Authorized('service:deploy')
  @Mutation(() => InfraDeployment, { description: 'Rolls back to a revision, by default the previous one (kubectl rollout undo).' })
  rollbackInfraService(
    @Arg('id', () => ID) id: string,
    @Arg('revision', () => String, { nullable: true }) revision: string | null,
    @Ctx() ctx: RequestContext,
  ): Promise<InfraDeployment> {
    return this.s.deploys.rollback(ctx.principal, id, revision);
  }

  @Authorized('service:read')
  @Query(() => InfraDeployment)
  infraDeployment(@Arg('deploymentId', () => ID) deploymentId: string, @Ctx() ctx: RequestContext): Promise<InfraDeployment> {
    return this.s.deploys.getDeployment(ctx.principal, deploymentId);
  }

  @Authorized('service:read')
  @Query(() => InfraDeploymentPage, { description: "A service's rollouts, newest first." })
  infraDeployments(
    @Arg('serviceId', () => ID) serviceId: string,
    @Arg('page', () => Int, { defaultValue: 1 }) page: number,
    @Arg('limit', () => Int, { defaultValue: 20 }) limit: number,
    @Ctx() ctx: RequestContext,
  ): Promise<InfraDeploymentPage> {
    return this.s.deploys.listDeployments(ctx.principal, serviceId, page, limit);
  }

  @Authorized('service:logs')
  @Query(() => InfraLogs, { description: 'The last `lines` log lines (GET /services/:id/logs?follow=true streams them).' })
  async infraServiceLogs(
    @Arg('id', () => ID) id: string,
    @Arg('lines', () => Int, { defaultValue: 100 }) lines: number,
    @Ctx() ctx: RequestContext,
  ): Promise<InfraLogs> {
    return { logs: await this.s.deploys.collectLogs(ctx.principal, id, lines) };
  }

  /** PUBLIC here: the deployment is refetched through infraDeployment with the subscriber's rights. */
  @Authorized(PUBLIC)
  @Subscription(() => InfraDeployment, {
    topics: TOPIC.deploymentUpdated,
    description:
      'Emits the deployment as it is at once (a finished one: its final state), then on every progress or status change, never an older version than one sent (served by the gateway).',
  })
  deploymentUpdated(@Arg('deploymentId', () => ID) _deploymentId: string, @Root() deployment: InfraDeployment): InfraDeployment {
    return deployment;
  }

  /** PUBLIC here: each deployment is read through infraDeployment with the subscriber's rights. */
  @Authorized(PUBLIC)
  @Subscription(() => InfraDeployment, {
    topics: TOPIC.deploymentUpdated,
    description:
      'Emits a deployment of the service (of every service the caller may read, when none is given) on every progress or status change, as deploymentUpdated does. With a service, first sends its latest `limit` rollouts (as infraDeployments lists them), oldest first, each with its version; an unknown service is an error (served by the gateway).',
  })
  deploymentsUpdated(
    @Arg('serviceId', () => ID, { nullable: true }) _serviceId: string | null,
    @FirstStateLimit() _limit: number,
    @Root() deployment: InfraDeployment,
  ): InfraDeployment {
    return deployment;
  }

  // ---- cluster ------------------------------------------------------------------------------

  @Authorized('cluster:read')
  @Query(() => InfraCluster)
  infraCluster(@Ctx() ctx: RequestContext): Promise<InfraCluster> {
    return this.s.cluster.cluster(ctx.principal);
  }

  @Authorized('cluster:read')
  @Query(() => InfraNodeList)
  async infraNodes(@Ctx() ctx: RequestContext): Promise<InfraNodeList> {
    return { data: await this.s.cluster.nodes(ctx.principal) };
  }

  @Authorized('cluster:read')
  @Query(() => InfraMetrics)
  infraMetrics(@Ctx() ctx: RequestContext): Promise<InfraMetrics> {
    return this.s.cluster.metrics(ctx.principal);
  }

  @Authorized('cluster:read')
  @Query(() => [InfraAlert], { description: 'Alerts, newest first; `open` only the unresolved ones.' })
  infraAlerts(@Arg('open', { defaultValue: false }) open: boolean, @Ctx() ctx: RequestContext): Promise<InfraAlert[]> {
    return this.s.notify.alerts(ctx.principal, open);
  }

  // ---- webhooks -----------------------------------------------------------------------------

  @Authorized('webhook:write')
  @Mutation(() => InfraWebhook, { description: 'The secret that signs deliveries is in this answer only.' })
  createInfraWebhook(
    @Arg('input', () => CreateInfraWebhookInput, { validate: false }) input: CreateInfraWebhookInput,
    @Ctx() ctx: RequestContext,
  ): Promise<InfraWebhook> {
    return this.s.notify.register(ctx.principal, input);
  }

  @Authorized('webhook:read')
  @Query(() => [InfraWebhook], { description: "The caller's own registrations; every one for admins and API keys." })
  infraWebhooks(@Ctx() ctx: RequestContext): Promise<InfraWebhook[]> {
    return this.s.notify.list(ctx.principal);
  }

  @Authorized('webhook:read')
  @Query(() => [InfraWebhookDelivery], {
    description: 'Deliveries of a registration with every attempt, newest first (its owner, admins and API keys; 404 for anyone else).',
  })
  infraWebhookDeliveries(@Arg('id', () => ID) id: string, @Ctx() ctx: RequestContext): Promise<InfraWebhookDelivery[]> {
    return this.s.notify.deliveries(ctx.principal, id);
  }

  @Authorized('webhook:write')
  @Mutation(() => InfraDeletion, { description: 'Deletes a registration: its owner, admins and API keys; 404 for anyone else.' })
  deleteInfraWebhook(@Arg('id', () => ID) id: string, @Ctx() ctx: RequestContext): Promise<InfraDeletion> {
    return this.s.notify.remove(ctx.principal, id);
  }
}
