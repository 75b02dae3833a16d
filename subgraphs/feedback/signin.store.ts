import { createHash } from 'node:crypto';
import { exec, one, type Queryable } from '../../kernel/db/rows';

/** Where feedback.signin_states is kept: the states of sign-ins started and not yet finished, by their SHA-256. */

const digest = (state: string) => createHash('sha256').update(state).digest();

/** Keeps a new state for `ttlSeconds`, and drops the expired ones on the way (one statement). */
export async function insertState(q: Queryable, state: string, provider: string, ttlSeconds: number): Promise<void> {
  await exec(
    q,
    `WITH expired AS (DELETE FROM feedback.signin_states WHERE expires_at <= now())
     INSERT INTO feedback.signin_states (state_hash, provider, expires_at) VALUES ($1, $2, now() + make_interval(secs => $3))`,
    [digest(state), provider, ttlSeconds],
  );
}

/** Removes the state and says whether it was there, for `provider` and unexpired: one caller ever gets true. */
export async function takeState(q: Queryable, state: string, provider: string): Promise<boolean> {
  const row = await one<{ provider: string; live: boolean }>(
    q,
    `DELETE FROM feedback.signin_states WHERE state_hash = $1 RETURNING provider, expires_at > now() AS live`,
    [digest(state)],
  );
  return row?.provider === provider && row.live;
}
