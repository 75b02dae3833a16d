import { isPlainObject } from '../../../nodes';
import type { ClashOptions } from './objects';
import type { FieldPair } from './fields';

/**
 * n8n's Merge parameters, per type version, read into what the node does. The same reading
 * serves the import check (raw parameters: an expression there is accepted as its default and
 * checked again at run time) and the execution (parameters resolved at item 0, as n8n reads
 * them). n8n fills a missing parameter with its default and ignores a parameter its UI hides
 * (e.g. "Output Data From" outside Keep Matches / Keep Non-Matches): so does this reading.
 */

export type JoinMode = 'keepMatches' | 'keepNonMatches' | 'keepEverything' | 'enrichInput1' | 'enrichInput2';
export type V1Mode = 'append' | 'keepKeyMatches' | 'mergeByIndex' | 'mergeByKey' | 'multiplex' | 'passThrough' | 'removeKeyMatches' | 'wait';

/** "When Field Values Clash": keep input 1's version, the last input's, or suffix every key with its input number. */
export type Prefer = 'first' | 'last' | 'suffix';

export interface Clash {
  /** Undefined when the option is not set (each mode has its own default). */
  prefer?: Prefer;
  /** The nested-fields options; undefined when not set or hidden (addSuffix): a deep merge. */
  merge?: ClashOptions;
}

export interface ByFields {
  kind: 'byFields';
  /** "Fields to Match", checked when the node runs (n8n fails there, not at import). */
  pairs: FieldPair[];
  joinMode: JoinMode;
  outputDataFrom: 'both' | 'input1' | 'input2';
  clash: Clash;
  fuzzyCompare: boolean;
  disableDotNotation: boolean;
  multipleMatches: 'all' | 'first';
  /** Version 2: every field must occur in some item of its input. */
  requireFields: boolean;
}

export type MergeConfig =
  | { kind: 'append' }
  | {
      kind: 'v1';
      mode: V1Mode;
      join: 'inner' | 'left' | 'outer';
      property1: unknown;
      property2: unknown;
      overwrite: 'always' | 'blank' | 'undefined';
      output: 'input1' | 'input2';
    }
  | ByFields
  | { kind: 'byPosition'; clash: Clash; includeUnpaired: boolean; v2: boolean }
  | { kind: 'all'; clash: Clash }
  | { kind: 'chooseBranch'; output: 'empty' | { input: unknown } };

/** Something the node cannot run as n8n would: the import refuses it, an execution fails on it. */
export class MergeProblem extends Error {
  constructor(
    readonly option: string,
    message: string,
  ) {
    super(message);
  }
}

const RESOLVE_CLASH: Record<2 | 3, Record<string, Prefer>> = {
  2: { addSuffix: 'suffix', preferInput1: 'first', preferInput2: 'last' },
  3: { addSuffix: 'suffix', preferInput1: 'first', preferLast: 'last' },
};
const JOIN_MODES: readonly JoinMode[] = ['keepMatches', 'keepNonMatches', 'keepEverything', 'enrichInput1', 'enrichInput2'];
const V1_MODES: readonly V1Mode[] = ['append', 'keepKeyMatches', 'mergeByIndex', 'mergeByKey', 'multiplex', 'passThrough', 'removeKeyMatches', 'wait'];
const MAX_INPUTS = 10;

function isExpression(v: unknown): boolean {
  return typeof v === 'string' && v.startsWith('=');
}

/** The version line a typeVersion belongs to (1; 2 and 2.1; 3, 3.1 and 3.2). */
export function family(version: number): 1 | 2 | 3 {
  return version < 2 ? 1 : version < 3 ? 2 : 3;
}

class Reader {
  constructor(
    private readonly version: number,
    private readonly atImport: boolean,
  ) {}

  /** An options parameter: its default when missing, one of n8n's values otherwise. */
  choice<T extends string>(name: string, value: unknown, allowed: readonly T[], fallback: T): T {
    if (value === undefined || (this.atImport && isExpression(value))) return fallback;
    if ((allowed as readonly unknown[]).includes(value)) return value as T;
    throw new MergeProblem(
      name,
      `${name} ${JSON.stringify(value)} is not one of n8n's values for Merge ${this.version} (${allowed.join(', ')}); choose one of them in n8n and export again`,
    );
  }

  numberInputs(value: unknown): number {
    if (value === undefined) return 2;
    if (typeof value === 'number' && Number.isInteger(value) && value >= 2 && value <= MAX_INPUTS) return value;
    throw new MergeProblem(
      'numberInputs',
      `numberInputs ${JSON.stringify(value)} is not supported: it must be a number of inputs from 2 to ${MAX_INPUTS}, as n8n offers`,
    );
  }

  clash(options: Record<string, unknown>, line: 2 | 3): Clash {
    const values = isPlainObject(options.clashHandling) ? options.clashHandling.values : undefined;
    if (!isPlainObject(values)) return {};
    const table = RESOLVE_CLASH[line];
    if (values.resolveClash === undefined) {
      throw new MergeProblem(
        'options.clashHandling',
        `options.clashHandling has no "When Field Values Clash" choice (resolveClash); choose one of ${Object.keys(table).join(', ')} in n8n and export again`,
      );
    }
    const prefer = table[this.choice('options.clashHandling.values.resolveClash', values.resolveClash, Object.keys(table), 'addSuffix')]!;
    if (prefer === 'suffix') return { prefer };
    const mergeMode = this.choice('options.clashHandling.values.mergeMode', values.mergeMode, ['deepMerge', 'shallowMerge'], 'deepMerge');
    return { prefer, merge: { mergeMode, overrideEmpty: Boolean(values.overrideEmpty) } };
  }

  fieldPairs(value: unknown): FieldPair[] {
    if (value === undefined) return [{ field1: '', field2: '' }];
    const values = isPlainObject(value) ? value.values : undefined;
    if (values === undefined) return [];
    if (!Array.isArray(values) || !values.every(isPlainObject)) {
      throw new MergeProblem('mergeByFields', 'mergeByFields.values must be a list of {field1, field2} pairs, as n8n exports it');
    }
    return values.map((v) => ({ field1: v.field1 ?? '', field2: v.field2 ?? '' }));
  }

  fieldsString(value: unknown): FieldPair[] {
    const text = value ?? '';
    if (this.atImport && isExpression(text)) return [];
    if (typeof text !== 'string')
      throw new MergeProblem('fieldsToMatchString', `fieldsToMatchString must be text (field names separated by commas), not ${JSON.stringify(text)}`);
    return text.split(',').map((f) => ({ field1: f.trim(), field2: f.trim() }));
  }

  byFields(params: Record<string, unknown>, pairs: FieldPair[], line: 2 | 3): ByFields {
    const options = isPlainObject(params.options) ? params.options : {};
    const joinMode = this.choice('joinMode', params.joinMode, JOIN_MODES, 'keepMatches');
    const choosesOutput = joinMode === 'keepMatches' || joinMode === 'keepNonMatches';
    const outputDataFrom = choosesOutput ? this.choice('outputDataFrom', params.outputDataFrom, ['both', 'input1', 'input2'], 'both') : 'both';
    // n8n shows (and so applies) these options only where they have a meaning.
    const mergesMatches = !choosesOutput || (joinMode === 'keepMatches' && outputDataFrom === 'both');
    return {
      kind: 'byFields',
      pairs,
      joinMode,
      outputDataFrom,
      clash: mergesMatches ? this.clash(options, line) : {},
      fuzzyCompare: Boolean(options.fuzzyCompare),
      disableDotNotation: Boolean(options.disableDotNotation),
      multipleMatches: mergesMatches ? this.choice('options.multipleMatches', options.multipleMatches, ['all', 'first'], 'all') : 'all',
      requireFields: this.version < 2.1,
    };
  }
}

function readV1(r: Reader, p: Record<string, unknown>): MergeConfig {
  const mode = r.choice('mode', p.mode, V1_MODES, 'append');
  return {
    kind: 'v1',
    mode,
    join: mode === 'mergeByIndex' ? r.choice('join', p.join, ['inner', 'left', 'outer'], 'left') : 'left',
    property1: p.propertyName1 ?? '',
    property2: p.propertyName2 ?? '',
    overwrite: mode === 'mergeByKey' ? r.choice('overwrite', p.overwrite, ['always', 'blank', 'undefined'], 'always') : 'always',
    output: mode === 'passThrough' ? r.choice('output', p.output, ['input1', 'input2'], 'input1') : 'input1',
  };
}

function readV2(r: Reader, p: Record<string, unknown>): MergeConfig {
  const mode = r.choice('mode', p.mode, ['append', 'combine', 'chooseBranch'], 'append');
  const options = isPlainObject(p.options) ? p.options : {};
  if (mode === 'append') return { kind: 'append' };
  if (mode === 'chooseBranch') {
    r.choice('chooseBranchMode', p.chooseBranchMode, ['waitForBoth'], 'waitForBoth');
    const output = r.choice('output', p.output, ['input1', 'input2', 'empty'], 'input1');
    return { kind: 'chooseBranch', output: output === 'empty' ? 'empty' : { input: output === 'input1' ? 1 : 2 } };
  }
  const combination = r.choice('combinationMode', p.combinationMode, ['mergeByFields', 'mergeByPosition', 'multiplex'], 'mergeByFields');
  if (combination === 'mergeByFields') return r.byFields(p, r.fieldPairs(p.mergeByFields), 2);
  if (combination === 'multiplex') return { kind: 'all', clash: r.clash(options, 2) };
  return { kind: 'byPosition', clash: r.clash(options, 2), includeUnpaired: Boolean(options.includeUnpaired), v2: true };
}

function readV3(r: Reader, p: Record<string, unknown>): MergeConfig {
  const mode = r.choice('mode', p.mode, ['append', 'combine', 'combineBySql', 'chooseBranch'], 'append');
  const options = isPlainObject(p.options) ? p.options : {};
  if (mode === 'combineBySql') {
    throw new MergeProblem(
      'mode',
      'mode "combineBySql" (SQL Query) is not supported: n8n runs the query in an embedded SQL engine (AlaSQL), which this engine does not have; use mode "combine" (Matching Fields, Position or All Possible Combinations) or a Code node instead',
    );
  }
  if (mode === 'append' || mode === 'chooseBranch') r.numberInputs(p.numberInputs);
  if (mode === 'append') return { kind: 'append' };
  if (mode === 'chooseBranch') {
    r.choice('chooseBranchMode', p.chooseBranchMode, ['waitForAll'], 'waitForAll');
    const output = r.choice('output', p.output, ['specifiedInput', 'empty'], 'specifiedInput');
    return { kind: 'chooseBranch', output: output === 'empty' ? 'empty' : { input: p.useDataOfInput ?? 1 } };
  }
  const combineBy = r.choice('combineBy', p.combineBy, ['combineByFields', 'combineByPosition', 'combineAll'], 'combineByFields');
  if (combineBy === 'combineByFields') return r.byFields(p, p.advanced ? r.fieldPairs(p.mergeByFields) : r.fieldsString(p.fieldsToMatchString), 3);
  if (combineBy === 'combineAll') return { kind: 'all', clash: r.clash(options, 3) };
  r.numberInputs(p.numberInputs);
  return { kind: 'byPosition', clash: r.clash(options, 3), includeUnpaired: Boolean(options.includeUnpaired), v2: false };
}

const READERS = { 1: readV1, 2: readV2, 3: readV3 } as const;

/** What the node does with these parameters; throws MergeProblem for what it cannot do as n8n would. */
export function readConfig(params: Record<string, unknown>, version: number, atImport: boolean): MergeConfig {
  return READERS[family(version)](new Reader(version, atImport), params);
}

/**
 * The node's input count: 2, or `numberInputs` in version 3 for the modes that show it (n8n
 * builds the inputs from the visible parameters, so Matching Fields and All Combinations keep 2).
 */
export function inputCount(params: Record<string, unknown>, version: number): number {
  if (family(version) < 3) return 2;
  const mode = params.mode ?? 'append';
  const counted = mode === 'append' || mode === 'chooseBranch' || mode === 'combineBySql' || (mode === 'combine' && params.combineBy === 'combineByPosition');
  const n = params.numberInputs;
  return counted && typeof n === 'number' && Number.isInteger(n) && n >= 2 && n <= MAX_INPUTS ? n : 2;
}
