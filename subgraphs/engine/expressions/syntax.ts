import { EXTENSION_NAMES } from '../sandbox';

/**
 * n8n's syntax on top of JavaScript, as a cached source rewrite: extension calls become `$$ext(value,
 * "name")(…)` (optional chains keep their short-circuit through `$$opt`), `$if(t, a, b)` a conditional
 * that evaluates only the branch taken, trailing semicolons go. There is no full parser: tokens and
 * balanced brackets, a call rewritten where it ends a member chain. A source that does not tokenize is
 * left alone for the sandbox to report.
 */

export class ExpressionSyntaxError extends Error {}

export interface Rewritten {
  code: string;
  /** The rewrite calls the dispatcher ($$ext). */
  extensions: boolean;
  /** The extension names it calls the dispatcher for. */
  calls: ReadonlySet<string>;
  /** The identifiers that are not member names (`a` in `a.b`): variables and helpers the expression uses. */
  identifiers: ReadonlySet<string>;
  /** Every identifier, member names included (`DateTime` in `globalThis.DateTime`). */
  names: ReadonlySet<string>;
}

type Node =
  | { t: 'id' | 'lit' | 'p'; s: string; pre: string }
  | { t: 'grp'; open: string; body: Node[]; end: string; pre: string }
  | { t: 'tpl'; parts: (string | { body: Node[]; end: string })[]; pre: string };

// Words that cannot start a member chain (operators and statements); `this`, `null`, literals can.
const OPERATOR_WORDS = new Set(
  'typeof void delete await yield new in of instanceof return throw case else do if while for var let const class extends function import export default switch try catch finally break continue debugger with'.split(
    ' ',
  ),
);
/**
 * Calls the dispatcher would always send to the receiver's own method: on these receivers, these
 * names are their own functions (the dispatcher finds no extension for them). Left as they are,
 * such an expression does not need the prelude (`Math.round($json.x)`, `$input.first().json.x + 1`).
 */
const OWN_METHODS: Record<string, ReadonlySet<string>> = {
  Math: new Set(['round', 'floor', 'ceil', 'abs', 'min', 'max']),
  Object: new Set(['keys', 'values']),
  $input: new Set(['first', 'last']),
  '$()': new Set(['first', 'last']),
};
const PUNCTUATORS = [
  '>>>=',
  '...',
  '===',
  '!==',
  '**=',
  '<<=',
  '>>=',
  '>>>',
  '&&=',
  '||=',
  '??=',
  '=>',
  '==',
  '!=',
  '<=',
  '>=',
  '&&',
  '||',
  '??',
  '?.',
  '++',
  '--',
  '+=',
  '-=',
  '*=',
  '/=',
  '%=',
  '&=',
  '|=',
  '^=',
  '**',
  '<<',
  '>>',
];
const CLOSERS: Record<string, string> = { '(': ')', '[': ']', '{': '}' };

/** Reads source text into tokens, brackets as groups, template literals with their nested parts. */
class Reader {
  private i = 0;
  readonly identifiers = new Set<string>();
  readonly names = new Set<string>();
  private last: Node | undefined;

  constructor(private readonly s: string) {}

  read(): { nodes: Node[] } {
    const out = this.sequence(undefined);
    if (this.i < this.s.length) throw new ExpressionSyntaxError('unbalanced brackets');
    return out;
  }

  /** Nodes up to `close` (not consumed) or the end; `end` is the trivia before it. */
  private sequence(close: string | undefined): { nodes: Node[]; end: string } {
    const nodes: Node[] = [];
    this.last = undefined;
    for (;;) {
      const pre = this.trivia();
      const c = this.s[this.i];
      if (c === undefined || c === close || (close && (c === ')' || c === ']' || c === '}'))) return { nodes, end: pre };
      const node = this.token(pre);
      nodes.push(node);
      this.last = node;
    }
  }

  private trivia(): string {
    const start = this.i;
    for (;;) {
      const rest = this.s.slice(this.i, this.i + 2);
      if (/^\s/.test(rest)) this.i++;
      else if (rest === '//') this.i = this.find('\n', this.i);
      else if (rest === '/*') this.i = this.find('*/', this.i + 2) + 2;
      else return this.s.slice(start, this.i);
    }
  }

  private find(what: string, from: number): number {
    const at = this.s.indexOf(what, from);
    if (at < 0) {
      if (what === '\n') return this.s.length;
      throw new ExpressionSyntaxError('unterminated comment');
    }
    return at;
  }

  private token(pre: string): Node {
    const s = this.s;
    const c = s[this.i]!;
    if (c in CLOSERS) {
      this.i++;
      const inner = this.sequence(CLOSERS[c]);
      if (s[this.i] !== CLOSERS[c]) throw new ExpressionSyntaxError('unbalanced brackets');
      this.i++;
      return { t: 'grp', open: c, body: inner.nodes, end: inner.end, pre };
    }
    if (c === '`') return this.template(pre);
    if (c === '"' || c === "'") return { t: 'lit', s: this.quoted(c), pre };
    const word = /^[A-Za-z_$\u0080-\uffff][\w$\u0080-\uffff]*/.exec(s.slice(this.i));
    if (word) {
      this.i += word[0].length;
      this.names.add(word[0]);
      const member = this.last?.t === 'p' && (this.last.s === '.' || this.last.s === '?.');
      if (!member) this.identifiers.add(word[0]);
      return { t: 'id', s: word[0], pre };
    }
    const num = /^(?:0[xXoObB][\da-fA-F_]+n?|(?:\d[\d_]*\.?[\d_]*|\.\d[\d_]*)(?:[eE][+-]?\d+)?n?)/.exec(s.slice(this.i));
    if (num) {
      this.i += num[0].length;
      return { t: 'lit', s: num[0], pre };
    }
    if (c === '/' && this.regexAllowed()) return { t: 'lit', s: this.regex(), pre };
    const punct = PUNCTUATORS.find((p) => s.startsWith(p, this.i) && !(p === '?.' && /\d/.test(s[this.i + 2] ?? ''))) ?? c;
    this.i += punct.length;
    return { t: 'p', s: punct, pre };
  }

  /** A `/` starts a regular expression unless it follows something that ends an operand. */
  private regexAllowed(): boolean {
    const last = this.last;
    if (!last) return true;
    if (last.t === 'id') return OPERATOR_WORDS.has(last.s);
    return last.t === 'p';
  }

  private quoted(q: string): string {
    const start = this.i++;
    while (this.i < this.s.length && this.s[this.i] !== q) {
      if (this.s[this.i] === '\\') this.i++;
      else if (this.s[this.i] === '\n') break;
      this.i++;
    }
    if (this.s[this.i] !== q) throw new ExpressionSyntaxError('unterminated string');
    this.i++;
    return this.s.slice(start, this.i);
  }

  private regex(): string {
    const start = this.i++;
    let inClass = false;
    while (this.i < this.s.length) {
      const c = this.s[this.i]!;
      if (c === '\\') this.i++;
      else if (c === '[') inClass = true;
      else if (c === ']') inClass = false;
      else if (c === '/' && !inClass) break;
      else if (c === '\n') break;
      this.i++;
    }
    if (this.s[this.i] !== '/') throw new ExpressionSyntaxError('unterminated regular expression');
    this.i++;
    while (/[a-z]/i.test(this.s[this.i] ?? '')) this.i++;
    return this.s.slice(start, this.i);
  }

  private template(pre: string): Node {
    const parts: (string | { body: Node[]; end: string })[] = [];
    let text = '';
    this.i++;
    for (;;) {
      const c = this.s[this.i];
      if (c === undefined) throw new ExpressionSyntaxError('unterminated template literal');
      if (c === '`') break;
      if (c === '\\') {
        text += c + (this.s[this.i + 1] ?? '');
        this.i += 2;
      } else if (c === '$' && this.s[this.i + 1] === '{') {
        parts.push(text);
        text = '';
        this.i += 2;
        const inner = this.sequence('}');
        if (this.s[this.i] !== '}') throw new ExpressionSyntaxError('unbalanced brackets');
        this.i++;
        parts.push({ body: inner.nodes, end: inner.end });
      } else {
        text += c;
        this.i++;
      }
    }
    this.i++;
    parts.push(text);
    return { t: 'tpl', parts, pre };
  }
}

type Op =
  | { kind: 'member'; name: string; optional: boolean; text: string }
  | { kind: 'index' | 'call'; group: Extract<Node, { t: 'grp' }>; optional: boolean; pre: string }
  | { kind: 'tag'; node: Node };

/** Renders nodes back to source, rewriting extension calls and $if on the way. */
class Writer {
  extensions = false;
  readonly calls = new Set<string>();
  private vars = 0;

  sequence(nodes: Node[]): string {
    let out = '';
    for (let i = 0; i < nodes.length;) {
      const end = this.chainEnd(nodes, i);
      if (end > i) {
        out += this.chain(nodes.slice(i, end));
        i = end;
      } else out += this.node(nodes[i++]!);
    }
    return out;
  }

  private node(n: Node): string {
    if (n.t === 'grp') return `${n.pre}${n.open}${this.sequence(n.body)}${n.end}${CLOSERS[n.open]}`;
    if (n.t === 'tpl') {
      const inner = n.parts.map((p) => (typeof p === 'string' ? p : `\${${this.sequence(p.body)}${p.end}}`)).join('');
      return `${n.pre}\`${inner}\``;
    }
    return n.pre + n.s;
  }

  /** Where the member chain starting at `i` ends (i itself when no chain starts there). */
  private chainEnd(nodes: Node[], i: number): number {
    let j = i;
    const first = nodes[j];
    if (!first || first.t === 'p' || (first.t === 'id' && OPERATOR_WORDS.has(first.s) && first.s !== 'new')) return i;
    if (first.t === 'id' && first.s === 'new') {
      // `new Callee.path(args)` is the chain's head
      j = this.chainEnd(nodes, j + 1);
      if (j === i + 1) return i;
      return this.postfix(nodes, j);
    }
    return this.postfix(nodes, j + 1);
  }

  private postfix(nodes: Node[], j: number): number {
    for (;;) {
      const n = nodes[j];
      if (!n) return j;
      if (n.t === 'p' && n.s === '.' && nodes[j + 1]?.t === 'id') j += 2;
      else if (n.t === 'p' && n.s === '?.') j += nodes[j + 1]?.t === 'id' || nodes[j + 1]?.t === 'grp' ? 2 : 1;
      else if (n.t === 'grp' && n.open !== '{') j += 1;
      else if (n.t === 'tpl') j += 1;
      else return j;
    }
  }

  private chain(nodes: Node[]): string {
    // The chain's leading whitespace stays in front of whatever wraps it (`typeof $$ext(…)`).
    const pre = nodes[0]!.pre;
    const [head, ops] = this.split([{ ...nodes[0]!, pre: '' } as Node, ...nodes.slice(1)]);
    return pre + this.fold(head, ops);
  }

  /** The chain's head (its first node, or `new …(…)`) and its operations. */
  private split(nodes: Node[]): [string, Op[]] {
    let k = 1;
    let head: string;
    if (nodes[0]!.t === 'id' && nodes[0]!.s === 'new') {
      // the callee (and its arguments) is a chain of its own, without the calls
      const calleeEnd = this.calleeEnd(nodes, 1);
      head = this.node(nodes[0]!) + this.sequence(nodes.slice(1, calleeEnd));
      k = calleeEnd;
    } else head = this.node(nodes[0]!);
    const ops: Op[] = [];
    while (k < nodes.length) {
      const n = nodes[k]!;
      if (n.t === 'p' && (n.s === '.' || n.s === '?.')) {
        const next = nodes[k + 1]!;
        const optional = n.s === '?.';
        if (next.t === 'id') ops.push({ kind: 'member', name: next.s, optional, text: n.pre + n.s + next.pre + next.s });
        else ops.push({ kind: (next as { open: string }).open === '(' ? 'call' : 'index', group: next as Extract<Node, { t: 'grp' }>, optional, pre: n.pre });
        k += 2;
      } else if (n.t === 'grp') {
        ops.push({ kind: n.open === '(' ? 'call' : 'index', group: n, optional: false, pre: '' });
        k += 1;
      } else {
        ops.push({ kind: 'tag', node: n });
        k += 1;
      }
    }
    return [head, ops];
  }

  /** After `new`: the callee's head and member links, then its argument list if any. */
  private calleeEnd(nodes: Node[], j: number): number {
    j++;
    while (nodes[j]?.t === 'p' && (nodes[j] as { s: string }).s === '.' && nodes[j + 1]?.t === 'id') j += 2;
    while (nodes[j]?.t === 'grp' && (nodes[j] as { open: string }).open === '[') j++;
    if (nodes[j]?.t === 'grp' && (nodes[j] as { open: string }).open === '(') j++;
    return j;
  }

  private fold(head: string, ops: Op[]): string {
    let cur = head;
    let k = 0;
    if (head === '$if' && ops[0]?.kind === 'call' && !ops[0].optional) {
      const args = this.args(ops[0].group.body);
      if (args) {
        if (args.length < 2) throw new ExpressionSyntaxError('$if requires at least 2 parameters: test, value_if_true[, and value_if_false]');
        const [test, yes, no = 'false'] = args;
        cur = `((${test}) ? (${yes}) : (${no}))`;
        k = 1;
      }
    }
    // `$('Node')` is a receiver of known methods too
    const receiver = head === '$' && ops[0]?.kind === 'call' ? '$()' : head;
    const ownAt = receiver === '$()' ? 1 : 0;
    for (; k < ops.length; k++) {
      const op = ops[k]!;
      const next = ops[k + 1];
      const own = k === ownAt && op.kind === 'member' && !op.optional && Object.hasOwn(OWN_METHODS, receiver) && OWN_METHODS[receiver]!.has(op.name);
      if (op.kind === 'member' && next?.kind === 'call' && EXTENSION_NAMES.has(op.name) && !own) {
        this.extensions = true;
        this.calls.add(op.name);
        const optional = op.optional || next.optional;
        cur = `$$ext(${cur}, ${JSON.stringify(op.name)}${optional ? ', 1)?.' : ')'}${this.node({ ...next.group, pre: '' })}`;
        k++;
        continue;
      }
      if (op.kind !== 'tag' && op.optional && this.extensionLater(ops, k)) {
        const v = `$$v${this.vars++}`;
        const rest: Op[] = [{ ...op, optional: false, ...(op.kind === 'member' ? { text: '.' + op.name } : { pre: '' }) } as Op, ...ops.slice(k + 1)];
        return `$$opt(${cur}, (${v}) => ${this.fold(v, rest)})`;
      }
      cur += this.op(op);
    }
    return cur;
  }

  private extensionLater(ops: Op[], k: number): boolean {
    return ops.some((op, i) => i >= k && op.kind === 'member' && ops[i + 1]?.kind === 'call' && EXTENSION_NAMES.has(op.name));
  }

  private op(op: Op): string {
    if (op.kind === 'member') return op.text;
    if (op.kind === 'tag') return this.node(op.node);
    return `${op.pre}${op.optional ? '?.' : ''}${this.node(op.group)}`;
  }

  /** The arguments of a call, each rendered; null when one is spread. */
  private args(body: Node[]): string[] | null {
    const args: Node[][] = [[]];
    for (const n of body) {
      if (n.t === 'p' && n.s === ',') args.push([]);
      else args[args.length - 1]!.push(n);
    }
    if (args[args.length - 1]!.length === 0) args.pop();
    if (args.some((a) => a[0]?.t === 'p' && a[0].s === '...')) return null;
    return args.map((a) => this.sequence(a));
  }
}

const cache = new Map<string, Rewritten>();

/** The expression (the text inside `{{ }}`) as the sandbox runs it. Throws ExpressionSyntaxError for a malformed `$if`. */
export function rewrite(source: string): Rewritten {
  const cached = cache.get(source);
  if (cached) return cached;
  let result: Rewritten;
  try {
    const reader = new Reader(source);
    const { nodes } = reader.read();
    while (nodes.length && nodes[nodes.length - 1]!.t === 'p' && (nodes[nodes.length - 1] as { s: string }).s === ';') nodes.pop();
    const writer = new Writer();
    const code = writer.sequence(nodes);
    result = { code, extensions: writer.extensions, calls: writer.calls, identifiers: reader.identifiers, names: reader.names };
  } catch (err) {
    if (!(err instanceof ExpressionSyntaxError) || err.message.startsWith('$if')) throw err;
    const words = new Set(source.match(/[A-Za-z_$][\w$]*/g) ?? []);
    result = { code: source, extensions: false, calls: new Set(), identifiers: words, names: words };
  }
  if (cache.size > 10_000) cache.clear();
  cache.set(source, result);
  return result;
}
