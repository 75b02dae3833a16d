/**
 * n8n reads an "object" field that is not JSON as a JavaScript object literal (jsonParse with
 * acceptJSObject): a bare name stands for its own text (`{b}` gives `{b: "b"}`), `[key]` for the
 * key's text, a spread is left out, a template string is undefined. Anything else (calls,
 * operators) is refused here, so the field fails conversion where n8n would keep the key empty.
 * Values are as n8n's item reads once serialised: undefined properties left out, undefined array
 * elements null.
 */

class Unreadable extends Error {}

const NUMBER = /(?:0[xX][\da-fA-F_]+|0[oO][0-7_]+|0[bB][01_]+|(?:\d[\d_]*(?:\.[\d_]*)?|\.\d[\d_]*)(?:[eE][+-]?\d[\d_]*)?)(?![\w$])/y;
const IDENT = /[A-Za-z_$][\w$]*/y;
const KEYWORDS: Record<string, unknown> = { true: true, false: false, null: null, this: undefined };
const ESCAPES: Record<string, string> = { n: '\n', r: '\r', t: '\t', b: '\b', f: '\f', v: '\v', '0': '\0' };

/** The object the text denotes; undefined when it is JavaScript but not an object literal; throws when unreadable. */
export function parseObjectLiteral(text: string): Record<string, unknown> | undefined {
  const reader = new Reader(text);
  reader.skip();
  if (text[reader.pos] !== '{') return undefined;
  const value = reader.value();
  reader.skip();
  return reader.pos === text.length ? (value as Record<string, unknown>) : undefined;
}

class Reader {
  pos = 0;

  constructor(private readonly s: string) {}

  skip(): void {
    for (;;) {
      while (this.pos < this.s.length && /\s/.test(this.s[this.pos]!)) this.pos++;
      if (this.s.startsWith('//', this.pos)) {
        const end = this.s.indexOf('\n', this.pos);
        this.pos = end < 0 ? this.s.length : end;
      } else if (this.s.startsWith('/*', this.pos)) {
        const end = this.s.indexOf('*/', this.pos + 2);
        if (end < 0) throw new Unreadable('unterminated comment');
        this.pos = end + 2;
      } else return;
    }
  }

  value(): unknown {
    this.skip();
    const c = this.s[this.pos];
    if (c === '{') return this.object();
    if (c === '[') return this.array();
    if (c === '"' || c === "'") return this.string(c);
    if (c === '`') return this.template();
    if (c === '-' || c === '+' || c === '!' || c === '~') {
      this.pos++;
      const v = this.value();
      return c === '-' && typeof v === 'number' ? -v : v;
    }
    const num = this.match(NUMBER);
    if (num !== undefined) return Number(num.replace(/_/g, ''));
    const name = this.match(IDENT);
    if (name !== undefined) return Object.hasOwn(KEYWORDS, name) ? KEYWORDS[name] : name;
    throw new Unreadable(`unexpected ${c ?? 'end'}`);
  }

  private object(): Record<string, unknown> {
    this.pos++;
    const entries: [unknown, unknown][] = [];
    for (;;) {
      this.skip();
      if (this.eat('}')) break;
      if (this.eat('...')) this.value();
      else entries.push(this.property());
      this.separator('}');
    }
    const obj = Object.fromEntries(entries);
    for (const k of Object.keys(obj)) if (obj[k] === undefined) delete obj[k];
    return obj;
  }

  private property(): [unknown, unknown] {
    let key: unknown;
    let shorthand = false;
    if (this.eat('[')) {
      key = this.value();
      this.skip();
      if (!this.eat(']')) throw new Unreadable('expected ]');
    } else {
      const c = this.s[this.pos];
      if (c === '"' || c === "'") key = this.string(c);
      else if ((key = this.match(NUMBER)) !== undefined) key = Number((key as string).replace(/_/g, ''));
      else if ((key = this.match(IDENT)) !== undefined) shorthand = true;
      else throw new Unreadable('expected a key');
    }
    this.skip();
    if (this.eat(':')) return [key, this.value()];
    const next = this.s[this.pos];
    if (shorthand && (next === ',' || next === '}')) return [key, key];
    throw new Unreadable('expected :');
  }

  private array(): unknown[] {
    this.pos++;
    const out: unknown[] = [];
    for (;;) {
      this.skip();
      if (this.eat(']')) break;
      if (this.eat(',')) {
        out.push(null);
        continue;
      }
      const v = this.eat('...') ? (this.value(), undefined) : this.value();
      out.push(v === undefined ? null : v);
      this.separator(']');
    }
    return out;
  }

  /** After an element: a comma, or the closing bracket (left for the caller). */
  private separator(close: string): void {
    this.skip();
    if (this.eat(',')) return;
    if (this.s[this.pos] !== close) throw new Unreadable(`expected , or ${close}`);
  }

  private string(quote: string): string {
    let out = '';
    for (this.pos++; this.pos < this.s.length; this.pos++) {
      const c = this.s[this.pos]!;
      if (c === quote) {
        this.pos++;
        return out;
      }
      if (c === '\n' || c === '\r') break;
      if (c !== '\\') {
        out += c;
        continue;
      }
      out += this.escape();
    }
    throw new Unreadable('unterminated string');
  }

  /** The character(s) of the escape at pos (the backslash); leaves pos on its last character. */
  private escape(): string {
    const e = this.s[++this.pos] ?? '';
    const hex = (len: number) => {
      const digits = this.s.slice(this.pos + 1, this.pos + 1 + len);
      if (!new RegExp(`^[\\da-fA-F]{${len}}$`).test(digits)) throw new Unreadable('bad escape');
      this.pos += len;
      return String.fromCharCode(parseInt(digits, 16));
    };
    if (e === 'x') return hex(2);
    if (e === 'u' && this.s[this.pos + 1] === '{') {
      const end = this.s.indexOf('}', this.pos);
      const code = parseInt(this.s.slice(this.pos + 2, end), 16);
      if (end < 0 || !Number.isFinite(code) || code > 0x10ffff) throw new Unreadable('bad escape');
      this.pos = end;
      return String.fromCodePoint(code);
    }
    if (e === 'u') return hex(4);
    if (e === '\r' && this.s[this.pos + 1] === '\n') this.pos++;
    if (e === '\n' || e === '\r' || e === '\u2028' || e === '\u2029') return '';
    return Object.hasOwn(ESCAPES, e) ? ESCAPES[e]! : e;
  }

  private template(): undefined {
    for (this.pos++; this.pos < this.s.length; this.pos++) {
      const c = this.s[this.pos];
      if (c === '\\') this.pos++;
      else if (c === '$' && this.s[this.pos + 1] === '{') throw new Unreadable('template with substitutions');
      else if (c === '`') {
        this.pos++;
        return undefined;
      }
    }
    throw new Unreadable('unterminated template');
  }

  private eat(token: string): boolean {
    if (!this.s.startsWith(token, this.pos)) return false;
    this.pos += token.length;
    return true;
  }

  private match(re: RegExp): string | undefined {
    re.lastIndex = this.pos;
    const m = re.exec(this.s);
    if (!m) return undefined;
    this.pos += m[0].length;
    return m[0];
  }
}
