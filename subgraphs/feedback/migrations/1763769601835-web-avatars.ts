import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A user's avatar is an http(s) URL or nothing: it is shown to other people. The ones stored as
 * a provider gave them (a `javascript:` URL among them) are cleared before the rule holds.
 */
export class WebAvatars1763769601835 implements MigrationInterface {
  name = 'WebAvatars1763769601835';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`UPDATE feedback.users SET avatar = NULL WHERE avatar !~ '^https?://'`);
    await q.query(`ALTER TABLE feedback.users ADD CONSTRAINT users_avatar_web CHECK (avatar ~ '^https?://')`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE feedback.users DROP CONSTRAINT users_avatar_web`);
  }
}
