import assert from 'node:assert/strict';
import type { Feedback, Gql } from './support/answers';
import { startTestPlatform, type TestPlatform } from './support/platform';
import { subscribe, wsClient, type Subscription } from './support/subscribe';
import { sleep } from './support/until';

/**
 * requestsUpdated(projectId) keeps a project's board live: the board's requests first (most votes
 * first, sent fewest first), then a request another client files, votes on, moves or deletes
 * (refetched with the subscriber's rights; a deleted one once more, marked deleted); another
 * project's do not, and a private project's board is subscribed to only by those who may read it.
 */

/** A request as the board's subscription selects it. */
interface Row {
  id: string;
  title: string;
  status: string;
  votesCount: number;
  version?: number;
  deleted?: boolean;
}
type BoardEvent = Gql<{ requestsUpdated?: Row }>;
/** What ended a subscription: graphql-ws hands over the GraphQL errors (or a close event). */
type Ended = { extensions?: { code?: string } }[] & { extensions?: { code?: string } };

const API = '/feedback/api/v1';
let p: TestPlatform;
let ann: string;
let bob: string;

beforeAll(async () => {
  p = await startTestPlatform({ FEEDBACK_LOCAL_SIGNIN: 'true' });
  ann = await person('ann@live.test', 'Ann');
  bob = await person('bob@live.test', 'Bob');
});
afterAll(async () => {
  await p?.stop();
});

async function person(email: string, name: string): Promise<string> {
  const res = await p.rest<Feedback<{ token: string }>>('POST', `${API}/auth/local`, { body: { email, name } });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.data.token;
}

async function project(owner: string, slug: string, settings: Record<string, unknown>): Promise<string> {
  const created = await p.rest<Feedback<{ id: string }>>('POST', `${API}/projects`, { key: owner, body: { name: slug, description: 'd', slug } });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const set = await p.rest('PUT', `${API}/projects/${created.body.data.id}`, { key: owner, body: { settings } });
  assert.equal(set.status, 200, JSON.stringify(set.body));
  return created.body.data.id;
}

async function file(who: string, projectId: string, title: string): Promise<string> {
  const res = await p.rest<Feedback<{ id: string }>>('POST', `${API}/projects/${projectId}/requests`, { key: who, body: { title, description: 'Please' } });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body.data.id;
}

const BOARD = 'subscription($p: ID!) { requestsUpdated(projectId: $p) { id title status votesCount } }';

test("a request filed, voted on and moved by another client arrives on the project's subscription; another project's do not", async () => {
  const board = await project(ann, 'live-board', { require_approval: false });
  const elsewhere = await project(ann, 'live-elsewhere', { require_approval: false });
  // Bob, who is not staff, watches Ann's public board with his own session.
  const client = wsClient(p.url, `Bearer ${bob}`);
  const sub = subscribe<BoardEvent>(client, BOARD, { p: board });
  try {
    // An empty board: nothing first. Wait for the subscription to be in place.
    await sleep(500);
    assert.equal(sub.events.length, 0, 'an empty board sends nothing first');
    const other = await file(ann, elsewhere, 'Not on this board');
    const id = await file(ann, board, 'Keyboard shortcuts');
    const filed = await sub.until((e) => e.data?.requestsUpdated?.id === id, 10_000);
    assert.deepEqual(filed!.data!.requestsUpdated, { id, title: 'Keyboard shortcuts', status: 'approved', votesCount: 0 });
    assert.equal((await p.rest('POST', `${API}/requests/${id}/vote`, { key: ann, body: { type: 'upvote' } })).status, 200);
    await sub.until((e) => e.data?.requestsUpdated?.votesCount === 1, 10_000);
    assert.equal((await p.rest('PATCH', `${API}/requests/${id}/status`, { key: ann, body: { status: 'completed' } })).status, 200);
    await sub.until((e) => e.data?.requestsUpdated?.status === 'completed', 10_000);
    assert.ok(!sub.events.some((e) => e.data?.requestsUpdated?.id === other), "another project's request is not sent");
    assert.deepEqual(sub.errors, []);
  } finally {
    await client.dispose();
  }
});

test("a private project's board is refused to whoever may not read the project, as the project itself is", async () => {
  const hidden = await project(ann, 'live-private', { require_approval: false, is_public: false });
  assert.equal((await p.rest('GET', `${API}/projects/${hidden}`, { key: bob })).status, 404, 'Bob may not read the project');
  const client = wsClient(p.url, `Bearer ${bob}`);
  const sub = subscribe<BoardEvent>(client, BOARD, { p: hidden });
  try {
    await sub.waitFor(1, 10_000);
    await file(ann, hidden, 'Secret plan');
    await sleep(500);
    const ended = sub.errors[0] as Ended | undefined;
    const refusal = sub.events[0]?.errors?.[0] ?? ended?.[0] ?? ended;
    assert.ok(refusal, `refused: ${JSON.stringify({ events: sub.events, errors: sub.errors })}`);
    assert.equal(refusal.extensions?.code, 'resource_not_found', JSON.stringify(refusal));
    assert.ok(!sub.events.some((e) => e.data?.requestsUpdated), 'nothing of the project is sent');
  } finally {
    await client.dispose();
  }
  // Ann, its owner, may subscribe and sees her request arrive.
  const own = wsClient(p.url, `Bearer ${ann}`);
  const mine = subscribe<BoardEvent>(own, BOARD, { p: hidden });
  try {
    await sleep(500);
    const id = await file(ann, hidden, 'Another secret');
    await mine.until((e) => e.data?.requestsUpdated?.id === id, 10_000);
  } finally {
    await own.dispose();
  }
});

test("a late subscriber gets the board's requests first, as the board reads them; a request deleted through REST arrives as deleted, and its requestUpdated completes", async () => {
  const board = await project(ann, 'live-late', { require_approval: false });
  const ids = [await file(ann, board, 'Dark mode'), await file(ann, board, 'Export'), await file(ann, board, 'Search')];
  assert.equal((await p.rest('POST', `${API}/requests/${ids[1]}/vote`, { key: bob, body: { type: 'upvote' } })).status, 200);
  const selection = 'id title status votesCount version deleted';
  const read = await p.graphql<Gql<{ featureRequests: { requests: Row[] } }>>(
    `query($p: ID!) { featureRequests(projectId: $p, sort: "votes_count", order: "desc", limit: 2) { requests { ${selection} } } }`,
    { p: board },
    bob,
  );
  const rows = read.body.data.featureRequests.requests;
  assert.equal(rows[0]!.id, ids[1], 'most votes first');
  assert.equal(rows.length, 2);
  const client = wsClient(p.url, `Bearer ${bob}`);
  const sub = subscribe<BoardEvent>(client, `subscription($p: ID!) { requestsUpdated(projectId: $p, limit: 2) { ${selection} } }`, { p: board });
  const one: Subscription<Gql<{ requestUpdated: Row }>> = subscribe(client, `subscription($id: ID!) { requestUpdated(requestId: $id) { ${selection} } }`, {
    id: ids[1],
  });
  try {
    await sub.waitFor(2);
    await one.waitFor(1);
    assert.deepEqual(
      sub.events.map((e) => e.data.requestsUpdated),
      [...rows].reverse(),
      'the first state: the board as read, fewest votes first',
    );
    const shown = rows[0]!;
    assert.deepEqual(one.events[0]!.data.requestUpdated, shown);

    assert.equal((await p.rest('DELETE', `${API}/requests/${ids[1]}`, { key: ann })).status, 200);
    const gone = await sub.until((e) => e.data?.requestsUpdated?.deleted === true, 10_000);
    assert.deepEqual(gone!.data.requestsUpdated, { ...shown, deleted: true, version: shown.version! + 1 });
    await one.done;
    assert.deepEqual(one.errors, [], 'requestUpdated completes once the deletion is sent');
    assert.deepEqual(one.events.at(-1)!.data.requestUpdated, { ...shown, deleted: true, version: shown.version! + 1 });

    // A change after the deletion still arrives: the board stays live.
    const id = await file(ann, board, 'Offline');
    await sub.until((e) => e.data?.requestsUpdated?.id === id, 10_000);
    assert.deepEqual(sub.errors, []);
  } finally {
    await client.dispose();
  }
});
