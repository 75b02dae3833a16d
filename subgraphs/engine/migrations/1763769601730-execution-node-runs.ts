import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Several runs of a node per execution (n8n's execution order v1: a node fed by two branches, a
 * loop): run data is kept per run, `run_index` from 0, with the node's context after that run
 * (`state`, Split In Batches' remaining items) so that a resumed execution continues with it.
 */
export class ExecutionNodeRuns1763769601730 implements MigrationInterface {
  name = 'ExecutionNodeRuns1763769601730';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE engine.execution_nodes
        ADD COLUMN run_index integer NOT NULL DEFAULT 0 CHECK (run_index >= 0),
        ADD COLUMN state jsonb`);
    await q.query(`ALTER TABLE engine.execution_nodes DROP CONSTRAINT execution_nodes_pkey, ADD PRIMARY KEY (execution_id, node_name, run_index)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DELETE FROM engine.execution_nodes WHERE run_index > 0`);
    await q.query(`ALTER TABLE engine.execution_nodes DROP CONSTRAINT execution_nodes_pkey, ADD PRIMARY KEY (execution_id, node_name)`);
    await q.query(`ALTER TABLE engine.execution_nodes DROP COLUMN state, DROP COLUMN run_index`);
  }
}
