import type { NodeDefinition } from '../../nodes/types';
import { crypto } from './crypto';
import { dateTime } from './date-time';

/** n8n's Date & Time (date-time.ts) and Crypto (crypto.ts) nodes. */
export const dateCryptoNodes: NodeDefinition[] = [dateTime, crypto];
