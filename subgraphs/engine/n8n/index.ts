/** n8n's workflows imported into our format, and n8n's core nodes that run here under their own names (one folder per node). */

export { importWorkflow, stickyNoteNode, type StickyNote } from './import';
export { N8N_NODE_PREFIX, N8N_NODES } from './nodes';
