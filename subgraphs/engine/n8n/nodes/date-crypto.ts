import type { NodeDefinition } from '../../nodes';
import { crypto } from './crypto/crypto';
import { dateTime } from './date-time/date-time';

/** n8n's Date & Time (date-time/date-time.ts) and Crypto (crypto/crypto.ts) nodes. */
export const dateCryptoNodes: NodeDefinition[] = [dateTime, crypto];
