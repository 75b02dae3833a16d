import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Sign-in states kept by the service, so a callback is taken only for a state this service
 * issued, unexpired and unused: a cookie alone cannot tell a replay from the first use. Only the
 * SHA-256 of a state is kept.
 */
export class SigninStates1763769601834 implements MigrationInterface {
  name = 'SigninStates1763769601834';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE feedback.signin_states (
        state_hash bytea PRIMARY KEY,
        provider text NOT NULL CHECK (provider IN ('github','google')),
        expires_at timestamptz NOT NULL
      )`);
    await q.query(`CREATE INDEX signin_states_expiry_idx ON feedback.signin_states (expires_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE feedback.signin_states`);
  }
}
