import type { MigrationInterface, QueryRunner } from 'typeorm';

/** People signed in locally (the admin key minting a session, no identity provider) are users of provider `local`. */
export class LocalSignIn1763769601871 implements MigrationInterface {
  name = 'LocalSignIn1763769601871';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE feedback.users DROP CONSTRAINT users_provider_check`);
    await q.query(`ALTER TABLE feedback.users ADD CONSTRAINT users_provider_check CHECK (provider IN ('github','google','local'))`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DELETE FROM feedback.users WHERE provider = 'local'`);
    await q.query(`ALTER TABLE feedback.users DROP CONSTRAINT users_provider_check`);
    await q.query(`ALTER TABLE feedback.users ADD CONSTRAINT users_provider_check CHECK (provider IN ('github','google'))`);
  }
}
