import type { NodeDefinition } from '../../../nodes';
import { runV1, unsupportedV1 } from './v1/date-time';
import { runV2 } from './v2/date-time';

/**
 * n8n's Date & Time node: version 1 (moment.js: format and calculate, v1/date-time.ts) and
 * version 2 (luxon: get the current date, add to / subtract from, format, round, time between
 * two dates, extract a part; v2/date-time.ts), in the workflow's time zone where n8n uses it.
 */
export const dateTime: NodeDefinition = {
  name: 'dateTime',
  description: "n8n's Date & Time: formats, shifts, rounds, compares and takes apart dates, into a field of each item.",
  n8n: {
    versions: [1, 2],
    unsupported: (params, version) => (version === 1 ? unsupportedV1(params) : undefined),
  },
  inProcess: true,
  async execute(ctx) {
    const params = await ctx.parameters();
    const items = (ctx.node.typeVersion ?? 1) === 1 ? runV1(ctx, params) : runV2(ctx, params);
    return { outputs: [items] };
  },
};
