import { Alert, Anchor, AppShell, Button, Group, NavLink, PasswordInput, Stack, Text, Title } from '@mantine/core';
import { useEffect, useState } from 'react';
import { apiKey, gql, GraphQLFailure, KEY_STORAGE, signOut } from './api';
import {
  DashboardAgentsProbeDocument,
  DashboardExecutionsProbeDocument,
  DashboardMetricsProbeDocument,
  DashboardOrchestrationsProbeDocument,
  DashboardPromptsProbeDocument,
  DashboardSignInDocument,
} from './generated';
import { Agents } from './views/Agents';
import { Executions } from './views/Executions';
import { Metrics } from './views/Metrics';
import { Orchestrations } from './views/Orchestrations';
import { Prompts } from './views/Prompts';

/** One probe per section (its data unread): a key that may not read a section does not see it (hidden, not broken). */
const SECTIONS = [
  { id: 'agents', label: 'Agents', probe: DashboardAgentsProbeDocument, view: Agents },
  { id: 'orchestrations', label: 'Orchestrations', probe: DashboardOrchestrationsProbeDocument, view: Orchestrations },
  { id: 'executions', label: 'Workflow executions', probe: DashboardExecutionsProbeDocument, view: Executions },
  { id: 'prompts', label: 'Prompts', probe: DashboardPromptsProbeDocument, view: Prompts },
  { id: 'metrics', label: 'Metrics', probe: DashboardMetricsProbeDocument, view: Metrics },
] as const;

export function useRoute(): string[] {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const on = () => setHash(location.hash);
    window.addEventListener('hashchange', on);
    return () => window.removeEventListener('hashchange', on);
  }, []);
  return hash.replace(/^#\/?/, '').split('/').filter(Boolean);
}

export function App() {
  const [key, setKey] = useState(apiKey());
  const [allowed, setAllowed] = useState<string[] | null>(null);
  const route = useRoute();

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

  if (!key) return <SignIn onSignedIn={setKey} />;
  const visible = SECTIONS.filter((s) => allowed?.includes(s.id));
  const current = visible.find((s) => s.id === route[0]) ?? visible[0];
  const View = current?.view;
  return (
    <AppShell navbar={{ width: 230, breakpoint: 'sm' }} header={{ height: 52 }} padding="md">
      <AppShell.Header>
        <Group h="100%" px="md" justify="space-between">
          <Title order={4}>Automation platform</Title>
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
              }}
            >
              Sign out
            </Button>
          </Group>
        </Group>
      </AppShell.Header>
      <AppShell.Navbar p="xs">
        {visible.map((s) => (
          <NavLink key={s.id} href={`#/${s.id}`} label={s.label} active={current?.id === s.id} data-testid={`nav-${s.id}`} />
        ))}
      </AppShell.Navbar>
      <AppShell.Main>
        {allowed === null ? <Text c="dimmed">Loading…</Text> : View ? <View route={route.slice(1)} /> : <Alert color="yellow">This key may read none of the dashboard's sections.</Alert>}
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
      <PasswordInput label="API key" value={value} onChange={(e) => setValue(e.currentTarget.value)} data-testid="signin-key" onKeyDown={(e) => e.key === 'Enter' && void submit()} />
      {error && <Alert color="red" data-testid="signin-error">{error}</Alert>}
      <Button onClick={() => void submit()} data-testid="signin-submit" disabled={!value.trim()}>
        Sign in
      </Button>
    </Stack>
  );
}
