import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Files kept in the database are downloaded a chunk at a time (substring of `data`). Stored
 * uncompressed out of line, PostgreSQL reads only the pieces a chunk covers; compressed, each
 * chunk would decompress the whole file. Files are mostly compressed already (PDF, PNG, ZIP).
 * Applies to rows written from now on.
 */
export class BinaryStorageExternal1764938271046 implements MigrationInterface {
  name = 'BinaryStorageExternal1764938271046';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE engine.execution_binaries ALTER COLUMN data SET STORAGE EXTERNAL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE engine.execution_binaries ALTER COLUMN data SET STORAGE EXTENDED`);
  }
}
