import { Alert, Anchor, AppShell, Button, Code, Group, NavLink, PasswordInput, Stack, Text, Title } from '@mantine/core';
import { useEffect, useState, type ComponentType } from 'react';
import { Link, Navigate, useLocation, useNavigate } from 'react-router-dom';
import { apiKey, gql, GraphQLFailure, KEY_STORAGE, signOut } from './api';
import {
  DashboardAgentsProbeDocument,
  DashboardAuditProbeDocument,
  DashboardExecutionsProbeDocument,
  DashboardFeedbackProbeDocument,
  DashboardInfraProbeDocument,
  DashboardLinksProbeDocument,
  DashboardMetricsProbeDocument,
  DashboardOrchestrationsProbeDocument,
  DashboardPromptsProbeDocument,
  DashboardSignInDocument,
  DashboardWorkflowsProbeDocument,
  type TypedDocumentString,
} from './generated';
import { Agents } from './views/Agents';
import { Audit } from './views/Audit';
import { Executions } from './views/Executions';
import { Feedback } from './views/Feedback';
import { Infra } from './views/Infra';
import { Links } from './views/Links';
import { Metrics } from './views/Metrics';
import { Orchestrations } from './views/Orchestrations';
import { Prompts } from './views/Prompts';
import { Task } from './views/Task';
import { Workflows } from './views/Workflows';

/** One probe per section (its data unread): a key that may not read a section does not see it (hidden, not broken). */
const SECTIONS: { id: string; label: string; probe: TypedDocumentString<unknown, Record<string, never>>; view: ComponentType<{ route: string[] }> }[] = [
  { id: 'agents', label: 'Agents', probe: DashboardAgentsProbeDocument, view: Agents },
  { id: 'orchestrations', label: 'Orchestrations', probe: DashboardOrchestrationsProbeDocument, view: Orchestrations },
  { id: 'workflows', label: 'Workflows', probe: DashboardWorkflowsProbeDocument, view: Workflows },
  { id: 'executions', label: 'Workflow executions', probe: DashboardExecutionsProbeDocument, view: Executions },
  { id: 'prompts', label: 'Prompts', probe: DashboardPromptsProbeDocument, view: Prompts },
  { id: 'metrics', label: 'Metrics', probe: DashboardMetricsProbeDocument, view: Metrics },
  { id: 'links', label: 'Short links', probe: DashboardLinksProbeDocument, view: Links },
  { id: 'feedback', label: 'Feature requests', probe: DashboardFeedbackProbeDocument, view: Feedback },
  { id: 'infra', label: 'Infrastructure', probe: DashboardInfraProbeDocument, view: Infra },
  { id: 'audit', label: 'Audit trail', probe: DashboardAuditProbeDocument, view: Audit },
];

/** Pages reached from a section, not listed in the navigation: readable with the section's key. */
const PAGES: { id: string; section: string; view: ComponentType<{ route: string[] }> }[] = [{ id: 'tasks', section: 'agents', view: Task }];

/** The path under /dashboard, split: ["executions", "<id>"]. */
export function useRoute(): string[] {
  return useLocation().pathname.split('/').filter(Boolean).map(decodeURIComponent);
}

export function App() {
  const [key, setKey] = useState(apiKey());
  const [allowed, setAllowed] = useState<string[] | null>(null);
  const route = useRoute();
  const { hash } = useLocation();
  const navigate = useNavigate();

  useEffect(() => {
    if (!key) return;
    void Promise.all(
      SECTIONS.map((s) =>
        gql<unknown, Record<string, never>>(s.probe, {})
          .then(() => s.id)
          // A section the key may not read is hidden; an unhealthy platform still shows metrics.
          .catch((e: GraphQLFailure) => (e.code === 'service_unavailable' ? s.id : null)),
      ),
    ).then((ids) => setAllowed(ids.filter((x): x is (typeof SECTIONS)[number]['id'] => x !== null)));
  }, [key]);

  // Links of the earlier hash-routed dashboard (#/executions/<id>) still lead to their page.
  if (hash.startsWith('#/')) return <Navigate to={hash.slice(1)} replace />;
  if (!key) return <SignIn onSignedIn={setKey} />;
  const visible = SECTIONS.filter((s) => allowed?.includes(s.id));
  const page = PAGES.find((x) => x.id === route[0] && allowed?.includes(x.section));
  const current = visible.find((s) => s.id === (page?.section ?? route[0])) ?? visible[0];
  const View = page?.view ?? current?.view;
  return (
    <AppShell navbar={{ width: 230, breakpoint: 'sm' }} header={{ height: 52 }} padding="md">
      <AppShell.Header>
        <Group h="100%" px="md" justify="space-between">
          <Group gap="xs">
            <img src="/dashboard/favicon.svg" alt="" width={24} height={24} />
            <Title order={4}>Automation platform</Title>
          </Group>
          <Group>
            <Anchor href="/docs" target="_blank">REST docs</Anchor>
            <Anchor href="/graphql" target="_blank">GraphQL explorer</Anchor>
            <Button
              size="xs"
              variant="light"
              data-testid="sign-out"
              onClick={() => {
                signOut();
                setKey(null);
                setAllowed(null);
                navigate('/');
              }}
            >
              Sign out
            </Button>
          </Group>
        </Group>
      </AppShell.Header>
      <AppShell.Navbar p="xs">
        {visible.map((s) => (
          <NavLink key={s.id} component={Link} to={`/${s.id}`} label={s.label} active={current?.id === s.id} data-testid={`nav-${s.id}`} />
        ))}
      </AppShell.Navbar>
      <AppShell.Main>
        {allowed === null ? <Text c="dimmed">Loading…</Text> : View ? <View key={route[0]} route={route[0] === current?.id || page ? route.slice(1) : []} /> : <Alert color="yellow">This key may read none of the dashboard's sections.</Alert>}
      </AppShell.Main>
    </AppShell>
  );
}

function SignIn({ onSignedIn }: { onSignedIn: (key: string) => void }) {
  const [value, setValue] = useState('');
  const [error, setError] = useState<string | null>(null);
  const submit = async () => {
    setError(null);
    try {
      await gql(DashboardSignInDocument, {}, value.trim());
    } catch (e) {
      const code = (e as GraphQLFailure).code;
      // A key of another service may not read the control plane's limits, and still be a key.
      if (code !== 'insufficient_permissions') return setError((e as Error).message);
    }
    sessionStorage.setItem(KEY_STORAGE, value.trim());
    onSignedIn(value.trim());
  };
  return (
    <Stack maw={420} mx="auto" mt={120}>
      <Title order={3}>Sign in with an API key</Title>
      <Text size="sm" c="dimmed">
        The key stays in this tab (session storage) and is sent as Authorization: Bearer to /graphql.
      </Text>
      <Text size="sm" c="dimmed" data-testid="signin-first-key">
        The first key: at its first start the platform generates an administrator key (unless BOOTSTRAP_API_KEY gives one), prints it once and writes it to{' '}
        <Code>data/bootstrap-key</Code> (under DATA_DIR). More keys: createApiKey in the GraphQL explorer.
      </Text>
      <PasswordInput label="API key" value={value} onChange={(e) => setValue(e.currentTarget.value)} data-testid="signin-key" onKeyDown={(e) => e.key === 'Enter' && void submit()} />
      {error && <Alert color="red" data-testid="signin-error">{error}</Alert>}
      <Button onClick={() => void submit()} data-testid="signin-submit" disabled={!value.trim()}>
        Sign in
      </Button>
    </Stack>
  );
}
