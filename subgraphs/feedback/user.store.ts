import { one, rowById, type Queryable } from '../../kernel/db/rows';

/** Where feedback.users is read and written: the people signed in through GitHub or Google. */

interface UserRow {
  id: string;
  email: string;
  username: string;
  name: string;
  avatar: string | null;
  created_at: Date;
}

export interface UserView {
  id: string;
  email: string;
  username: string;
  name: string;
  avatar: string | null;
  createdAt: Date;
}

const toView = (r: UserRow): UserView => ({ id: r.id, email: r.email, username: r.username, name: r.name, avatar: r.avatar, createdAt: r.created_at });

/** The user of a provider's account, created at the first sign-in and refreshed from the profile at every later one. */
export async function upsert(
  q: Queryable,
  u: { provider: 'github' | 'google' | 'local'; providerId: string; email: string; username: string; name: string; avatar: string | null },
): Promise<UserView> {
  const row = await one<UserRow>(
    q,
    `INSERT INTO feedback.users (provider, provider_id, email, username, name, avatar) VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (provider, provider_id) DO UPDATE SET email = EXCLUDED.email, username = EXCLUDED.username, name = EXCLUDED.name,
       avatar = EXCLUDED.avatar, updated_at = now()
     RETURNING id, email, username, name, avatar, created_at`,
    [u.provider, u.providerId, u.email, u.username, u.name, u.avatar],
  );
  return toView(row!);
}

/** The user `id` names, or 404 `resource_not_found` (also for an id that is no UUID). */
export async function byId(q: Queryable, id: string): Promise<UserView> {
  return toView(await rowById<UserRow>(q, 'user', id, `SELECT id, email, username, name, avatar, created_at FROM feedback.users WHERE id = $1`));
}
