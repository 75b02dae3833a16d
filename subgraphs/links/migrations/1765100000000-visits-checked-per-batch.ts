import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A visit's link is checked once per batch of visits, not once per row: the batch's statement
 * counts the visits on their links first (locking each row, so a link being deleted waits or is
 * skipped) and inserts only the visits of the links it counted on; deleting a link deletes its
 * visits after the link (link.store.ts). The foreign key's per-row check cost more than the rest
 * of a visit's insert (bench/README.md, "What a short-link redirect costs").
 */
export class VisitsCheckedPerBatch1765100000000 implements MigrationInterface {
  name = 'VisitsCheckedPerBatch1765100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE links.visits DROP CONSTRAINT visits_link_id_fkey`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DELETE FROM links.visits v WHERE NOT EXISTS (SELECT 1 FROM links.links l WHERE l.id = v.link_id)`);
    await q.query(`ALTER TABLE links.visits ADD CONSTRAINT visits_link_id_fkey FOREIGN KEY (link_id) REFERENCES links.links(id) ON DELETE CASCADE`);
  }
}
