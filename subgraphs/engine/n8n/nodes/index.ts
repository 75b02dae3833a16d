import type { NodeDefinition } from '../../nodes';
import { codeNodes } from './code/code';
import { compareDatasetsNode } from './compare-datasets/compare-datasets';
import { compression } from './compression/compression';
import { convertToFile } from './convert-to-file/convert-to-file';
import { dateCryptoNodes } from './date-crypto';
import { debugHelper } from './debug-helper/debug-helper';
import { executeWorkflow } from './execute-workflow/execute-workflow';
import { extractFromFile } from './extract-from-file/extract-from-file';
import { htmlNodes } from './html/html';
import { itemListNodes } from './item-lists/item-lists';
import { markdown } from './markdown/markdown';
import { mergeNodes } from './merge/merge';
import { moveBinaryData } from './move-binary-data/move-binary-data';
import { noOp } from './no-op/no-op';
import { readPDF } from './read-pdf/read-pdf';
import { readWriteFile } from './read-write-file/read-write-file';
import { renameKeys } from './rename-keys/rename-keys';
import { respondToWebhook } from './respond-to-webhook/respond-to-webhook';
import { interval, scheduleTrigger } from './schedule-trigger/schedule-trigger';
import { n8nTrainingCustomerDatastore } from './training-datastore/training-datastore';
import { routingNodes } from './routing/routing';
import { setNodes } from './set/set';
import { splitInBatches } from './split-in-batches/split-in-batches';
import { spreadsheetFile } from './spreadsheet-file/spreadsheet-file';
import { stopAndError } from './stop-and-error/stop-and-error';
import { wait } from './wait/wait';
import { xml } from './xml/xml';

/**
 * n8n's core nodes run natively under their n8n names (`n8n-nodes-base.<name>`), each at the
 * typeVersions it lists, with n8n's parameters as exported: an import keeps them as they are.
 */
export const N8N_NODE_PREFIX = 'n8n-nodes-base.';

export const N8N_NODES: readonly NodeDefinition[] = [
  noOp,
  ...setNodes,
  ...routingNodes,
  ...mergeNodes,
  ...itemListNodes,
  ...dateCryptoNodes,
  ...codeNodes,
  executeWorkflow,
  splitInBatches,
  renameKeys,
  n8nTrainingCustomerDatastore,
  debugHelper,
  compareDatasetsNode,
  xml,
  ...htmlNodes,
  markdown,
  stopAndError,
  wait,
  respondToWebhook,
  scheduleTrigger,
  interval,
  convertToFile,
  extractFromFile,
  compression,
  readWriteFile,
  readPDF,
  moveBinaryData,
  spreadsheetFile,
];
