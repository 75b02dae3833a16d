import { Alert, Anchor, Badge, Button, Card, Group, ScrollArea, SimpleGrid, Stack, Table, Text, TextInput, Textarea, Title } from '@mantine/core';
import { useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router-dom';
import { gql, merged, queryKey, useLiveList, useQuery, type GraphQLFailure } from '../api';
import {
  DashboardFeedbackBoardDocument,
  DashboardFeedbackProjectsDocument,
  DashboardFeedbackSignInDocument,
  DashboardRequestsUpdatedDocument,
  DashboardSubmitRequestDocument,
  DashboardUnvoteRequestDocument,
  DashboardVoteRequestDocument,
  type DashboardFeatureRequestFieldsFragment,
  type DashboardFeedbackBoardQuery,
} from '../generated';

type Request = DashboardFeatureRequestFieldsFragment;
type Board = DashboardFeedbackBoardQuery;

/** The board's columns: a request's statuses in the order it moves through them. */
const COLUMNS: { status: string; label: string; color: string }[] = [
  { status: 'pending', label: 'Awaiting approval', color: 'gray' },
  { status: 'approved', label: 'Approved', color: 'blue' },
  { status: 'completed', label: 'Completed', color: 'green' },
  { status: 'rejected', label: 'Rejected', color: 'red' },
];

/**
 * Votes and new requests are a person's: the feature-request service takes them from a person's
 * session (GitHub or Google sign-in), not from an API key. With the platform admin key, where the
 * platform allows local sign-in (FEEDBACK_LOCAL_SIGNIN), the dashboard obtains a person's session
 * for this tab; the session's token is kept beside the key in session storage.
 */
const PERSON_STORAGE = 'platform.feedbackPerson';
interface Person {
  token: string;
  name: string;
  email: string;
}
const readPerson = (): Person | null => {
  try {
    return JSON.parse(sessionStorage.getItem(PERSON_STORAGE) ?? 'null') as Person | null;
  } catch {
    return null;
  }
};

export function Feedback({ route }: { route: string[] }) {
  return route[0] ? <ProjectBoard projectId={route[0]} /> : <Projects />;
}

function Projects() {
  const q = useQuery(DashboardFeedbackProjectsDocument, {});
  if (q.error) return <Alert color="red">{q.error.message}</Alert>;
  const projects = q.data?.feedbackProjects.projects ?? [];
  return (
    <Stack>
      <Title order={3}>Feature requests</Title>
      <Text size="sm" c="dimmed">
        The public projects collecting feature requests. Open one for its board.
      </Text>
      {q.data && projects.length === 0 && <Text c="dimmed">No public project yet.</Text>}
      <Table striped highlightOnHover data-testid="feedback-projects">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Project</Table.Th>
            <Table.Th>Requests</Table.Th>
            <Table.Th>Votes</Table.Th>
            <Table.Th>Comments</Table.Th>
            <Table.Th>Takes</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {projects.map((p) => (
            <Table.Tr key={p.id} data-testid={`feedback-project-${p.slug}`}>
              <Table.Td>
                <Anchor component={Link} to={`/feedback/${p.id}`}>
                  {p.name}
                </Anchor>
                <Text size="xs" c="dimmed" lineClamp={1}>
                  {p.description}
                </Text>
              </Table.Td>
              <Table.Td>{p.stats.totalRequests}</Table.Td>
              <Table.Td>{p.stats.totalVotes}</Table.Td>
              <Table.Td>{p.stats.totalComments}</Table.Td>
              <Table.Td>
                <Text size="xs">
                  {p.settings.allowAnonymous ? 'anonymous requests' : 'signed-in requests'}
                  {p.settings.requireApproval ? ', approved by the owner' : ''}
                </Text>
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Stack>
  );
}

const BOARD_LIMIT = 100;
const byVotes = (requests: Request[]) => [...requests].sort((a, b) => b.votesCount - a.votesCount);

/** A project's requests in a column per status, most votes first; live through the project's requestsUpdated. */
function ProjectBoard({ projectId }: { projectId: string }) {
  // A request filed elsewhere joins the board; the total counts it.
  const q = useLiveList(DashboardFeedbackBoardDocument, { projectId }, DashboardRequestsUpdatedDocument, { projectId }, {
    item: (e) => e.requestsUpdated,
    items: (d) => d.featureRequests.requests,
    withItems: (d, requests) => ({
      ...d,
      featureRequests: { ...d.featureRequests, requests: byVotes(requests), total: d.featureRequests.total + requests.length - d.featureRequests.requests.length },
    }),
    id: (r) => r.id,
    limit: BOARD_LIMIT,
  });
  const client = useQueryClient();
  const [person, setPerson] = useState<Person | null>(readPerson);
  if (q.error) return <Alert color="red">{q.error.message}</Alert>;
  if (!q.data) return <Text c="dimmed">Loading…</Text>;
  const { feedbackProject: project, featureRequests } = q.data;
  const key = queryKey(DashboardFeedbackBoardDocument, { projectId });
  // A request this page filed shows at once, before its event (which then changes nothing: same version).
  const onCreated = (r: Request) =>
    client.setQueryData<Board>(key, (old) => {
      if (!old) return old;
      const requests = merged(old.featureRequests.requests, r, (x) => x.id, BOARD_LIMIT);
      const total = old.featureRequests.total + Math.max(0, requests.length - old.featureRequests.requests.length);
      return { ...old, featureRequests: { ...old.featureRequests, requests: byVotes(requests), total } };
    });
  const remember = (p: Person | null) => {
    if (p) sessionStorage.setItem(PERSON_STORAGE, JSON.stringify(p));
    else sessionStorage.removeItem(PERSON_STORAGE);
    setPerson(p);
  };
  return (
    <Stack data-testid="feedback-board">
      <Group justify="space-between">
        <Stack gap={0}>
          <Group gap="xs">
            <Anchor component={Link} to="/feedback" size="sm">
              Feature requests
            </Anchor>
            <Text size="sm" c="dimmed">
              /
            </Text>
          </Group>
          <Title order={3}>{project.name}</Title>
          <Text size="sm" c="dimmed">
            {project.description}
          </Text>
        </Stack>
        <Text size="sm" c="dimmed">
          {featureRequests.total} request{featureRequests.total === 1 ? '' : 's'} · live
        </Text>
      </Group>
      <PersonPanel person={person} onChange={remember} />
      <ScrollArea>
        <SimpleGrid cols={4} miw={960}>
          {COLUMNS.map((c) => {
            const requests = featureRequests.requests.filter((r) => r.status === c.status);
            return (
              <Card key={c.status} withBorder padding="xs" bg="gray.0" data-testid={`feedback-column-${c.status}`}>
                <Stack gap={6}>
                  <Group justify="space-between">
                    <Text fw={600} size="sm">
                      {c.label}
                    </Text>
                    <Badge color={c.color} variant="light">
                      {requests.length}
                    </Badge>
                  </Group>
                  {requests.map((r) => (
                    <RequestCard key={r.id} request={r} person={person} />
                  ))}
                  {requests.length === 0 && (
                    <Text size="xs" c="dimmed">
                      None.
                    </Text>
                  )}
                </Stack>
              </Card>
            );
          })}
        </SimpleGrid>
      </ScrollArea>
      <NewRequest projectId={projectId} allowAnonymous={project.settings.allowAnonymous} requireApproval={project.settings.requireApproval} person={person} onCreated={onCreated} />
    </Stack>
  );
}

function RequestCard({ request: r, person }: { request: Request; person: Person | null }) {
  const [error, setError] = useState<string | null>(null);
  const vote = async (type: 'upvote' | 'downvote' | null) => {
    if (!person) return;
    setError(null);
    try {
      if (type) await gql(DashboardVoteRequestDocument, { id: r.id, type }, person.token);
      else await gql(DashboardUnvoteRequestDocument, { id: r.id }, person.token);
    } catch (e) {
      setError((e as Error).message);
    }
  };
  return (
    <Card withBorder padding={8} data-testid={`feedback-request-${r.id}`} data-status={r.status}>
      <Group wrap="nowrap" align="flex-start" gap="xs">
        <Stack gap={0} align="center" miw={36}>
          <Text fw={700} size="lg" data-testid={`feedback-votes-${r.id}`}>
            {r.votesCount}
          </Text>
          <Text size="10px" c="dimmed">
            votes
          </Text>
        </Stack>
        <Stack gap={2} style={{ flex: 1, minWidth: 0 }}>
          <Text size="sm" fw={600}>
            {r.title}
          </Text>
          <Text size="xs" c="dimmed" lineClamp={3}>
            {r.description}
          </Text>
          <Group gap={4}>
            <Badge size="xs" variant="outline" color={r.priority === 'critical' ? 'red' : r.priority === 'high' ? 'orange' : 'gray'}>
              {r.priority}
            </Badge>
            {r.category && (
              <Badge size="xs" variant="light">
                {r.category}
              </Badge>
            )}
            <Text size="10px" c="dimmed">
              {r.commentsCount} comment{r.commentsCount === 1 ? '' : 's'}
            </Text>
          </Group>
          {person && r.status === 'approved' && (
            <Group gap={4}>
              <Button size="compact-xs" variant="light" onClick={() => void vote('upvote')} data-testid={`feedback-upvote-${r.id}`}>
                ▲ up
              </Button>
              <Button size="compact-xs" variant="light" color="gray" onClick={() => void vote('downvote')}>
                ▼ down
              </Button>
              <Button size="compact-xs" variant="subtle" color="gray" onClick={() => void vote(null)}>
                withdraw
              </Button>
            </Group>
          )}
          {error && (
            <Text size="xs" c="red" data-testid={`feedback-vote-error-${r.id}`}>
              {error}
            </Text>
          )}
        </Stack>
      </Group>
    </Card>
  );
}

/** Who acts: the API key reads; votes and (unless the project takes anonymous ones) requests need a person. */
function PersonPanel({ person, onChange }: { person: Person | null; onChange: (p: Person | null) => void }) {
  const [email, setEmail] = useState('');
  const [name, setName] = useState('');
  const [error, setError] = useState<string | null>(null);
  if (person)
    return (
      <Alert color="blue" data-testid="feedback-person">
        <Group justify="space-between">
          <Text size="sm">
            Voting and filing requests as {person.name} ({person.email}), a person's session for this tab.
          </Text>
          <Button size="compact-xs" variant="subtle" onClick={() => onChange(null)}>
            Stop
          </Button>
        </Group>
      </Alert>
    );
  const signIn = async () => {
    setError(null);
    try {
      const d = await gql(DashboardFeedbackSignInDocument, { email: email.trim(), name: name.trim() });
      onChange({ token: d.signInLocally.token, name: d.signInLocally.user.name, email: d.signInLocally.user.email });
    } catch (e) {
      const code = (e as GraphQLFailure).code;
      setError(code === 'forbidden' || code === 'insufficient_permissions' ? `${(e as Error).message} (a local session takes the platform admin key, where FEEDBACK_LOCAL_SIGNIN allows it).` : (e as Error).message);
    }
  };
  return (
    <Alert color="yellow" data-testid="feedback-key-only" title="Signed in with an API key: reading only">
      <Stack gap="xs">
        <Text size="sm">
          Votes are a person's: the feature-request service takes them from a person signed in with GitHub or Google, never from an API key, and files requests from a key only in projects that take anonymous ones.
          Where the platform allows local sign-in, the admin key can open a person's session for this tab:
        </Text>
        <Group align="flex-end">
          <TextInput size="xs" label="Email" value={email} onChange={(e) => setEmail(e.currentTarget.value)} data-testid="feedback-person-email" />
          <TextInput size="xs" label="Name" value={name} onChange={(e) => setName(e.currentTarget.value)} data-testid="feedback-person-name" />
          <Button size="xs" variant="light" disabled={!email.trim() || !name.trim()} onClick={() => void signIn()} data-testid="feedback-person-signin">
            Act as this person
          </Button>
        </Group>
        {error && (
          <Text size="sm" c="red" data-testid="feedback-person-error">
            {error}
          </Text>
        )}
      </Stack>
    </Alert>
  );
}

function NewRequest({
  projectId,
  allowAnonymous,
  requireApproval,
  person,
  onCreated,
}: {
  projectId: string;
  allowAnonymous: boolean;
  requireApproval: boolean;
  person: Person | null;
  onCreated: (r: Request) => void;
}) {
  const [title, setTitle] = useState('');
  const [description, setDescription] = useState('');
  const [error, setError] = useState<string | null>(null);
  const may = Boolean(person) || allowAnonymous;
  const submit = async () => {
    setError(null);
    try {
      const d = await gql(DashboardSubmitRequestDocument, { projectId, input: { title: title.trim(), description: description.trim() } }, person?.token);
      onCreated(d.submitFeatureRequest);
      setTitle('');
      setDescription('');
    } catch (e) {
      setError((e as Error).message);
    }
  };
  return (
    <Card withBorder data-testid="feedback-new">
      <Stack>
        <Title order={4}>New request</Title>
        {!may ? (
          <Text size="sm" c="dimmed" data-testid="feedback-new-refused">
            This project takes requests from signed-in people only: act as a person above to file one.
          </Text>
        ) : (
          <>
            <Text size="sm" c="dimmed">
              {person ? `Filed by ${person.name}` : 'Filed anonymously (this project takes anonymous requests)'}
              {requireApproval ? '; it waits for the owner’s approval before it takes votes.' : '.'}
            </Text>
            <TextInput label="Title" value={title} onChange={(e) => setTitle(e.currentTarget.value)} data-testid="feedback-new-title" />
            <Textarea label="Description" autosize minRows={2} value={description} onChange={(e) => setDescription(e.currentTarget.value)} data-testid="feedback-new-description" />
            {error && (
              <Alert color="red" data-testid="feedback-new-error">
                {error}
              </Alert>
            )}
            <Group>
              <Button disabled={!title.trim() || !description.trim()} onClick={() => void submit()} data-testid="feedback-new-submit">
                File the request
              </Button>
            </Group>
          </>
        )}
      </Stack>
    </Card>
  );
}
