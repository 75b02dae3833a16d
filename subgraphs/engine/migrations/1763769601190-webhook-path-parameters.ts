import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Webhook paths with parameters (`orders/:orderId`). `shape` is the path with every parameter
 * name dropped (`orders/:`): two triggers of one method may not share a shape, so
 * `orders/:id` and `orders/:orderId` cannot both exist, while `orders/new` and `orders/:id` can
 * (an exact path wins). Parameterised triggers are found by their segment count.
 */
export class WebhookPathParameters1763769601190 implements MigrationInterface {
  name = 'WebhookPathParameters1763769601190';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE engine.webhook_triggers
        ADD COLUMN shape text GENERATED ALWAYS AS (regexp_replace(path, '(^|/):[^/]+', '\\1:', 'g')) STORED,
        ADD COLUMN segments int GENERATED ALWAYS AS (array_length(string_to_array(path, '/'), 1)) STORED,
        ADD COLUMN parameterised boolean GENERATED ALWAYS AS (path ~ '(^|/):') STORED`);
    await q.query(`ALTER TABLE engine.webhook_triggers ADD CONSTRAINT webhook_triggers_shape_method_key UNIQUE (shape, method)`);
    await q.query(`CREATE INDEX webhook_triggers_parameterised_idx ON engine.webhook_triggers (segments) WHERE parameterised`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE engine.webhook_triggers DROP CONSTRAINT webhook_triggers_shape_method_key`);
    await q.query(`ALTER TABLE engine.webhook_triggers DROP COLUMN parameterised, DROP COLUMN segments, DROP COLUMN shape`);
  }
}
